#!/usr/bin/env node
/**
 * What a `--state` page costs in SQLite alone, statement by statement, and
 * what a few changes to the file's layout would save. No crawler runs: the
 * statements the SQLite store runs for a page (sqlite-store.ts,
 * sqlite-history.ts) are run directly through better-sqlite3 on the schema a
 * real store creates (read back from a file it made, so this follows the
 * store's schema as it changes), in WAL mode with the store's pragmas:
 *
 * - insert: one URL row a page (discovery), committed every COMMIT_PAGES;
 * - window: the claim window's SELECT, 32 rows a query, as row objects (the
 *   store before the tenth pass of issue 19) or as arrays (now);
 * - complete: the completion's UPDATE, the history upsert, the record-log
 *   INSERT (a typical kept page record), committed every COMMIT_PAGES.
 *
 * Variants (each a fresh file, alternating, medians of --runs):
 *   objects      the window as row objects
 *   arrays       the window as arrays (what the store does)
 *   no-record    … without the record-log row
 *   no-history   … without the history row
 *   merged       … the history as columns of the URL's row, set by the completion's UPDATE
 *   no-url-index … the `url` column without its UNIQUE index
 *
 * Each part's median goes to stderr; the table sums them.
 *
 *   node bench/state-statements.js [--runs N] [--pages N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { median, round } from './lib/stats.js';
import { fingerprint } from '../dist/util/seen-set.js';

const COMMIT_PAGES = 250;
const HOSTS = 5;
const VARIANTS = ['objects', 'arrays', 'no-record', 'no-history', 'merged', 'no-url-index'];
const HISTORY_COLUMNS = ['h_status INTEGER', 'h_fetched INTEGER', 'h_etag TEXT', 'h_lm', 'h_digest', 'h_links BLOB', 'h_every INTEGER'];

/** The CREATE statements of a file the real store made. */
async function storeSchema(dir) {
  const { SqliteStore } = await import('../dist/store/sqlite-store.js');
  const path = `${dir}/template.db`;
  const store = new SqliteStore(path);
  store.close();
  const Driver = createRequire(import.meta.url)('better-sqlite3');
  const db = new Driver(path, { readonly: true });
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").pluck().all();
  db.close();
  return sql;
}

