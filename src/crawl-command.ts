/**
 * `crawl <seed-url...>`: wires settings, output, fetcher, crawler, progress
 * and signals together, and maps the outcome to an exit code.
 */
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CrawlFlags, Io } from './cli.js';
import { EXIT } from './cli.js';
import { systemClock } from './clock.js';
import { buildSettings, loadConfigFile, type CliOverrides, type FileConfig } from './config.js';
import { Crawler } from './crawler.js';
import { createFetcher } from './fetcher.js';
import { createLogger } from './logger.js';
import { openOutput } from './output.js';
import { createProgress } from './progress.js';
import { checkSeeds, readSeedsFile } from './seeds.js';
import { formatSummary } from './summary.js';

/** Requests still running this long after Ctrl-C are aborted. */
const STOP_GRACE_MS = 5_000;
export const DEFAULT_CONFIG_FILE = 'crawler.config.json';

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
  let crawler: Crawler | undefined;
  let brokenPipe = false;
  const sink = await openOutput(stdoutTarget ? '-' : resolve(io.cwd, flags.output!), {
    stdout: io.stdout,
    onBrokenPipe: () => {
      // `crawl … | head -1`: the reader is gone; end quietly and successfully.
      brokenPipe = true;
      crawler?.stop();
      crawler?.abort();
    },
  });
  const fetcher = createFetcher({ userAgent: settings.userAgent, timeouts: settings.timeouts, maxBodyBytes: settings.maxBodyBytes, clock });
  crawler = new Crawler({ settings, seeds, clock, fetcher, sink, log });
  const isTTY = Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const progress = createProgress({ stream: io.stderr, isTTY, clock, quiet: flags.quiet ?? false, logger: log }, () => crawler!.progress());

  let signalled = 0;
  let graceTimer: NodeJS.Timeout | undefined;
  const onSignal = (name: string) => {
    signalled++;
    if (signalled === 1) {
      log.warn(`${name}: stopping — letting ${crawler!.progress().inFlight} request(s) in flight finish (up to ${STOP_GRACE_MS / 1000}s); press Ctrl-C again to abort them`);
      crawler!.stop();
      graceTimer = setTimeout(() => crawler!.abort(), STOP_GRACE_MS);
      graceTimer.unref();
    } else {
      crawler!.abort();
    }
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  io.signals.on('SIGINT', onInt);
  io.signals.on('SIGTERM', onTerm);

  log.info(`crawling ${seeds.length} seed${seeds.length === 1 ? '' : 's'} (${settings.concurrency} at once; default ${describeDefaults(settings.policyFor('default.invalid'))})`);
  progress.start();
  try {
    const stats = await crawler.run();
    progress.stop();
    await sink.close();
    if (!brokenPipe) log.block(formatSummary(stats));
    if (signalled > 0) return EXIT.interrupted;
    return EXIT.ok;
  } finally {
    progress.stop();
    if (graceTimer) clearTimeout(graceTimer);
    io.signals.off('SIGINT', onInt);
    io.signals.off('SIGTERM', onTerm);
    await fetcher.close();
  }
}

export async function loadConfig(path: string | undefined, cwd: string): Promise<FileConfig | undefined> {
  // Name the file as the user typed it in messages (the process cwd is io.cwd outside tests).
  if (path !== undefined) return loadConfigFile(cwd === process.cwd() ? path : resolve(cwd, path));
  const fallback = resolve(cwd, DEFAULT_CONFIG_FILE);
  try {
    await access(fallback);
  } catch {
    return undefined;
  }
  return loadConfigFile(fallback);
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
