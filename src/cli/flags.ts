/**
 * What the CLI boundary (cli.ts) hands to its commands: exit codes, parsed
 * flags and the process streams. Kept apart so commands and the boundary
 * import it without importing each other.
 */
import { UsageError } from '../config/seeds.js';
import { parseDuration, secondsIfBare } from '../config/units.js';

/**
 * Exit codes (documented in `crawl --help` and the README): 0 finished,
 * 1 internal error (or `crawl check`: the URL would be skipped; or a page
 * handler failed with `--handler-errors stop`), 2 usage or
 * config error, 3 nothing could be reached (every seed failed: no HTTP answer
 * at all; exit-code.ts), 4 the machine refused a file the crawl writes
 * (disk full, read-only file system, no permission: an environment error,
 * not a bug), 5 a shared crawl's state is gone from Redis (restarted without
 * persistence, flushed, evicted: the crawl stopped partway and cannot be
 * resumed), 130 SIGINT, 143 SIGTERM.
 */
/**
 * A duration flag's value in ms: a bare number is seconds (`--max-time 90`),
 * else a duration ("30m"); a value that is neither is one usage line naming
 * the flag. Bounds are the caller's (each flag words its own).
 */
export function durationFlag(name: string, text: string): number {
  try {
    return parseDuration(secondsIfBare(text) as string);
  } catch (err) {
    throw new UsageError(`${name}: ${(err as Error).message}`);
  }
}

export const EXIT = { ok: 0, internal: 1, usage: 2, nothingReached: 3, io: 4, stateLost: 5, interrupted: 130, terminated: 143 } as const;

export interface CrawlFlags {
  config?: string;
  concurrency?: string;
  rate?: string;
  hostConcurrency?: string;
  ipRate?: string;
  ipConcurrency?: string;
  maxDepth?: string;
  maxPages?: string;
  maxPagesPerHost?: string;
  maxQueued?: string;
  scope?: string;
  include?: string[];
  exclude?: string[];
  userAgent?: string;
  header?: string[];
  cookie?: string[];
  cookieJar?: string;
  proxy?: string;
  insecure?: boolean;
  ca?: string;
  /** `--sign-key FILE`, once (or twice during a key rotation: new, then old). */
  signKey?: string[];
  signatureAgent?: string;
  http2?: boolean;
  /** False with --no-latency-backoff: a host's rate no longer follows its response time. */
  latencyBackoff?: boolean;
  timeout?: string;
  maxBody?: string;
  output?: string;
  seedsFile?: string;
  emitSkipped?: boolean;
  emitRobots?: boolean;
  links?: boolean;
  sitemap?: string[];
  sitemaps?: boolean;
  checkLinks?: boolean;
  allowPrivate?: boolean;
  robots?: boolean;
  quiet?: boolean;
  state?: string;
  fresh?: boolean;
  /** With --state: a new pass over every page the file knows, asking for changes only. */
  recrawl?: boolean;
  /** A previous run's records (JSON lines): their validators and digests, for a re-crawl without a state file. */
  since?: string;
  /** With --state: never finish; ask each page again after an interval that adapts to how often it changes. */
  revisit?: boolean;
  /** --revisit's shortest interval. @default 1h */
  revisitMin?: string;
  /** --revisit's longest interval. @default 30d */
  revisitMax?: string;
  redis?: string;
  /** With a rediss:// URL: PEM file of the CA that signed Redis's certificate. */
  redisCa?: string;
  crawlId?: string;
  worker?: string;
  lease?: string;
  /** With --redis and no seeds: how long to wait for the crawl to appear. */
  waitForCrawl?: string;
  report?: string;
  stats?: string;
  maxTime?: string;
  content?: string;
  maxContent?: string;
  extract?: string[];
  followCanonical?: boolean;
  fetchDenied?: boolean;
  archiveNoarchive?: boolean;
  /** What the output is for: search, train-ai, ai-input, tdm (comma-separated). */
  purpose?: string;
  /** Per-request price limit for hosts that price pages (HTTP 402). */
  maxPrice?: string;
  /** The crawl's spend cap. */
  budget?: string;
  saveDir?: string;
  warc?: string;
  render?: string | boolean;
  renderConcurrency?: string;
  renderTimeout?: string;
  renderBlock?: string;
  browser?: string;
  verbose?: boolean;
  /** `[HOST:]PORT` for the Prometheus endpoint (loopback unless a host is given). */
  metrics?: string;
  /** Hosts with per-host series (top by requests). */
  metricsHosts?: string;
  /** `text` (default) or `json`: stderr messages as JSON lines. */
  logFormat?: string;
  /** An ES module exporting `handle(page, ctx)` or a router of them. */
  handler?: string;
  handlerTimeout?: string;
  handlerErrors?: string;
  handlerConcurrency?: string;
  /** Write only the items handlers push, not the page records. */
  itemsOnly?: boolean;
}

export interface StatusFlags {
  state?: string;
  /** The crawl's config file, for its hosts' quiet hours (default: ./crawler.config.json when present). */
  config?: string;
  redis?: string;
  redisCa?: string;
  crawlId?: string;
  json?: boolean;
  top?: string;
  /** Print again every interval (true: the default 2s) until Ctrl-C or the crawl ends. */
  watch?: string | true;
}

export interface ReportFlags {
  output?: string;
  /** Read the records a `--state` crawl kept, instead of a records file. */
  state?: string;
  /** Or the records every worker of a `--redis` crawl kept (with crawlId). */
  redis?: string;
  redisCa?: string;
  crawlId?: string;
  config?: string;
  rate?: string;
  quiet?: boolean;
}

export interface CheckFlags {
  config?: string;
  purpose?: string;
  fetchDenied?: boolean;
  render?: string | boolean;
  seed?: string[];
  scope?: string;
  include?: string[];
  exclude?: string[];
  userAgent?: string;
  robotsFile?: string;
  robots?: boolean;
  timeout?: string;
  rate?: string;
  hostConcurrency?: string;
  ipRate?: string;
  ipConcurrency?: string;
  allowPrivate?: boolean;
  /** What requests carry, as for a crawl: the `request:` line shows it (secrets masked). */
  header?: string[];
  cookie?: string[];
  cookieJar?: string;
  proxy?: string;
  insecure?: boolean;
  ca?: string;
  signKey?: string[];
  signatureAgent?: string;
}

/** `crawl keys new DIR` and `crawl keys check URL`. */
export interface KeysFlags {
  /** keys check: the key in use (new, then old during a rotation). */
  signKey?: string[];
  /** keys new: overwrite an existing key in DIR. */
  force?: boolean;
  /** keys new: older keys (their private.jwk or directory) the new directory still lists. */
  keep?: string[];
  userAgent?: string;
  timeout?: string;
  insecure?: boolean;
  ca?: string;
}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** Where signals are listened for; tests pass an EventEmitter. */
  signals: NodeJS.EventEmitter;
  cwd: string;
}
