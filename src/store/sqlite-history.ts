/**
 * Per-page history in the SQLite state file (page-history.ts has the
 * contract): one row per fetched page in `pages`, keyed by the page's id in
 * `urls`, kept compact: the status, the fetch time in whole seconds, the
 * ETag as text, Last-Modified as epoch seconds (text when it is not an
 * IMF-fixdate that round-trips), the digest as its 32 raw bytes, the
 * outlinks as varint-coded id deltas (page-history.ts `encodeIds`), and the
 * revisit interval in seconds. Written inside the store's own transaction,
 * so a page's history commits with the completion of its lease.
 *
 * A new pass (`startPass`) is a few statements in one transaction: URLs
 * only marked seen are forgotten, every other URL is queued again in the
 * order it was found, with its attempt counts and attempt history reset.
 * A revisit (`--revisit`) turns one done URL (state 4) into a delayed one
 * (state 2) due when the page is due again; `done_at` stays, so the output
 * ledger still knows the fetch it completed.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { digestBytes, digestText } from '../fetch/body-digest.js';
import { decodeIds, encodeIds, lastModifiedSeconds, type PageHistory } from './page-history.js';

/** Added to any state file when it is opened (an older version ignores the table). */
export const PAGES_TABLE = `CREATE TABLE IF NOT EXISTS pages (
  id INTEGER PRIMARY KEY,
  status INTEGER NOT NULL,
  fetched INTEGER NOT NULL,
  etag TEXT,
  lm,
  digest,
  links BLOB,
  every INTEGER
);`;

type Statement = BetterSqlite3.Statement;

interface PageRow {
  status: number;
  fetched: number;
  etag: string | null;
  lm: number | string | null;
  digest: Buffer | string | null;
  every: number | null;
}

export class SqliteHistory {
  private readonly q: Record<string, Statement>;

  /**
   * `idOf`: a URL's id from memory (the store's seen set): a number; 0 when
   * the URL is in the file but its id is not known there; undefined when the
   * URL is not in the file (a link the crawl never took). A fingerprint
   * collision could name another URL's id, as rarely as it makes the crawl
   * skip a URL.
   */
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly idOf: (url: string) => number | undefined,
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.q = {
      get: p('SELECT p.status, p.fetched, p.etag, p.lm, p.digest, p.every FROM urls u JOIN pages p ON p.id = u.id WHERE u.url = ?'),
      id: p('SELECT id FROM urls WHERE url = ?').pluck(),
      ids: p('SELECT id FROM urls WHERE url IN (SELECT value FROM json_each(?))').pluck(),
      put: p(
        'INSERT INTO pages (id, status, fetched, etag, lm, digest, links, every) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, fetched = excluded.fetched, etag = excluded.etag, lm = excluded.lm, digest = excluded.digest, links = coalesce(excluded.links, pages.links), every = excluded.every',
      ),
      links: p('SELECT p.links FROM urls u JOIN pages p ON p.id = u.id WHERE u.url = ?').pluck(),
      urls: p('SELECT url FROM urls WHERE id IN (SELECT value FROM json_each(?))').pluck(),
    };
  }

  get(url: string): PageHistory | undefined {
    const row = this.q.get.get(url) as PageRow | undefined;
    if (row === undefined) return undefined;
    const page: PageHistory = { status: row.status, fetchedAt: row.fetched * 1000 };
    if (row.etag !== null) page.etag = row.etag;
    if (row.lm !== null) page.lastModified = typeof row.lm === 'number' ? new Date(row.lm * 1000).toUTCString() : row.lm;
    if (row.digest !== null) page.digest = typeof row.digest === 'string' ? row.digest : digestText(row.digest);
    if (row.every !== null) page.intervalMs = row.every * 1000;
    return page;
  }

  /** False when the URL is not in `urls` (nothing to key it by). */
  put(url: string, page: PageHistory, outlinks: readonly string[] | null): boolean {
    const known = this.idOf(url);
    const id = known === undefined ? undefined : known || (this.q.id.get(url) as number | undefined);
    if (id === undefined) return false;
    let links: Buffer | null = null;
    if (outlinks !== null) {
      const ids: number[] = [];
      let unknown: string[] | undefined;
      for (const link of outlinks) {
        const linkId = this.idOf(link);
        if (linkId === 0) (unknown ??= []).push(link);
        else if (linkId !== undefined) ids.push(linkId);
      }
      if (unknown !== undefined) ids.push(...(this.q.ids.all(JSON.stringify(unknown)) as number[]));
      links = encodeIds(ids);
    }
    this.q.put.run(
      id,
      page.status,
      Math.floor(page.fetchedAt / 1000),
      page.etag ?? null,
      page.lastModified === undefined ? null : (lastModifiedSeconds(page.lastModified) ?? page.lastModified),
      page.digest === undefined ? null : (digestBytes(page.digest) ?? page.digest),
      links,
      page.intervalMs === undefined ? null : Math.round(page.intervalMs / 1000),
    );
    return true;
  }

  outlinks(url: string): string[] {
    const links = this.q.links.get(url) as Buffer | null | undefined;
    if (!links || links.length === 0) return [];
    return this.q.urls.all(JSON.stringify(decodeIds(links))) as string[];
  }

  /** The done URL becomes a delayed entry due at `dueAt`, attempts reset (inside the caller's transaction); false when it is not done. */
  revisitAt(url: string, dueAt: number): boolean {
    return (
      this.db
        .prepare(`UPDATE urls SET state = 2, pos = 0, due = ?, attempt = 0, throttles = NULL, extra = ${WITHOUT_ATTEMPTS} WHERE url = ? AND state = 4`)
        .run(dueAt, url).changes === 1
    );
  }

  /** Every done URL with history becomes due at its last fetch plus its interval (or `defaultMs`), on the crawl's clock; answers how many. */
  revisitAll(defaultMs: number, wallToCrawl: number): number {
    return this.db
      .prepare(
        `UPDATE urls SET state = 2, pos = 0, attempt = 0, throttles = NULL, extra = ${WITHOUT_ATTEMPTS},
           due = (SELECT p.fetched * 1000.0 + coalesce(p.every * 1000.0, ?) + ? FROM pages p WHERE p.id = urls.id)
         WHERE state = 4 AND id IN (SELECT id FROM pages)`,
      )
      .run(defaultMs, wallToCrawl).changes;
  }

  /**
   * The SQL of a new pass, inside the caller's transaction: seen-only URLs
   * forgotten, every other URL queued again after `tailPos` in the order it
   * was found. Answers the new tail position.
   */
  requeueAll(tailPos: number): number {
    const db = this.db;
    db.exec("DELETE FROM urls WHERE state = 0 OR host = ''");
    const maxId = (db.prepare('SELECT coalesce(max(id), 0) FROM urls').pluck().get() as number) ?? 0;
    db.prepare(
      `UPDATE urls SET state = 1, pos = ? + id, due = NULL, attempt = 0, throttles = NULL, outcome = NULL, done_at = NULL, extra = ${WITHOUT_ATTEMPTS}
       WHERE state IN (1, 2, 4)`,
    ).run(tailPos);
    return tailPos + maxId;
  }
}

/** An entry's `extra` without its attempt history (a new pass, a revisit: attempts start over). */
const WITHOUT_ATTEMPTS = "CASE WHEN extra IS NULL THEN NULL WHEN json_remove(extra, '$.history') = '{}' THEN NULL ELSE json_remove(extra, '$.history') END";
