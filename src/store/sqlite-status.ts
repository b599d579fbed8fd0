/**
 * What `crawl status --state FILE` reports: a read-only look into a state
 * file, safe while a crawl runs in it (WAL readers never block the writer).
 * It writes nothing and takes no lock: whether a crawl runs in the file is
 * whether its lock is held (sqlite-file.ts). A missing, foreign or damaged
 * file gets the crawl's own one-line message.
 * Times in the file are the crawl clock's, which is epoch milliseconds; they
 * are reported as ISO dates.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { HostSaved } from '../politeness/host-state.js';
import type { RobotsRecord } from '../robots/types.js';
import { damagedMessage, inspectStateFile, isDamage, openReadOnly, stateFileLocked, StateFileError } from './sqlite-file.js';
import { checkVersion } from './sqlite-store.js';

export interface CrawlStatus {
  file: string;
  /** The process crawling in it now, if any. */
  heldBy: number | null;
  /** A shared (Redis) crawl: the workers holding leases now, with how many, and how many of those expired (their worker stopped renewing). */
  workers?: Array<{ name: string; leases: number; expired: number }>;
  finished: boolean;
  seeds: string[];
  createdAt: string | null;
  lastCommitAt: string | null;
  /** Done URLs by outcome: an HTTP status, an error code, or a skip reason. */
  done: Record<string, number>;
  doneTotal: number;
  /** URLs done per second over `recentWindowMs`. */
  recentRate: number;
  /**
   * What the rate was measured over: the last minute, or less when the crawl
   * (or this run of it) started less than a minute ago.
   */
  recentWindowMs: number;
  queued: number;
  delayed: number;
  /** Claimed and not finished: in flight now, or left by a crash (they go back to the queue on resume). */
  leased: number;
  topQueued: Array<{ host: string; queued: number }>;
  paused: Array<{ host: string; until: string }>;
  /**
   * Hosts among `topQueued` outside their quiet hours now (a config's
   * `hours`, read by `crawl status --config`): when their window opens, on
   * the wall clock (ISO 8601) and on their zone's clock ("22:00"). Absent
   * without a config that sets hours.
   */
  quiet?: Array<{ host: string; opensAt: string; opensAtLocal: string; timezone: string }>;
  throttled: Array<{ host: string; rateFactor: number }>;
  givenUp: string[];
  robots: { byKind: Record<string, number>; unavailable: Array<{ origin: string; reason: string; retryAt: string | null }> };
  /** Crawling again (crawl/recrawl.ts): the pass the crawl is in, when it began, and the pages with history (what `--recrawl` asks with validators). Absent for a store that keeps none. */
  passes?: { pass: number; startedAt: string | null; pagesKept: number };
  /** `--revisit`: pages done and waiting to be asked again, the earliest due time, and how many are due within the hour. Absent when none waits. */
  revisits?: { waiting: number; nextAt: string | null; dueWithinHour: number };
}

function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/**
 * URLs done per second, over the last minute or over the time since `since`
 * (the crawl or its latest run started) when that is shorter: 3 s into a
 * 16/s crawl, "48 in the last minute" is 16/s, not 0.8/s. At least 1 s, so
 * a crawl a moment old does not show a burst as its rate.
 */
export function recentRate(now: number, since: number, doneSince: (t: number) => number): { recentRate: number; recentWindowMs: number } {
  const windowMs = Math.min(60_000, Math.max(1_000, Number.isFinite(since) ? now - since : 60_000));
  return { recentRate: Math.round((doneSince(now - windowMs) / (windowMs / 1000)) * 100) / 100, recentWindowMs: windowMs };
}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

/** Done pages waiting as delayed entries (a retry's row has no outcome yet): `--revisit`'s schedule. Due times are on the crawl's clock, which starts at the wall clock. */
function revisitsOf(count: (sql: string, ...args: unknown[]) => number, db: BetterSqlite3.Database, now: number): Pick<CrawlStatus, 'revisits'> {
  const waiting = count('SELECT count(*) FROM urls WHERE state = 2 AND outcome IS NOT NULL');
  if (waiting === 0) return {};
  const next = db.prepare('SELECT min(due) FROM urls WHERE state = 2 AND outcome IS NOT NULL').pluck().get() as number | null;
  return {
    revisits: {
      waiting,
      nextAt: iso(next),
      dueWithinHour: count('SELECT count(*) FROM urls WHERE state = 2 AND outcome IS NOT NULL AND due <= ?', now + 3_600_000),
    },
  };
}

