/**
 * `crawl <seed-url...>`: a thin client of the library's crawl session
 * (src/api/crawl-session.ts, which `crawl()` is built on too). It adds what
 * only a command has: flags and a config file merged into settings, stdout or
 * a `.partial` file as the sink, a broken pipe ending quietly, SIGINT/SIGTERM
 * with a grace period, progress, the summary and the exit code.
 *
 * What only some crawls use loads only for them, after the flags are read:
 * rendering (render/), the report built during the crawl (report/), the
 * archive writers (archive/), metrics (prom-client), Redis and SQLite; a
 * plain crawl's first request waits for none of it.
 */
import { interruptibleWait } from './interruptible-wait.js';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { durationFlag, EXIT, type CrawlFlags, type Io } from './flags.js';
import { crawlExitCode } from './exit-code.js';
import { systemClock } from '../clock.js';
import { buildSettings, type CliOverrides } from '../config/settings.js';
import { loadConfig } from '../config/load-config.js';
import type { FileConfig } from '../config/file-schema.js';
import { keepAfterCrash } from '../store/output-ledger.js';
import { setUpRequests, setUpSigning, type RequestSetup } from '../fetch/request-setup.js';
import { createCrawlSession, loadRendering, type CrawlSession } from '../api/crawl-session.js';
import { redactCredentials } from '../fetch/redact.js';
import { createLogger } from '../output/logger.js';
import { openOutput, wrapSink } from '../output/sink.js';
import { createProgress } from '../output/progress.js';
import { checkSeeds, readSeedsFile, UsageError } from '../config/seeds.js';
import { checkRecrawlFlags, loadSince, revisitBounds } from './recrawl-flags.js';
import { loadHandler } from './handler-module.js';
import type { HandlerSettings } from '../handler/page-handlers.js';
import type { SinceEntry } from '../recrawl/recrawl-since.js';
import { checkStateFlags, DEFAULT_WAIT_FOR_CRAWL_MS, openStateTarget, waitForCrawlMs, type StateTarget } from './state-target.js';
import type { RecordSink } from '../output/sink.js';
import { openArchive } from './archive-target.js';
import type { CrawlSettings } from '../config/settings-types.js';
import type { Logger } from '../output/logger.js';
import { formatBytes, formatSummary, statsToJson } from '../output/summary.js';
import { routeRecords } from '../report/record-routes.js';
import { describeFsError, OutputError, writeFailure } from '../output/sink.js';
import { checkTargets, probeDir, writeFileWhole, type NamedTarget } from '../output/output-targets.js';
import { integerProblem } from '../config/fields.js';
import type { CrawlMetrics } from '../output/metrics.js';
import type { MetricsEndpoint } from '../output/metrics-endpoint.js';
import { userAgentAdvice } from '../config/user-agent-advice.js';

/** Requests still running this long after Ctrl-C are aborted. */
const STOP_GRACE_MS = 5_000;

