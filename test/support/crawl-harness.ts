import dc from 'node:diagnostics_channel';
import type { LookupFunction } from 'node:net';
import { PassThrough } from 'node:stream';
import { systemClock } from '../../src/clock.js';
import { buildSettings, validateConfig, type CliOverrides } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import { createFetcher, type Fetcher } from '../../src/fetch/fetcher.js';
import { createJsonLinesSink } from '../../src/output/sink.js';
import type { CrawlStats } from '../../src/output/summary.js';
import type { OutputRecord, PageRecord, SkipRecord } from '../../src/types.js';

export interface CrawlRun {
  records: OutputRecord[];
  pages: PageRecord[];
  skipped: SkipRecord[];
  /** Raw stdout lines, to check every one parses. */
  lines: string[];
  stats: CrawlStats;
  wallMs: number;
  /**
   * Every request as undici wrote it (its diagnostics channel, in this process), in order. Gaps are judged
   * by these: a server in this process stamps an arrival late when a parallel test file holds the core.
   */
  written: Written[];
}

/** A request as undici wrote it: when (performance.now()), and where. */
export type Written = { at: number; origin: string; path: string };

/** Runs `run`, collecting every request undici writes meanwhile (its diagnostics channel, in this process). */
export async function writtenDuring<T>(run: () => Promise<T>): Promise<{ result: T; written: Written[] }> {
  const written: Written[] = [];
  const onSend = (message: unknown) => {
    const { request } = message as { request: { origin: string; path: string } };
    written.push({ at: performance.now(), origin: request.origin, path: request.path });
  };
  dc.subscribe('undici:client:sendHeaders', onSend);
  try {
    return { result: await run(), written };
  } finally {
    dc.unsubscribe('undici:client:sendHeaders', onSend);
  }
}

export interface CrawlHooks {
  onCrawler?: (c: Crawler) => void;
  /** Resolves host names in place of the fetcher's own (map names to chosen addresses). */
  lookup?: LookupFunction;
  /** The crawler's slow-request threshold (default 10 s). */
  slowAfterMs?: number;
  /** Wraps the real fetcher (to record or alter what the crawler asks of it). */
  wrapFetcher?: (fetcher: Fetcher) => Fetcher;
}

/** Runs a real crawl in-process (real fetcher, real clock) and collects the JSON lines it writes. */
export async function crawl(seeds: string[], config: Record<string, unknown> = {}, flags: CliOverrides = {}, hooks: CrawlHooks = {}): Promise<CrawlRun> {
  const settings = buildSettings(validateConfig(config, 'test config'), { emitSkipped: true, ...flags });
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const sink = createJsonLinesSink(stream);
  const real = createFetcher({
    userAgent: settings.userAgent,
    timeouts: settings.timeouts,
    maxBodyBytes: settings.maxBodyBytes,
    clock: systemClock,
    lookup: hooks.lookup,
  });
  const fetcher = hooks.wrapFetcher ? hooks.wrapFetcher(real) : real;
  const crawler = new Crawler({ settings, seeds, clock: systemClock, fetcher, sink, slowAfterMs: hooks.slowAfterMs });
  hooks.onCrawler?.(crawler);
  const t0 = performance.now();
  const { result: stats, written } = await writtenDuring(() => crawler.run());
  const wallMs = performance.now() - t0;
  await sink.close();
  await fetcher.close();
  const lines = text.split('\n').filter((l) => l !== '');
  return { ...parseRecords(lines), lines, stats, wallMs, written };
}

/** JSON lines as records, and split by type. */
export function parseRecords(lines: readonly string[]): { records: OutputRecord[]; pages: PageRecord[]; skipped: SkipRecord[] } {
  const records = lines.map((l) => JSON.parse(l) as OutputRecord);
  return {
    records,
    pages: records.filter((r): r is PageRecord => r.type === 'page'),
    skipped: records.filter((r): r is SkipRecord => r.type === 'skipped'),
  };
}

/** Path (with query) of a URL. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
