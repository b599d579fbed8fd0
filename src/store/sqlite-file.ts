/**
 * A state file (`--state FILE`) seen from outside, before anything writes to
 * it, and who may write to it.
 *
 * Contract:
 * - `inspectStateFile` only reads: it opens the file read-only and runs no
 *   PRAGMA that writes, so a file it refuses (not SQLite, another
 *   application's database, damaged) is left byte for byte as it was, with no
 *   `-wal` or `-shm` beside it.
 * - `lockStateFile` holds `FILE-lock`, a small SQLite database locked with
 *   SQLite's own file locks (locking_mode=EXCLUSIVE and a write transaction).
 *   The operating system drops such a lock the moment its holder exits,
 *   however it exits, so a zombie or a reused process id never blocks a
 *   resume; two live crawls on one file never both get it. It is taken before
 *   any write, `--fresh` included.
 * - Every SQLite failure a crawl can hit is turned into one line: a damaged
 *   file (`STATE_INVALID`, exit 2) or a write the machine refused
 *   (`IO_FAILED`, exit 4), never a raw SqliteError.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** A state file that is not ours, from another version, damaged, in use or unreadable. */
export class StateFileError extends Error {
  readonly code = 'STATE_INVALID';
}

/** The machine refused a write to the state file (disk full, read-only, I/O error): exit 4. */
export class StateWriteError extends Error {
  readonly code = 'IO_FAILED';
}

export const APP_ID = 'polite-crawler state';
const HEADER = 'SQLite format 3\0';
/** How long a crawl waits for a lock another process is just taking or dropping. */
const LOCK_WAIT_MS = 1_000;

export type Driver = typeof BetterSqlite3;

export interface Inspection {
  /** `new`: no file, an empty one, or an SQLite database without tables. */
  kind: 'new' | 'ours' | 'damaged';
  /** The file's meta table (ours only). */
  meta: Map<string, string>;
  /** Why it is damaged, in SQLite's words. */
  reason?: string;
}

/** The one message for a damaged state file, whichever command met it. */
export function damagedMessage(path: string, reason: string): string {
  return `${path} is damaged (${reason}): start the crawl over with --fresh, which replaces the file, or delete it`;
}