export async function crawlCommand(args: string[], flags: CrawlFlags, io: Io): Promise<number> {
  const clock = systemClock;
  const log = createLogger({
    stream: io.stderr,
    quiet: flags.quiet ?? false,
    verbose: flags.verbose ?? false,
    clock,
    format: flags.logFormat === 'json' ? 'json' : 'text',
  });
  // A seeds file's URLs come back canonical: not parsed a second time below.
  const fileSeeds = flags.seedsFile === undefined ? [] : await readSeedsFile(flags.seedsFile === '-' ? '-' : resolve(io.cwd, flags.seedsFile), io.stdin);
  checkStateFlags(flags);
  checkRecrawlFlags(flags);
  revisitBounds(flags); // a bad --revisit-min/-max is one line before anything is opened
  const since = await loadSince(flags, io.cwd);
  const maxTimeMs = flags.maxTime === undefined ? undefined : maxTime(flags.maxTime);
  // With --state or --redis, no seeds means: resume (or join) what it holds.
  // --sitemap names a start of its own: no seed needed then.
  const none = args.length === 0 && fileSeeds.length === 0;
  const seeds = none && (flags.state !== undefined || flags.redis !== undefined || (flags.sitemap?.length ?? 0) > 0) ? [] : checkSeeds(args, fileSeeds);
  const file = await loadConfig(flags.config, io.cwd);
  const settings = buildSettings(file, toOverrides(flags));
  // A handler module that cannot be loaded is one line, before anything is opened.
  const handler = await loadHandler(flags, io.cwd, settings.concurrency);
  // A bad --ca or --cookie-jar fails now, before any output exists; the session uses this setup.
  const requests = setUpRequests(settings, seeds, { cwd: io.cwd, now: () => clock.wallNow() });
  // A signing key that cannot be used (missing, readable by others) is one line, likewise.
  requests.signer = await setUpSigning(settings, { cwd: io.cwd, now: () => clock.wallNow() });
  // Outputs that would overwrite one another (or an input) are refused before any file is opened.
  await checkTargets(namedTargets(flags, settings), io.cwd);
  // Where the report and the stats go is checked now: a typo should not cost a whole crawl.
  const ends = {
    report: flags.report === undefined ? undefined : await writablePath(flags.report, io.cwd, '--report'),
    stats: flags.stats === undefined ? undefined : await writablePath(flags.stats, io.cwd, '--stats'),
  };
  // A crawl that renders and has no browser stops here, with one line, before any request.
  const browserPath = settings.render?.enabled
    ? (await import('../render/browser-path.js')).findBrowser(settings.render.browser, process.env, io.cwd)
    : undefined;
  // Bound before anything is opened or fetched: a port in use is a usage error with nothing to clean up.
  const metrics = await openMetrics(flags, file, log);
  try {
    // A User-Agent of the user's own that does not say who crawls: one line (the default one does).
    const advice = (flags.userAgent ?? file?.userAgent) === undefined ? undefined : userAgentAdvice(settings.userAgent);
    if (advice !== undefined) log.warn(advice);
    if (!settings.robots.enabled) {
      log.warn('robots.txt is IGNORED (--no-robots): you are crawling pages their owners asked crawlers to leave alone');
    }
    const target = await openStateTarget(flags, io.cwd, settings, clock, log, metrics?.metrics, requests.signer?.keys);
    try {
      return await crawlInto(seeds, settings, requests, target, flags, ends, io, log, maxTimeMs, browserPath, metrics?.metrics, since, handler);
    } finally {
      await target?.close();
    }
  } finally {
    await metrics?.endpoint.close();
  }
}

/**
 * `--metrics`: the series and their endpoint, listening, or undefined.
 * prom-client is loaded only here, so a crawl without metrics never pays for it.
 */
async function openMetrics(
  flags: CrawlFlags,
  file: FileConfig | undefined,
  log: Logger,
): Promise<{ metrics: CrawlMetrics; endpoint: MetricsEndpoint } | undefined> {
  // The flags override the config file's `metrics` and `metricsHosts`.
  const listen = flags.metrics ?? file?.metrics;
  if (listen === undefined) {
    if (flags.metricsHosts !== undefined) throw new UsageError('--metrics-hosts goes with --metrics [HOST:]PORT');
    if (file?.metricsHosts !== undefined) throw new UsageError(`${flags.config}: metricsHosts goes with metrics ("[HOST:]PORT")`);
    return undefined;
  }
  const label = flags.metrics !== undefined ? '--metrics' : `${flags.config}: metrics`;
  const { parseMetricsAddress, openMetricsEndpoint } = await import('../output/metrics-endpoint.js');
  const address = parseMetricsAddress(listen, label);
  let topHosts = file?.metricsHosts;
  if (flags.metricsHosts !== undefined) {
    const problem = integerProblem(Number(flags.metricsHosts), 0, 1000, flags.metricsHosts);
    if (problem) throw new UsageError(`--metrics-hosts: ${problem}`);
    topHosts = Number(flags.metricsHosts);
  }
  const { createCrawlMetrics } = await import('../output/metrics.js');
  const metrics = createCrawlMetrics({ topHosts });
  const endpoint = await openMetricsEndpoint(address, metrics, label);
  log.info(`metrics at ${endpoint.url}`);
  return { metrics, endpoint };
}

