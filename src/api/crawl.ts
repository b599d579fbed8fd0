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
 *
 * Importing the package loads the options' validation and little else: the
 * crawl loop and its transport (crawl-session.ts) load at the first pull, and
 * render/, the archive writers and prom-client only for the crawls that use
 * them.
 */
import { systemClock } from '../clock.js';
import { createStats, finishStats, statsToJson, type CrawlStats, type CrawlSummary } from '../output/summary.js';
import type { ProgressSnapshot } from '../output/progress.js';
import type { CrawlSettings } from '../config/settings-types.js';
import type { OutputRecord } from '../types.js';
import type { CrawlSession } from './crawl-session.js';
import { sinceEntry, type SinceEntry } from '../recrawl/recrawl-since.js';
import type { CrawlLog, CrawlOptions } from './options.js';
import { createRecordStream } from './record-stream.js';
import { openPageArchive, type ArchiveTargets } from '../archive/open-archive.js';
import type { ClosableArchive } from '../archive/page-archive.js';
import { wrapSink, type RecordSink } from '../output/sink.js';
import { CRAWL_ONLY, resolveOptions } from './resolve-options.js';
import { checkTargets, type NamedTarget } from '../output/output-targets.js';
import { findBrowser } from '../render/browser-path.js';
import type { CrawlMetrics } from '../output/metrics.js';
import type { MetricsEndpoint } from '../output/metrics-endpoint.js';
import { handlerSettings } from '../handler/handler-options.js';
import type { HandlerSpec } from '../handler/handler-types.js';

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
   * `break`, or by `stop()`/the signal): plain JSON, the object `--stats`
   * writes (instants as ISO 8601 strings, durations in ms). Rejects with the
   * error the iteration threw, if any.
   */
  readonly done: Promise<CrawlSummary>;
}

const IDLE: ProgressSnapshot = Object.freeze({ fetched: 0, queued: 0, inFlight: 0, errors: 0, skipped: 0, hostsWaiting: 0, hostsActive: 0, elapsedMs: 0 });

/**
 * Starts nothing yet; validates `options` now.
 *
 * @throws UsageError for missing or invalid `seeds`.
 * @throws BrowserMissingError (code BROWSER_MISSING) when some host renders (`render`) and no browser is found.
 * @throws ConfigError listing every other problem, one per line, worded as
 *   for a config file (`options: defaults.rate: expected a rate like "2/s" …`).
 */
