/**
 * The flags of crawling again (docs/crawling-again.md): `--recrawl` (a new
 * pass over what `--state` holds) and `--since FILE` (a previous run's
 * records, no state file). Every combination that cannot work is one
 * usage line (exit 2) before anything is opened; `--since`'s file is read
 * here, so an unreadable one fails before any output exists.
 */
import { resolve } from 'node:path';
import { UsageError } from '../config/seeds.js';
import { readSince, SinceError, type SinceEntry } from '../crawl/recrawl-since.js';
import type { CrawlFlags } from './flags.js';

export function checkRecrawlFlags(flags: CrawlFlags): void {
  if (flags.recrawl) {
    if (flags.state === undefined && flags.redis === undefined) throw new UsageError('--recrawl goes with --state FILE: it crawls again what the file holds (without a state file, --since RECORDS.jsonl compares with a previous run\'s records)');
    if (flags.redis !== undefined) throw new UsageError('--recrawl goes with --state FILE; a --redis crawl cannot be crawled again yet');
    if (flags.fresh) throw new UsageError('--recrawl and --fresh: --fresh discards the pages --recrawl would ask again for; give one');
    if (flags.since !== undefined) throw new UsageError('--recrawl and --since: --recrawl compares with what --state holds, --since with a records file; give one');
  }
  if (flags.since !== undefined && (flags.state !== undefined || flags.redis !== undefined)) {
    throw new UsageError(`--since is for a crawl without a state file; with ${flags.state !== undefined ? '--state' : '--redis'}, the state holds the history: use --recrawl`);
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
