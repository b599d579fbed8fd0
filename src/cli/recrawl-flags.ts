/**
 * The flags of crawling again (docs/crawling-again.md): `--recrawl` (a new
 * pass over what `--state` or `--redis` holds), `--revisit` (never finish: each page
 * asked again after its adaptive interval, `--revisit-min`/`--revisit-max`)
 * and `--since FILE` (a previous run's records, no state file). Every combination that cannot work is one
 * usage line (exit 2) before anything is opened; `--since`'s file is read
 * here, so an unreadable one fails before any output exists.
 */
import { resolve } from 'node:path';
import { UsageError } from '../config/seeds.js';
import { readSince, SinceError, type SinceEntry } from '../recrawl/recrawl-since.js';
import { durationFlag, type CrawlFlags } from './flags.js';
import type { RevisitBounds } from '../recrawl/recrawl-change.js';

/** --revisit's defaults: an hour, thirty days. */
const REVISIT_MIN_MS = 3_600_000;
const REVISIT_MAX_MS = 30 * 86_400_000;
/** Revisits closer than this are not a schedule (and the output ledger tells revisits apart by it). */
const REVISIT_FLOOR_MS = 1_000;

export function checkRecrawlFlags(flags: CrawlFlags): void {
  if (flags.recrawl) {
    if (flags.state === undefined && flags.redis === undefined)
      throw new UsageError(
        "--recrawl goes with --state FILE or --redis URL: it crawls again what the state holds (without one, --since RECORDS.jsonl compares with a previous run's records)",
      );
    if (flags.fresh) throw new UsageError('--recrawl and --fresh: --fresh discards the pages --recrawl would ask again for; give one');
    if (flags.since !== undefined)
      throw new UsageError('--recrawl and --since: --recrawl compares with what --state holds, --since with a records file; give one');
  }
  if (flags.revisit) {
    if (flags.state === undefined && flags.redis === undefined)
      throw new UsageError('--revisit goes with --state FILE or --redis URL: the state keeps when each page is due again');
    if (flags.recrawl) throw new UsageError('--revisit and --recrawl: --recrawl asks every page again now, --revisit each when it is due; give one');
  } else if (flags.revisitMin !== undefined || flags.revisitMax !== undefined) {
    throw new UsageError(`${flags.revisitMin !== undefined ? '--revisit-min' : '--revisit-max'} goes with --revisit`);
  }
  if (flags.since !== undefined && (flags.state !== undefined || flags.redis !== undefined)) {
    throw new UsageError(
      `--since is for a crawl without a state file; with ${flags.state !== undefined ? '--state' : '--redis'}, the state holds the history: use --recrawl`,
    );
  }
}

/** `--since FILE` read, or undefined without it; a file that cannot be used is a UsageError. */
export async function loadSince(flags: CrawlFlags, cwd: string): Promise<SinceEntry[] | undefined> {
  if (flags.since === undefined) return undefined;
  try {
    return await readSince(resolve(cwd, flags.since), flags.since);
  } catch (err) {
    if (err instanceof SinceError) throw new UsageError(err.message);
    throw err;
  }
}

/** --revisit's interval bounds, or undefined without --revisit; a bad duration or min > max is a UsageError. */
export function revisitBounds(flags: CrawlFlags): RevisitBounds | undefined {
  if (!flags.revisit) return undefined;
  const minMs = flags.revisitMin === undefined ? REVISIT_MIN_MS : revisitFlag('--revisit-min', flags.revisitMin);
  const maxMs = flags.revisitMax === undefined ? Math.max(REVISIT_MAX_MS, minMs) : revisitFlag('--revisit-max', flags.revisitMax);
  if (minMs > maxMs) throw new UsageError(`--revisit-min ${flags.revisitMin} is longer than --revisit-max ${flags.revisitMax ?? '30d'}`);
  return { minMs, maxMs };
}

function revisitFlag(name: string, text: string): number {
  const ms = durationFlag(name, text);
  if (!(ms >= REVISIT_FLOOR_MS)) throw new UsageError(`${name}: expected at least 1s, got ${JSON.stringify(text)}`);
  return ms;
}
