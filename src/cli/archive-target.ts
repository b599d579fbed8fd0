/**
 * `--save-dir DIR` and `--warc FILE.warc.gz`: opened before the crawl starts
 * (a bad path fails at once, not after an hour of crawling) and handed to
 * the crawl session as one archive (archive/page-archive.ts), by the code
 * the library's `saveDir` / `warc` share (archive/open-archive.ts), loaded
 * only when one of the flags is given.
 */
import type { ClosableArchive } from '../archive/page-archive.js';
import { UsageError } from '../config/seeds.js';
import type { Logger } from '../output/logger.js';
import type { CrawlSettings } from '../config/settings-types.js';
import type { CrawlFlags } from './flags.js';

export interface ArchiveContext {
  cwd: string;
  settings: CrawlSettings;
  /** The crawl continues an earlier run (--state): the WARC goes to a new file if the named one exists. */
  resumed: boolean;
  /** Wall-clock ms, for the warcinfo record's date. */
  now: number;
  log: Logger;
}

/** The archive the flags ask for, or undefined when neither flag is given. Throws UsageError / OutputError with one line. */
export async function openArchive(flags: Pick<CrawlFlags, 'saveDir' | 'warc'>, ctx: ArchiveContext): Promise<ClosableArchive | undefined> {
  if (flags.saveDir === undefined && flags.warc === undefined) return undefined;
  const { archiveTargetProblem, openPageArchive } = await import('../archive/open-archive.js');
  const problem = archiveTargetProblem(flags);
  if (problem) throw new UsageError(problem);
  const opened = await openPageArchive(flags, { cwd: ctx.cwd, settings: ctx.settings, resumed: ctx.resumed, now: ctx.now });
  if (opened?.warcMovedTo)
    ctx.log.info(`--warc: ${flags.warc} holds an earlier run of this crawl; this run's records go to ${opened.warcMovedTo} (a WARC file is never appended to)`);
  return opened?.archive;
}
