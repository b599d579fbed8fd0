/**
 * `crawl(options)`: the crawler as an async iterable of the records the CLI
 * writes, one per fetched URL (and, with `emitSkipped`, per skipped URL).
 *
 * ```js
 * for await (const record of crawl({ seeds: ['https://example.com/'], maxPages: 10 })) console.log(record.url);
 * ```
 *
 * Nothing happens until the first record is pulled. The consumer sets the
 * pace: records wait in a bounded buffer (`highWaterMark`), and the crawl
 * starts no new request while it is full. Leaving the loop early (`break`,
 * `return`, a throw) stops the crawl, cancels its requests and closes its
 * connections before the loop statement completes.
 */
import { systemClock } from '../clock.js';
import { createStats, finishStats, type CrawlStats } from '../output/summary.js';
import type { ProgressSnapshot } from '../output/progress.js';
import type { OutputRecord } from '../types.js';
import { createCrawlSession, type CrawlSession } from './crawl-session.js';
import type { CrawlLog, CrawlOptions } from './options.js';
import { createRecordStream } from './record-stream.js';
import { CRAWL_ONLY, resolveOptions } from './resolve-options.js';

/** A running (or not yet started) crawl: iterate it for records. */
export interface CrawlRun extends AsyncIterable<OutputRecord> {
  /** The next record; the first call starts the crawl. */
  next(): Promise<IteratorResult<OutputRecord, undefined>>;
  /** Leaves early (what `break` calls): stops the crawl and resolves once its connections are closed. */
  return(): Promise<IteratorResult<OutputRecord, undefined>>;
  [Symbol.asyncIterator](): CrawlRun;
  /** Live counters (fetched, queued, in flight, …); all zero before the first pull. */
  progress(): ProgressSnapshot;
  /**
   * Graceful stop: nothing new starts, requests in flight finish and are
   * yielded, queued URLs end as `interrupted`. Use the `signal` option to
   * cancel requests in flight too. Before the first pull: nothing will run.
   */
  stop(): void;
  /**
   * The final statistics, once the iteration has ended (completely, by
   * `break`, or by `stop()`/the signal). Rejects with the error the
   * iteration threw, if any.
   */
  readonly done: Promise<CrawlStats>;
}

const IDLE: ProgressSnapshot = Object.freeze({ fetched: 0, queued: 0, inFlight: 0, errors: 0, skipped: 0, hostsWaiting: 0, hostsActive: 0, elapsedMs: 0 });

/**
 * Starts nothing yet; validates `options` now.
 *
 * @throws UsageError for missing or invalid `seeds`.
 * @throws ConfigError listing every other problem, one per line, worded as
 *   for a config file (`options: defaults.rate: expected a rate like "2/s" …`).
 */
export function crawl(options: CrawlOptions): CrawlRun {
  const { settings, seeds, extra } = resolveOptions(options, CRAWL_ONLY);
  const signal = extra.signal as AbortSignal | undefined;
  const log = extra.log as CrawlLog | undefined;
  if (!settings.robots.enabled) log?.warn('robots.txt is IGNORED (robots.enabled is false): you are crawling pages their owners asked crawlers to leave alone');

  let session: CrawlSession | undefined;
  let stopRequested = false;
  let settled = false;
  let resolveDone!: (stats: CrawlStats) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<CrawlStats>((resolve, reject) => {
    resolveDone = (stats) => ((settled = true), resolve(stats));
    rejectDone = (error) => ((settled = true), reject(error));
  });
  // A caller that only iterates sees the error there; `done` must not also
  // surface it as an unhandled rejection.
  done.catch(() => {});

  const stream = createRecordStream({
    highWaterMark: extra.highWaterMark as number | undefined,
    onCancel: () => {
      session?.stop();
      session?.abort();
    },
  });

  /** Ends a crawl that never ran (left, stopped or aborted before the first pull): nothing to fetch or release. */
  const endUnstarted = (): void => {
    const stats = createStats(systemClock);
    finishStats(stats, systemClock, { interrupted: true });
    stream.close();
    resolveDone(stats);
  };

  const start = (): void => {
    if (session || settled) return;
    if (signal?.aborted || stopRequested) return endUnstarted();
    session = createCrawlSession({ settings, seeds, sink: stream, signal, log });
    session.run().then(resolveDone, (error: unknown) => {
      stream.fail(error);
      rejectDone(error);
    });
  };

  const run: CrawlRun = {
    next() {
      start();
      return stream.next();
    },
    async return() {
      stream.cancel();
      if (session) await done.catch(() => {});
      else if (!settled) endUnstarted();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return run;
    },
    progress: () => session?.progress() ?? { ...IDLE },
    stop() {
      stopRequested = true;
      session?.stop();
    },
    done,
  };
  return run;
}