/** A crawl (or `crawl status`, `crawl report`) may use the file as it is; anything else throws a StateFileError. */
export function inspectStateFile(Driver: Driver, path: string, opts: { mustExist?: boolean } = {}): Inspection {
  const empty: Inspection = { kind: 'new', meta: new Map() };
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw new StateFileError(`${path} is a directory, not a state file`);
    size = st.size;
  } catch (err) {
    if (err instanceof StateFileError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (opts.mustExist) throw new StateFileError(`${path} does not exist: no crawl has been kept in it`);
      return empty;
    }
    throw new StateFileError(`cannot read state file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (size === 0) return empty;
  if (!hasSqliteHeader(path)) throw new StateFileError(`${path} is not a crawl state file (not an SQLite database)`);
  const db = openReadOnly(Driver, path);
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    if (tables.length === 0) return empty;
    if (!tables.includes('meta')) throw foreign(path);
    const meta = new Map(
      (db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>).map((r) => [String(r.key), String(r.value)]),
    );
    if (meta.get('app') !== APP_ID) throw foreign(path);
    return { kind: 'ours', meta };
  } catch (err) {
    if (err instanceof StateFileError) throw err;
    if (isDamage(err)) return { kind: 'damaged', meta: new Map(), reason: (err as Error).message };
    if ((err as { code?: string }).code === 'SQLITE_ERROR') throw foreign(path); // e.g. a meta table of another shape
    throw new StateFileError(`cannot read state file ${path}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

const foreign = (path: string) => new StateFileError(`${path} is not a crawl state file (it holds other tables); it was left as it was`);

/** SQLite's own words for a file whose pages are not what they should be. */
/** The file opened read-only (nothing is created or changed), or one StateFileError line. */
export function openReadOnly(Driver: Driver, path: string): BetterSqlite3.Database {
  try {
    return new Driver(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new StateFileError(`cannot read state file ${path}: ${(err as Error).message}`);
  }
}

export function isDamage(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code ?? '';
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

function hasSqliteHeader(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEADER.length);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return n === buf.length && buf.toString('latin1') === HEADER;
  } finally {
    closeSync(fd);
  }
}

/**
 * What an SQLite file given where JSON-lines records were expected is:
 * `state` (a crawl's state file), `sqlite` (another database), or undefined
 * (not SQLite, or unreadable: the records reader says why).
 */
export function sqliteKind(path: string): 'state' | 'sqlite' | undefined {
  try {
    if (!hasSqliteHeader(path)) return undefined;
  } catch {
    return undefined;
  }
  try {
    const Driver = createRequire(import.meta.url)('better-sqlite3') as Driver;
    return inspectStateFile(Driver, path).kind === 'ours' ? 'state' : 'sqlite';
  } catch {
    return 'sqlite';
  }
}

/** The lock beside a state file. */
export const lockPath = (path: string) => `${path}-lock`;

export interface StateLock {
  release(): void;
}

/**
 * Takes the file's lock or throws "in use". `holder` names the process that
 * holds it when the state file says (its meta `pid`, written by that crawl).
 */
export function lockStateFile(Driver: Driver, path: string, holder: () => number | undefined): StateLock {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Driver(lockPath(path), { timeout: LOCK_WAIT_MS });
    db.pragma('locking_mode = EXCLUSIVE');
    // In exclusive locking mode the lock taken by this transaction stays held after it, until the connection closes or the process ends.
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db?.close();
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      const pid = holder();
      throw new StateFileError(`${path} is in use by a running crawl${pid === undefined ? '' : ` (process ${pid})`}; stop it first, or use another state file`);
    }
    throw openFailure(path, err);
  }
  const held = db;
  return { release: () => held.close() };
}

/** Whether a live process holds the file's lock (for `crawl status`); takes nothing, creates nothing. */
export function stateFileLocked(Driver: Driver, path: string): boolean {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Driver(lockPath(path), { readonly: true, fileMustExist: true, timeout: 0 });
    db.pragma('schema_version'); // needs a shared lock: refused while a crawl holds its exclusive one
    return false;
  } catch (err) {
    return ((err as { code?: string }).code ?? '').startsWith('SQLITE_BUSY');
  } finally {
    db?.close();
  }
}

/** A failure while opening `path` for a crawl: one line whatever it is (a missing folder is not SQLite's error). */
export function openFailure(path: string, err: unknown): unknown {
  const mapped = writeFailure(path, err);
  return mapped === err ? new StateFileError(`cannot open state file ${path}: ${(err as Error).message}`, { cause: err }) : mapped;
}

/** Why the machine refused a write, in a line's words. */
const REFUSED: Array<[RegExp, string]> = [
  [/^SQLITE_FULL$/, 'the disk is full'],
  [/^SQLITE_READONLY/, 'the file or its file system is read-only'],
  [/^SQLITE_CANTOPEN/, 'it cannot be opened for writing (its folder missing, or no permission)'],
  [/^SQLITE_PERM$|^SQLITE_AUTH$/, 'permission denied'],
  [/^SQLITE_IOERR/, 'an I/O error'],
];

/**
 * One error for an SQLite failure while the crawl writes `path`: a damaged
 * file, or a write the machine refused (the crawl stops; the same command
 * resumes once the cause is gone). Anything else is returned as it was.
 */
export function writeFailure(path: string, err: unknown): unknown {
  if (err instanceof StateFileError || err instanceof StateWriteError) return err;
  if (isDamage(err)) return new StateFileError(damagedMessage(path, (err as Error).message), { cause: err });
  const code = (err as { code?: string } | null)?.code ?? '';
  for (const [pattern, why] of REFUSED) {
    if (pattern.test(code))
      return new StateWriteError(`cannot write state file ${path}: ${why} (${code}); run the same command again once that is fixed`, { cause: err });
  }
  return err;
}
