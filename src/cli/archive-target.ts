/**
 * `--save-dir DIR` and `--warc FILE.warc.gz`: opened before the crawl starts
 * (a bad path fails at once, not after an hour of crawling) and handed to
 * the crawl session as one archive (archive/page-archive.ts).
 */
import { basename, resolve } from 'node:path';
import { createPageArchive, type ClosableArchive } from '../archive/page-archive.js';
import { SaveDir } from '../archive/save-dir.js';
import { WARC_SUFFIX, WarcWriter } from '../archive/warc-writer.js';
import { UsageError } from '../config/seeds.js';
import type { Logger } from '../output/logger.js';
import type { CrawlSettings } from '../types.js';
import { VERSION } from '../version.js';
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
  if (flags.warc !== undefined && !flags.warc.endsWith(WARC_SUFFIX)) {
    throw new UsageError(`--warc: expected a file name ending in ${WARC_SUFFIX} (each record is gzip-compressed), got ${JSON.stringify(flags.warc)}`);
  }
  if (flags.saveDir !== undefined && flags.saveDir.trim() === '') throw new UsageError('--save-dir: expected a directory, got ""');
  const saveDir = flags.saveDir === undefined ? undefined : await SaveDir.open(flags.saveDir, ctx.cwd);
  let warc: WarcWriter | undefined;
  if (flags.warc !== undefined) {
    const path = resolve(ctx.cwd, flags.warc);
    warc = await WarcWriter.open({
      path,
      label: flags.warc,
      resumed: ctx.resumed,
      date: new Date(ctx.now).toISOString(),
      info: [
        ['software', `polite-crawler/${VERSION}`],
        ['format', 'WARC File Format 1.1'],
        ['conformsTo', 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'],
        ['http-header-user-agent', ctx.settings.userAgent],
        ['robots', ctx.settings.robots.enabled ? 'obey' : 'ignore'],
      ],
    });
    if (warc.path !== path) ctx.log.info(`--warc: ${flags.warc} holds an earlier run of this crawl; this run's records go to ${basename(warc.path)} (a WARC file is never appended to)`);
  }
  return createPageArchive({ saveDir, warc });
}
