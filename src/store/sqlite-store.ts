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
 * - A claim writes nothing: each host's next rows are read into a small
 *   in-memory window (CLAIM_WINDOW rows, one SELECT) and claimed from it,
 *   their rows left queued in the file. A crash leaves them queued, at the
 *   head of their hosts' queues, which is where a lease goes back on open
 *   anyway; a complete or a release writes the row as before. This halves
 *   the statements per page (bench/state.js). Only `drain` and `clear`
 *   mark the leases they must not touch (state 3) first; `crawl status`
 *   reads the unmarked ones from the meta row each commit writes.
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
import type {
  Charge,
  Cleared,
  CounterName,
  CrawlMeta,
  CrawlStore,
  EntryExtra,
  FrontierEntry,
  Lease,
  OpenResult,
  RecordLog,
  Spending,
  StoreCounts,
  StoreTimer,
} from './crawl-store.js';
import { SpendBook } from './spend-book.js';
import { fingerprint, SeenSet } from '../util/seen-set.js';
import type { PageHistory, PageHistoryStore } from './page-history.js';
import { PAGES_TABLE, SqliteHistory } from './sqlite-history.js';
import { keepRecordAfterCrash, type CrashRecord, type OutputPosition } from './output-ledger.js';
import {
  APP_ID,
  damagedMessage,
  inspectStateFile,
  lockStateFile,
  openFailure,
  StateFileError,
  StateWriteError,
  writeFailure,
  type Inspection,
  type StateLock,
} from './sqlite-file.js';

export { StateFileError } from './sqlite-file.js';

/** Bumped when the file layout changes; a file with another version is refused. */
export const STATE_SCHEMA_VERSION = 2;
/** Rows of a host's queue read into memory per SELECT, claimed from there without writing. */
export const CLAIM_WINDOW = 32;
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

/** How far the crawl clock may drift from the wall clock between a page's claim and its completion, for `isDone`. */
const CLOCK_SLACK_MS = 500;

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

/** A row of the `window` query, as an array: id, url, depth, parent, hops, attempt, throttles, extra, pos. */
type WindowColumns = [number, string, number, string | null, number, number, number | null, string | null, number];

function loadDriver(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (err) {
    throw new StateFileError(
      `--state needs the better-sqlite3 module, which is not installed or did not build (${(err as Error).message.split('\n')[0]}); reinstall with install scripts enabled`,
    );
  }
}

/**
 * The record log (`recordLog`): one row per record, the report's fields as
 * JSON. Added without a format change: an older version ignores the table,
 * and `meta.records_for` (the crawl's `created_at`) tells whether the rows
 * belong to the crawl the file holds.
 */
const RECORDS_TABLE = 'CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, rec TEXT NOT NULL);';
/**
 * URL rows read per query when a file is opened (`load`), as two JSON
 * arrays of numbers (ids, fingerprints): ~200 KB a query, garbage at once.
 */
const LOAD_PAGE_ROWS = 8_192;

/**
 * Each URL's seen-set fingerprint (util/seen-set.ts `fingerprint`, also a
 * Redis crawl's page key), kept in its row so that a resume reads numbers
 * instead of hashing every URL again: a million-URL resume read and hashed
 * ~1.4 s of rows, and reads the fingerprints in ~0.45. Added without a
 * format change: an older version does not name the column (its rows get
 * NULL, and a resume hashes those URLs as before), and a file from before
 * the column gets it when a crawl opens it for writing.
 */
const FP_COLUMN = 'ALTER TABLE urls ADD COLUMN fp INTEGER';

/** Rows read per query by `recordLog().read()`. */
const RECORDS_BATCH = 2_000;

/**
 * The rows marked leased (state 3: only a drain or clear with requests in
 * flight marks them). Almost always empty, so it costs the hot path nothing,
 * and a resume finds them without reading the whole table.
 */
