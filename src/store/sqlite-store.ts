/**
 * The durable store: the whole crawl state in one SQLite file (`--state
 * FILE`), so a crawl survives `kill -9` at any instant and resumes where it
 * was, politely.
 *
 * Contract (beyond CrawlStore's):
 * - Every change is applied to the database at once, inside a transaction
 *   that is committed at least every COMMIT_INTERVAL_MS, and at once for a
 *   change that must never be lost: a host's first request, a pause
 *   (Retry-After, backoff), a lower rate, a given-up host, a finished or
 *   closed crawl. WAL mode with synchronous=NORMAL: a committed transaction
 *   survives the process dying (not a power cut before the OS writes it).
 * - No request starts more than COMMIT_INTERVAL_MS after the last commit (a
 *   start past that commits first), and every commit records its time. A
 *   process that died therefore started nothing after `last commit +
 *   COMMIT_INTERVAL_MS`: `open` reports that as `uncleanUntil`, and the crawl
 *   treats every known host as having started a request then (HostTable
 *   restore), so a crash can only make it wait longer, never shorter.
 * - Leases of a dead process (URLs claimed, not completed) go back to the
 *   head of their queues on open. What a crash can repeat: requests in flight
 *   and requests completed within the last commit interval.
 * - Queued URLs live on disk; memory holds the seen set's fingerprints
 *   (≤ 16 B a URL), per-host counts and the host records.
 * - Opening looks at the file read-only first and takes its lock before any
 *   write, `--fresh` included (sqlite-file.ts): a file that is not ours is
 *   never touched, and one live crawl owns a file.
 * - An SQLite failure while crawling (disk full, I/O error, damage) is kept,
 *   and every later call answers with it (`guard`), as one line; with
 *   `onLowSpace`, a nearly full disk asks for a clean stop before that.
 */
import { rmSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { HostSaved } from '../politeness/host-state.js';
import type { RobotsRecord } from '../robots/types.js';
import type { Cleared, CounterName, CrawlMeta, CrawlStore, EntryExtra, FrontierEntry, Lease, OpenResult, RecordLog, StoreCounts, StoreTimer } from './crawl-store.js';
import { SeenSet } from './seen-set.js';
import type { PageHistory, PageHistoryStore } from './page-history.js';
import { PAGES_TABLE, SqliteHistory } from './sqlite-history.js';
import { APP_ID, damagedMessage, inspectStateFile, lockStateFile, openFailure, StateFileError, StateWriteError, writeFailure, type Inspection, type StateLock } from './sqlite-file.js';

export { StateFileError } from './sqlite-file.js';

/** Bumped when the file layout changes; a file with another version is refused. */
export const STATE_SCHEMA_VERSION = 2;
/** Longest time between commits while crawling, and the crash bound's slack. */
export const COMMIT_INTERVAL_MS = 50;
/** An open store commits at least this often, so `crawl status` shows when it last wrote. */
export const HEARTBEAT_MS = 5_000;
/**
 * Free bytes on the state file's disk below which a crawl is asked to stop
 * (`onLowSpace`) while its last commits still fit: a disk that fills then
 * costs no repeated page, where a commit refused by a full disk loses its
 * transaction (the pages in it are fetched again on resume).
 */
export const LOW_SPACE_BYTES = 1 << 20;
/**
 * How often free space is looked at while committing: every commit. One
 * statfs (microseconds) per 50 ms is nothing, and at a second apart a fast
 * crawl could fill the last MiB first and meet SQLITE_FULL, which loses a
 * commit (its pages are fetched again on resume and their records repeat
 * in an -o file).
 */
const SPACE_CHECK_MS = COMMIT_INTERVAL_MS;

const enum UrlState {
  Seen = 0,
  Queued = 1,
  Delayed = 2,
  Leased = 3,
  Done = 4,
}

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

interface UrlRow {
  id: number;
  url: string;
  host: string;
  depth: number;
  parent: string | null;
  hops: number;
  attempt: number;
  throttles: number | null;
  extra: string | null;
}

function loadDriver(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (err) {
    throw new StateFileError(`--state needs the better-sqlite3 module, which is not installed or did not build (${(err as Error).message.split('\n')[0]}); reinstall with install scripts enabled`);
  }
}

/**
 * The record log (`recordLog`): one row per record, the report's fields as
 * JSON. Added without a format change: an older version ignores the table,
 * and `meta.records_for` (the crawl's `created_at`) tells whether the rows
 * belong to the crawl the file holds.
 */
const RECORDS_TABLE = 'CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, rec TEXT NOT NULL);';
/** Rows read per query by `recordLog().read()`. */
const RECORDS_BATCH = 2_000;

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE urls (
  id INTEGER PRIMARY KEY,
  url TEXT NOT NULL UNIQUE,
  host TEXT NOT NULL,
  state INTEGER NOT NULL,
  pos REAL NOT NULL DEFAULT 0,
  due REAL,
  depth INTEGER NOT NULL DEFAULT 0,
  parent TEXT,
  hops INTEGER NOT NULL DEFAULT 0,
  attempt INTEGER NOT NULL DEFAULT 0,
  throttles INTEGER,
  extra TEXT,
  outcome TEXT,
  done_at REAL
);
CREATE INDEX urls_queue ON urls (host, pos) WHERE state = 1;
CREATE INDEX urls_due ON urls (due) WHERE state = 2;
CREATE TABLE hosts (key TEXT PRIMARY KEY, saved TEXT NOT NULL);
CREATE TABLE robots (origin TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
${RECORDS_TABLE}
${PAGES_TABLE}
`;

export interface SqliteStoreOptions {
  /** Source of commit times; the crawl's clock. @default Date.now */
  now?: () => number;
  /** Told how long each commit took, in seconds (metrics: a slow disk shows here first). @default none */
  timed?: StoreTimer;
  /** Discard whatever the file holds and start a new crawl. @default false */
  fresh?: boolean;
  /**
   * Open an existing file to read it only (`crawl report --state`): no
   * `open`, no writes, safe while a crawl runs in it. @default false
   */
  readOnly?: boolean;
  /**
   * Called once when the disk holding the file has less than LOW_SPACE_BYTES
   * free: the caller stops the crawl cleanly and reports the error. With it,
   * a file on a disk already that full is refused at once.
   */
  onLowSpace?: (err: StateWriteError) => void;
}

export class SqliteStore implements CrawlStore {
  readonly kind = 'sqlite';
  readonly durable = true;
  private readonly db!: Database;
  private readonly now: () => number;
  private seen = new SeenSet();
  private readonly queuedPerHost = new Map<string, number>();
  private readonly hostRecords = new Map<string, HostSaved>();
  /** Host records and counters changed since the last commit, written with it. */
  private readonly dirtyHosts = new Set<string>();
  private dirtyCounters = false;
  /** Ids of the URLs this process holds leases on. */
  private readonly leases = new Set<number>();
  private readonly counters: Record<CounterName, number> = { started: 0 };
  private totals = { queued: 0, delayed: 0, leased: 0, seen: 0 };
  private nextDue = Infinity;
  private tailPos = 0;
  private headPos = 0;
  private lastCommit = 0;
  private inTransaction = false;
  private commitTimer: NodeJS.Timeout | null = null;
  private readonly timed: StoreTimer | undefined;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;
  private opened = false;
  private readonly readOnly: boolean;
  private readonly q: Record<string, Statement>;
  private putRecord: Statement | null = null;
  /** Held while the store is open for writing (sqlite-file.ts). */
  private lock: StateLock | undefined;
  /** The first SQLite failure while crawling: every later call answers with it, nothing more is written. */
  private failure: Error | undefined;
  private onLowSpace: ((err: StateWriteError) => void) | undefined;
  private spaceCheckedAt = -Infinity;

  constructor(
    readonly path: string,
    opts: SqliteStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.timed = opts.timed;
    this.readOnly = opts.readOnly ?? false;
    this.onLowSpace = this.readOnly ? undefined : opts.onLowSpace;
    const Driver = loadDriver();
    // Looked at read-only first: a file refused here is left exactly as it was.
    const found = inspectStateFile(Driver, path, { mustExist: this.readOnly });
    if (found.kind === 'damaged' && (this.readOnly || !opts.fresh)) throw new StateFileError(damagedMessage(path, found.reason!));
    if (this.readOnly && found.kind === 'new') throw new StateFileError(`${path} holds no crawl`);
    if (found.kind === 'ours' && !(opts.fresh && !this.readOnly)) checkVersion(path, found.meta);
    if (this.readOnly) {
      this.db = new Driver(path, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 5000');
    } else {
      // The lock comes before any write, --fresh included: a file a live crawl holds is never touched.
      this.lock = lockStateFile(Driver, path, () => runningPid(Driver, path));
      if (this.onLowSpace && lowOnSpace(path)) {
        this.lock.release();
        throw lowSpaceError(path);
      }
      try {
        if (opts.fresh && found.kind !== 'new') removeStateFile(path);
        this.db = new Driver(path);
        this.db.pragma('journal_mode = WAL');
        this.db.pragma('synchronous = NORMAL');
        this.db.pragma('busy_timeout = 5000');
        this.createOrMigrate(found);
      } catch (err) {
        this.db?.close();
        this.lock.release();
        throw openFailure(path, err);
      }
    }
    this.q = this.prepare();
    this.history = this.historyOf(new SqliteHistory(this.db));
  }

  /** Per-page history (page-history.ts): in the store's transaction, committed with the completions. */
  readonly history: PageHistoryStore;
  private passNumber = 1;

  private historyOf(pages: SqliteHistory): PageHistoryStore {
    return {
      get: (url: string) => this.guard(() => pages.get(url)),
      put: (url: string, page: PageHistory, outlinks: readonly string[] | null) =>
        this.guard(() => {
          if (pages.put(url, page, outlinks)) this.touch();
        }),
      outlinks: (url: string) => this.guard(() => pages.outlinks(url)),
      pass: () => this.passNumber,
      startPass: () => this.guard(() => this.startPass(pages)),
    };
  }

  /** A new pass (page-history.ts contract), in one transaction; the in-memory views are read again after it. */
  private startPass(pages: SqliteHistory): number {
    if (this.leases.size > 0) throw new Error('a new pass cannot start while leases are held');
    this.begin();
    this.tailPos = pages.requeueAll(this.tailPos);
    this.passNumber++;
    this.q.putMeta.run('pass', String(this.passNumber));
    this.q.putMeta.run('pass_started_at', String(this.now()));
    this.db.exec("DELETE FROM meta WHERE key IN ('finished', 'finished_at'); DELETE FROM records");
    this.counters.started = 0;
    this.dirtyCounters = true;
    this.commit();
    this.seen = new SeenSet();
    this.queuedPerHost.clear();
    this.totals = { queued: 0, delayed: 0, leased: 0, seen: 0 };
    this.load();
    return this.passNumber;
  }

  /** A new file gets the schema; a format-1 file the column format 2 added. */
  private createOrMigrate(found: Inspection): void {
    const tables = this.db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
    if (tables === 0) {
      this.db.exec(SCHEMA);
      const put = this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      put.run('app', APP_ID);
      put.run('schema', String(STATE_SCHEMA_VERSION));
      return;
    }
    if (found.kind !== 'ours') throw new StateFileError(`${this.path} changed while it was being opened; try again`);
    if (found.meta.get('schema') === '1') {
      // Format 1 lacked the per-URL `extra` column; adding it keeps a file from the previous release resumable.
      this.db.exec("ALTER TABLE urls ADD COLUMN extra TEXT; UPDATE meta SET value = '2' WHERE key = 'schema';");
    }
    this.db.exec(RECORDS_TABLE);
    this.db.exec(PAGES_TABLE);
  }

  private prepare(): Record<string, Statement> {
    const p = (sql: string) => this.db.prepare(sql);
    return {
      getMeta: p('SELECT value FROM meta WHERE key = ?'),
      putMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      insert: p('INSERT INTO urls (url, host, state, pos, depth, parent, hops, attempt, throttles, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING'),
      head: p('SELECT id, url, host, depth, parent, hops, attempt, throttles, extra FROM urls WHERE host = ? AND state = 1 ORDER BY pos LIMIT 1'),
      setState: p('UPDATE urls SET state = ? WHERE id = ?'),
      done: p('UPDATE urls SET state = 4, outcome = ?, done_at = ? WHERE id = ?'),
      requeue: p('UPDATE urls SET state = ?, pos = ?, due = ?, depth = ?, parent = ?, hops = ?, attempt = ?, throttles = ?, extra = ? WHERE id = ?'),
      dueRows: p('SELECT id, host FROM urls WHERE state = 2 AND due <= ? ORDER BY due'),
      promote: p('UPDATE urls SET state = 1, pos = ?, due = NULL WHERE id = ?'),
      minDue: p('SELECT min(due) AS due FROM urls WHERE state = 2'),
      drainHost: p('SELECT id, url, host, state, depth, parent, hops, attempt, throttles, extra FROM urls WHERE host = ? AND state IN (1, 2) ORDER BY state, pos, due'),
      drainAll: p('SELECT id, url, host, state, depth, parent, hops, attempt, throttles, extra FROM urls WHERE state IN (1, 2) ORDER BY host, state, pos, due'),
      markDone: p('UPDATE urls SET state = 4 WHERE host = ? AND state IN (1, 2)'),
      countHost: p('SELECT host, state, count(*) AS n, sum(depth = 0) AS zero FROM urls WHERE host = ? AND state IN (1, 2) GROUP BY state'),
      countAll: p('SELECT host, state, count(*) AS n, sum(depth = 0) AS zero FROM urls WHERE state IN (1, 2) GROUP BY host, state'),
      zeroHost: p('SELECT id, url, host, depth, parent, hops, attempt, throttles, extra FROM urls WHERE host = ? AND state IN (1, 2) AND depth = 0 ORDER BY state, pos, due'),
      zeroAll: p('SELECT id, url, host, depth, parent, hops, attempt, throttles, extra FROM urls WHERE state IN (1, 2) AND depth = 0 ORDER BY host, state, pos, due'),
      markAllDone: p('UPDATE urls SET state = 4 WHERE state IN (1, 2)'),
      putHost: p('INSERT INTO hosts (key, saved) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET saved = excluded.saved'),
      putRobots: p('INSERT INTO robots (origin, record) VALUES (?, ?) ON CONFLICT (origin) DO UPDATE SET record = excluded.record'),
      getRobots: p('SELECT record FROM robots WHERE origin = ?'),
      putCounter: p('INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
    };
  }

  /** What the file holds before `open`: nothing yet, or a crawl (finished or not). */
  peekMeta(): (CrawlMeta & { finished: boolean }) | undefined {
    const get = (key: string) => (this.q.getMeta.get(key) as { value: string } | undefined)?.value;
    const seeds = get('seeds');
    if (seeds === undefined) return undefined;
    return { seeds: JSON.parse(seeds) as string[], configFingerprint: get('fingerprint') ?? '', finished: get('finished') === '1' };
  }

  open(meta: CrawlMeta): OpenResult | Promise<never> {
    return this.guard(() => {
      const get = (key: string) => (this.q.getMeta.get(key) as { value: string } | undefined)?.value;
      const existing = get('seeds');
      const result: OpenResult = existing === undefined
        ? { resumed: false, finished: false, meta: { seeds: [...meta.seeds], configFingerprint: meta.configFingerprint } }
        : { resumed: true, finished: get('finished') === '1', meta: { seeds: JSON.parse(existing) as string[], configFingerprint: get('fingerprint') ?? '' } };
      const running = get('running');
      // No live process holds the file (this store has its lock): `running` left at 1 means the last one died.
      if (result.resumed && running === '1') {
        // The last process died without closing: it may have started requests until its last commit plus the interval.
        result.uncleanUntil = Number(get('committed_at') ?? 0) + COMMIT_INTERVAL_MS;
        result.uncleanSpanMs = COMMIT_INTERVAL_MS;
      }
      this.load();
      this.passNumber = Number(get('pass') ?? 1);
      this.opened = true;
      this.begin();
      if (result.resumed) {
        const all = [...new Set([...result.meta.seeds, ...meta.seeds])];
        if (all.length !== result.meta.seeds.length) this.q.putMeta.run('seeds', JSON.stringify(all));
      } else {
        const createdAt = String(this.now());
        this.q.putMeta.run('seeds', JSON.stringify(meta.seeds));
        this.q.putMeta.run('fingerprint', meta.configFingerprint);
        this.q.putMeta.run('created_at', createdAt);
        // Rows an older version's --fresh left behind belong to another crawl.
        this.db.exec('DELETE FROM records');
        this.q.putMeta.run('records_for', createdAt);
      }
      // When this run began: `crawl status` measures a resumed crawl's rate from here.
      this.q.putMeta.run('opened_at', String(this.now()));
      this.q.putMeta.run('running', '1');
      this.q.putMeta.run('pid', String(process.pid));
      this.commit();
      this.heartbeat = setInterval(() => this.timedCommit(), HEARTBEAT_MS);
      this.heartbeat.unref();
      return result;
    });
  }

  /** Reads what a resumed crawl needs in memory; leases of a dead process go back to their queues' heads. */
  private load(): void {
    const db = this.db;
    db.exec(`UPDATE urls SET state = 1, pos = (SELECT coalesce(min(pos), 0) FROM urls) - 1 - id WHERE state = 3`);
    for (const row of db.prepare('SELECT url FROM urls').pluck().iterate() as Iterable<string>) this.seen.add(row);
    for (const row of db.prepare('SELECT host, count(*) AS n FROM urls WHERE state = 1 GROUP BY host').all() as Array<{ host: string; n: number }>) {
      this.queuedPerHost.set(row.host, row.n);
      this.totals.queued += row.n;
    }
    this.totals.delayed = (db.prepare('SELECT count(*) FROM urls WHERE state = 2').pluck().get() as number) ?? 0;
    this.totals.seen = this.seen.size;
    const range = db.prepare('SELECT min(pos) AS lo, max(pos) AS hi FROM urls').get() as { lo: number | null; hi: number | null };
    this.headPos = Math.min(0, range.lo ?? 0);
    this.tailPos = Math.max(0, range.hi ?? 0);
    for (const row of db.prepare('SELECT key, saved FROM hosts').all() as Array<{ key: string; saved: string }>) this.hostRecords.set(row.key, JSON.parse(row.saved) as HostSaved);
    for (const row of db.prepare('SELECT name, value FROM counters').all() as Array<{ name: CounterName; value: number }>) this.counters[row.name] = row.value;
    this.refreshNextDue();
  }

  finish(): void | Promise<never> {
    return this.guard(() => {
      this.q.putMeta.run('finished', '1');
      this.q.putMeta.run('finished_at', String(this.now()));
      this.commit();
    });
  }

  /**
   * Marks the crawl stopped and lets the file go (its lock too). After a
   * failure nothing more is written (the crawl already reported it); a
   * failure of this last write is thrown, as one line.
   */
  close(): void {
    if (this.closed) return;
    const failedBefore = this.failure !== undefined;
    try {
      if (this.opened && !failedBefore) {
        this.begin();
        this.q.putMeta.run('running', '0');
        this.commit(false);
      }
    } catch (err) {
      this.failed(err);
    }
    this.closed = true;
    if (this.commitTimer) clearTimeout(this.commitTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    try {
      // Folding the log back into the file needs room; without it the log stays, whole, for the next open.
      if (!this.readOnly && this.failure === undefined) this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // the WAL keeps every commit: nothing is lost
    }
    this.db.close();
    this.lock?.release();
    if (this.failure !== undefined && !failedBefore) throw this.failure;
  }

  /**
   * Runs one store call. An SQLite failure (disk full, an I/O error, a
   * damaged page) is kept: this call and every later one answer with it as a
   * rejected promise, which ends the crawl through its store calls with one
   * line (sqlite-file.ts `writeFailure`), and nothing more is written.
   * Other errors (a lease completed twice) are the caller's bug: thrown.
   */
  private guard<T>(call: () => T): T | Promise<never> {
    if (this.failure) return this.rejected();
    try {
      return call();
    } catch (err) {
      if (!isSqliteFailure(err)) throw err;
      this.failed(err);
      return this.rejected();
    }
  }

  /**
   * The failure as a rejected promise. The crawl learns it from the calls it
   * settles; one whose answer nothing waits for (a caller that expected a
   * plain value) must not end the process with an unhandled rejection.
   */
  private rejected(): Promise<never> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own error, passed on
    const answer = Promise.reject(this.failure);
    answer.catch(() => undefined);
    return answer;
  }

  private failed(err: unknown): Error {
    this.failure ??= writeFailure(this.path, err) as Error;
    return this.failure;
  }

  add(url: string, key: string, entry: FrontierEntry | null): boolean | Promise<never> {
    return this.guard(() => {
      if (this.seen.has(url)) return false;
      const e: Omit<FrontierEntry, 'url'> = entry ?? { depth: 0, parent: null, hops: 0, attempt: 0 };
      const state = entry ? UrlState.Queued : UrlState.Seen;
      const info = this.q.insert.run(url, entry ? key : '', state, entry ? ++this.tailPos : 0, e.depth, e.parent, e.hops, e.attempt, e.throttles ?? null, e.extra === undefined ? null : JSON.stringify(e.extra));
      this.seen.add(url);
      if (info.changes === 0) return false; // a fingerprint the seen set had missed: the table decides
      this.totals.seen++;
      if (entry) this.bump(key, 1);
      this.touch();
      return true;
    });
  }

  isSeen(url: string): boolean {
    return this.seen.has(url);
  }

  claim(key: string, _now: number): Lease | undefined | Promise<never> {
    return this.guard(() => {
      if ((this.queuedPerHost.get(key) ?? 0) === 0) return undefined;
      const row = this.q.head.get(key) as UrlRow | undefined;
      if (!row) return undefined;
      this.q.setState.run(UrlState.Leased, row.id);
      this.bump(key, -1);
      this.leases.add(row.id);
      this.totals.leased++;
      this.touch();
      return { id: row.id, key, entry: toEntry(row) };
    });
  }

  complete(lease: Lease, outcome?: string): void | Promise<never> {
    return this.guard(() => {
      this.take(lease);
      this.q.done.run(outcome ?? null, this.now(), lease.id);
      this.touch();
    });
  }

  release(lease: Lease, entry: FrontierEntry, dueAt?: number): void | Promise<never> {
    return this.guard(() => {
      this.take(lease);
      const delayed = dueAt !== undefined;
      this.q.requeue.run(delayed ? UrlState.Delayed : UrlState.Queued, delayed ? 0 : --this.headPos, delayed ? dueAt : null, entry.depth, entry.parent, entry.hops, entry.attempt, entry.throttles ?? null, entry.extra === undefined ? null : JSON.stringify(entry.extra), lease.id);
      if (delayed) {
        this.totals.delayed++;
        this.nextDue = Math.min(this.nextDue, dueAt);
      } else {
        this.bump(lease.key, 1);
      }
      this.touch();
    });
  }

  promoteDue(now: number): string[] | Promise<never> {
    return this.guard(() => {
      if (this.nextDue > now) return [];
      const rows = this.q.dueRows.all(now) as Array<{ id: number; host: string }>;
      // In due order, each ahead of the last, as the memory store does (the latest due ends up first).
      for (const row of rows) {
        this.q.promote.run(--this.headPos, row.id);
        this.bump(row.host, 1);
        this.totals.delayed--;
      }
      this.refreshNextDue();
      this.touch();
      return rows.map((r) => r.host);
    });
  }

  nextDueAt(): number {
    return this.nextDue;
  }

  drain(key?: string): FrontierEntry[] | Promise<never> {
    return this.guard(() => {
      const rows = (key === undefined ? this.q.drainAll.all() : this.q.drainHost.all(key)) as Array<UrlRow & { state: number }>;
      if (key === undefined) this.q.markAllDone.run();
      else this.q.markDone.run(key);
      for (const row of rows) {
        if (row.state === UrlState.Queued) this.bump(row.host, -1);
        else this.totals.delayed--;
      }
      this.refreshNextDue();
      this.touch();
      return rows.map(toEntry);
    });
  }

  /** Counts in SQL and marks the rows done; only depth-0 rows are read out. */
  clear(key?: string): Cleared | Promise<never> {
    return this.guard(() => {
      const groups = (key === undefined ? this.q.countAll.all() : this.q.countHost.all(key)) as Array<{ host: string; state: number; n: number; zero: number }>;
      const depthZero = ((key === undefined ? this.q.zeroAll.all() : this.q.zeroHost.all(key)) as UrlRow[]).map(toEntry);
      if (key === undefined) this.q.markAllDone.run();
      else this.q.markDone.run(key);
      const counts = new Map<string, number>();
      for (const { host, state, n, zero } of groups) {
        if (state === UrlState.Queued) this.bump(host, -n);
        else this.totals.delayed -= n;
        if (n > zero) counts.set(host, (counts.get(host) ?? 0) + n - zero);
      }
      this.refreshNextDue();
      this.touch();
      return { counts: [...counts], depthZero };
    });
  }

  queued(key?: string): number {
    return key === undefined ? this.totals.queued : this.queuedPerHost.get(key) ?? 0;
  }

  hostsWithWork(): Iterable<string> {
    return [...this.queuedPerHost.keys()];
  }

  counts(): StoreCounts {
    return { ...this.totals };
  }

  saveHost(key: string, saved: HostSaved): void | Promise<never> {
    return this.guard(() => {
      const before = this.hostRecords.get(key);
      this.hostRecords.set(key, structuredClone(saved));
      this.dirtyHosts.add(key);
      // Written with the next commit (the crash bound covers starts until then), or right now.
      if (before === undefined || mustNotBeLost(before, saved)) this.commit();
      else this.touch();
    });
  }

  loadHosts(): Array<[string, HostSaved]> | Promise<never> {
    return this.guard(() => {
      return [...this.hostRecords].map(([key, saved]) => [key, structuredClone(saved)]);
    });
  }

  putRobots(origin: string, record: RobotsRecord): void | Promise<never> {
    return this.guard(() => {
      this.q.putRobots.run(origin, JSON.stringify(record));
      this.touch();
    });
  }

  getRobots(origin: string): RobotsRecord | undefined | Promise<never> {
    return this.guard(() => {
      const row = this.q.getRobots.get(origin) as { record: string } | undefined;
      return row ? (JSON.parse(row.record) as RobotsRecord) : undefined;
    });
  }

  counter(name: CounterName): number {
    return this.counters[name];
  }

  addToCounter(name: CounterName, by: number): number | Promise<never> {
    return this.guard(() => {
      const value = (this.counters[name] += by);
      this.dirtyCounters = true;
      this.touch();
      return value;
    });
  }

  /**
   * Records are inserted inside the store's open transaction, so they cost no
   * commit of their own; reading runs in batches (no statement stays open
   * between them) and works on a file a crawl is writing.
   */
  recordLog(): RecordLog {
    return {
      append: (record) =>
        this.guard(() => {
          this.putRecord ??= this.db.prepare('INSERT INTO records (rec) VALUES (?)');
          this.putRecord.run(JSON.stringify(record));
          this.touch();
        }),
      read: () => this.readRecords(),
    };
  }

  private async *readRecords(): AsyncGenerator<unknown> {
    try {
      yield* this.readRecordRows();
    } catch (err) {
      throw isSqliteFailure(err) ? writeFailure(this.path, err) : err;
    }
  }

  private async *readRecordRows(): AsyncGenerator<unknown> {
    const meta = (key: string) => (this.q.getMeta.get(key) as { value: string } | undefined)?.value;
    const created = meta('created_at');
    if (created === undefined) throw new StateFileError(`${this.path} holds no crawl yet`);
    const hasTable = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").get() !== undefined;
    if (!hasTable || meta('records_for') !== created) {
      throw new StateFileError(`${this.path} holds no records for a report: its crawl was started by an older version, which did not keep them`);
    }
    const batch = this.db.prepare('SELECT id, rec FROM records WHERE id > ? ORDER BY id LIMIT ?');
    let after = 0;
    for (;;) {
      const rows = batch.all(after, RECORDS_BATCH) as Array<{ id: number; rec: string }>;
      for (const row of rows) yield JSON.parse(row.rec) as unknown;
      if (rows.length < RECORDS_BATCH) return;
      after = rows[rows.length - 1].id;
    }
  }

  private take(lease: Lease): void {
    if (!this.leases.delete(lease.id)) throw new Error(`lease ${lease.id} (${lease.entry.url}) is not held: completed or released already`);
    this.totals.leased--;
  }

  private bump(key: string, by: number): void {
    const n = (this.queuedPerHost.get(key) ?? 0) + by;
    if (n === 0) this.queuedPerHost.delete(key);
    else this.queuedPerHost.set(key, n);
    this.totals.queued += by;
  }

  private refreshNextDue(): void {
    const due = (this.q.minDue.get() as { due: number | null }).due;
    this.nextDue = due ?? Infinity;
  }

  private begin(): void {
    if (this.inTransaction || this.closed) return;
    this.db.exec('BEGIN');
    this.inTransaction = true;
  }

  /** Something changed: within a transaction, committed within the interval (at once when the interval is already over). */
  private touch(): void {
    if (this.closed) return;
    this.begin();
    if (this.now() - this.lastCommit >= COMMIT_INTERVAL_MS) this.commit();
    else if (!this.commitTimer) {
      this.commitTimer = setTimeout(() => {
        this.commitTimer = null;
        this.timedCommit();
      }, COMMIT_INTERVAL_MS);
      this.commitTimer.unref();
    }
  }

  /** A commit no call waits for: a failure is kept for the crawl's next store call (`guard`), never thrown into a timer. */
  private timedCommit(): void {
    if (this.closed || this.failure) return;
    try {
      this.commit();
    } catch (err) {
      if (!isSqliteFailure(err)) throw err;
      this.failed(err);
    }
  }

  /** Tells the caller, once, that the disk is nearly full (at most every SPACE_CHECK_MS). */
  private checkSpace(now: number): void {
    if (!this.onLowSpace || now - this.spaceCheckedAt < SPACE_CHECK_MS) return;
    this.spaceCheckedAt = now;
    if (!lowOnSpace(this.path)) return;
    const tell = this.onLowSpace;
    this.onLowSpace = undefined;
    tell(lowSpaceError(this.path));
  }

  private commit(reopen = true): void {
    const began = this.timed ? performance.now() : 0;
    if (!this.inTransaction) this.begin();
    for (const key of this.dirtyHosts) this.q.putHost.run(key, JSON.stringify(this.hostRecords.get(key)));
    this.dirtyHosts.clear();
    if (this.dirtyCounters) for (const [name, value] of Object.entries(this.counters)) this.q.putCounter.run(name, value);
    this.dirtyCounters = false;
    const at = this.now();
    this.q.putMeta.run('committed_at', String(at));
    this.q.putMeta.run('committed_wall', String(Date.now()));
    this.db.exec('COMMIT');
    this.timed?.('commit', (performance.now() - began) / 1000);
    this.inTransaction = false;
    this.lastCommit = at;
    this.checkSpace(at);
    if (reopen && !this.closed) this.begin();
  }
}

/** A state file of ours from another format is refused (`--fresh` replaces it). */
export function checkVersion(path: string, meta: Map<string, string>): void {
  const schema = meta.get('schema');
  // Format 1 differs only by a column added when a crawl resumes the file; readers do not use it.
  if (schema === '1' || schema === String(STATE_SCHEMA_VERSION)) return;
  throw new StateFileError(`${path} was written by an incompatible version (state format ${schema}, this version reads ${STATE_SCHEMA_VERSION}); use --fresh to start over`);
}

/** The process a state file says is crawling in it, for the "in use" message. */
function runningPid(Driver: typeof BetterSqlite3, path: string): number | undefined {
  try {
    const meta = inspectStateFile(Driver, path).meta;
    const pid = Number(meta.get('pid'));
    return meta.get('running') === '1' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** `--fresh`: the old file goes whole (damaged or not), with what SQLite keeps beside it; the lock stays. */
function removeStateFile(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(file, { force: true });
}

function lowOnSpace(path: string): boolean {
  try {
    const fs = statfsSync(dirname(path));
    return fs.bavail * fs.bsize < LOW_SPACE_BYTES;
  } catch {
    return false; // a file system that cannot say: SQLITE_FULL will
  }
}

function lowSpaceError(path: string): StateWriteError {
  return new StateWriteError(`cannot write state file ${path}: the disk is full (less than ${LOW_SPACE_BYTES >> 20} MiB left); run the same command again once there is room`);
}

/** An error better-sqlite3 raised for SQLite (its code is SQLite's: SQLITE_FULL, SQLITE_CORRUPT, …). */
function isSqliteFailure(err: unknown): boolean {
  return /^SQLITE_/.test((err as { code?: unknown } | null)?.code as string ?? '');
}

/** Changes a crash must never undo: a pause, a lower rate, a slower pace, a given-up host. */
function mustNotBeLost(before: HostSaved, after: HostSaved): boolean {
  const b = before.limiter;
  const a = after.limiter;
  return (
    after.givenUp !== before.givenUp ||
    (a.pausedUntil ?? -Infinity) > (b.pausedUntil ?? -Infinity) ||
    a.rateFactor < b.rateFactor ||
    a.crawlDelayMs > b.crawlDelayMs ||
    (a.serverGapUntil ?? -Infinity) > (b.serverGapUntil ?? -Infinity)
  );
}

function toEntry(row: UrlRow): FrontierEntry {
  const entry: FrontierEntry = { url: row.url, depth: row.depth, parent: row.parent, hops: row.hops, attempt: row.attempt };
  if (row.throttles !== null) entry.throttles = row.throttles;
  if (row.extra !== null) entry.extra = JSON.parse(row.extra) as EntryExtra;
  return entry;
}