/** Absolute paths of the files written when the crawl ends, already checked. */
interface EndFiles {
  report?: string;
  stats?: string;
}

async function crawlInto(
  seeds: string[],
  settings: CrawlSettings,
  requests: RequestSetup,
  target: StateTarget | undefined,
  flags: CrawlFlags,
  ends: EndFiles,
  io: Io,
  log: Logger,
  maxTimeMs?: number,
  browserPath?: string,
  metrics?: CrawlMetrics,
  since?: SinceEntry[],
  handler?: HandlerSettings,
): Promise<number> {
  const clock = systemClock;
  const store = target?.store;
  let held = await target?.peek();
  const seedless = seeds.length === 0 && settings.sitemaps.urls.length === 0;
  if (target?.shared && held === undefined && seedless) {
    const waited = await waitForCrawl(target, flags, io, log);
    if (typeof waited === 'number') return waited;
    held = waited.held;
  }
  if (target && held === undefined && seedless) {
    throw new UsageError(
      target.shared
        ? `no seed URL given, and ${target.label} does not exist yet (the first worker gives the seeds: crawl --redis URL --crawl-id ID <seed-url...>)`
        : `no seed URL given, and ${target.label} holds no crawl to resume (usage: crawl --state FILE <seed-url...>)`,
    );
  }
  if (held?.finished && flags.recrawl) log.info(`${target!.label}: crawling every page it knows again, asking for changes only`);
  else if (held?.finished && flags.revisit) log.info(`${target!.label}: the crawl finished; each page is asked again when it is due`);
  else if (held?.finished) {
    log.info(`${target!.label}: this crawl already finished; nothing to do (${target!.shared ? 'a new --crawl-id starts another' : '--fresh starts it over'})`);
    return EXIT.ok;
  }
  const { report: reportPath, stats: statsPath } = ends;
  const archive = await openArchive(flags, { cwd: io.cwd, settings, resumed: held !== undefined, now: clock.wallNow(), log });
  const stdoutTarget = flags.output === undefined || flags.output === '-';
  let started: CrawlSession | undefined; // set right after the sink exists
  let brokenPipe = false;
  let signalled = 0;
  let firstSignal: 'SIGINT' | 'SIGTERM' | undefined;
  let timedOut = false;
  let stoppedBy: Error | undefined; // the state target asked to stop (its disk nearly full)
  const outputPath = stdoutTarget ? undefined : resolve(io.cwd, flags.output!);
  // After a crash, the file's last records may be for pages the state had not recorded as done: those are written again.
  const ledger = outputPath === undefined ? undefined : target?.ledger;
  const mark = held === undefined ? undefined : ledger?.mark();
  const sink = await openOutput(outputPath ?? '-', {
    stdout: io.stdout,
    // A resumed crawl adds to what its earlier runs wrote; the file is complete only when the crawl is.
    append: held !== undefined,
    reconcile: ledger && mark && mark.path === outputPath ? { from: mark.offset, keep: (line) => keepAfterCrash(line, ledger) } : undefined,
    onRepair: (message) => log.warn(message),
    // An interrupted crawl's output is incomplete, and says so by its name.
    keepPartial: () => signalled > 0 || timedOut || stoppedBy !== undefined,
    onBrokenPipe: () => {
      // `crawl … | head -1`: the reader is gone; end quietly and successfully.
      brokenPipe = true;
      started?.stop();
      started?.abort();
    },
  });
  if (ledger && outputPath !== undefined) ledger.track(outputPath, { confirmed: () => sink.confirmedBytes ?? 0, queued: () => sink.queuedBytes ?? 0 });
  const tap =
    reportPath === undefined
      ? undefined
      : (await import('../report/report-tap.js')).createReportTap({ hostKey: settings.hostKey, policyFor: (host) => settings.policyFor(host) });
  const render = browserPath === undefined ? undefined : await loadRendering(browserPath);
  const named = target?.worker === undefined ? sink : nameWorker(sink, target.worker);
  // The report and the state's record log get robots.txt records; the output only with --emit-robots.
  const routes = routeRecords(named, { emitRobots: flags.emitRobots, itemsOnly: flags.itemsOnly, tap, log: store?.durable ? store.recordLog?.() : undefined });
  const session = (started = createCrawlSession({
    settings,
    seeds,
    sink: routes.sink,
    robotsRecords: routes.robotsRecords,
    clock,
    log,
    store,
    archive,
    cwd: io.cwd,
    requests,
    render,
    recrawl: flags.recrawl,
    since,
    revisit: revisitBounds(flags),
    handler,
    debug: flags.verbose ? (message) => log.debug(message) : undefined,
    // -v: each browser request, as `crawl --render -v --max-pages 1 URL` lists a page's subresources and their hosts' limits.
    onSubrequest: flags.verbose
      ? (page, e) =>
          log.debug(redactCredentials(`${page}: ${e.type} ${e.url} → ${e.outcome}${e.host ? ` (${e.host}, ${settings.policyFor(e.host).rateLabel})` : ''}`))
      : undefined,
  }));
  metrics?.attach(session);
  const isTTY = Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const progress = createProgress(
    {
      stream: io.stderr,
      isTTY,
      clock,
      quiet: flags.quiet ?? false,
      logger: log,
      ...(log.format === 'json' && { event: (m: string, d: Record<string, unknown>) => log.event(m, d) }),
    },
    () => session.progress(),
  );

  let graceTimer: NodeJS.Timeout | undefined;
  // A clean stop like Ctrl-C's, so nothing is fetched twice on resume; the run then fails with the target's error.
  target?.onStop?.((err) => {
    stoppedBy ??= err;
    session.stop();
    graceTimer ??= setTimeout(() => session.abort(), STOP_GRACE_MS);
    graceTimer.unref();
  });
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => {
    signalled++;
    firstSignal ??= name;
    if (signalled === 1) {
      log.warn(
        `${name}: stopping — letting ${session.progress().inFlight} request(s) in flight finish (up to ${STOP_GRACE_MS / 1000}s); press Ctrl-C again to abort them`,
      );
      session.stop();
      graceTimer = setTimeout(() => session.abort(), STOP_GRACE_MS);
      graceTimer.unref();
    } else {
      session.abort();
    }
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  io.signals.on('SIGINT', onInt);
  io.signals.on('SIGTERM', onTerm);

  const limits = `${settings.concurrency} at once; default ${describeDefaults(settings.policyFor('default.invalid'))}`;
  const as = target?.worker === undefined ? '' : ` as worker ${target.worker}`;
  if (held)
    log.info(
      `${target!.shared ? 'joining' : 'resuming'} the crawl in ${target!.label}${as}${seeds.length > 0 ? ` (${seeds.length} seed(s) given; new ones are added)` : ''} (${limits})`,
    );
  else
    log.info(
      `crawling ${seeds.length} seed${seeds.length === 1 ? '' : 's'}${sitemapCount(settings)}${target ? `, state in ${target.label}${as}` : ''} (${limits})`,
    );
  progress.start();
  // --max-time: a clean stop like Ctrl-C's, but an expected end (exit 0); with --state the crawl stays resumable.
  const maxTimer =
    maxTimeMs === undefined
      ? undefined
      : clock.setTimer(() => {
          timedOut = true;
          log.warn(`--max-time ${flags.maxTime} reached: stopping — letting ${session.progress().inFlight} request(s) in flight finish`);
          session.stop();
          graceTimer ??= setTimeout(() => session.abort(), STOP_GRACE_MS);
          graceTimer.unref();
        }, maxTimeMs);
  try {
    // Resolves once the sink is closed (the file renamed into place) and the fetcher released.
    const stats = await session.run();
    await archive?.close();
    progress.stop();
    if (!brokenPipe) {
      if (log.format === 'json') log.event(`${stats.interrupted ? 'interrupted' : 'finished'}`, { summary: statsToJson(stats) });
      else log.block(formatSummary(stats));
    }
    if (stoppedBy) throw stoppedBy;
    if (statsPath) await writeWhole(statsPath, JSON.stringify(statsToJson(stats), null, 2) + '\n', `--stats ${flags.stats}`);
    if (reportPath && tap) {
      const html = await tap.render(flags.output && flags.output !== '-' ? basename(flags.output) : 'this crawl', stats);
      // A --state crawl keeps its records: the report can be written later from them.
      const later =
        target && !target.shared
          ? `its records are kept in ${target.label}: crawl report --state ${target.label} -o ${flags.report} writes the report once there is room`
          : undefined;
      await writeWhole(reportPath, html, `--report ${flags.report}`, later);
      log.info(`wrote the report to ${flags.report} (${formatBytes(Buffer.byteLength(html))})`);
    }
    const partialNote = flags.output && flags.output !== '-' ? `records so far in ${flags.output}.partial` : '';
    if (signalled > 0 && target?.shared)
      log.warn(
        `this worker stopped; the crawl goes on in ${target.label} with its other workers (run the same command again to rejoin)${partialNote ? ` (${partialNote})` : ''}`,
      );
    else if (signalled > 0 && target)
      log.warn(`stopped; the crawl is kept in ${target.label}: run the same command again to resume${partialNote ? ` (${partialNote})` : ''}`);
    else if (signalled > 0 && partialNote) log.warn(`stopped before the end: ${partialNote} (the name says it is incomplete)`);
    if (signalled > 0) return crawlExitCode(stats, { signal: firstSignal });
    if (timedOut) log.info(`stopped at --max-time ${flags.maxTime}${target ? `; run the same command again to go on (state in ${target.label})` : ''}`);
    const code = crawlExitCode(stats, { timedOut });
    if (code === EXIT.nothingReached && !brokenPipe) log.warn(`nothing could be reached: no URL got an HTTP answer (exit ${code})`);
    return code;
  } finally {
    progress.stop();
    await archive?.abandon(); // a failed crawl's WARC stays .partial (a no-op after close)
    if (maxTimer) clock.clearTimer(maxTimer);
    if (graceTimer) clearTimeout(graceTimer);
    io.signals.off('SIGINT', onInt);
    io.signals.off('SIGTERM', onTerm);
  }
}

/** How often a seedless worker asks whether its crawl exists yet. */
const WAIT_POLL_MS = 250;

/**
 * Workers started together race: the one without seeds may look before the
 * one with seeds has created the crawl. It waits (bounded by
 * --wait-for-crawl), saying so; a signal ends the wait with its exit code.
 * Gives back what peek() found, or an exit code.
 */
async function waitForCrawl(target: StateTarget, flags: CrawlFlags, io: Io, log: Logger): Promise<{ held: Awaited<ReturnType<StateTarget['peek']>> } | number> {
  const waitMs = flags.waitForCrawl === undefined ? DEFAULT_WAIT_FOR_CRAWL_MS : waitForCrawlMs(flags.waitForCrawl);
  if (waitMs === 0) return { held: undefined };
  const label = flags.waitForCrawl ?? `${DEFAULT_WAIT_FOR_CRAWL_MS / 1000}s`;
  log.info(`${target.label} does not exist yet; waiting up to ${label} for the worker that gives the seeds`);
  const wait = interruptibleWait(io);
  try {
    const deadline = performance.now() + waitMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await wait.sleep(Math.min(WAIT_POLL_MS, left));
      const stopped = wait.signalExit();
      if (stopped !== undefined) return stopped;
      const held = await target.peek();
      if (held !== undefined) return { held };
    }
  } finally {
    wait.dispose();
  }
  throw new UsageError(
    `no seed URL given, and ${target.label} did not appear within ${label} (the first worker gives the seeds: crawl --redis URL --crawl-id ID <seed-url...>)`,
  );
}

