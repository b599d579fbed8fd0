/**
 * The CrawlStore contract, as one suite any store runs: a store's test file
 * calls `describeStoreContract(name, factory)` and nothing else is needed.
 * Every call is awaited, so sync and async stores run the same assertions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CrawlStore, FrontierEntry, Lease } from '../../src/store/crawl-store.js';
import { HostTable } from '../../src/politeness/host-state.js';
import { canonicalize } from '../../src/parse/url.js';
import { seededRandom } from './seeded-random.js';
import { bodyDigest } from '../../src/fetch/body-digest.js';

export interface StoreFixture {
  store: CrawlStore;
  /** Opens the same crawl state again in a new store object (durable and shared stores); absent for memory. */
  reopen?: () => Promise<CrawlStore>;
  cleanup?: () => Promise<void>;
}

const meta = { seeds: ['http://a.example/'], configFingerprint: 'f1' };
/**
 * `claim` for the contract's own calls: the suite never sets politeness that
 * would make a store answer "not before", so a ClaimWait is a contract breach.
 */
async function claimLease(store: CrawlStore, key: string, now: number): Promise<Lease | undefined> {
  const got = await store.claim(key, now);
  if (got && !('id' in got)) throw new Error(`claim(${key}) answered "not before ${got.notBefore}" where the contract expects a lease or nothing`);
  return got;
}

const entry = (url: string, extra: Partial<FrontierEntry> = {}): FrontierEntry => ({
  url,
  depth: 1,
  parent: 'http://a.example/',
  hops: 0,
  attempt: 0,
  ...extra,
});

