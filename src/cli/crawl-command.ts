/**
 * `crawl <seed-url...>`: a thin client of the library's crawl session
 * (src/api/crawl-session.ts, which `crawl()` is built on too). It adds what
 * only a command has: flags and a config file merged into settings, stdout or
 * a `.partial` file as the sink, a broken pipe ending quietly, SIGINT/SIGTERM
 * with a grace period, progress, the summary and the exit code.
 */
import { access, rename, stat, writeFile } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { EXIT, type CrawlFlags, type Io } from './flags.js';
import { crawlExitCode } from './exit-code.js';
import { systemClock } from '../clock.js';
import { buildSettings, type CliOverrides } from '../config/settings.js';
import { loadConfig } from '../config/load-config.js';
import { setUpRequests, type RequestSetup } from '../fetch/request-setup.js';
import { createCrawlSession, type CrawlSession } from '../api/crawl-session.js';
import { findBrowser } from '../render/browser-path.js';
import { redactCredentials } from '../fetch/redact.js';
import { createLogger } from '../output/logger.js';
import { openOutput, wrapSink } from '../output/sink.js';
import { createProgress } from '../output/progress.js';
import { checkSeeds, readSeedsFile, UsageError } from '../config/seeds.js';
import { checkStateFlags, openStateTarget, type StateTarget } from './state-target.js';
import type { RecordSink } from '../output/sink.js';
import { parseDuration, secondsIfBare } from '../config/units.js';
import { openArchive } from './archive-target.js';
import type { CrawlSettings } from '../types.js';
import type { Logger } from '../output/logger.js';
import { formatBytes, formatSummary, statsToJson } from '../output/summary.js';
import { createReportTap } from '../report/report-tap.js';
import { routeRecords } from '../report/record-routes.js';
import { describeFsError, OutputError } from '../output/sink.js';

/** Requests still running this long after Ctrl-C are aborted. */
const STOP_GRACE_MS = 5_000;

export async function crawlCommand(args: string[], flags: CrawlFlags, io: Io): Promise<number> {
  const clock = systemClock;
  const log = createLogger({ stream: io.stderr, quiet: flags.quiet ?? false, verbose: flags.verbose ?? false, clock });
  // A seeds file's URLs come back canonical: not parsed a second time below.
  const fileSeeds = flags.seedsFile === undefined ? [] : await readSeedsFile(flags.seedsFile === '-' ? '-' : resolve(io.cwd, flags.seedsFile), io.stdin);
  checkStateFlags(flags);
  const maxTimeMs = flags.maxTime === undefined ? undefined : maxTime(flags.maxTime);
  // With --state or --redis, no seeds means: resume (or join) what it holds.
  // --sitemap names a start of its own: no seed needed then.
  const none = args.length === 0 && fileSeeds.length === 0;
  const seeds = none && (flags.state !== undefined || flags.redis !== undefined || (flags.sitemap?.length ?? 0) > 0) ? [] : checkSeeds(args, fileSeeds);
  const file = await loadConfig(flags.config, io.cwd);
  const settings = buildSettings(file, toOverrides(flags));
  // A bad --ca or --cookie-jar fails now, before any output exists; the session uses this setup.
  const requests = setUpRequests(settings, seeds, { cwd: io.cwd, now: () => clock.wallNow() });
  // A crawl that renders and has no browser stops here, with one line, before any request.
  const browserPath = settings.render?.enabled ? findBrowser(settings.render.browser, process.env, io.cwd) : undefined;
  if (!settings.robots.enabled) {
    log.warn('robots.txt is IGNORED (--no-robots): you are crawling pages their owners asked crawlers to leave alone');
  }
  const target = await openStateTarget(flags, io.cwd, settings, clock, log);
  try {
    return await crawlInto(seeds, settings, requests, target, flags, io, log, maxTimeMs, browserPath);
  } finally {
    await target?.close();
  }
}

