/**
 * Runs a real Crawler (its real scheduler, limiters, robots and feedback
 * handling) against a scripted web on a FakeClock, with a seeded random
 * source: the crawl-harness.ts `crawl()` of fake time. A crawl that would
 * take minutes of real time finishes in milliseconds, and every run of a
 * given script and seed is identical, so timing can be asserted exactly.
 */
import { buildSettings, validateConfig, type CliOverrides } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { CrawlStore } from '../../src/store/crawl-store.js';
import type { CrawlStats } from '../../src/output/summary.js';
import type { OutputRecord, PageRecord, SkipRecord } from '../../src/types.js';
import { FakeClock, type RunLimits } from './fake-clock.js';
import { createScriptedFetcher, type ScriptedFetcher, type ScriptedSite } from './scripted-fetcher.js';
import { seededRandom } from './seeded-random.js';
import { parseRecords } from './crawl-harness.js';

export interface FakeCrawlOptions {
  /** The scripted web, by hostname. Seeds and links use these hosts on the default port. */
  sites: Record<string, ScriptedSite>;
  seeds: string[];
  /** A config file's content (validated as one). */
  config?: Record<string, unknown>;
  /** CLI overrides; `emitSkipped` defaults to true, as in crawl-harness. */
  flags?: CliOverrides;
  /** Seed of the random source given to the crawler (backoff and jitter). @default 1 */
  seed?: number;
  /** Default time from arrival to response headers. @default 1 */
  latencyMs?: number;
  /** The servers' wall clock minus ours. @default 0 */
  serverClockSkewMs?: number;
  /** Bounds on the simulated run. @default 1 h of simulated time, 100 000 timers */
  limits?: Omit<RunLimits, 'describe'>;
  /** DNS: host name → address; the crawl then resolves hosts before scheduling them (scripted-fetcher.ts). @default none */
  addresses?: Record<string, string>;
  /** How long each lookup takes. @default 0 */
  dnsMs?: number | ((host: string) => number);
  /** Write robots.txt records (`--emit-robots`). @default false */
  robotsRecords?: boolean;
  /** The crawl's store, made on the run's clock (a SqliteStore in a temp dir, say). @default the Crawler's own MemoryStore */
  store?: (clock: FakeClock) => CrawlStore;
  /** Sees the crawler and the clock before the crawl starts (to stop it, read its progress, …). */
  onCrawler?: (crawler: Crawler, clock: FakeClock, fetcher: ScriptedFetcher) => void;
}

export interface FakeCrawlRun {
  records: OutputRecord[];
  pages: PageRecord[];
  skipped: SkipRecord[];
  stats: CrawlStats;
  /** Simulated milliseconds from run() to its end. */
  wallMs: number;
  /** Clock time at which run() was called. */
  startedAt: number;
  clock: FakeClock;
  /** The scripted web: its server-side request log and client-side attempts. */
  fetcher: ScriptedFetcher;
  crawler: Crawler;
}

/** Runs a crawl of a scripted web to completion in simulated time. */
export async function fakeCrawl(opts: FakeCrawlOptions): Promise<FakeCrawlRun> {
  const settings = buildSettings(validateConfig(opts.config ?? {}, 'test config'), { emitSkipped: true, ...opts.flags });
  const clock = new FakeClock();
  const fetcher = createScriptedFetcher({
    clock,
    sites: opts.sites,
    timeouts: settings.timeouts,
    maxBodyBytes: settings.maxBodyBytes,
    latencyMs: opts.latencyMs,
    serverClockSkewMs: opts.serverClockSkewMs,
    addresses: opts.addresses,
    dnsMs: opts.dnsMs,
  });
  // Records go through JSON as they would on stdout, so tests see exactly what a reader would.
  const lines: string[] = [];
  const sink: RecordSink = {
    write(record) {
      lines.push(JSON.stringify(record));
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
    broken: false,
    get written() {
      return lines.length;
    },
  };
  const crawler = new Crawler({
    settings,
    seeds: opts.seeds,
    clock,
    fetcher,
    sink,
    store: opts.store?.(clock),
    random: seededRandom(opts.seed ?? 1),
    robotsRecords: opts.robotsRecords,
  });
  opts.onCrawler?.(crawler, clock, fetcher);
  const startedAt = clock.now();
  const stats = await clock.runUntilDone(crawler.run(), {
    ...opts.limits,
    describe: () => `progress ${JSON.stringify(crawler.progress())}, ${fetcher.pending} fetch(es) pending`,
  });
  const wallMs = clock.now() - startedAt;
  return {
    ...parseRecords(lines),
    stats,
    wallMs,
    startedAt,
    clock,
    fetcher,
    crawler,
  };
}

/**
 * Float slack for comparing computed instants: the limiter adds margins like
 * `gap * 1.01 + 3` to epoch-scale times, and the timer's delay is re-added to
 * `now`, so an exact instant can come back a few ulps off. Far below 1 µs.
 */
export const EPS = 1e-6;

/** Path (with query) of a URL. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