/** A shared crawl's records say which worker wrote them. */
function nameWorker(sink: RecordSink, worker: string): RecordSink {
  return wrapSink(sink, { write: (record) => sink.write({ ...record, worker }) });
}

/** " and 2 sitemaps" when sitemaps were named (--sitemap), else "". */
function sitemapCount(settings: CrawlSettings): string {
  const n = settings.sitemaps.urls.length;
  return n === 0 ? '' : ` and ${n} sitemap${n === 1 ? '' : 's'}`;
}

function toOverrides(f: CrawlFlags): CliOverrides {
  return {
    userAgent: f.userAgent,
    headers: f.header,
    cookies: f.cookie,
    cookieJar: f.cookieJar,
    proxy: f.proxy,
    insecure: f.insecure,
    ca: f.ca,
    signKey: f.signKey,
    signatureAgent: f.signatureAgent,
    http2: f.http2,
    latencyBackoff: f.latencyBackoff === false ? false : undefined,
    concurrency: f.concurrency,
    rate: f.rate,
    hostConcurrency: f.hostConcurrency,
    ipRate: f.ipRate,
    ipConcurrency: f.ipConcurrency,
    render: f.render,
    renderConcurrency: f.renderConcurrency,
    renderTimeout: f.renderTimeout,
    renderBlock: f.renderBlock,
    browser: f.browser,
    maxDepth: f.maxDepth,
    maxPages: f.maxPages,
    maxPagesPerHost: f.maxPagesPerHost,
    maxQueued: f.maxQueued,
    scope: f.scope,
    include: f.include,
    exclude: f.exclude,
    timeout: f.timeout,
    maxBody: f.maxBody,
    robots: f.robots === false ? false : undefined,
    emitSkipped: f.emitSkipped,
    links: f.links,
    allowPrivate: f.allowPrivate,
    content: f.content,
    maxContent: f.maxContent,
    extract: f.extract,
    followCanonical: f.followCanonical,
    fetchDenied: f.fetchDenied,
    archiveNoarchive: f.archiveNoarchive,
    purpose: f.purpose,
    maxPrice: f.maxPrice,
    budget: f.budget,
    sitemap: f.sitemap,
    sitemaps: f.sitemaps,
    checkLinks: f.checkLinks,
  };
}