const MARKED_INDEX = 'CREATE INDEX IF NOT EXISTS urls_marked ON urls (id) WHERE state = 3;';

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
  done_at REAL,
  fp INTEGER
);
CREATE INDEX urls_queue ON urls (host, pos) WHERE state = 1;
CREATE INDEX urls_due ON urls (due) WHERE state = 2;
${MARKED_INDEX}
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
  /** The `-o` file followed across commits (trackOutput). */
  private output: (OutputPosition & { path: string; previous: number }) | undefined;
  /** Every URL in the file, with its row id (history names outlinks by id: sqlite-history.ts). */
  private seen = new SeenSet(1024, { ids: true });
  private readonly queuedPerHost = new Map<string, number>();
  /**
   * Each host record (the store's own copy, `copySaved`), with the fields a
   * crash must never undo (`mustNotBeLost`); serialised only when a commit
   * writes it. A host is saved about three times a page: structuredClone
   * there cost ~50x the copy, a JSON.stringify ~15x.
   */
  private readonly hostRecords = new Map<string, { saved: HostSaved; kept: Kept }>();
  /** Host records and counters changed since the last commit, written with it. */
  private readonly dirtyHosts = new Set<string>();
  private dirtyCounters = false;
  /** The spend ledger (meta row `spend`), written with the commit of the completions it was charged by. */
  private spend = new SpendBook();
  private dirtySpend = false;
  /** Ids of the URLs this process holds leases on, with their host keys. */
  private readonly leases = new Map<number, string>();
  /** Leases whose rows the file still shows queued (claimed from a window): the meta row `unmarked_leases` says how many. */
  private unmarked = 0;
  /**
   * Per host: queued rows read ahead of their claim, in queue order. Every
   * queued row of the host with `pos <= end` that is not leased is in `rows`
   * (a release goes to its front); those past `end` are read when it runs out.
   * `leased`: the host's unmarked leases, whose rows a read from the head
   * would pass over again; a window goes once its host has neither.
   */
  private readonly windows = new Map<string, { rows: Array<UrlRow & { pos: number }>; end: number; leased: number }>();
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
  /**
   * The last record-log row appended, and per page URL its first record before its completion: its row
   * (settledRecords) and where it starts in `-o` (outputSettled; Infinity when `-o` is not followed).
   */
  private lastRecordRow = 0;
  private readonly unsettledRecords = new Map<string, { row: number; output: number }>();
  /** The URLs of the leases held (a page record of one of them waits for its completion). */
  private readonly leasedUrls = new Set<string>();
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
    this.history = this.historyOf(new SqliteHistory(this.db, (url) => this.seen.idOf(url)));
  }

  /** Per-page history (page-history.ts): in the store's transaction, committed with the completions. */
  readonly history: PageHistoryStore;
  private passNumber = 1;

  private historyOf(pages: SqliteHistory): PageHistoryStore {
    return {
      get: (url: string) => this.guard(() => pages.get(url)),
      put: (url: string, page: PageHistory, outlinks: readonly string[] | null) =>
        this.guard(() => {
          // The completion follows in this turn (recrawl.ts `keep`): both land in one commit.
          if (pages.put(url, page, outlinks)) this.touchBeforeNext();
        }),
      outlinks: (url: string) => this.guard(() => pages.outlinks(url)),
      pass: () => this.passNumber,
      startPass: () => this.guard(() => this.startPass(pages)),
      revisits: {
        at: (url: string, dueAt: number) =>
          this.guard(() => {
            if (!pages.revisitAt(url, dueAt)) return;
            this.totals.delayed++;
            this.nextDue = Math.min(this.nextDue, dueAt);
            this.touch();
          }),
        scheduleAll: (defaultMs: number, wallToCrawl: number) =>
          this.guard(() => {
            this.begin();
            const n = pages.revisitAll(defaultMs, wallToCrawl);
            if (n > 0) this.db.exec("DELETE FROM meta WHERE key IN ('finished', 'finished_at')");
            this.commit();
            this.countDelayed();
            this.refreshNextDue();
            return n;
          }),
      },
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
    this.db.exec("DELETE FROM meta WHERE key IN ('finished', 'finished_at', 'records_settled'); DELETE FROM records");
    this.lastRecordRow = 0;
    this.counters.started = 0;
    this.dirtyCounters = true;
    this.commit();
    this.seen = new SeenSet(1024, { ids: true });
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
    if (this.db.prepare("SELECT count(*) FROM pragma_table_info('urls') WHERE name = 'fp'").pluck().get() === 0) this.db.exec(FP_COLUMN);
    this.db.exec(RECORDS_TABLE);
    this.db.exec(PAGES_TABLE);
    // A file from before the index gets it (one read of the table, once).
    this.db.exec(MARKED_INDEX);
  }

  private prepare(): Record<string, Statement> {
    const p = (sql: string) => this.db.prepare(sql);
    return {
      getMeta: p('SELECT value FROM meta WHERE key = ?'),
      urlState: p('SELECT state, done_at FROM urls WHERE url = ?'),
      putMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      // Not for a reader: it never adds, and a file from before the fp column (FP_COLUMN) has none to name.
      ...(this.readOnly
        ? {}
        : {
            insert: p(
              'INSERT INTO urls (url, host, state, pos, depth, parent, hops, attempt, throttles, extra, fp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING',
            ),
          }),
      // Read as arrays (WindowColumns): better-sqlite3's row objects cost twice as much a row, ~2 µs a page.
      window: p(
        `SELECT id, url, depth, parent, hops, attempt, throttles, extra, pos FROM urls WHERE host = ? AND state = 1 AND pos > ? ORDER BY pos LIMIT ${CLAIM_WINDOW}`,
      ).raw(),
      setState: p('UPDATE urls SET state = ? WHERE id = ?'),
      done: p('UPDATE urls SET state = 4, outcome = ?, done_at = ? WHERE id = ?'),
      requeue: p('UPDATE urls SET state = ?, pos = ?, due = ?, depth = ?, parent = ?, hops = ?, attempt = ?, throttles = ?, extra = ? WHERE id = ?'),
      dueRows: p('SELECT id, host FROM urls WHERE state = 2 AND due <= ? ORDER BY due'),
      promote: p('UPDATE urls SET state = 1, pos = ?, due = NULL WHERE id = ?'),
      minDue: p('SELECT min(due) AS due FROM urls WHERE state = 2'),
      drainHost: p(
        'SELECT id, url, host, state, depth, parent, hops, attempt, throttles, extra FROM urls WHERE host = ? AND state IN (1, 2) ORDER BY state, pos, due',
      ),
      drainAll: p('SELECT id, url, host, state, depth, parent, hops, attempt, throttles, extra FROM urls WHERE state IN (1, 2) ORDER BY host, state, pos, due'),
      markDone: p('UPDATE urls SET state = 4 WHERE host = ? AND state IN (1, 2)'),
      countHost: p('SELECT host, state, count(*) AS n, sum(depth = 0) AS zero FROM urls WHERE host = ? AND state IN (1, 2) GROUP BY state'),
      countAll: p('SELECT host, state, count(*) AS n, sum(depth = 0) AS zero FROM urls WHERE state IN (1, 2) GROUP BY host, state'),
      zeroHost: p(
        'SELECT id, url, host, depth, parent, hops, attempt, throttles, extra FROM urls WHERE host = ? AND state IN (1, 2) AND depth = 0 ORDER BY state, pos, due',
      ),
      zeroAll: p(
        'SELECT id, url, host, depth, parent, hops, attempt, throttles, extra FROM urls WHERE state IN (1, 2) AND depth = 0 ORDER BY host, state, pos, due',
      ),
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
      const result: OpenResult =
        existing === undefined
          ? { resumed: false, finished: false, meta: { seeds: [...meta.seeds], configFingerprint: meta.configFingerprint } }
          : {
              resumed: true,
              finished: get('finished') === '1',
              meta: { seeds: JSON.parse(existing) as string[], configFingerprint: get('fingerprint') ?? '' },
            };
      const running = get('running');
      // The crawl clock starts at the wall clock: set back between runs, it reads earlier than the last commit.
      const lastCommit = Number(get('committed_at') ?? 0);
      const behind = result.resumed ? lastCommit - this.now() : 0;
      if (behind > 0) {
        result.clockBehindMs = behind;
        // Retries keep the delay they had left (a step back of a day would otherwise hold them a day more).
        this.db.prepare(`UPDATE urls SET due = due - ? WHERE state = ${UrlState.Delayed}`).run(behind);
      }
      // No live process holds the file (this store has its lock): `running` left at 1 means the last one died.
      if (result.resumed && running === '1') {
        // The last process died without closing: it may have started requests until its last commit plus the interval.
        result.uncleanUntil = lastCommit - Math.max(0, behind) + COMMIT_INTERVAL_MS;
        result.uncleanSpanMs = COMMIT_INTERVAL_MS;
      }
      this.load();
      this.passNumber = Number(get('pass') ?? 1);
      this.opened = true;
      this.begin();
      if (result.resumed && running === '1') this.dropUnsettledRecords();
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
    const unmarked = db.prepare(`UPDATE urls SET state = 1, pos = (SELECT coalesce(min(pos), 0) FROM urls) - 1 - id WHERE state = 3`).run().changes;
    // Sized once for every URL (rows are never deleted: the highest id is their number, read off
    // the table's b-tree at once, where count(*) reads it all), not grown a dozen times on the way.
    const highest = (db.prepare('SELECT max(id) FROM urls').pluck().get() as number | null) ?? 0;
    this.seen = new SeenSet(Math.max(1024, highest), { ids: true });
    // Pages of rows by id, each page one row of two JSON arrays: a row object or array a URL
    // (`iterate`, `all`) cost ~0.6 µs a row in the crossing alone, most of a million-URL resume's
    // start-up. A row an older version wrote has no fingerprint: its URL comes instead, hashed here.
    const page = db
      .prepare(
        `SELECT max(id), json_group_array(id), json_group_array(coalesce(fp, url)) FROM (SELECT id, fp, url FROM urls WHERE id > ? ORDER BY id LIMIT ${LOAD_PAGE_ROWS})`,
      )
      .raw();
    for (let after = 0; ;) {
      const [last, idsJson, fpsJson] = page.get(after) as [number | null, string, string];
      if (last === null) break;
      const ids = JSON.parse(idsJson) as number[];
      const fps = JSON.parse(fpsJson) as Array<number | string>;
      for (let i = 0; i < ids.length; i++) {
        const fp = fps[i];
        this.seen.addFingerprint(typeof fp === 'number' ? fp : fingerprint(fp), ids[i]);
      }
      after = last;
    }
    for (const row of db.prepare('SELECT host, count(*) AS n FROM urls WHERE state = 1 GROUP BY host').all() as Array<{ host: string; n: number }>) {
      this.queuedPerHost.set(row.host, row.n);
      this.totals.queued += row.n;
    }
    this.countDelayed();
    this.totals.seen = this.seen.size;
    const ends = unmarked === 0 ? this.committedQueueEnds() : undefined;
    const range = ends ?? (db.prepare('SELECT min(pos) AS lo, max(pos) AS hi FROM urls').get() as { lo: number | null; hi: number | null });
    this.headPos = Math.min(0, range.lo ?? 0);
    this.tailPos = Math.max(0, range.hi ?? 0);
    for (const row of db.prepare('SELECT key, saved FROM hosts').all() as Array<{ key: string; saved: string }>) {
      const saved = JSON.parse(row.saved) as HostSaved;
      this.hostRecords.set(row.key, { saved, kept: kept(saved) });
    }
    for (const row of db.prepare('SELECT name, value FROM counters').all() as Array<{ name: CounterName; value: number }>) this.counters[row.name] = row.value;
    const spent = (this.q.getMeta.get('spend') as { value: string } | undefined)?.value;
    this.spend = new SpendBook(spent === undefined ? undefined : (JSON.parse(spent) as Spending));
    this.refreshNextDue();
  }

  /**
   * The queue's ends as the last commit wrote them (`queue_ends`), which
   * spares a resume the read of every row's position; none when that
   * commit did not write them (a file from an older version, or last
   * committed by one).
   */
  private committedQueueEnds(): { lo: number; hi: number } | undefined {
    const meta = this.db.prepare("SELECT key, value FROM meta WHERE key IN ('queue_ends', 'committed_at')").raw().all() as Array<[string, string]>;
    const values = new Map(meta);
    const [lo, hi, at] = (values.get('queue_ends') ?? '').split(' ');
    if (at === undefined || at !== values.get('committed_at')) return undefined;
    return { lo: Number(lo), hi: Number(hi) };
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
      const fp = fingerprint(url);
      if (this.seen.hasFingerprint(fp)) return false;
      const e: Omit<FrontierEntry, 'url'> = entry ?? { depth: 0, parent: null, hops: 0, attempt: 0 };
      const state = entry ? UrlState.Queued : UrlState.Seen;
      const info = this.q.insert.run(
        url,
        entry ? key : '',
        state,
        entry ? ++this.tailPos : 0,
        e.depth,
        e.parent,
        e.hops,
        e.attempt,
        e.throttles ?? null,
        e.extra === undefined ? null : JSON.stringify(e.extra),
        fp,
      );
      if (info.changes === 0) {
        this.seen.addFingerprint(fp);
        return false; // a fingerprint the seen set had missed: the table decides
      }
      this.seen.addFingerprint(fp, Number(info.lastInsertRowid));
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
      const row = this.nextQueued(key);
      if (!row) return undefined;
      // Nothing written: the row stays queued in the file (see the header).
      this.bump(key, -1);
      this.windows.get(key)!.leased++;
      this.leases.set(row.id, key);
      this.leasedUrls.add(row.url);
      this.unmarked++;
      this.totals.leased++;
      return { id: row.id, key, entry: toEntry(row) };
    });
  }

  /** The host's next queued row not leased, from its window (read ahead when empty). */
  private nextQueued(key: string): UrlRow | undefined {
    let w = this.windows.get(key);
    if (w === undefined) this.windows.set(key, (w = { rows: [], end: -Infinity, leased: 0 }));
    for (;;) {
      const row = w.rows.shift();
      if (row !== undefined) return row;
      const rows = this.q.window.all(key, w.end) as WindowColumns[];
      if (rows.length === 0) {
        if (w.leased === 0) this.windows.delete(key);
        return undefined;
      }
      w.end = rows[rows.length - 1][8];
      // A window read from the start (after a promote) passes over rows leased already.
      for (const [id, url, depth, parent, hops, attempt, throttles, extra, pos] of rows) {
        if (!this.leases.has(id)) w.rows.push({ id, url, host: key, depth, parent, hops, attempt, throttles, extra, pos });
      }
    }
  }

  complete(lease: Lease, outcome?: string, charge?: Charge): void | Promise<never> {
    return this.guard(() => {
      this.take(lease);
      this.spend.end(lease.id);
      // In the transaction that marks the URL done: a crash keeps both or neither.
      if (charge) {
        this.spend.charge(lease.key, charge);
        this.dirtySpend = true;
      }
      this.q.done.run(outcome ?? null, this.now(), lease.id);
      this.touch();
    });
  }

  release(lease: Lease, entry: FrontierEntry, dueAt?: number): void | Promise<never> {
    return this.guard(() => {
      this.take(lease);
      this.spend.end(lease.id);
      const delayed = dueAt !== undefined;
      const pos = delayed ? 0 : --this.headPos;
      const extra = entry.extra === undefined ? null : JSON.stringify(entry.extra);
      this.q.requeue.run(
        delayed ? UrlState.Delayed : UrlState.Queued,
        pos,
        delayed ? dueAt : null,
        entry.depth,
        entry.parent,
        entry.hops,
        entry.attempt,
        entry.throttles ?? null,
        extra,
        lease.id,
      );
      // Back at the head of its queue: first in the host's window (a window not there yet reads it first).
      const w = delayed ? undefined : this.windows.get(lease.key);
      if (w !== undefined)
        w.rows.unshift({
          id: lease.id,
          url: entry.url,
          host: lease.key,
          depth: entry.depth,
          parent: entry.parent,
          hops: entry.hops,
          attempt: entry.attempt,
          throttles: entry.throttles ?? null,
          extra,
          pos,
        });
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
        // Ahead of its host's window: read again from the head (passing over leased rows).
        const w = this.windows.get(row.host);
        if (w !== undefined) {
          w.rows = [];
          w.end = -Infinity;
        }
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
      this.markLeases(key);
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
      this.markLeases(key);
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
    return key === undefined ? this.totals.queued : (this.queuedPerHost.get(key) ?? 0);
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
      const after = kept(saved);
      this.hostRecords.set(key, { saved: copySaved(saved), kept: after });
      this.dirtyHosts.add(key);
      // Written with the next commit (the crash bound covers starts until then), or right now.
      if (before === undefined || mustNotBeLost(before.kept, after)) this.commit();
      else this.touch();
    });
  }

  loadHosts(): Array<[string, HostSaved]> | Promise<never> {
    return this.guard(() => {
      return [...this.hostRecords].map(([key, { saved }]) => [key, copySaved(saved)]);
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

  reserveSpend(lease: Lease, money: Charge, limit: number): boolean {
    return this.spend.reserve(lease, money, limit);
  }

  spending(): Spending {
    return this.spend.spending();
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
          const row = Number(this.putRecord.run(JSON.stringify(record)).lastInsertRowid);
          this.lastRecordRow = row;
          const { type, url, parent } = record as { type?: unknown; url?: unknown; parent?: unknown };
          // A leased URL's record (a page, or a skip when claimed) is settled by its completion (see `settledRecords`); its
          // first row counts. So are the skips of links found on a leased page and its handler's items: they come before
          // the page's own record.
          const holder = type === 'skipped' && typeof parent === 'string' && this.leasedUrls.has(parent) ? parent : url;
          if (
            (type === 'page' || type === 'skipped' || type === 'item') &&
            typeof holder === 'string' &&
            this.leasedUrls.has(holder) &&
            !this.unsettledRecords.has(holder)
          ) {
            // Appended just before it goes to the output (record-routes.ts): the output's next record is this one.
            this.unsettledRecords.set(holder, { row, output: this.output ? this.output.queued() : Infinity });
          }
          this.touch();
        }),
      read: () => this.readRecords(),
    };
  }

  /**
   * The record-log row up to which every page record belongs to a completion
   * in this commit or an earlier one. A page's record is appended before its
   * completion (the crawl first waits for `-o` to confirm it), and a commit
   * may come in between; after a crash, `dropUnsettledRecords` removes the
   * rows past this mark whose page the file does not hold as done: the
   * resumed crawl fetches those pages again and appends their records again.
   */
  private settledRecords(): number {
    // At most one row a lease held: bounded by the requests in flight.
    let settled = this.lastRecordRow;
    for (const { row } of this.unsettledRecords.values()) settled = Math.min(settled, row - 1);
    return settled;
  }

  /**
   * After a crash: the records past the settled mark that the resumed crawl
   * writes again go, as `-o`'s do (`keepAfterCrash`): a page's whose page is
   * not done (fetched again), a skip's whose URL it hands out again (skipped
   * when claimed again) or whose URL and page are not done (that page,
   * fetched again, finds the link again). A skip logged by an older version
   * has no parent: it stays unless its URL is handed out again.
   */
  private dropUnsettledRecords(): void {
    const mark = Number((this.q.getMeta.get('records_settled') as { value: string } | undefined)?.value ?? NaN);
    if (!Number.isFinite(mark)) return;
    const drop = this.db.prepare('DELETE FROM records WHERE id = ?');
    for (const [id, rec] of this.db.prepare('SELECT id, rec FROM records WHERE id > ?').raw().all(mark) as Array<[number, string]>) {
      let record: CrashRecord;
      try {
        record = JSON.parse(rec) as CrashRecord;
      } catch {
        continue;
      }
      const older = record.type === 'skipped' && !('parent' in record);
      if (older ? typeof record.url === 'string' && this.willHandOut(record.url) : !keepRecordAfterCrash(record, this)) drop.run(id);
    }
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
    const key = this.leases.get(lease.id);
    if (key === undefined) throw new Error(`lease ${lease.id} (${lease.entry.url}) is not held: completed or released already`);
    this.leases.delete(lease.id);
    this.leasedUrls.delete(lease.entry.url);
    this.unsettledRecords.delete(lease.entry.url);
    this.totals.leased--;
    if (key === MARKED) return;
    this.unmarked--;
    const w = this.windows.get(key)!;
    // Nothing left to pass over or to hand out: a later window starts from the head at no cost.
    if (--w.leased === 0 && w.rows.length === 0 && !this.queuedPerHost.has(key)) this.windows.delete(key);
  }

  /**
   * Before `drain` or `clear` (of `key`, or of every host): the rows leased
   * there are marked as such, so the queries that empty queues leave them
   * alone, and the windows emptied go.
   */
  private markLeases(key: string | undefined): void {
    // Every unmarked lease of the hosts emptied is marked here, so their windows (and counts) go whole.
    for (const [id, host] of this.leases) {
      if (host === MARKED || (key !== undefined && host !== key)) continue;
      this.q.setState.run(UrlState.Leased, id);
      this.leases.set(id, MARKED);
      this.unmarked--;
    }
    if (key === undefined) this.windows.clear();
    else this.windows.delete(key);
  }

  private bump(key: string, by: number): void {
    const n = (this.queuedPerHost.get(key) ?? 0) + by;
    if (n === 0) this.queuedPerHost.delete(key);
    else this.queuedPerHost.set(key, n);
    this.totals.queued += by;
  }

  /** The delayed count read from the file (after a load, or a statement that moved many rows). */
  private countDelayed(): void {
    this.totals.delayed = (this.db.prepare('SELECT count(*) FROM urls WHERE state = 2').pluck().get() as number) ?? 0;
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
    else this.commitSoon();
  }

  /**
   * A change that must land with the one its caller makes next, in the same
   * turn: a page's history, then its lease's completion. Within the
   * transaction, committed by that next change or the timer, never at once:
   * a commit between the two would keep the new history of a page whose
   * completion a crash then lost, and the resumed crawl, fetching it again,
   * compared it with that history and said "unchanged".
   */
  private touchBeforeNext(): void {
    if (this.closed) return;
    this.begin();
    this.commitSoon();
  }

  private commitSoon(): void {
    if (this.commitTimer) return;
    this.commitTimer = setTimeout(() => {
      this.commitTimer = null;
      this.timedCommit();
    }, COMMIT_INTERVAL_MS);
    this.commitTimer.unref();
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

  /**
   * Follows the `-o` file across commits, so a resume after a crash can tell
   * which of its last records belong to completions the file lost. Every
   * commit stores an offset before which every record's URL is completed in
   * that commit or an earlier one (`outputSettled`).
   */
  trackOutput(path: string, position: OutputPosition): void {
    this.output = { path, confirmed: () => position.confirmed(), queued: () => position.queued(), previous: position.confirmed() };
  }

  /**
   * Where `-o` is settled at this commit: before the first record of any URL
   * still leased (its completion is not in this commit), and no later than
   * what the stream had confirmed one commit ago. The lag alone was the rule
   * before: a record confirmed by then had its URL completed, as completion
   * follows confirmation within a turn. Under backpressure it does not: a
   * page's completion waits for every record written before its own was
   * confirmed, which can take several commits while its own record is
   * confirmed already (a duplicate in `-o` after a crash).
   */
  private outputSettled(output: NonNullable<SqliteStore['output']>): number {
    let settled = output.previous;
    for (const { output: at } of this.unsettledRecords.values()) settled = Math.min(settled, at);
    return settled;
  }

  /** Where `-o` stood at the last commit, as `trackOutput` recorded it. */
  outputMark(): { path: string; offset: number } | undefined {
    const raw = (this.q.getMeta.get('output_mark') as { value: string } | undefined)?.value;
    if (raw === undefined) return undefined;
    const mark = JSON.parse(raw) as { path?: unknown; offset?: unknown };
    return typeof mark.path === 'string' && typeof mark.offset === 'number' ? { path: mark.path, offset: mark.offset } : undefined;
  }

  /**
   * The crawl completed this URL (fetched it, or skipped it after claiming
   * it). `claimedAt` (a page record's fetchedAt, epoch ms): completed by that
   * fetch or a later one, which a URL waiting for its revisit (`--revisit`)
   * tells by when it was completed last.
   */
  isDone(url: string, claimedAt?: number): boolean {
    const row = this.q.urlState.get(url) as { state: number; done_at: number | null } | undefined;
    if (row === undefined) return false;
    if (row.state === UrlState.Done) return true;
    // Slack for the crawl clock (done_at) drifting from the wall clock (fetchedAt); revisits are at least 1 s apart.
    return claimedAt !== undefined && row.done_at !== null && row.done_at >= claimedAt - CLOCK_SLACK_MS;
  }

  /** The file holds this URL queued, delayed or claimed and never completed: a resumed crawl hands it out again. */
  willHandOut(url: string): boolean {
    const row = this.q.urlState.get(url) as { state: number; done_at: number | null } | undefined;
    return row !== undefined && row.done_at === null && row.state !== UrlState.Seen && row.state !== UrlState.Done;
  }

  private commit(reopen = true): void {
    const began = this.timed ? performance.now() : 0;
    if (!this.inTransaction) this.begin();
    for (const key of this.dirtyHosts) this.q.putHost.run(key, JSON.stringify(this.hostRecords.get(key)!.saved));
    this.dirtyHosts.clear();
    if (this.dirtyCounters) for (const [name, value] of Object.entries(this.counters)) this.q.putCounter.run(name, value);
    this.dirtyCounters = false;
    if (this.dirtySpend) this.q.putMeta.run('spend', JSON.stringify(this.spend.spending()));
    this.dirtySpend = false;
    const at = this.now();
    if (this.output) {
      this.q.putMeta.run('output_mark', JSON.stringify({ path: this.output.path, offset: this.outputSettled(this.output) }));
      this.output.previous = this.output.confirmed();
    }
    this.q.putMeta.run('committed_at', String(at));
    // Beside the time they were committed with: a commit by an older version (which moves the ends without saying) voids them.
    this.q.putMeta.run('queue_ends', `${this.headPos} ${this.tailPos} ${at}`);
    if (this.lastRecordRow > 0) this.q.putMeta.run('records_settled', String(this.settledRecords()));
    this.q.putMeta.run('unmarked_leases', String(this.unmarked));
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
  throw new StateFileError(
    `${path} was written by an incompatible version (state format ${schema}, this version reads ${STATE_SCHEMA_VERSION}); use --fresh to start over`,
  );
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
  return new StateWriteError(
    `cannot write state file ${path}: the disk is full (less than ${LOW_SPACE_BYTES >> 20} MiB left); run the same command again once there is room`,
  );
}

/** An error better-sqlite3 raised for SQLite (its code is SQLite's: SQLITE_FULL, SQLITE_CORRUPT, …). */
function isSqliteFailure(err: unknown): boolean {
  return /^SQLITE_/.test(((err as { code?: unknown } | null)?.code as string) ?? '');
}

/** A copy of a host record that shares nothing with it (its fields are plain data: numbers, arrays of numbers, flat objects). */
function copySaved(s: HostSaved): HostSaved {
  const l = s.limiter;
  return {
    ...s,
    limiter: { ...l, windows: l.windows.map((w) => ({ ...w, starts: [...w.starts] })) },
    feedback: s.feedback === null ? null : { ...s.feedback },
    ...(s.latency && { latency: { ...s.latency, samples: [...s.latency.samples] } }),
  };
}

/** What `mustNotBeLost` compares of a host record. */
interface Kept {
  givenUp: boolean;
  pausedUntil: number;
  rateFactor: number;
  crawlDelayMs: number;
  serverGapUntil: number;
}

function kept(saved: HostSaved): Kept {
  const l = saved.limiter;
  return {
    givenUp: saved.givenUp,
    pausedUntil: l.pausedUntil ?? -Infinity,
    rateFactor: l.rateFactor,
    crawlDelayMs: l.crawlDelayMs,
    serverGapUntil: l.serverGapUntil ?? -Infinity,
  };
}

/** Changes a crash must never undo: a pause, a lower rate, a slower pace, a given-up host. */
function mustNotBeLost(b: Kept, a: Kept): boolean {
  return (
    a.givenUp !== b.givenUp ||
    a.pausedUntil > b.pausedUntil ||
    a.rateFactor < b.rateFactor ||
    a.crawlDelayMs > b.crawlDelayMs ||
    a.serverGapUntil > b.serverGapUntil
  );
}

/** A lease whose row is marked leased in the file (markLeases), in place of its host key. */
const MARKED = '';

function toEntry(row: UrlRow): FrontierEntry {
  const entry: FrontierEntry = { url: row.url, depth: row.depth, parent: row.parent, hops: row.hops, attempt: row.attempt };
  if (row.throttles !== null) entry.throttles = row.throttles;
  if (row.extra !== null) entry.extra = JSON.parse(row.extra) as EntryExtra;
  return entry;
}
