/**
 * One crawl from validated settings to a record sink: the code path shared by
 * `crawl()` (sink = a record stream for `for await`) and the CLI (sink =
 * stdout or a file). It owns the fetcher, so whoever runs a session never
 * leaks its sockets.
 *
 * Contract:
 * - `run()` resolves with the final stats once every record has been written
 *   and the sink closed; the fetcher is closed before it settles, whether the
 *   crawl finished, was stopped or failed. A failed run leaves the sink open
 *   (a file target keeps its `.partial` for inspection).
 * - `stop()` is graceful (nothing new starts, requests in flight finish);
 *   `abort()` also cancels the requests in flight. An aborted `signal` does
 *   both. Queued URLs end as `interrupted` skips, as in the CLI.
 * - render/ is loaded only by `loadRendering`, which a caller awaits before
 *   the session when some host renders: a crawl that renders nothing never
 *   loads it.
 */
import { systemClock, type Clock } from '../clock.js';
import { Crawler, type CrawlerOptions } from '../crawl/crawler.js';
import { createFetcher } from '../fetch/fetcher.js';
import { setUpRequests, type RequestSetup } from '../fetch/request-setup.js';
import type { RequestSigner } from '../identity/request-signer.js';

export { setUpSigning } from '../fetch/request-setup.js';
import { INSECURE_WARNING } from '../fetch/tls.js';
import type { ProgressSnapshot } from '../output/progress.js';
import type { HostCounts } from '../crawl/progress-snapshot.js';
import type { RecordSink } from '../output/sink.js';
import type { CrawlStats } from '../output/summary.js';
import type { CrawlStore } from '../store/crawl-store.js';
import type { PageArchive } from '../archive/page-archive.js';
import type { CrawlSettings } from '../config/settings-types.js';
import type { CrawlLog } from './options.js';
import type { RenderTotals } from '../output/metrics.js';

export interface CrawlSessionOptions {
  /** Validated settings (buildSettings). */
  settings: CrawlSettings;
  /** Canonical seeds (checkSeeds). */
  seeds: string[];
  /** Where records go; closed by `run()` on success. */
  sink: RecordSink;
  /**
   * Stops the crawl and cancels requests in flight when aborted.
   * @default none
   */
  signal?: AbortSignal;
  /** @default none */
  log?: CrawlLog;
  /** @default systemClock */
  clock?: Clock;
  /** Where the crawl's state lives (closed by whoever opened it). @default a new MemoryStore */
  store?: CrawlStore;
  /** Relative paths in the settings (`--ca`, `--cookie-jar`) are resolved against this. @default process.cwd() */
  cwd?: string;
  /** What requests carry, already set up (the CLI does it before it opens any output); @default set up from `settings` */
  requests?: RequestSetup;
  /** Signs every request (`setUpSigning`); required when `settings.identity` names a key. @default `requests.signer`, else none */
  signer?: RequestSigner;
  /** Write a `type: "robots"` record per robots.txt request. @default false */
  robotsRecords?: boolean;
  /** Where fetched pages are kept (--save-dir, --warc; closed by whoever opened it). @default none */
  archive?: PageArchive;
  /** Rendering, loaded by `loadRendering` with the browser already found; required when some host renders. @default none */
  render?: CrawlerOptions['render'];
  /** Each request a rendering browser makes, and what became of it (`-v`). @default none */
  onSubrequest?: CrawlerOptions['onSubrequest'];
  /** A new pass over what the store holds (crawl/recrawl.ts). @default false */
  recrawl?: boolean;
  /** A previous run's records to compare with (recrawl/recrawl-since.ts). @default none */
  since?: CrawlerOptions['since'];
  /** Ask every page again after an adaptive interval; the crawl never ends by itself (crawl/recrawl.ts). @default none */
  revisit?: CrawlerOptions['revisit'];
  /** The user's page handler (handler/page-handlers.ts). @default none */
  handler?: CrawlerOptions['handler'];
  /** Where a failing handler's stack goes (`-v`). @default nowhere */
  debug?: CrawlerOptions['debug'];
}

export interface CrawlSession {
  /** Crawls to the end; call once. See the module contract. */
  run(): Promise<CrawlStats>;
  /** Graceful stop: nothing new starts. */
  stop(): void;
  /** Cancels requests in flight (after or instead of `stop()`). */
  abort(): void;
  progress(): ProgressSnapshot;
  /** Hosts by state (active, waiting, paused, given up), for metrics. */
  hostCounts(): HostCounts;
  /** What rendering has done, for metrics; undefined when no host renders. */
  rendered(): RenderTotals | undefined;
  /** Live statistics; final once `run()` has resolved. */
  readonly stats: CrawlStats;
}

/** What rendering needs, loaded now: the Renderer class (render/ and playwright-core's types; the browser itself starts later) for `browserPath`. */
export async function loadRendering(browserPath: string): Promise<NonNullable<CrawlerOptions['render']>> {
  const { Renderer } = await import('../render/renderer.js');
  return { Renderer, browserPath };
}

export function createCrawlSession(opts: CrawlSessionOptions): CrawlSession {
  const { settings, seeds, sink, signal, log } = opts;
  const clock = opts.clock ?? systemClock;
  // Files (CA, cookie jar) are read now: a bad one fails the start, not the crawl.
  const requests = opts.requests ?? setUpRequests(settings, seeds, { cwd: opts.cwd, now: () => clock.wallNow() });
  if (requests.tls.insecure) log?.warn(INSECURE_WARNING);
  for (const warning of requests.warnings) log?.warn(warning);
  const signer = opts.signer ?? requests.signer;
  if (settings.identity && signer === undefined) throw new Error('the settings name a signing key, and no signer was set up (setUpSigning)');
  const fetcher = createFetcher({
    userAgent: settings.userAgent,
    timeouts: settings.timeouts,
    maxBodyBytes: settings.maxBodyBytes,
    clock,
    extras: requests.extras,
    tls: requests.tls,
    signer,
    // HTTP/2 where a policy asks for it, as many streams as the host's concurrency.
    ...(settings.http2 === true && {
      http2: (origin: string) => {
        const policy = settings.policyFor(new URL(origin).host);
        return policy.http2 ? policy.concurrency : null;
      },
    }),
  });
  if (settings.render?.enabled && opts.render === undefined) throw new Error('some host renders, and no renderer was loaded (loadRendering)');
  const crawler = new Crawler({
    settings,
    seeds,
    clock,
    fetcher,
    sink,
    log,
    store: opts.store,
    archive: opts.archive,
    robotsRecords: opts.robotsRecords,
    seedsKnown: (held) => requests.extras.allowSeeds(held),
    render: opts.render,
    onSubrequest: opts.onSubrequest,
    recrawl: opts.recrawl,
    since: opts.since,
    revisit: opts.revisit,
    handler: opts.handler,
    debug: opts.debug,
  });
  const onAbort = (): void => {
    crawler.stop();
    crawler.abort();
  };

  return {
    get stats() {
      return crawler.stats;
    },
    progress: () => crawler.progress(),
    hostCounts: () => crawler.hostCounts(),
    rendered: () => crawler.renderTotals(),
    stop: () => crawler.stop(),
    abort: () => crawler.abort(),

    async run() {
      const running = crawler.run();
      // Stopped only once run() has begun: a stop before it would be overtaken by it.
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const stats = await running;
        await sink.close();
        return stats;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        await fetcher.close();
      }
    },
  };
}