function describeDefaults(p: { rateLabel: string; concurrency: number }): string {
  return `${p.rateLabel} and ${p.concurrency} at once per host`;
}

/** Every file the crawl writes or reads, by the option that names it, for checkTargets. */
function namedTargets(flags: CrawlFlags, settings: CrawlSettings): NamedTarget[] {
  const named: NamedTarget[] = [];
  const add = (option: string, path: string | null | undefined, writes: boolean, tree = false) => {
    if (path !== undefined && path !== null && path !== '-') named.push({ option, path, writes, tree });
  };
  add('-o', flags.output, true);
  add('--state', flags.state, true);
  add('--warc', flags.warc, true);
  add('--report', flags.report, true);
  add('--stats', flags.stats, true);
  add('--save-dir', flags.saveDir, true, true);
  add(flags.cookieJar !== undefined ? '--cookie-jar' : "the config's cookies.jar", settings.requests.cookies.jar, false);
  add(flags.ca !== undefined ? '--ca' : "the config's tls.ca", settings.requests.tls.ca, false);
  add('--seeds-file', flags.seedsFile, false);
  add('--config', flags.config, false);
  return named;
}

/** The absolute path for a file written when the crawl ends, once it is known that it can be. */
async function writablePath(file: string, cwd: string, flag: string): Promise<string> {
  const path = resolve(cwd, file);
  const unwritable = (why: string, cause?: unknown) => new OutputError('OUTPUT_UNWRITABLE', `cannot write ${flag} ${file}: ${why}`, { cause });
  if ((await stat(path).catch(() => undefined))?.isDirectory()) throw unwritable('is a directory');
  try {
    // A file made and removed: access(W_OK) says yes to root where nothing can be created (/proc).
    await probeDir(dirname(path));
  } catch (err) {
    throw unwritable(describeFsError(err), err);
  }
  return path;
}

/** Writes a whole file or nothing: a reader never sees half of it. */
async function writeWhole(path: string, text: string, name: string, hint?: string): Promise<void> {
  try {
    await writeFileWhole(path, text);
  } catch (err) {
    const failure = writeFailure(name, err);
    if (hint) failure.message += ` (${hint})`;
    throw failure;
  }
}

/** `--max-time`: a duration from 1 ms up, a bare number in seconds as curl's (the system clock waits out even very long ones in steps). */
function maxTime(text: string): number {
  const ms = durationFlag('--max-time', text);
  if (!(ms >= 1)) throw new UsageError(`--max-time: expected a duration of at least 1ms, got ${JSON.stringify(text)}`);
  return ms;
}