async function crawlInto(seeds: string[], settings: CrawlSettings, requests: RequestSetup, target: StateTarget | undefined, flags: CrawlFlags, io: Io, log: Logger, maxTimeMs?: number, browserPath?: string): Promise<number> {
  const clock = systemClock;
  const store = target?.store;
  const held = await target?.peek();
  if (target && held === undefined && seeds.length === 0 && settings.sitemaps.urls.length === 0) {
    throw new UsageError(target.shared
      ? `no seed URL given, and ${target.label} does not exist yet (the first worker gives the seeds: crawl --redis URL --crawl-id ID <seed-url...>)`
      : `no seed URL given, and ${target.label} holds no crawl to resume (usage: crawl --state FILE <seed-url...>)`);
  }
  if (held?.finished) {
    log.info(`${target!.label}: this crawl already finished; nothing to do (${target!.shared ? 'a new --crawl-id starts another' : '--fresh starts it over'})`);
    return EXIT.ok;
  }
  // Where the report and the stats go is checked now: a typo should not cost a whole crawl.
  const reportPath = flags.report === undefined ? undefined : await writablePath(flags.report, io.cwd, '--report');
  const statsPath = flags.stats === undefined ? undefined : await writablePath(flags.stats, io.cwd, '--stats');
  const archive = await openArchive(flags, { cwd: io.cwd, settings, resumed: held !== undefined, now: clock.wallNow(), log });
  const stdoutTarget = flags.output === undefined || flags.output === '-';
  let started: CrawlSession | undefined; // set right after the sink exists
  let brokenPipe = false;
  let signalled = 0;
  let firstSignal: 'SIGINT' | 'SIGTERM' | undefined;
  let timedOut = false;
  const sink = await openOutput(stdoutTarget ? '-' : resolve(io.cwd, flags.output!), {
    stdout: io.stdout,
    // A resumed crawl adds to what its earlier runs wrote; the file is complete only when the crawl is.
    append: held !== undefined,
    onRepair: (message) => log.warn(message),
    // An interrupted crawl's output is incomplete, and says so by its name.
    keepPartial: () => signalled > 0 || timedOut,
    onBrokenPipe: () => {
      // `crawl … | head -1`: the reader is gone; end quietly and successfully.
      brokenPipe = true;
      started?.stop();
      started?.abort();
    },
  });
  const tap = reportPath === undefined ? undefined : createReportTap({ hostKey: settings.hostKey, policyFor: (host) => settings.policyFor(host) });
  const named = target?.worker === undefined ? sink : nameWorker(sink, target.worker);
  // The report and the state's record log get robots.txt records; the output only with --emit-robots.
  const routes = routeRecords(named, { emitRobots: flags.emitRobots, tap, log: store?.durable ? store.recordLog?.() : undefined });
  const session = (started = createCrawlSession({
    settings, seeds, sink: routes.sink, robotsRecords: routes.robotsRecords, clock, log, store, archive, cwd: io.cwd, requests, browserPath,
    // -v: each browser request, as `crawl --render -v --max-pages 1 URL` lists a page's subresources and their hosts' limits.
    onSubrequest: flags.verbose ? (page, e) => log.debug(redactCredentials(`${page}: ${e.type} ${e.url} → ${e.outcome}${e.host ? ` (${e.host}, ${settings.policyFor(e.host).rateLabel})` : ''}`)) : undefined,
  }));
  const isTTY = Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const progress = createProgress({ stream: io.stderr, isTTY, clock, quiet: flags.quiet ?? false, logger: log }, () => session.progress());

  let graceTimer: NodeJS.Timeout | undefined;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => {
    signalled++;
    firstSignal ??= name;
    if (signalled === 1) {
      log.warn(`${name}: stopping — letting ${session.progress().inFlight} request(s) in flight finish (up to ${STOP_GRACE_MS / 1000}s); press Ctrl-C again to abort them`);
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
  if (held) log.info(`${target!.shared ? 'joining' : 'resuming'} the crawl in ${target!.label}${as}${seeds.length > 0 ? ` (${seeds.length} seed(s) given; new ones are added)` : ''} (${limits})`);
  else log.info(`crawling ${seeds.length} seed${seeds.length === 1 ? '' : 's'}${sitemapCount(settings)}${target ? `, state in ${target.label}${as}` : ''} (${limits})`);
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
    if (!brokenPipe) log.block(formatSummary(stats));
    if (statsPath) await writeWhole(statsPath, JSON.stringify(statsToJson(stats), null, 2) + '\n', flags.stats!);
    if (reportPath && tap) {
      const html = await tap.render(flags.output && flags.output !== '-' ? basename(flags.output) : 'this crawl');
      await writeWhole(reportPath, html, flags.report!);
      log.info(`wrote the report to ${flags.report} (${formatBytes(Buffer.byteLength(html))})`);
    }
    const partialNote = flags.output && flags.output !== '-' ? `records so far in ${flags.output}.partial` : '';
    if (signalled > 0 && target?.shared) log.warn(`this worker stopped; the crawl goes on in ${target.label} with its other workers (run the same command again to rejoin)${partialNote ? ` (${partialNote})` : ''}`);
    else if (signalled > 0 && target) log.warn(`stopped; the crawl is kept in ${target.label}: run the same command again to resume${partialNote ? ` (${partialNote})` : ''}`);
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
    sitemap: f.sitemap,
    sitemaps: f.sitemaps,
    checkLinks: f.checkLinks,
  };
}

function describeDefaults(p: { rateLabel: string; concurrency: number }): string {
  return `${p.rateLabel} and ${p.concurrency} at once per host`;
}

/** The absolute path for a file written when the crawl ends, once it is known that it can be. */
async function writablePath(file: string, cwd: string, flag: string): Promise<string> {
  const path = resolve(cwd, file);
  const unwritable = (why: string) => new OutputError('OUTPUT_UNWRITABLE', `cannot write ${flag} ${file}: ${why}`);
  if ((await stat(path).catch(() => undefined))?.isDirectory()) throw unwritable('is a directory');
  try {
    await access(dirname(path), fsConstants.W_OK);
  } catch (err) {
    throw unwritable(describeFsError(err));
  }
  return path;
}

/** Writes a whole file or nothing: a reader never sees half of it. */
async function writeWhole(path: string, text: string, name: string): Promise<void> {
  try {
    await writeFile(`${path}.partial`, text);
    await rename(`${path}.partial`, path);
  } catch (err) {
    throw new OutputError('OUTPUT_UNWRITABLE', `cannot write ${name}: ${describeFsError(err)}`, { cause: err });
  }
}

/** `--max-time`: a duration from 1 ms up, a bare number in seconds as curl's (the system clock waits out even very long ones in steps). */
function maxTime(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(secondsIfBare(text) as string);
  } catch (err) {
    throw new UsageError(`--max-time: ${(err as Error).message}`);
  }
  if (!(ms >= 1)) throw new UsageError(`--max-time: expected a duration of at least 1ms, got ${JSON.stringify(text)}`);
  return ms;
}
