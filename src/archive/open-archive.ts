/**
 * Opens the archive a crawl asks for (`--save-dir` / `--warc` on the command
 * line, `saveDir` / `warc` in the library's options) before the crawl
 * starts, so a path that cannot be written fails at once, not after an hour
 * of crawling. Shared by the CLI (cli/archive-target.ts) and `crawl()`
 * (api/crawl.ts), which only word the problems differently. The writers
 * (save-dir.ts, warc-writer.ts) load only when a target is named: a crawl
 * that archives nothing loads this file alone.
 */
import { basename, resolve } from 'node:path';
import type { CrawlSettings } from '../config/settings-types.js';
import { VERSION } from '../version.js';
import { createPageArchive, type ClosableArchive } from './page-archive.js';

/** What a WARC file's name ends with: every record is one gzip member. */
export const WARC_SUFFIX = '.warc.gz';

export interface ArchiveTargets {
  /** Directory the 2xx bodies are saved under (created if needed). */
  saveDir?: string;
  /** WARC file to write; must end in `.warc.gz`. */
  warc?: string;
}

export interface OpenArchiveOptions {
  /** Relative paths are resolved against this. */
  cwd: string;
  settings: CrawlSettings;
  /** The crawl continues an earlier run: the WARC goes to a new file if the named one exists. */
  resumed: boolean;
  /** Wall-clock ms, for the warcinfo record's date. */
  now: number;
  /** How the caller names the two options in messages. @default { saveDir: '--save-dir', warc: '--warc' } */
  names?: { saveDir: string; warc: string };
}

export interface OpenedArchive {
  archive: ClosableArchive;
  /** Where the WARC goes, when that is not the file named (a resumed crawl never appends to a WARC). */
  warcMovedTo?: string;
}

/** What is wrong with `targets` before anything is opened, or undefined. */
export function archiveTargetProblem(targets: ArchiveTargets, names = { saveDir: '--save-dir', warc: '--warc' }): string | undefined {
  if (targets.warc !== undefined && !targets.warc.endsWith(WARC_SUFFIX)) {
    return `${names.warc}: expected a file name ending in ${WARC_SUFFIX} (each record is gzip-compressed), got ${JSON.stringify(targets.warc)}`;
  }
  if (targets.saveDir !== undefined && targets.saveDir.trim() === '') return `${names.saveDir}: expected a directory, got ""`;
  return undefined;
}

/**
 * The archive `targets` ask for, or undefined when they name nothing. The
 * caller checks archiveTargetProblem first. Throws OutputError (one line)
 * when a path cannot be written.
 */
export async function openPageArchive(targets: ArchiveTargets, opts: OpenArchiveOptions): Promise<OpenedArchive | undefined> {
  if (targets.saveDir === undefined && targets.warc === undefined) return undefined;
  const names = opts.names ?? { saveDir: '--save-dir', warc: '--warc' };
  const { SaveDir } = await import('./save-dir.js');
  const saveDir = targets.saveDir === undefined ? undefined : await SaveDir.open(targets.saveDir, opts.cwd, names.saveDir);
  if (targets.warc === undefined) return { archive: createPageArchive({ saveDir }) };
  const path = resolve(opts.cwd, targets.warc);
  const { WarcWriter } = await import('./warc-writer.js');
  const warc = await WarcWriter.open({
    path,
    label: targets.warc,
    name: names.warc,
    resumed: opts.resumed,
    date: new Date(opts.now).toISOString(),
    info: [
      ['software', `polite-crawler/${VERSION}`],
      ['format', 'WARC File Format 1.1'],
      ['conformsTo', 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'],
      ['http-header-user-agent', opts.settings.userAgent],
      ['robots', opts.settings.robots.enabled ? 'obey' : 'ignore'],
    ],
  });
  return { archive: createPageArchive({ saveDir, warc }), ...(warc.path !== path && { warcMovedTo: basename(warc.path) }) };
}