export function crawl(options: CrawlOptions): CrawlRun {
  const { settings, seeds, extra } = resolveOptions(options, CRAWL_ONLY);
  const targets: ArchiveTargets = { saveDir: extra.saveDir as string | undefined, warc: extra.warc as string | undefined };
  const signal = extra.signal as AbortSignal | undefined;
  const log = extra.log as CrawlLog | undefined;
  // Rendering without a browser fails here, before anything runs (BrowserMissingError, code BROWSER_MISSING).
  const browserPath = settings.render?.enabled ? findBrowser(settings.render.browser) : undefined;
  const metricsAt = extra.metrics as string | undefined;
  if (!settings.robots.enabled) log?.warn('robots.txt is IGNORED (robots.enabled is false): you are crawling pages their owners asked crawlers to leave alone');

  let session: CrawlSession | undefined;
  let stopRequested = false;
  let settled = false;
  let resolveDone!: (stats: CrawlStats) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<CrawlSummary>((resolve, reject) => {
    resolveDone = (stats) => ((settled = true), resolve(statsToJson(stats)));
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
    void stream.close(); // resolves at once: nothing to wait for
    resolveDone(stats);
  };

  const begin = (sessions: SessionModule, archive?: ClosableArchive, metrics?: LibraryMetrics, render?: Rendering, signer?: Signer): void => {
    // The archive's files are finished before the stream ends, so a loop that has ended finds them complete.
    const sink: RecordSink = archive ? withArchiveClose(stream, archive) : stream;
    try {
      session = sessions.createCrawlSession({
        settings,
        seeds,
        sink,
        signal,
        log,
        archive,
        robotsRecords: extra.emitRobots === true,
        render,
        signer,
        since: sinceOf(extra.since),
        handler:
          extra.handle === undefined
            ? undefined
            : handlerSettings(extra.handle as HandlerSpec, {
                timeout: extra.handlerTimeout as string | number | undefined,
                errors: extra.handlerErrors as 'record' | 'stop' | undefined,
                concurrency: extra.handlerConcurrency as number | undefined,
                crawlConcurrency: settings.concurrency,
              }),
      });
    } catch (error) {
      // A CA or cookie file that cannot be read: the first pull rejects with it.
      void metrics?.endpoint.close();
      void archive?.abandon();
      stream.fail(error);
      rejectDone(error);
      return;
    }
    const failed = (error: unknown): void => {
      void archive?.abandon(); // a failed crawl's WARC stays .partial
      stream.fail(error);
      rejectDone(error);
    };
    if (!metrics) {
      session.run().then(resolveDone, failed);
      return;
    }
    metrics.metrics.attach(session);
    // The endpoint ends with the crawl, whichever way it ends.
    session.run().then(
      async (stats) => (await metrics.endpoint.close(), resolveDone(stats)),
      async (error: unknown) => (await metrics.endpoint.close(), failed(error)),
    );
  };

  let opening = false;
  const start = (): void => {
    if (session || opening || settled) return;
    if (signal?.aborted || stopRequested) return endUnstarted();
    // Loaded and opened at the first pull, as the crawl starts: a path that cannot be written, or a port that cannot be bound, fails that pull, before any request.
    opening = true;
    const cwd = process.cwd();
    let sessions!: SessionModule;
    let metrics: LibraryMetrics | undefined;
    let render: Rendering | undefined;
    let signer: Signer | undefined;
    import('./crawl-session.js')
      .then((loaded) => (sessions = loaded))
      .then(() => (browserPath === undefined ? undefined : sessions.loadRendering(browserPath)))
      .then((loaded) => (render = loaded))
      // A key that cannot be used fails the first pull, before any request.
      .then(() => sessions.setUpSigning(settings, { cwd, now: () => systemClock.wallNow() }))
      .then((loaded) => (signer = loaded))
      .then(() => openLibraryMetrics(metricsAt, extra.metricsHosts as number | undefined, log))
      .then((opened) => (metrics = opened))
      .then(() => checkTargets(libraryTargets(targets, settings), cwd))
      .then(() => openPageArchive(targets, { cwd, settings, resumed: false, now: systemClock.wallNow(), names: { saveDir: 'saveDir', warc: 'warc' } }))
      .then(
        async (opened) => {
          opening = false;
          if (!settled && !signal?.aborted && !stopRequested) return begin(sessions, opened?.archive, metrics, render, signer);
          // Left, stopped or aborted while the crawl was loading or its files were being opened: nothing runs.
          await opened?.archive.close().catch(() => {});
          await metrics?.endpoint.close();
          if (!settled) endUnstarted();
        },
        async (error: unknown) => {
          opening = false;
          await metrics?.endpoint.close();
          stream.fail(error);
          rejectDone(error);
        },
      );
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

type SessionModule = typeof import('./crawl-session.js');
type Rendering = Awaited<ReturnType<SessionModule['loadRendering']>>;
type Signer = Awaited<ReturnType<SessionModule['setUpSigning']>>;

interface LibraryMetrics {
  metrics: CrawlMetrics;
  endpoint: MetricsEndpoint;
}

/** The `metrics` option's series and endpoint, bound; prom-client loads only here. */
async function openLibraryMetrics(at: string | undefined, topHosts: number | undefined, log: CrawlLog | undefined): Promise<LibraryMetrics | undefined> {
  if (at === undefined) return undefined;
  const { openMetricsEndpoint, parseMetricsAddress } = await import('../output/metrics-endpoint.js');
  const { createCrawlMetrics } = await import('../output/metrics.js');
  const metrics = createCrawlMetrics({ topHosts });
  const endpoint = await openMetricsEndpoint(parseMetricsAddress(at, 'metrics'), metrics, 'metrics');
  log?.info(`metrics at ${endpoint.url}`);
  return { metrics, endpoint };
}

/** `since`: the page records among a previous run's, as a re-crawl's history (recrawl/recrawl-since.ts); undefined without it. */
function sinceOf(records: unknown): SinceEntry[] | undefined {
  if (!Array.isArray(records)) return undefined;
  const byUrl = new Map<string, SinceEntry>();
  for (const r of records) {
    const entry = sinceEntry(r);
    if (entry !== undefined) byUrl.set(entry.url, entry);
  }
  return [...byUrl.values()];
}

/** The files a library crawl writes or reads, for checkTargets: a warc inside saveDir, or over the cookie jar, is refused. */
function libraryTargets(targets: ArchiveTargets, settings: CrawlSettings): NamedTarget[] {
  const named: NamedTarget[] = [];
  if (targets.saveDir !== undefined) named.push({ option: 'saveDir', path: targets.saveDir, writes: true, tree: true });
  if (targets.warc !== undefined) named.push({ option: 'warc', path: targets.warc, writes: true });
  if (settings.requests.cookies.jar !== null) named.push({ option: 'cookies.jar', path: settings.requests.cookies.jar, writes: false });
  if (settings.requests.tls.ca !== null) named.push({ option: 'tls.ca', path: settings.requests.tls.ca, writes: false });
  return named;
}

/** `sink`, whose close() first finishes the archive's files (the WARC renamed into place); a failure there fails the crawl. */
function withArchiveClose(sink: RecordSink, archive: ClosableArchive): RecordSink {
  return wrapSink(sink, {
    async close() {
      await archive.close();
      await sink.close();
    },
  });
}