export function describeStoreContract(name: string, factory: () => Promise<StoreFixture>): void {
  describe(`CrawlStore contract: ${name}`, () => {
    let fixture: StoreFixture | undefined;
    afterEach(async () => {
      await fixture?.store.close();
      await fixture?.cleanup?.();
      fixture = undefined;
    });
    const open = async () => {
      fixture = await factory();
      await fixture.store.open(meta);
      return fixture.store;
    };
    const claimAll = async (store: CrawlStore, key: string): Promise<Lease[]> => {
      const out: Lease[] = [];
      for (let lease = await claimLease(store, key, 0); lease; lease = await claimLease(store, key, 0)) out.push(lease);
      return out;
    };

    it('opens a new crawl and keeps its metadata', async () => {
      fixture = await factory();
      const opened = await fixture.store.open(meta);
      expect(opened).toEqual({ resumed: false, finished: false, meta });
      if (fixture.reopen) {
        await fixture.store.finish();
        await fixture.store.close();
        const again = await fixture.reopen();
        fixture.store = again;
        expect(await again.open({ ...meta, configFingerprint: 'f2' })).toEqual({ resumed: true, finished: true, meta });
      }
    });

    it('accepts each URL once, whatever its spelling, queued or only marked seen', async () => {
      const store = await open();
      const spellings = ['http://a.example/x', 'HTTP://A.EXAMPLE:80/x#frag', 'http://a.example/y/../x', 'http://a.example/%78'];
      const canon = spellings.map((s) => canonicalize(s)!);
      expect(new Set(canon).size).toBe(1);
      const added = [];
      for (const url of canon) added.push(await store.add(url, 'a.example', entry(url)));
      expect(added).toEqual([true, false, false, false]);
      expect(store.isSeen(canon[0])).toBe(true);
      expect(await store.add('http://a.example/skipped', '', null)).toBe(true);
      expect(await store.add('http://a.example/skipped', 'a.example', entry('http://a.example/skipped'))).toBe(false);
      expect(store.counts()).toEqual({ queued: 1, delayed: 0, leased: 0, seen: 2 });
      expect(store.queued('a.example')).toBe(1);
      expect(store.queued('b.example')).toBe(0);
    });

    it('hands out each host queue first in, first out, hosts independent, entries intact', async () => {
      const store = await open();
      const odd = entry('http://a.example/deep', { depth: 2 ** 30, hops: 300, attempt: 2, throttles: 0, parent: null });
      await store.add('http://a.example/1', 'a', entry('http://a.example/1'));
      await store.add('http://b.example/1', 'b', entry('http://b.example/1'));
      await store.add('http://a.example/2', 'a', entry('http://a.example/2', { hops: 3, attempt: 1, throttles: 4 }));
      await store.add(odd.url, 'a', odd);
      const rich = entry('http://a.example/rich', { extra: { kind: 'sitemap', lastmod: '2026-01-02', starts: [1, 2.5] } });
      await store.add(rich.url, 'a', rich);
      expect([...store.hostsWithWork()].sort()).toEqual(['a', 'b']);
      const a = await claimAll(store, 'a');
      expect([...store.hostsWithWork()]).toEqual(['b']);
      expect(a.map((l) => l.entry)).toEqual([entry('http://a.example/1'), entry('http://a.example/2', { hops: 3, attempt: 1, throttles: 4 }), odd, rich]);
      expect(a.every((l) => l.key === 'a')).toBe(true);
      expect((await claimAll(store, 'b')).map((l) => l.entry.url)).toEqual(['http://b.example/1']);
      expect(await claimLease(store, 'nobody', 0)).toBeUndefined();
    });

    it('never hands a lease out twice; complete ends it, release puts it back at the head', async () => {
      const store = await open();
      await store.add('http://a.example/1', 'a', entry('http://a.example/1'));
      await store.add('http://a.example/2', 'a', entry('http://a.example/2'));
      const first = (await claimLease(store, 'a', 0))!;
      expect(store.counts()).toMatchObject({ queued: 1, leased: 1 });
      const second = (await claimLease(store, 'a', 0))!;
      expect(second.entry.url).toBe('http://a.example/2');
      expect(second.id).not.toBe(first.id);
      expect(await claimLease(store, 'a', 0)).toBeUndefined(); // both leased: nothing to hand out
      await store.release(first, { ...first.entry, throttles: 1, extra: { history: [{ at: 5 }] } });
      expect(store.counts()).toMatchObject({ queued: 1, leased: 1 });
      const again = (await claimLease(store, 'a', 0))!;
      expect(again.entry).toEqual({ ...first.entry, throttles: 1, extra: { history: [{ at: 5 }] } });
      await store.complete(again);
      await store.complete(second);
      expect(store.counts()).toEqual({ queued: 0, delayed: 0, leased: 0, seen: 2 });
      await expect(async () => store.complete(second)).rejects.toThrow(/not held/);
      await expect(async () => store.release(again, again.entry)).rejects.toThrow(/not held/);
      expect(await store.add('http://a.example/1', 'a', entry('http://a.example/1'))).toBe(false); // done stays seen
    });

    it('keeps a delayed entry out of reach until promoted, then first in its host queue', async () => {
      const store = await open();
      await store.add('http://a.example/1', 'a', entry('http://a.example/1'));
      await store.add('http://a.example/2', 'a', entry('http://a.example/2'));
      await store.add('http://b.example/1', 'b', entry('http://b.example/1'));
      const lease = (await claimLease(store, 'a', 0))!;
      const blease = (await claimLease(store, 'b', 0))!;
      await store.release(lease, { ...lease.entry, attempt: 1 }, 5_000);
      await store.release(blease, { ...blease.entry, attempt: 1 }, 3_000);
      expect(store.counts()).toEqual({ queued: 1, delayed: 2, leased: 0, seen: 3 });
      expect(store.nextDueAt()).toBe(3_000);
      expect(await claimLease(store, 'b', 0)).toBeUndefined();
      expect(await store.promoteDue(2_999)).toEqual([]);
      expect(await store.promoteDue(4_000)).toEqual(['b']);
      expect(store.nextDueAt()).toBe(5_000);
      expect(await store.promoteDue(5_000)).toEqual(['a']);
      expect(store.nextDueAt()).toBe(Infinity);
      const a = await claimAll(store, 'a');
      expect(a.map((l) => [l.entry.url, l.entry.attempt])).toEqual([
        ['http://a.example/1', 1],
        ['http://a.example/2', 0],
      ]);
    });

    it('drains one host (queued and delayed) or everything, leaving leases alone', async () => {
      const store = await open();
      for (const u of ['http://a.example/1', 'http://a.example/2', 'http://a.example/3']) await store.add(u, 'a', entry(u));
      for (const u of ['http://b.example/1', 'http://b.example/2']) await store.add(u, 'b', entry(u));
      const leased = (await claimLease(store, 'a', 0))!;
      const delayed = (await claimLease(store, 'b', 0))!;
      await store.release(delayed, delayed.entry, 9_000);
      const aLeft = (await claimLease(store, 'a', 0))!;
      await store.release(aLeft, aLeft.entry, 8_000);
      expect((await store.drain('a')).map((e) => e.url).sort()).toEqual(['http://a.example/2', 'http://a.example/3']);
      expect(store.counts()).toEqual({ queued: 1, delayed: 1, leased: 1, seen: 5 });
      expect(store.nextDueAt()).toBe(9_000); // b's delayed entry kept its due time
      expect((await store.drain()).map((e) => e.url).sort()).toEqual(['http://b.example/1', 'http://b.example/2']);
      expect(store.counts()).toEqual({ queued: 0, delayed: 0, leased: 1, seen: 5 });
      await store.complete(leased);
    });

    it('clears one host (queued and delayed) or everything, answering with counts and only the depth-0 entries; leases stay', async () => {
      const store = await open();
      const add = (url: string, key: string, extra: Partial<FrontierEntry> = {}) => store.add(url, key, entry(url, extra));
      await add('http://a.example/0', 'a', { depth: 0, parent: null });
      await add('http://a.example/1', 'a');
      await add('http://a.example/2', 'a');
      await add('http://a.example/3', 'a', { depth: 0, parent: null });
      await add('http://b.example/0', 'b', { depth: 0, hops: 1, parent: 'http://a.example/0' });
      await add('http://b.example/1', 'b', { depth: 2 });
      await add('http://b.example/2', 'b');
      const leased = (await claimLease(store, 'a', 0))!; // a/0, a seed: a lease stays
      const bDelayed = (await claimLease(store, 'b', 0))!;
      await store.release(bDelayed, { ...bDelayed.entry, attempt: 1 }, 9_000);
      const aDelayed = (await claimLease(store, 'a', 0))!;
      await store.release(aDelayed, aDelayed.entry, 8_000);
      expect(store.counts()).toEqual({ queued: 4, delayed: 2, leased: 1, seen: 7 });

      const a = await store.clear('a');
      expect(a.counts).toEqual([['a', 2]]); // a/1 (delayed) and a/2
      expect(a.depthZero).toEqual([entry('http://a.example/3', { depth: 0, parent: null })]);
      expect(store.counts()).toEqual({ queued: 2, delayed: 1, leased: 1, seen: 7 });
      expect(store.queued('a')).toBe(0);
      expect(store.nextDueAt()).toBe(9_000);

      const all = await store.clear();
      expect(all.counts).toEqual([['b', 2]]);
      expect(all.depthZero).toEqual([entry('http://b.example/0', { depth: 0, hops: 1, attempt: 1, parent: 'http://a.example/0' })]);
      expect(store.counts()).toEqual({ queued: 0, delayed: 0, leased: 1, seen: 7 });
      expect(store.nextDueAt()).toBe(Infinity);
      expect([...store.hostsWithWork()]).toEqual([]);
      expect(await claimLease(store, 'b', 0)).toBeUndefined();
      expect(await store.add('http://b.example/1', 'b', entry('http://b.example/1'))).toBe(false); // cleared stays seen
      await store.complete(leased);
      expect(await store.clear()).toEqual({ counts: [], depthZero: [] });
    });

    it('clears many entries as counts alone', async () => {
      const store = await open();
      for (let i = 0; i < 300; i++) await store.add(`http://c.example/${i}`, i % 3 === 0 ? 'c' : 'd', entry(`http://c.example/${i}`, { depth: 1 + (i % 5) }));
      const cleared = await store.clear();
      expect(cleared.depthZero).toEqual([]);
      expect([...cleared.counts].sort()).toEqual([
        ['c', 100],
        ['d', 200],
      ]);
      expect(store.counts()).toMatchObject({ queued: 0, delayed: 0 });
    });

    it('counts what caps depend on', async () => {
      const store = await open();
      expect(store.counter('started')).toBe(0);
      expect(await store.addToCounter('started', 1)).toBe(1);
      expect(await store.addToCounter('started', 1)).toBe(2);
      expect(await store.addToCounter('started', -1)).toBe(1);
      expect(store.counter('started')).toBe(1);
    });

    it('keeps host politeness records as data, equal after a round trip', async () => {
      const store = await open();
      const policy = { intervalMs: 500, windows: [{ count: 2, windowMs: 60_000, label: '2/min' }], concurrency: 1, jitterMs: 0 };
      const table = new HostTable({ policyFor: () => policy });
      const host = table.get('a');
      const ticket = host.limiter.acquire(1_000);
      host.limiter.markDispatched(ticket, 1_004);
      host.limiter.release();
      host.limiter.pauseUntil(7_000);
      host.limiter.setRateFactor(0.25);
      host.feedback = { factor: 0.25, ceiling: 0.45, successes: 2, lastEventAt: 1_100, events: 2, eventsInRow: 1, failures: 0 };
      const saved = table.save('a')!;
      await store.saveHost('a', saved);
      saved.givenUp = true; // the store holds its own copy
      const loaded = await store.loadHosts();
      expect(loaded).toEqual([['a', { ...saved, givenUp: false }]]);
      const restored = new HostTable({ policyFor: () => policy }).restore('a', loaded[0][1]);
      for (const now of [1_500, 7_000, 8_000, 62_000]) expect(restored.limiter.readyAt(now)).toBe(host.limiter.readyAt(now));
      expect(JSON.parse(JSON.stringify(loaded))).toEqual(loaded); // plain data
      // A host that failed but was never throttled: its "last throttle event" is never, and stays never.
      const failing = table.get('b');
      failing.feedback = { factor: 1, ceiling: 1, successes: 0, lastEventAt: -Infinity, events: 0, eventsInRow: 0, failures: 3 };
      await store.saveHost('b', table.save('b')!);
      const back = new Map(await store.loadHosts());
      expect(JSON.parse(JSON.stringify(back.get('b')))).toEqual(back.get('b'));
      expect(new HostTable({ policyFor: () => policy }).restore('b', back.get('b')!).feedback).toEqual(failing.feedback);
      if (fixture!.reopen) {
        // A durable store gives the same records to the next process.
        await store.close();
        fixture!.store = await fixture!.reopen();
        await fixture!.store.open(meta);
        expect(new Map(await fixture!.store.loadHosts())).toEqual(back);
      }
    });

    it('keeps a record log in order, as plain data, for a later report (stores that have one)', async () => {
      const store = await open();
      if (!store.recordLog) return;
      const records = Array.from({ length: 5 }, (_, i) => ({
        type: 'page',
        url: `http://a.example/${i}`,
        status: 200,
        throttles: [{ at: i, status: 429, pausedUntil: i + 1 }],
      }));
      for (const r of records) await store.recordLog().append(r);
      records[0].status = 500; // what was appended stays as it was
      const read = async (s: CrawlStore) => {
        const out: unknown[] = [];
        for await (const r of s.recordLog!().read()) out.push(r);
        return out;
      };
      expect((await read(store)).map((r) => (r as { url: string }).url)).toEqual(records.map((r) => r.url));
      expect(await read(store)).toContainEqual({ type: 'page', url: 'http://a.example/0', status: 200, throttles: [{ at: 0, status: 429, pausedUntil: 1 }] });
      if (fixture!.reopen) {
        // The next process reads the same log, and a resumed crawl adds to it.
        await store.close();
        fixture!.store = await fixture!.reopen();
        await fixture!.store.open(meta);
        await fixture!.store.recordLog!().append({ type: 'skipped', url: 'http://a.example/x', reason: 'robots' });
        expect(await read(fixture!.store)).toHaveLength(6);
      }
    });

    it('keeps what robots.txt said per origin, as plain data', async () => {
      const store = await open();
      expect(await store.getRobots('http://a.example')).toBeUndefined();
      const rules = {
        kind: 'rules' as const,
        source: 'http://a.example/robots.txt',
        text: 'User-agent: *\nDisallow: /x\n',
        fetchedAt: 1_000,
        expiresAt: 2_000,
      };
      const down = { kind: 'unavailable' as const, reason: 'robots.txt answered 503', retryAt: null, attempts: 3 };
      await store.putRobots('http://a.example', rules);
      await store.putRobots('https://a.example', down);
      expect(await store.getRobots('http://a.example')).toEqual(rules);
      expect(await store.getRobots('https://a.example')).toEqual(down);
      const allow = { kind: 'allow-all' as const, reason: 'robots.txt answered 404', fetchedAt: 3_000, expiresAt: 4_000 };
      await store.putRobots('http://a.example', allow); // a later outcome replaces the earlier one
      expect(await store.getRobots('http://a.example')).toEqual(allow);
    });

    it('keeps per-page history: validators, digest, status, fetch time and outlinks (stores that have it)', async () => {
      const store = await open();
      const history = store.history;
      if (!history) return;
      expect(history.pass()).toBe(1);
      const page = (n: number) => `http://a.example/${n}`;
      for (let i = 0; i < 6; i++) await store.add(page(i), 'a.example', entry(page(i)));
      // Completed: a store may keep outlinks only to the URLs it completed (Redis keeps no other URL).
      const leases = await claimAll(store, 'a.example');
      // A put while the page's lease is held may take effect with its completion (Redis sends them together).
      await history.put(page(5), { status: 200, fetchedAt: 1_700_000_002_000, etag: '"five"' }, [page(0)]);
      for (const lease of leases) await store.complete(lease, '200');
      expect(await history.get(page(5))).toEqual({ status: 200, fetchedAt: 1_700_000_002_000, etag: '"five"' });
      expect(await history.outlinks(page(5))).toEqual([page(0)]);
      expect(await history.get(page(0))).toBeUndefined();
      const digest = bodyDigest(Buffer.from('<title>a</title>'));
      const first = { status: 200, fetchedAt: 1_700_000_000_000, etag: 'W/"abc-1"', lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT', digest };
      await history.put(page(0), first, [page(1), page(2), page(3)]);
      expect(await history.get(page(0))).toEqual(first);
      expect(new Set(await history.outlinks(page(0)))).toEqual(new Set([page(1), page(2), page(3)]));
      // A 304 keeps the outlinks kept before (null); an odd Last-Modified and another digest's text come back as written.
      const second = {
        status: 200,
        fetchedAt: 1_700_000_060_000,
        lastModified: 'Tuesday, 14-Nov-23 22:13:20 GMT',
        digest: 'sha1:UNKNOWNFORM',
        intervalMs: 7_200_000,
      };
      await history.put(page(0), second, null);
      expect(await history.get(page(0))).toEqual(second);
      expect(new Set(await history.outlinks(page(0)))).toEqual(new Set([page(1), page(2), page(3)]));
      await history.put(page(4), { status: 404, fetchedAt: 1_700_000_001_000 }, []);
      expect(await history.get(page(4))).toEqual({ status: 404, fetchedAt: 1_700_000_001_000 });
      expect(await history.outlinks(page(4))).toEqual([]);
      if (fixture!.reopen) {
        await store.close();
        fixture!.store = await fixture!.reopen();
        await fixture!.store.open(meta);
        expect(await fixture!.store.history!.get(page(0))).toEqual(second);
        expect(new Set(await fixture!.store.history!.outlinks(page(0)))).toEqual(new Set([page(1), page(2), page(3)]));
      }
    });

    it('starts a new pass: every known URL queued again, counts reset, seen-only URLs forgotten, history kept (durable stores)', async () => {
      const store = await open();
      if (!store.history?.startPass) return;
      const page = (n: number) => `http://a.example/${n}`;
      for (let i = 0; i < 4; i++) await store.add(page(i), 'a.example', entry(page(i), { depth: i }));
      await store.add('http://a.example/skipped', '', null);
      await store.addToCounter('started', 3);
      const leases = await claimAll(store, 'a.example');
      // Two done, one retried (delayed, with an attempt history), one left queued.
      await store.complete(leases[0], '200');
      await store.history.put(page(0), { status: 200, fetchedAt: 1_700_000_000_000, etag: '"e0"' }, [page(1)]);
      await store.complete(leases[1], 'CONNECTION_RESET');
      await store.release(leases[2], { ...leases[2].entry, attempt: 2, extra: { history: { starts: [1, 2] }, lastmod: '2024-01-01' } }, 5_000);
      await store.release(leases[3], leases[3].entry);
      await store.finish();
      expect(await store.history.startPass()).toBe(2);
      expect(store.history.pass()).toBe(2);
      expect(store.counter('started')).toBe(0);
      expect(store.isSeen('http://a.example/skipped')).toBe(false);
      expect(store.counts()).toMatchObject({ queued: 4, delayed: 0, leased: 0 });
      const again = await claimAll(store, 'a.example');
      expect(again.map((l) => l.entry.url).sort()).toEqual([page(0), page(1), page(2), page(3)]);
      // Attempts start over; what else the entry carried (a sitemap's lastmod) stays.
      expect(again.find((l) => l.entry.url === page(2))!.entry).toMatchObject({ attempt: 0, extra: { lastmod: '2024-01-01' } });
      expect(again.find((l) => l.entry.url === page(2))!.entry.extra).not.toHaveProperty('history');
      expect(await store.history.get(page(0))).toMatchObject({ etag: '"e0"' });
      expect(await store.add('http://a.example/skipped', 'a.example', entry('http://a.example/skipped'))).toBe(true);
      if (fixture!.reopen) {
        for (const l of again) await store.complete(l, '200');
        await store.close();
        fixture!.store = await fixture!.reopen();
        const opened = await fixture!.store.open(meta);
        // The new pass is not finished, and stays pass 2.
        expect(opened).toMatchObject({ resumed: true, finished: false });
        expect(fixture!.store.history!.pass()).toBe(2);
      }
    });

    it('books charges with completions and holds the budget: reservations end with their lease (spend ledger)', async () => {
      const store = await open();
      for (const u of ['http://p.example/1', 'http://p.example/2', 'http://p.example/3']) await store.add(u, 'p.example', entry(u));
      const [a, b, c] = await claimAll(store, 'p.example');
      const cent = { currency: 'USD', micros: 10_000 };
      // A budget of two cents: two reservations fit, a third does not.
      expect(await store.reserveSpend(a, cent, 20_000)).toBe(true);
      expect(await store.reserveSpend(b, cent, 20_000)).toBe(true);
      expect(await store.reserveSpend(c, cent, 20_000)).toBe(false);
      // A released lease gives its reservation back; a completed one turns it into what it was charged.
      await store.release(b, b.entry);
      expect(await store.reserveSpend(c, cent, 20_000)).toBe(true);
      await store.complete(a, '200', cent);
      await store.complete(c, '200', { currency: 'USD', micros: 5_000 });
      expect(await store.spending()).toEqual({ USD: { micros: 15_000, hosts: { 'p.example': 15_000 } } });
      const [again] = await claimAll(store, 'p.example');
      expect(await store.reserveSpend(again, cent, 20_000)).toBe(false); // 0.015 spent: one more cent would pass 0.02
      expect(await store.reserveSpend(again, { currency: 'EUR', micros: 10_000 }, 20_000)).toBe(true); // currencies apart
      await store.complete(again, '402');
      if (fixture!.reopen) {
        await store.close();
        fixture!.store = await fixture!.reopen();
        await fixture!.store.open(meta);
        expect(await fixture!.store.spending()).toEqual({ USD: { micros: 15_000, hosts: { 'p.example': 15_000 } } });
      }
    });

    it('agrees with a reference model over a long random run of adds, claims, releases and promotions', async () => {
      const store = await open();
      const random = seededRandom(7);
      const model = new Map<string, string[]>(); // key → queued URLs, head first
      const delayed: Array<{ key: string; url: string; due: number }> = [];
      const leases: Lease[] = [];
      const seen = new Set<string>();
      let now = 0;
      for (let step = 0; step < 1_500; step++) {
        const r = random();
        const key = `h${Math.floor(random() * 4)}`;
        if (r < 0.4) {
          const url = `http://${key}.example/${Math.floor(random() * 400)}`;
          const isNew = !seen.has(url);
          seen.add(url);
          expect(await store.add(url, key, entry(url))).toBe(isNew);
          if (isNew) model.set(key, [...(model.get(key) ?? []), url]);
        } else if (r < 0.65) {
          const lease = await claimLease(store, key, now);
          const expected = model.get(key)?.shift();
          expect(lease?.entry.url).toBe(expected);
          if (lease) leases.push(lease);
        } else if (r < 0.8 && leases.length > 0) {
          const lease = leases.splice(Math.floor(random() * leases.length), 1)[0];
          await store.complete(lease);
        } else if (r < 0.9 && leases.length > 0) {
          const lease = leases.splice(Math.floor(random() * leases.length), 1)[0];
          if (random() < 0.5) {
            await store.release(lease, lease.entry);
            model.set(lease.key, [lease.entry.url, ...(model.get(lease.key) ?? [])]);
          } else {
            const due = now + 1 + Math.floor(random() * 50) + step / 1e4; // unique: no ties to order
            await store.release(lease, lease.entry, due);
            delayed.push({ key: lease.key, url: lease.entry.url, due });
          }
        } else {
          now += Math.floor(random() * 30);
          const due = delayed.filter((d) => d.due <= now).sort((x, y) => x.due - y.due);
          const promoted = await store.promoteDue(now);
          expect(promoted.sort()).toEqual(due.map((d) => d.key).sort());
          for (const d of due) {
            delayed.splice(delayed.indexOf(d), 1);
            model.set(d.key, [d.url, ...(model.get(d.key) ?? [])]);
          }
          for (const [k, urls] of model) expect(store.queued(k)).toBe(urls.length);
        }
        const queued = [...model.values()].reduce((n, q) => n + q.length, 0);
        expect(store.counts()).toEqual({ queued, delayed: delayed.length, leased: leases.length, seen: seen.size });
        expect(store.nextDueAt()).toBe(delayed.length ? Math.min(...delayed.map((d) => d.due)) : Infinity);
      }
    });
  });
}
