import { copyFileSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/store/crawl-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { fingerprint } from '../../src/util/seen-set.js';
import { describeStoreContract } from '../support/store-contract.js';

describeStoreContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
  const path = join(dir, 'state.db');
  return { store: new SqliteStore(path), reopen: async () => new SqliteStore(path), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

/** What another connection reads in the state file: what is committed, what a crash would leave. */
function committedIn<T>(path: string, read: (db: { prepare(sql: string): { get(): unknown; all(): unknown[] } }) => T): T {
  const Driver = createRequire(import.meta.url)('better-sqlite3');
  const db = new Driver(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** What kill -9 leaves of the crawl in `path` now: its committed file (and log), copied beside it. */
function crashCopy(path: string): string {
  const crashed = `${path}.crashed.db`;
  copyFileSync(path, crashed);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${crashed}-wal`);
  return crashed;
}

/** The store's record log, as `crawl report --state` reads it. */
async function loggedRecords(store: SqliteStore): Promise<Array<{ url: string }>> {
  const kept: Array<{ url: string }> = [];
  for await (const r of store.recordLog().read()) kept.push(r as { url: string });
  return kept;
}

describe('state file format', () => {
  it('resumes a format-1 file (before entries had `extra`): the column is added, the queue kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      await store.add('http://a.example/1', 'a', { url: 'http://a.example/1', depth: 1, parent: null, hops: 0, attempt: 0 });
      store.close();
      // What the previous release wrote: no `extra` column, format 1.
      const Driver = createRequire(import.meta.url)('better-sqlite3');
      const db = new Driver(path);
      db.exec("ALTER TABLE urls DROP COLUMN extra; UPDATE meta SET value = '1' WHERE key = 'schema';");
      db.close();
      const again = new SqliteStore(path);
      expect((await again.open({ seeds: ['http://a.example/'], configFingerprint: 'f' })).resumed).toBe(true);
      const lease = again.claim('a', 0) as Lease;
      expect(lease.entry).toEqual({ url: 'http://a.example/1', depth: 1, parent: null, hops: 0, attempt: 0 });
      await again.release(lease, { ...lease.entry, extra: { kind: 'sitemap' } });
      expect((again.claim('a', 0) as Lease).entry.extra).toEqual({ kind: 'sitemap' });
      again.close();
      expect(new Driver(path, { readonly: true }).prepare("SELECT value FROM meta WHERE key = 'schema'").get().value).toBe('2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('resume', () => {
  it('knows every URL of the file again, however many pages of rows it reads them in, and only those', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    const url = (n: number) => `http://a.example/${n}`;
    const entry = (n: number) => ({ url: url(n), depth: 1, parent: null, hops: 0, attempt: 0 });
    // More than two pages of rows, the last one partial.
    const N = 20_000;
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: [url(0)], configFingerprint: 'f' });
      for (let n = 0; n < N; n++) await store.add(url(n), 'a', entry(n));
      store.close();
      const again = new SqliteStore(path);
      await again.open({ seeds: [url(0)], configFingerprint: 'f' });
      expect(again.counts()).toMatchObject({ seen: N, queued: N });
      const known: number[] = [];
      for (let n = 0; n < N; n++) if (!(await again.add(url(n), 'a', entry(n)))) known.push(n);
      expect(known).toHaveLength(N);
      expect(await again.add(url(N), 'a', entry(N))).toBe(true);
      expect(again.counts()).toMatchObject({ seen: N + 1, queued: N + 1 });
      again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('URL fingerprints in the file', () => {
  const url = (n: number) => `http://a.example/${n}`;
  const entry = (n: number) => ({ url: url(n), depth: 1, parent: null, hops: 0, attempt: 0 });
  type FpRow = { url: string; fp: unknown; kind: string };
  const fingerprints = (path: string): FpRow[] =>
    committedIn(path, (db) => db.prepare('SELECT url, fp, typeof(fp) AS kind FROM urls ORDER BY id').all() as FpRow[]);
  const fingerprinted = (n: number): FpRow => ({ url: url(n), fp: fingerprint(url(n)), kind: 'integer' });

  /** A state file in a temporary directory holding URLs 0 … n-1 (queued, or with `seenOnly` the odd ones only seen), closed, then changed by `sql` as an older version would have left it. */
  async function withFile(n: number, sql: string | null, test: (path: string) => Promise<void>, seenOnly = false): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: [url(0)], configFingerprint: 'f' });
      for (let i = 0; i < n; i++) await store.add(url(i), 'a', seenOnly && i % 2 ? null : entry(i));
      store.close();
      if (sql !== null) {
        const db = new (createRequire(import.meta.url)('better-sqlite3'))(path);
        db.exec(sql);
        db.close();
      }
      await test(path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it("keeps each URL's seen-set fingerprint in its row, as an exact integer", () =>
    withFile(50, null, async (path) => expect(fingerprints(path)).toEqual(Array.from({ length: 50 }, (_, n) => fingerprinted(n))), true));

  // A file from before the column, and rows an older version adds to a file that has it (it does not name the column).
  const older = {
    'a file from before the column': 'ALTER TABLE urls DROP COLUMN fp',
    'rows an older version added, with no fingerprint': 'UPDATE urls SET fp = NULL WHERE id % 3 = 0',
  };
  for (const [what, sql] of Object.entries(older)) {
    it(`resumes ${what}: every URL known again, new rows fingerprinted`, () => {
      const N = 9_000; // more than one page of rows on load
      return withFile(N, sql, async (path) => {
        const again = new SqliteStore(path);
        await again.open({ seeds: [url(0)], configFingerprint: 'f' });
        expect(again.counts()).toMatchObject({ seen: N, queued: N });
        const known: number[] = [];
        for (let n = 0; n < N; n++) if (again.isSeen(url(n))) known.push(n);
        expect(known).toHaveLength(N);
        expect(await again.add(url(N), 'a', entry(N))).toBe(true);
        again.close();
        expect(fingerprints(path).at(-1)).toEqual(fingerprinted(N));
      });
    });
  }

  it('a report reads a file from before the column without changing it', () =>
    withFile(2, older['a file from before the column'], async (path) => {
      const reader = new SqliteStore(path, { readOnly: true });
      expect(await loggedRecords(reader)).toEqual([]);
      reader.close();
      expect(committedIn(path, (d) => d.prepare("SELECT count(*) AS n FROM pragma_table_info('urls') WHERE name = 'fp'").get())).toEqual({ n: 0 });
    }));
});

describe('queue order across a resume', () => {
  // Given back goes first, added goes last: both need the queue's ends, which a resume reads from
  // the last commit (or, when that commit did not write them, from every row).
  for (const voided of [false, true]) {
    it(`keeps it${voided ? ', when the last commit did not say where the queue ends (an older version)' : ''}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
      const path = join(dir, 'state.db');
      const entry = (n: number) => ({ url: `http://a.example/${n}`, depth: 1, parent: null, hops: 0, attempt: 0 });
      try {
        const store = new SqliteStore(path);
        await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
        for (const n of [1, 2, 3]) await store.add(entry(n).url, 'a', entry(n));
        const first = store.claim('a', 0) as Lease;
        await store.release(first, first.entry);
        store.close();
        if (voided) {
          const Driver = createRequire(import.meta.url)('better-sqlite3');
          const db = new Driver(path);
          // Its commit moved the ends without saying: what the file says of them is stale (here: wrong).
          db.exec("UPDATE meta SET value = '0 0 ' || (SELECT value FROM meta WHERE key = 'committed_at') WHERE key = 'queue_ends'");
          db.exec("UPDATE meta SET value = value + 1 WHERE key = 'committed_at'");
          db.close();
        }
        const again = new SqliteStore(path);
        await again.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
        await again.add(entry(4).url, 'a', entry(4));
        const leases = [1, 2].map(() => again.claim('a', 0) as Lease);
        // The second one given back goes before the first.
        await again.release(leases[1], leases[1].entry);
        await again.release(leases[0], leases[0].entry);
        const order = [1, 2, 3, 4].map(() => (again.claim('a', 0) as Lease).entry.url.replace('http://a.example/', ''));
        expect(order).toEqual(['1', '2', '3', '4']);
        again.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('claims (a window per host, nothing written)', () => {
  const entry = (n: number) => ({ url: `http://a.example/${n}`, depth: 1, parent: null, hops: 0, attempt: 0 });
  const states = (path: string) =>
    committedIn(path, (db) => ({
      rows: Object.fromEntries(
        (db.prepare('SELECT state, count(*) AS n FROM urls GROUP BY state').all() as Array<{ state: number; n: number }>).map((r) => [r.state, r.n]),
      ),
      unmarked: (db.prepare("SELECT value FROM meta WHERE key = 'unmarked_leases'").get() as { value: string } | undefined)?.value,
    }));

  it('a claim leaves its row queued in the file, so a crash hands it out again first; drain marks leases before it empties a queue', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      for (let n = 1; n <= 4; n++) await store.add(entry(n).url, 'a', entry(n));
      const first = store.claim('a', 0) as Lease;
      const second = store.claim('a', 0) as Lease;
      expect([first.entry.url, second.entry.url]).toEqual([entry(1).url, entry(2).url]);
      await store.finish(); // commits
      // Two statements a page fewer: the claimed rows are still queued on disk, and the commit says two of them are claimed.
      expect(states(path)).toEqual({ rows: { 1: 4 }, unmarked: '2' });
      // A released lease goes first again, ahead of the window read already.
      await store.release(first, first.entry);
      expect((store.claim('a', 0) as Lease).entry.url).toBe(entry(1).url);
      // drain leaves the leases alone: they are marked in the file first.
      expect((await store.drain('a')).map((e) => e.url)).toEqual([entry(3).url, entry(4).url]);
      await store.finish();
      expect(states(path)).toEqual({ rows: { 3: 2, 4: 2 }, unmarked: '0' });
      await store.complete(second, '200');
      expect(store.counts()).toMatchObject({ queued: 0, leased: 1 });
      store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('crawl status of a live crawl counts claimed rows as claimed, not queued', async () => {
    const { readCrawlStatus } = await import('../../src/store/sqlite-status.js');
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      for (let n = 1; n <= 3; n++) await store.add(entry(n).url, 'a', entry(n));
      void store.claim('a', 0);
      void store.claim('a', 0);
      await store.finish();
      expect(readCrawlStatus(path)).toMatchObject({ queued: 1, leased: 2 });
      store.close();
      // Its process gone, the claims are queued again: the next crawl takes them first.
      expect(readCrawlStatus(path)).toMatchObject({ queued: 3, leased: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('host records', () => {
  it('keeps its own copy of a saved record, nested arrays and objects included, and writes it at the commit', async () => {
    const { HostTable } = await import('../../src/politeness/host-state.js');
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    try {
      const store = new SqliteStore(path);
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      const table = new HostTable({
        policyFor: () => ({ intervalMs: 100, windows: [{ count: 3, windowMs: 60_000, label: '3/min' }], concurrency: 1, jitterMs: 0 }),
      });
      const host = table.get('a');
      host.limiter.markDispatched(host.limiter.acquire(1_000), 1_001);
      host.limiter.release();
      host.feedback = { factor: 0.5, ceiling: 1, successes: 0, lastEventAt: 900, events: 1, eventsInRow: 1, failures: 0 };
      const saved = table.save('a')!;
      const copy = JSON.parse(JSON.stringify(saved)) as typeof saved;
      await store.saveHost('a', saved);
      saved.limiter.windows[0].starts.push(99);
      saved.limiter.lastStart = 5;
      saved.feedback!.failures = 7;
      expect(await store.loadHosts()).toEqual([['a', copy]]);
      (await store.loadHosts())[0][1].limiter.windows[0].starts.push(98); // what it hands out is a copy too
      expect(await store.loadHosts()).toEqual([['a', copy]]);
      store.close();
      const again = new SqliteStore(path);
      await again.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      expect(await again.loadHosts()).toEqual([['a', copy]]);
      again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('record log across a crash', () => {
  // A page's record is logged before its completion (the crawl waits for -o to confirm it first), and a
  // commit can come in between: a crash then left the record of a page the resumed crawl fetches again.
  it('drops, on resume after a crash, the page records whose completion the crash lost', async () => {
    await crashWithTwoLeases(
      async ({ store, log, one, url }) => {
        await log.append({ type: 'page', url: url(1), status: 200, startedAt: new Date().toISOString() });
        await store.complete(one, '200');
        await log.append({ type: 'skipped', url: url(9), reason: 'robots' });
        await log.append({ type: 'page', url: url(2), status: 200, startedAt: new Date().toISOString() }); // its completion never comes
      },
      async (resumed, url, opened) => {
        expect(opened.uncleanUntil).toBeDefined();
        expect((await loggedRecords(resumed)).map((r) => r.url)).toEqual([url(1), url(9)]);
        // Page 2 is fetched again (its lease went back to the queue) and logged once more: once in all.
        expect(resumed.counts()).toMatchObject({ queued: 1 });
      },
    );
  });
});

/**
 * A state file with pages 1 and 2 of a.example queued and both claimed: `before` logs and completes
 * what it likes (page 2's lease is never completed), a commit follows, and `after` opens a copy of
 * the file as kill -9 would leave it then.
 */
async function crashWithTwoLeases(
  before: (s: { store: SqliteStore; log: ReturnType<SqliteStore['recordLog']>; one: Lease; url: (n: number) => string }) => Promise<void>,
  after: (resumed: SqliteStore, url: (n: number) => string, opened: Awaited<ReturnType<SqliteStore['open']>>) => Promise<void>,
  opts: { commitsApartMs?: number } = {},
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
  const path = join(dir, 'state.db');
  const url = (n: number) => `http://a.example/${n}`;
  let now = 1_000_000;
  // With commitsApartMs, every store call is that much later than the one before: each one commits.
  const store = new SqliteStore(path, { now: () => (opts.commitsApartMs === undefined ? now : (now += opts.commitsApartMs)) });
  try {
    await store.open({ seeds: [url(0)], configFingerprint: 'f' });
    for (const n of [1, 2]) await store.add(url(n), 'a', { url: url(n), depth: 1, parent: null, hops: 0, attempt: 0 });
    const [one, two] = [store.claim('a', 0) as Lease, store.claim('a', 0) as Lease];
    await before({ store, log: store.recordLog(), one, url });
    now += 1_000;
    await store.addToCounter('started', 1); // a commit, without page 2's completion
    const resumed = new SqliteStore(crashCopy(path), { now: () => now });
    try {
      await after(resumed, url, await resumed.open({ seeds: [url(0)], configFingerprint: 'f' }));
    } finally {
      resumed.close();
    }
    await store.complete(two, '200');
  } finally {
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('record log across a crash: skips', () => {
  // Regression: a skip found on a page (--emit-skipped) was logged before the page's own record, so the
  // settled mark could pass it while the page was still leased; after a crash the page was fetched again
  // and its links' skips logged twice.
  it("drops the skips of a link found on a page whose completion the crash lost; keeps a completed page's", async () => {
    await crashWithTwoLeases(
      async ({ store, log, one, url }) => {
        await log.append({ type: 'skipped', url: url(7), reason: 'scope', parent: url(1) });
        await log.append({ type: 'page', url: url(1), status: 200, startedAt: new Date().toISOString() });
        await store.complete(one, '200');
        await log.append({ type: 'skipped', url: url(8), reason: 'scope', parent: url(2) }); // page 2's record never comes
      },
      async (resumed, url) => {
        expect((await loggedRecords(resumed)).map((r) => r.url)).toEqual([url(7), url(1)]);
      },
    );
  });

  it('drops the skip record of a URL skipped when claimed whose completion the crash lost: it is skipped again', async () => {
    await crashWithTwoLeases(
      async ({ store, log, one, url }) => {
        await log.append({ type: 'skipped', url: url(1), reason: 'robots' });
        await store.complete(one, 'robots');
        await log.append({ type: 'skipped', url: url(2), reason: 'robots' }); // its completion never comes
        await log.append({ type: 'skipped', url: url(9), reason: 'scope' }); // a link's: never claimed
      },
      async (resumed, url) => {
        expect((await loggedRecords(resumed)).map((r) => r.url)).toEqual([url(1), url(9)]);
        expect(resumed.willHandOut(url(2))).toBe(true);
        expect([url(1), url(9)].map((u) => resumed.willHandOut(u))).toEqual([false, false]);
      },
    );
  });
});

describe('-o across a crash: the output mark', () => {
  // Regression: the mark was the offset the output had confirmed one commit earlier, on the rule that a
  // confirmed record's URL is completed within the turn. Under backpressure a page's completion waits for
  // every record written before its own was confirmed, several commits later: a crash then kept its record
  // before the mark, and the resumed crawl fetched the page and wrote it again.
  it("never passes a record whose page's completion is not committed, however many commits come first", async () => {
    await crashWithTwoLeases(
      async ({ store, log, one, url }) => {
        let queued = 0;
        let confirmed = 0;
        store.trackOutput('pages.jsonl', { confirmed: () => confirmed, queued: () => queued });
        const write = async (record: { type: string; url: string }) => {
          await log.append(record); // as record-routes.ts does: logged, then handed to the output
          queued += 100;
        };
        await write({ type: 'page', url: url(1) });
        confirmed = queued;
        await store.complete(one, '200');
        await write({ type: 'page', url: url(2) }); // confirmed, but its completion waits behind later records
        confirmed = queued;
        for (let i = 0; i < 3; i++) await store.addToCounter('started', 1); // commits, 1 s apart on this clock
      },
      async (resumed) => {
        expect(resumed.outputMark()).toEqual({ path: 'pages.jsonl', offset: 100 });
      },
      { commitsApartMs: 1_000 },
    );
  });

  it('moves past the records of completed pages, a commit after they were confirmed', async () => {
    await crashWithTwoLeases(
      async ({ store, log, one, url }) => {
        let queued = 0;
        store.trackOutput('pages.jsonl', { confirmed: () => queued, queued: () => queued });
        await log.append({ type: 'page', url: url(1) });
        queued += 100;
        await store.complete(one, '200');
        for (let i = 0; i < 2; i++) await store.addToCounter('started', 1);
      },
      async (resumed) => {
        expect(resumed.outputMark()).toEqual({ path: 'pages.jsonl', offset: 100 });
      },
      { commitsApartMs: 1_000 },
    );
  });
});

describe('revisit schedule (--revisit)', () => {
  // The output ledger asks isDone(url, claimedAt) of records found after the last commit's mark: a page
  // waiting for its revisit is no longer in state done, but the fetch it completed must still count as
  // done (or its record would be dropped and lost), while a later fetch the crash cut short must not.
  it('makes a completed page a delayed entry, and tells the fetch it completed from a later one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    let now = 1_000_000;
    const store = new SqliteStore(join(dir, 'state.db'), { now: () => now });
    try {
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      await store.add('http://a.example/', 'a', { url: 'http://a.example/', depth: 0, parent: null, hops: 0, attempt: 0 });
      const claimedAt = now;
      const lease = store.claim('a', now) as Lease;
      now += 200;
      await store.history.put('http://a.example/', { status: 200, fetchedAt: claimedAt }, []);
      await store.complete(lease, '200');
      expect(store.isDone('http://a.example/', claimedAt)).toBe(true);
      await store.history.revisits!.at('http://a.example/', now + 5_000);
      expect(store.counts()).toMatchObject({ queued: 0, delayed: 1 });
      expect(store.nextDueAt()).toBe(now + 5_000);
      // Waiting for its revisit: the completed fetch is done, a state file reader's "done" alone says no.
      expect(store.isDone('http://a.example/')).toBe(false);
      expect(store.isDone('http://a.example/', claimedAt)).toBe(true);
      // Due: claimed again, its record written, and the crash comes before the completion.
      now += 5_000;
      expect(await store.promoteDue(now)).toEqual(['a']);
      const again = store.claim('a', now) as Lease;
      expect(again.entry.attempt).toBe(0);
      expect(store.isDone('http://a.example/', now)).toBe(false);
      // scheduleAll touches only done pages with history: the leased one is left alone.
      expect(await store.history.revisits!.scheduleAll(60_000, 0)).toBe(0);
    } finally {
      store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Found by recrawl.system's repeated kill -9: a page's history committed alone, its completion lost with
  // the process, and the resumed crawl fetched the page again and compared it with its own new history.
  it("commits a page's history only with its completion, however long since the last commit", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    let now = 1_000_000;
    const store = new SqliteStore(path, { now: () => now });
    const committed = () =>
      committedIn(path, (db) => ({
        pages: (db.prepare('SELECT count(*) AS n FROM pages').get() as { n: number }).n,
        done: (db.prepare('SELECT count(*) AS n FROM urls WHERE state = 4').get() as { n: number }).n,
      }));
    try {
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      await store.add('http://a.example/', 'a', { url: 'http://a.example/', depth: 0, parent: null, hops: 0, attempt: 0 });
      const lease = store.claim('a', now) as Lease;
      now += 5_000; // a slow page: the last commit is long past when its history is kept
      await store.history.put('http://a.example/', { status: 200, fetchedAt: now, etag: '"v2"' }, []);
      expect(committed()).toEqual({ pages: 0, done: 0 }); // what a kill -9 here leaves: neither
      await store.complete(lease, '200');
      expect(committed()).toEqual({ pages: 1, done: 1 }); // both, in the completion's commit
    } finally {
      store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('scheduleAll makes every done page with history due at its fetch plus its interval, and unfinishes the crawl', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-state-'));
    const path = join(dir, 'state.db');
    const t0 = Date.UTC(2026, 10, 27);
    const store = new SqliteStore(path, { now: () => t0 });
    try {
      await store.open({ seeds: ['http://a.example/'], configFingerprint: 'f' });
      for (const p of ['1', '2', '3'])
        await store.add(`http://a.example/${p}`, 'a', { url: `http://a.example/${p}`, depth: 0, parent: null, hops: 0, attempt: 0 });
      for (const p of ['1', '2', '3']) {
        const lease = store.claim('a', t0) as Lease;
        if (p !== '3') await store.history.put(lease.entry.url, { status: 200, fetchedAt: t0, ...(p === '2' && { intervalMs: 7_000 }) }, []);
        await store.complete(lease, '200');
      }
      await store.finish();
      // Page 3 has no history (an error's record): it stays done.
      expect(await store.history.revisits!.scheduleAll(60_000, 0)).toBe(2);
      expect(store.counts()).toMatchObject({ delayed: 2 });
      expect(store.nextDueAt()).toBe(t0 + 7_000);
      store.close();
      const reopened = new SqliteStore(path, { now: () => t0 });
      expect((await reopened.open({ seeds: [], configFingerprint: 'f' })).finished).toBe(false);
      expect(new Set(await reopened.promoteDue(t0 + 60_000))).toEqual(new Set(['a']));
      expect(reopened.counts()).toMatchObject({ queued: 2, delayed: 0 });
      reopened.close();
    } catch (err) {
      store.close();
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
