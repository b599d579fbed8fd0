/**
 * Where a crawl's files go, checked before anything is opened or fetched.
 *
 * Contract:
 * - `checkTargets` refuses (UsageError, one line naming both options) two
 *   options that name one file: the same path once resolved (symlinked
 *   directories followed), or one existing file by device and inode (a hard
 *   link, a symlink); a file written inside the --save-dir tree; an output
 *   that would replace a file the crawl reads (--cookie-jar, --seeds-file,
 *   --config, --ca). Devices and pipes (/dev/null) are not files to lose and
 *   are never a clash.
 * - `makeDirs` is `mkdir -p` that always ends: one walk up to the nearest
 *   existing directory, one walk down creating. Node's recursive mkdir
 *   retries for ever where mkdir answers ENOENT under an existing parent
 *   (/proc), which spun the crawler at 100% CPU with no output.
 * - `probeDir` proves a directory takes new files by creating and removing
 *   one; `access(W_OK)` says yes to root on read-only places such as /proc.
 * - `writeFileWhole` writes a file whole or not at all: aside first, then
 *   renamed over the target, so a reader (or a crash) never sees half of it.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp, type Stats } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { UsageError } from '../config/seeds.js';

export interface NamedTarget {
  /** The option as the user wrote it: `-o`, `--report`, `warc`. */
  option: string;
  /** The path as the user wrote it. */
  path: string;
  /** True for an output; false for a file the crawl only reads. */
  writes: boolean;
  /** A directory the crawl writes a tree of files under (--save-dir). */
  tree?: boolean;
}

interface Resolved extends NamedTarget {
  /** Absolute, with every existing directory's symlinks resolved. */
  real: string;
  stats?: Stats;
}

/** Refuses targets that would overwrite one another; see the module contract. */
export async function checkTargets(targets: readonly NamedTarget[], cwd: string): Promise<void> {
  const resolved: Resolved[] = [];
  for (const t of targets) {
    const abs = resolve(cwd, t.path);
    const stats = await fsp.stat(abs).catch(() => undefined);
    // A device or a pipe cannot be replaced by what is written to it.
    if (stats && !stats.isFile() && !stats.isDirectory()) continue;
    resolved.push({ ...t, real: await realish(abs), stats });
  }
  for (let i = 0; i < resolved.length; i++) {
    for (let j = i + 1; j < resolved.length; j++) {
      const problem = clash(resolved[i], resolved[j]);
      if (problem) throw new UsageError(problem);
    }
  }
}

/** What is wrong with `a` and `b` together, or undefined. */
function clash(a: Resolved, b: Resolved): string | undefined {
  if (!a.writes && !b.writes) return undefined;
  const named = (t: Resolved) => `${t.option} ${t.path}`;
  const same = a.real === b.real || (a.stats !== undefined && b.stats !== undefined && a.stats.dev === b.stats.dev && a.stats.ino === b.stats.ino);
  if (same) {
    if (a.writes && b.writes) return `${named(a)} and ${named(b)} are the same file: each would overwrite the other; give each its own file`;
    const [writer, reader] = a.writes ? [a, b] : [b, a];
    return `${named(writer)} would overwrite ${named(reader)}, which the crawl reads; write it elsewhere`;
  }
  for (const [tree, file] of [
    [a, b],
    [b, a],
  ] as const) {
    if (tree.tree && file.writes && file.real.startsWith(tree.real.endsWith(sep) ? tree.real : tree.real + sep)) {
      return `${named(file)} is inside ${named(tree)}: saved pages and it could overwrite each other; put it outside that directory`;
    }
  }
  return undefined;
}

/** `abs` with the symlinks of its longest existing ancestor resolved (the rest may not exist yet). */
async function realish(abs: string): Promise<string> {
  const tail: string[] = [];
  let at = abs;
  for (;;) {
    const real = await fsp.realpath(at).catch(() => undefined);
    if (real !== undefined) return tail.length === 0 ? real : join(real, ...tail.reverse());
    const up = dirname(at);
    if (up === at) return abs;
    tail.push(basename(at));
    at = up;
  }
}

/** `mkdir -p dir` in a bounded number of steps; throws the first failure (see the module contract). */
export async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = resolve(dir); ;) {
    const stats = await fsp.stat(at).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    if (stats) {
      if (!stats.isDirectory()) throw Object.assign(new Error(`${at} is not a directory`), { code: 'ENOTDIR', path: at });
      break;
    }
    const up = dirname(at);
    missing.push(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing.reverse()) {
    try {
      await fsp.mkdir(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && (await fsp.stat(d).catch(() => undefined))?.isDirectory()) continue; // made meanwhile
      // ENOENT here means a parent that takes no new entries (/proc); describeFsError words it.
      throw err;
    }
  }
}

/** Proves `dir` takes new files: creates one and removes it. Throws the errno error when it does not. */
export async function probeDir(dir: string): Promise<void> {
  const probe = join(dir, `.crawl-${randomBytes(6).toString('hex')}.tmp`);
  await (await fsp.open(probe, 'wx')).close();
  await fsp.rm(probe, { force: true });
}

/**
 * Writes `data` to `path` whole or not at all: to `aside` (default
 * `<path>.partial`, in the same directory), synced to disk first with
 * `sync`, then renamed over `path`. A failed write removes `aside` and
 * throws the file system's own error, for the caller to name.
 */
export async function writeFileWhole(path: string, data: string | Buffer, opts: { aside?: string; sync?: boolean } = {}): Promise<void> {
  const aside = opts.aside ?? `${path}.partial`;
  try {
    const handle = await fsp.open(aside, 'w');
    try {
      await writeAll(handle, typeof data === 'string' ? Buffer.from(data) : data, 0);
      if (opts.sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(aside, path);
  } catch (err) {
    await fsp.rm(aside, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * Writes all of `bytes` at `position`: one write call may write only part
 * of them (a nearly full disk takes what fits), and only the next one then
 * fails with ENOSPC.
 */
export async function writeAll(handle: fsp.FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