export function readCrawlStatus(path: string, opts: { top?: number; now?: number } = {}): CrawlStatus {
  const top = opts.top ?? 10;
  const now = opts.now ?? Date.now();
  let Driver: typeof BetterSqlite3;
  try {
    Driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (err) {
    throw new StateFileError(
      `reading a state file needs the better-sqlite3 module, which is not installed or did not build (${(err as Error).message.split('\n')[0]})`,
    );
  }
  const found = inspectStateFile(Driver, path, { mustExist: true });
  if (found.kind === 'damaged') throw new StateFileError(damagedMessage(path, found.reason!));
  if (found.kind === 'new') throw new StateFileError(`${path} holds no crawl`);
  checkVersion(path, found.meta);
  const meta = found.meta;
  const pid = Number(meta.get('pid'));
  const live = stateFileLocked(Driver, path);
  const db = openReadOnly(Driver, path);
  try {
    const count = (sql: string, ...args: unknown[]) =>
      (db
        .prepare(sql)
        .pluck()
        .get(...args) as number | null) ?? 0;
    const unmarked = live ? Number(meta.get('unmarked_leases') ?? 0) || 0 : 0;
    const done: Record<string, number> = {};
    for (const r of db
      .prepare(
        "SELECT coalesce(outcome, 'skipped') AS outcome, count(*) AS n FROM urls WHERE state = 4 OR (state = 2 AND outcome IS NOT NULL) GROUP BY 1 ORDER BY 2 DESC",
      )
      .all() as Array<{ outcome: string; n: number }>)
      done[r.outcome] = r.n;
    const hosts = (db.prepare('SELECT key, saved FROM hosts').all() as Array<{ key: string; saved: string }>).map((r) => ({
      key: r.key,
      saved: JSON.parse(r.saved) as HostSaved,
    }));
    const robots = (db.prepare('SELECT origin, record FROM robots').all() as Array<{ origin: string; record: string }>).map((r) => ({
      origin: r.origin,
      record: JSON.parse(r.record) as RobotsRecord,
    }));
    const byKind: Record<string, number> = {};
    for (const r of robots) byKind[r.record.kind] = (byKind[r.record.kind] ?? 0) + 1;
    return {
      file: path,
      heldBy: live ? (Number.isInteger(pid) && pid > 0 ? pid : null) : null,
      finished: meta.get('finished') === '1',
      seeds: JSON.parse(meta.get('seeds') ?? '[]') as string[],
      createdAt: iso(Number(meta.get('created_at'))),
      lastCommitAt: iso(Number(meta.get('committed_wall'))),
      done,
      doneTotal: Object.values(done).reduce((a, b) => a + b, 0),
      ...recentRate(now, Math.max(Number(meta.get('created_at') ?? 0), Number(meta.get('opened_at') ?? 0)), (since) =>
        count('SELECT count(*) FROM urls WHERE done_at > ?', since),
      ),
      // A live crawl's claims leave their rows queued (sqlite-store.ts); its last commit said how many.
      queued: count('SELECT count(*) FROM urls WHERE state = 1') - unmarked,
      delayed: count('SELECT count(*) FROM urls WHERE state = 2'),
      leased: count('SELECT count(*) FROM urls WHERE state = 3') + unmarked,
      topQueued: db.prepare('SELECT host, count(*) AS queued FROM urls WHERE state = 1 GROUP BY host ORDER BY 2 DESC, 1 LIMIT ?').all(top) as Array<{
        host: string;
        queued: number;
      }>,
      paused: hosts
        .filter((h) => (h.saved.limiter.pausedUntil ?? -Infinity) > now)
        .map((h) => ({ host: h.key, until: iso(h.saved.limiter.pausedUntil)! }))
        .slice(0, top),
      throttled: hosts
        .filter((h) => h.saved.limiter.rateFactor < 1)
        .map((h) => ({ host: h.key, rateFactor: h.saved.limiter.rateFactor }))
        .slice(0, top),
      givenUp: hosts.filter((h) => h.saved.givenUp).map((h) => h.key),
      robots: {
        byKind,
        unavailable: robots
          .flatMap((r) => (r.record.kind === 'unavailable' ? [{ origin: r.origin, reason: r.record.reason, retryAt: iso(r.record.retryAt) }] : []))
          .slice(0, top),
      },
      ...revisitsOf(count, db, now),
      ...(hasTable(db, 'pages') && {
        passes: {
          pass: Number(meta.get('pass') ?? 1),
          startedAt: iso(Number(meta.get('pass_started_at') ?? meta.get('created_at'))),
          pagesKept: count('SELECT count(*) FROM pages'),
        },
      }),
    };
  } catch (err) {
    if (isDamage(err)) throw new StateFileError(damagedMessage(path, (err as Error).message));
    throw err;
  } finally {
    db.close();
  }
}
