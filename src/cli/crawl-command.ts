/**
 * `crawl <seed-url...>`: a thin client of the library's crawl session
 * (src/api/crawl-session.ts, which `crawl()` is built on too). It adds what
 * only a command has: flags and a config file merged into settings, stdout or
 * a `.partial` file as the sink, a broken pipe ending quietly, SIGINT/SIGTERM
 * with a grace period, progress, the summary and the exit code.
 */
import { resolve } from 'node:path';
import { EXIT, type CrawlFlags, type Io } from './flags.js';
import { systemClock } from '../clock.js';
import { buildSettings, type CliOverrides } from '../config/settings.js';
import { loadConfig } from '../config/load-config.js';
import { createCrawlSession, type CrawlSession } from '../api/crawl-session.js';
import { createLogger } from '../output/logger.js';
import { openOutput } from '../output/sink.js';
import { createProgress } from '../output/progress.js';
import { checkSeeds, readSeedsFile } from '../config/seeds.js';
import { formatSummary } from '../output/summary.js';

/** Requests still running this long after Ctrl-C are aborted. */
const STOP_GRACE_MS = 5_000;

export async function crawlCommand(args: string[], flags: CrawlFlags, io: Io): Promise<number> {
  const clock = systemClock;
  const log = createLogger({ stream: io.stderr, quiet: flags.quiet ?? false, clock });
  const rawSeeds = [...args];
  if (flags.seedsFile !== undefined) {
    const path = flags.seedsFile === '-' ? '-' : resolve(io.cwd, flags.seedsFile);
    rawSeeds.push(...(await readSeedsFile(path, io.stdin)));
  }
  const seeds = checkSeeds(rawSeeds);
  const file = await loadConfig(flags.config, io.cwd);
  const settings = buildSettings(file, toOverrides(flags));
  if (!settings.robots.enabled) {
    log.warn('robots.txt is IGNORED (--no-robots): you are crawling pages their owners asked crawlers to leave alone');
  }
  const stdoutTarget = flags.output === undefined || flags.output === '-';
  let started: CrawlSession | undefined; // set right after the sink exists
  let brokenPipe = false;
  const sink = await openOutput(stdoutTarget ? '-' : resolve(io.cwd, flags.output!), {
    stdout: io.stdout,
    onBrokenPipe: () => {
      // `crawl … | head -1`: the reader is gone; end quietly and successfully.
      brokenPipe = true;
      started?.stop();
      started?.abort();
    },
  });
  const session = (started = createCrawlSession({ settings, seeds, sink, clock, log }));
  const isTTY = Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const progress = createProgress({ stream: io.stderr, isTTY, clock, quiet: flags.quiet ?? false, logger: log }, () => session.progress());

  let signalled = 0;
  let graceTimer: NodeJS.Timeout | undefined;
  const onSignal = (name: string) => {
    signalled++;
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

  log.info(`crawling ${seeds.length} seed${seeds.length === 1 ? '' : 's'} (${settings.concurrency} at once; default ${describeDefaults(settings.policyFor('default.invalid'))})`);
  progress.start();
  try {
    // Resolves once the sink is closed (the file renamed into place) and the fetcher released.
    const stats = await session.run();
    progress.stop();
    if (!brokenPipe) log.block(formatSummary(stats));
    if (signalled > 0) return EXIT.interrupted;
    return EXIT.ok;
  } finally {
    progress.stop();
    if (graceTimer) clearTimeout(graceTimer);
    io.signals.off('SIGINT', onInt);
    io.signals.off('SIGTERM', onTerm);
  }
}

function toOverrides(f: CrawlFlags): CliOverrides {
  return {
    userAgent: f.userAgent,
    concurrency: f.concurrency,
    rate: f.rate,
    hostConcurrency: f.hostConcurrency,
    maxDepth: f.maxDepth,
    maxPages: f.maxPages,
    scope: f.scope,
    include: f.include,
    exclude: f.exclude,
    timeout: f.timeout,
    maxBody: f.maxBody,
    robots: f.robots === false ? false : undefined,
    emitSkipped: f.emitSkipped,
    links: f.links,
  };
}

function describeDefaults(p: { rateLabel: string; concurrency: number }): string {
  return `${p.rateLabel} and ${p.concurrency} at once per host`;
}