function once(Driver, schema, dir, variant, pages, run) {
  const path = `${dir}/${variant}-${run}.db`;
  const db = new Driver(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (let sql of schema) {
    if (variant === 'no-url-index' && sql.startsWith('CREATE TABLE urls')) sql = sql.replace(/url TEXT NOT NULL UNIQUE/, 'url TEXT NOT NULL');
    db.exec(sql);
  }
  if (variant === 'merged') for (const column of HISTORY_COLUMNS) db.exec(`ALTER TABLE urls ADD COLUMN ${column}`);
  const insert = db.prepare(
    `INSERT INTO urls (url, host, state, pos, depth, parent, hops, attempt, throttles, extra, fp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${variant === 'no-url-index' ? '' : ' ON CONFLICT (url) DO NOTHING'}`,
  );
  const windowSql = 'SELECT id, url, depth, parent, hops, attempt, throttles, extra, pos FROM urls WHERE host = ? AND state = 1 AND pos > ? ORDER BY pos LIMIT 32';
  const window = variant === 'objects' ? db.prepare(windowSql) : db.prepare(windowSql).raw();
  const done = db.prepare('UPDATE urls SET state = 4, outcome = ?, done_at = ? WHERE id = ?');
  const doneWithHistory = variant === 'merged'
    ? db.prepare('UPDATE urls SET state = 4, outcome = ?, done_at = ?, h_status = ?, h_fetched = ?, h_etag = ?, h_lm = ?, h_digest = ?, h_links = coalesce(?, h_links), h_every = ? WHERE id = ?')
    : null;
  const history = db.prepare(
    'INSERT INTO pages (id, status, fetched, etag, lm, digest, links, every) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, fetched = excluded.fetched, etag = excluded.etag, lm = excluded.lm, digest = excluded.digest, links = coalesce(excluded.links, pages.links), every = excluded.every',
  );
  const record = db.prepare('INSERT INTO records (rec) VALUES (?)');
  const digest = Buffer.alloc(32, 7);
  const links = Buffer.from([1, 2, 3, 4, 5, 6]);
  const host = (i) => `h${i % HOSTS}.localhost:45877`;
  const page = (i) => `http://${host(i)}/p/${i}`;
  const cpu = (from) => {
    const used = process.cpuUsage(from);
    return (used.user + used.system) / pages;
  };

  let t0 = process.cpuUsage();
  db.exec('BEGIN');
  for (let i = 0; i < pages; i++) {
    insert.run(page(i), host(i), 1, i + 1, 1, page(Math.floor(i / 10)), 0, 0, null, null, fingerprint(page(i)));
    if (i % COMMIT_PAGES === COMMIT_PAGES - 1) db.exec('COMMIT; BEGIN');
  }
  db.exec('COMMIT');
  const insertUs = cpu(t0);

  t0 = process.cpuUsage();
  let windowUs = 0;
  let n = 0;
  const ends = new Array(HOSTS).fill(0);
  db.exec('BEGIN');
  while (n < pages) {
    for (let h = 0; h < HOSTS && n < pages; h++) {
      const w0 = process.cpuUsage();
      const rows = window.all(host(h), ends[h]);
      const w = process.cpuUsage(w0);
      windowUs += w.user + w.system;
      if (rows.length === 0) continue;
      const last = rows[rows.length - 1];
      ends[h] = variant === 'objects' ? last.pos : last[8];
      for (const row of rows) {
        const id = variant === 'objects' ? row.id : row[0];
        if (doneWithHistory) {
          doneWithHistory.run(null, Date.now(), 200, 1_790_000_000, '"abc123"', 1_790_000_000, digest, links, null, id);
        } else {
          if (variant !== 'no-history') history.run(id, 200, 1_790_000_000, '"abc123"', 1_790_000_000, digest, links, null);
          done.run(null, Date.now(), id);
        }
        if (variant !== 'no-record') {
          record.run(`{"type":"page","url":"${page(id)}","host":"${host(id)}","status":200,"bytes":525,"startedAt":"2026-11-28T21:08:29.983Z","elapsedMs":32}`);
        }
        if (++n % COMMIT_PAGES === 0) db.exec('COMMIT; BEGIN');
      }
    }
  }
  db.exec('COMMIT');
  const total = cpu(t0);
  db.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  return { insert: insertUs, window: windowUs / pages, complete: total - windowUs / pages };
}

/** @param {{ runs?: number, pages?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const log = opts.log ?? (() => {});
  const runs = Number(opts.runs ?? 7);
  const pages = Number(opts.pages ?? 50_000);
  const dir = mkdtempSync(`${tmpdir()}/state-statements-`);
  try {
    const Driver = createRequire(import.meta.url)('better-sqlite3');
    const schema = await storeSchema(dir);
    const samples = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    for (let r = 0; r < runs; r++) for (const v of VARIANTS) samples[v].push(once(Driver, schema, dir, v, pages, r));
    const bench = 'State statements (SQLite alone, µs a page)';
    return VARIANTS.map((v) => {
      const m = (k) => round(median(samples[v].map((s) => s[k])));
      const parts = `insert ${m('insert')}, window ${m('window')}, completion ${m('complete')}`;
      log(`  ${v.padEnd(12)} ${parts} µs`);
      return { bench, metric: v, value: round(m('insert') + m('window') + m('complete')), unit: 'µs', note: `${parts}; median of ${runs}, ${pages.toLocaleString('en-US')} pages` };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (line) => process.stderr.write(line + '\n') }));
}
