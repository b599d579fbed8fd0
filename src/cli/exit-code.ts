/**
 * The exit code a finished `crawl` run ends with, decided from its stats
 * (pure: table-tested). EXIT in flags.ts lists every code; `--help` and the
 * README document them.
 */
import type { CrawlStats } from '../output/summary.js';
import { EXIT } from './flags.js';

/** Skip reasons that mean a URL's host could not be reached, not that the crawl chose not to fetch it. */
const FAILED_SKIPS = ['robots-unavailable', 'host-failed'] as const;

/**
 * True when the crawl tried something and got no HTTP answer at all: every
 * page record is a transport error (refused, DNS failure, timeout, …) and/or
 * URLs were skipped because their host could not be reached. A 404 is an
 * answer (a link checker's finding), so it does not count as a failure; nor
 * does a crawl where robots.txt disallowed everything.
 */
export function nothingReached(stats: CrawlStats): boolean {
  let answered = 0;
  let failed = 0;
  for (const [status, n] of stats.pagesByStatus) {
    if (status === 'error') failed += n;
    else answered += n;
  }
  for (const reason of FAILED_SKIPS) failed += stats.skippedByReason.get(reason) ?? 0;
  return answered === 0 && failed > 0;
}

/** How the run ended, as the command saw it. */
export interface RunEnd {
  /** The first signal that stopped it, if one did. */
  signal?: 'SIGINT' | 'SIGTERM';
  /** Stopped by --max-time: an expected end. */
  timedOut?: boolean;
}

/**
 * 130 / 143 after SIGINT / SIGTERM (128 + the signal number, as shells
 * report them); 3 when nothing could be reached (every seed failed); else 0.
 * A run stopped by --max-time is a clean end (0) whatever it reached.
 */
export function crawlExitCode(stats: CrawlStats, end: RunEnd): number {
  if (end.signal === 'SIGTERM') return EXIT.terminated;
  if (end.signal === 'SIGINT') return EXIT.interrupted;
  if (!end.timedOut && !stats.interrupted && nothingReached(stats)) return EXIT.nothingReached;
  return EXIT.ok;
}
