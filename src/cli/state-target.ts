/**
 * Where a command-line crawl keeps its state: nowhere (memory), a SQLite file
 * (`--state FILE`, one process, resumable) or a Redis crawl (`--redis URL
 * --crawl-id ID`, shared by any number of workers). One shape for the crawl
 * command, so its messages and its resume logic do not care which.
 */
import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import { resolve } from 'node:path';
import type { Clock } from '../clock.js';
import { UsageError } from '../config/seeds.js';
import { parseDuration } from '../config/units.js';
import type { Logger } from '../output/logger.js';
import { readCaFile } from '../fetch/tls.js';
import type { CrawlStore } from '../store/crawl-store.js';
import type { OutputLedger } from '../store/output-ledger.js';
import { isRotation, SigningKeyMismatchError, signingKeyRefusal, type WorkerKey } from '../store/crawl-signing-key.js';
import type { CrawlMetrics } from '../output/metrics.js';
import { redactUrl } from '../fetch/redact.js';
import type { CrawlSettings } from '../config/settings-types.js';
import { durationFlag, type CrawlFlags } from './flags.js';

export interface StateTarget {
  store: CrawlStore;
  /** For messages: `crawl.db`, or `Redis crawl "shop"`. */
  label: string;
  /** Several workers crawl it together (Redis). */
  shared: boolean;
  /** This worker's name, written into each record of a shared crawl. */
  worker?: string;
  /** What the target holds before the crawl opens it: nothing yet, or a crawl (finished or not). */
  peek(): Promise<{ finished: boolean } | undefined>;
  /**
   * Where the target asks for a clean stop, with the error the run ends with
   * (a state file's disk nearly full: exit 4, resumable once there is room).
   */
  onStop?(stop: (err: Error) => void): void;
  /** Keeps `-o` exactly once across a crash (a state file; output-ledger.ts). */
  ledger?: OutputLedger;
  close(): Promise<void>;
}

/** A crawl id: what Redis key names and the Cluster hash tag allow, and what a person types. */
const CRAWL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * `--redis URL` and `--crawl-id NAME` together and well-formed, for every
 * command that takes them (crawl, status, report); `why` ends the message
 * for a missing crawl id.
 */
