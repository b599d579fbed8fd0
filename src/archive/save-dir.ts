/**
 * --save-dir: each fetched body on disk under a path derived from its URL
 * (url-path.ts), written atomically: the bytes go to a temporary file in
 * the same directory (`.crawl-….tmp`) which is then renamed over the final
 * name, so a crash of the crawler never leaves a half-written body under a
 * real name (a temporary file may be left; it starts with a dot).
 *
 * A name that exists on disk as the other kind (a directory where a file
 * goes, a file where a directory goes), which this run's allocator could
 * not know (an earlier run into the same directory), sends the body to
 * `HOST/~conflict/HASH.ext` instead of failing. Any other failure to write
 * (disk full, permissions: IO_FAILED) is an OutputError: the crawl stops, as
 * it does when its records cannot be written. Directories are made by
 * makeDirs (output-targets.ts), never Node's recursive mkdir, which spins
 * for ever under /proc.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { describeFsError, OutputError, writeFailure } from '../output/sink.js';
import { makeDirs, probeDir, writeFileWhole } from '../output/output-targets.js';
import { extensionOf, PathAllocator, shortHash } from './url-path.js';

/** Errors meaning "the other kind of thing holds that name". */
const KIND_CLASH = new Set(['EEXIST', 'ENOTDIR', 'EISDIR']);

export class SaveDir {
  private readonly paths = new PathAllocator();

  private constructor(
    /** Absolute root directory. */
    readonly root: string,
    /** As the user wrote it, for messages. */
    private readonly label: string,
    /** The option's name in messages. */
    private readonly name = '--save-dir',
  ) {}

  /** Creates the directory if needed and checks it can be written, before any page is fetched. `name` is the option's name in messages. */
  static async open(dir: string, cwd: string, name = '--save-dir'): Promise<SaveDir> {
    const root = resolve(cwd, dir);
    try {
      await makeDirs(root);
      await probeDir(root);
    } catch (err) {
      const why =
        (err as NodeJS.ErrnoException).code === 'EEXIST' || (err as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'not a directory' : describeFsError(err);
      throw new OutputError('OUTPUT_UNWRITABLE', `cannot write ${name} ${dir}: ${why}`, { cause: err });
    }
    return new SaveDir(root, dir, name);
  }

  /** Writes `body` for `url`; resolves with its path relative to the root, "/"-separated. */
  async save(url: string, body: Buffer): Promise<string> {
    const path = this.paths.allocate(url);
    try {
      await this.write(path, body);
      return path;
    } catch (err) {
      if (!KIND_CLASH.has((err as NodeJS.ErrnoException).code ?? '')) throw this.failed(err);
    }
    const host = path.slice(0, path.indexOf('/'));
    const fallback = `${host}/~conflict/${shortHash(url, 16)}${extensionOf(path.slice(path.lastIndexOf('/') + 1).replace(/@.*$/, ''))}`;
    try {
      await this.write(fallback, body);
      return fallback;
    } catch (err) {
      throw this.failed(err);
    }
  }

  private async write(path: string, body: Buffer): Promise<void> {
    const target = join(this.root, ...path.split('/'));
    const dir = dirname(target);
    await makeDirs(dir);
    await writeFileWhole(target, body, { aside: join(dir, `.crawl-${randomBytes(6).toString('hex')}.tmp`) });
  }

  private failed(err: unknown): OutputError {
    return writeFailure(`${this.name} ${this.label}`, err);
  }
}