export function checkRedisFlags(flags: { redis?: string; crawlId?: string; redisCa?: string }, why: string): void {
  if (flags.redis !== undefined && flags.crawlId === undefined) throw new UsageError(`--redis needs --crawl-id NAME: ${why}`);
  if (flags.crawlId !== undefined && flags.redis === undefined) throw new UsageError('--crawl-id goes with --redis URL');
  if (flags.redis !== undefined && !/^rediss?:\/\//i.test(flags.redis))
    throw new UsageError(`--redis expects a URL like redis://host:6379/0, got ${JSON.stringify(flags.redis)}`);
  if (flags.redisCa !== undefined && (flags.redis === undefined || !/^rediss:\/\//i.test(flags.redis)))
    throw new UsageError('--redis-ca goes with a TLS Redis URL, --redis rediss://host:6380/0');
  if (flags.crawlId !== undefined && !CRAWL_ID.test(flags.crawlId)) {
    throw new UsageError(
      `--crawl-id expects a name of letters, digits and . _ : - (up to 128, starting with a letter or digit), got ${JSON.stringify(flags.crawlId)}`,
    );
  }
}

/**
 * How to reach Redis: the URL (user and password in it: `redis://user:pass@host`,
 * never printed) and, for `rediss://` with a private CA, `--redis-ca`'s
 * certificates (Node's bundled roots stay trusted too). A separate flag from
 * `--ca`, which widens the trust of every crawled site: the two are
 * different authorities.
 */
export function redisConnection(flags: { redis?: string; redisCa?: string }, cwd: string): { url: string; ca?: string[] } {
  const url = flags.redis!;
  if (flags.redisCa === undefined) return { url };
  return { url, ca: [...rootCertificates, readCaFile(resolve(cwd, flags.redisCa), flags.redisCa)] };
}

/** Checks the state flags together; opens nothing. */
export function checkStateFlags(flags: CrawlFlags): void {
  if (flags.fresh && flags.state === undefined) throw new UsageError('--fresh goes with --state FILE (a Redis crawl starts over under a new --crawl-id)');
  if (flags.redis !== undefined && flags.state !== undefined) throw new UsageError("--state and --redis are two places for one crawl's state: give one");
  checkRedisFlags(flags, 'every worker of one crawl gives the same name');
  if (flags.worker !== undefined && flags.redis === undefined) throw new UsageError('--worker goes with --redis URL');
  if (flags.lease !== undefined && flags.redis === undefined) throw new UsageError('--lease goes with --redis URL');
  if (flags.lease !== undefined) leaseMs(flags.lease);
  if (flags.waitForCrawl !== undefined && flags.redis === undefined) throw new UsageError('--wait-for-crawl goes with --redis URL');
  if (flags.waitForCrawl !== undefined) waitForCrawlMs(flags.waitForCrawl);
  if (flags.worker !== undefined && !/^[^\s"\\]{1,100}$/.test(flags.worker))
    throw new UsageError(`--worker expects a name without spaces or quotes (up to 100 characters), got ${JSON.stringify(flags.worker)}`);
}

/** The target the flags name, or undefined for a crawl kept in memory. Redis is reached when `peek` is called. */
export async function openStateTarget(
  flags: CrawlFlags,
  cwd: string,
  settings: CrawlSettings,
  clock: Clock,
  log: Logger,
  metrics?: Pick<CrawlMetrics, 'storeTimer'>,
  signingKeys: readonly WorkerKey[] = [],
): Promise<StateTarget | undefined> {
  if (flags.state !== undefined) {
    const { SqliteStore } = await import('../store/sqlite-store.js');
    let stop: ((err: Error) => void) | undefined;
    const store = new SqliteStore(resolve(cwd, flags.state), {
      fresh: flags.fresh,
      now: () => clock.now(),
      onLowSpace: (err) => stop?.(err),
      timed: metrics?.storeTimer('sqlite'),
    });
    return {
      store,
      label: flags.state,
      shared: false,
      peek: async () => store.peekMeta(),
      onStop: (handler) => {
        stop = handler;
      },
      ledger: {
        mark: () => store.outputMark(),
        track: (path, position) => store.trackOutput(path, position),
        isDone: (url, claimedAt) => store.isDone(url, claimedAt),
        willHandOut: (url) => store.willHandOut(url),
      },
      close: async () => store.close(),
    };
  }
  if (flags.redis === undefined) return undefined;
  const { RedisStore } = await import('../store/redis-store.js');
  const { url, ca } = redisConnection(flags, cwd);
  const worker = flags.worker ?? `${hostname()}-${process.pid}`;
  const where = redactRedisUrl(url);
  let stop: ((err: Error) => void) | undefined;
  const store = new RedisStore({
    url,
    ca,
    crawlId: flags.crawlId!,
    worker,
    leaseMs: flags.lease === undefined ? undefined : leaseMs(flags.lease),
    now: () => clock.now(),
    timed: metrics?.storeTimer('redis'),
    policyFor: (key) => settings.policyFor(key),
    // Without --max-pages nothing waits for the shared count of pages started: it only reports.
    countStartsLater: !Number.isFinite(settings.maxPages),
    signingKeys,
    onLost: (err) =>
      log.warn(`Redis at ${where} stopped answering (${err.message}): starting nothing new, retrying with backoff; requests already running finish`),
    onReconnected: (ms) => log.info(`Redis at ${where} answers again after ${(ms / 1000).toFixed(1)}s; crawling on`),
    // Noticed by the store's own timer too, so a worker with nothing to ask stops as soon as one that asks.
    onStateLost: (err) => stop?.(err),
  });
  const label = `Redis crawl "${flags.crawlId}"`;
  return {
    store,
    label,
    shared: true,
    worker,
    // A worker whose keys do not fit the crawl's is refused before it opens anything (the store checks again, atomically, as it joins).
    peek: async () => {
      const held = await store.peekMeta();
      const refused = held && signingKeyRefusal(label, held.keyid, signingKeys);
      if (refused) throw new SigningKeyMismatchError(refused);
      if (held && isRotation(held.keyid, signingKeys))
        log.info(`${label}: signed with --sign-key ${signingKeys[0].file} from now on, not ${signingKeys[1].file}: workers joining need the new key`);
      return held;
    },
    onStop: (handler) => {
      stop = handler;
    },
    close: () => store.close(),
  };
}

/** How long a seedless worker waits for its crawl by default: long enough for workers started together. */
export const DEFAULT_WAIT_FOR_CRAWL_MS = 30_000;

/** `--wait-for-crawl`: a duration from 0 (no wait) to 24h; a bare number is seconds, as for --max-time. */
export function waitForCrawlMs(text: string): number {
  const ms = durationFlag('--wait-for-crawl', text);
  if (ms > 24 * 3_600_000) throw new UsageError(`--wait-for-crawl: expected a duration of at most 24h, got ${JSON.stringify(text)}`);
  return ms;
}

/** `--lease`: long enough to renew a few times over a slow Redis round trip, short enough to matter. */
function leaseMs(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw new UsageError(`--lease: ${(err as Error).message}`);
  }
  if (!(ms >= 1_000 && ms <= 24 * 3_600_000)) throw new UsageError(`--lease expects a duration from 1s to 24h, got ${JSON.stringify(text)}`);
  return ms;
}

/** A Redis URL without its password, for messages. */
export const redactRedisUrl = redactUrl;
