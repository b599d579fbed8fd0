/**
 * The Redis store against a real redis-server (started by this file on a
 * free port of 127.0.0.1, no persistence): the shared contract suite, then
 * what only a shared store must do — several workers on one crawl.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { duplicates, minGap, startWeb } from '../../fixtures/web.js';
import { systemClock } from '../../src/clock.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import { createFetcher, type Fetcher } from '../../src/fetch/fetcher.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { OutputRecord } from '../../src/types.js';
import { HostTable } from '../../src/politeness/host-state.js';
import { gapWithMargin, WINDOW_MARGIN } from '../../src/politeness/host-limiter.js';
import type { FrontierEntry, Lease, SharedStart } from '../../src/store/crawl-store.js';
import { RedisStore, RedisStoreError, type RedisLease, type RedisStoreOptions, type SharedPolicy } from '../../src/store/redis-store.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { describeStoreContract } from '../support/store-contract.js';

let server: RedisServer | undefined;
const url = (): string => server!.url;
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const entry = (u: string): FrontierEntry => ({ url: u, depth: 1, parent: null, hops: 0, attempt: 0 });
const meta = { seeds: ['http://a.example/'], configFingerprint: 'f1' };
const isLease = (x: unknown): x is RedisLease => typeof x === 'object' && x !== null && 'entry' in x;
/** Claims `key` until it is granted, waiting out each "not before"; `roundTrip`: the granting claim's. */
async function claimWhenDue(store: RedisStore, key: string): Promise<{ lease: RedisLease; roundTrip: number }> {
  for (;;) {
    const sentAt = now();
    const answer = await store.claim(key);
    const roundTrip = now() - sentAt;
    if (isLease(answer)) return { lease: answer, roundTrip };
    await sleep((answer as { notBefore: number }).notBefore - now() + 2);
  }
}

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'RedisStore on a real redis-server', () => {
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describeStoreContract('redis', async () => {
    const crawlId = `contract-${randomUUID()}`;
    return { store: new RedisStore({ url: url(), crawlId }), reopen: async () => new RedisStore({ url: url(), crawlId }) };
  });

  describe('several workers on one crawl', () => {
    const open: RedisStore[] = [];
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close();
    });
    /** `n` workers on one new crawl, each opened with `seeds`. */
    const workers = async (n: number, opts: Partial<RedisStoreOptions> = {}, seeds = meta.seeds): Promise<RedisStore[]> => {
      const crawlId = `workers-${randomUUID()}`;
      const out = [];
      for (let i = 0; i < n; i++) {
        const store = new RedisStore({ url: url(), crawlId, ...opts });
        open.push(store);
        await store.open({ ...meta, seeds });
        out.push(store);
      }
      return out;
    };

    it('schedules each completed page for its revisit once, however many workers start (--revisit)', async () => {
      const [a, b] = await workers(2);
      const t0 = Date.UTC(2026, 10, 27);
      const pages = ['1', '2', '3', '4'].map((p) => `http://a.example/${p}`);
      for (const p of pages) await a.add(p, 'a', { ...entry(p), extra: { lastmod: '2026-01-01', history: { starts: [1] } } });
      for (const p of pages) {
        const lease = (await a.claim('a')) as RedisLease;
        // Page 4 has no history (an error's record): it is not revisited.
        if (p !== pages[3]) await a.history.put(lease.entry.url, { status: 200, fetchedAt: t0, ...(p === pages[1] && { intervalMs: 7_000 }) }, []);
        await a.complete(lease, '200');
      }
      expect(await a.finish()).toBe(true);
      // Page 1 is scheduled by its worker right after its completion; then both workers start and schedule what waits for nothing.
      await a.history.revisits.at(pages[0], t0 + 5_000);
      await a.history.revisits.at(pages[0], t0 + 9_000); // waiting already: not twice
      const [fromA, fromB] = await Promise.all([a.history.revisits.scheduleAll(60_000, 0), b.history.revisits.scheduleAll(60_000, 0)]);
      expect(fromA + fromB).toBe(2);
      await b.reap();
      expect(b.counts()).toMatchObject({ queued: 0, delayed: 3, leased: 0 });
      expect(b.nextDueAt()).toBe(t0 + 5_000);
      expect((await b.status()).finished).toBe(false);
      expect(await b.promoteDue(t0 + 60_000)).toEqual(['a', 'a', 'a']);
      const again: RedisLease[] = [];
      for (let l = await b.claim('a'); isLease(l); l = await b.claim('a')) again.push(l);
      expect(again.map((l) => l.entry.url).sort()).toEqual(pages.slice(0, 3));
      // Attempts start over; the attempt history goes, the rest of the entry stays.
      for (const l of again) expect(l.entry).toMatchObject({ attempt: 0, depth: 1, extra: { lastmod: '2026-01-01' } });
      for (const l of again) expect(l.entry.extra).not.toHaveProperty('history');
      // Completed again: no longer waiting, so the next start schedules them again.
      for (const l of again) await b.complete(l, '200');
      expect(await a.history.revisits.scheduleAll(60_000, 0)).toBe(3);
    });

    it('two workers racing for the last cent of a budget: exactly one takes it', async () => {
      const crawlId = `budget-${randomUUID()}`;
      const a = new RedisStore({ url: url(), crawlId });
      const b = new RedisStore({ url: url(), crawlId });
      open.push(a, b);
      await a.open(meta);
      await b.open(meta);
      const urls = Array.from({ length: 40 }, (_, i) => `http://p.example/${i}`);
      for (const u of urls) await a.add(u, 'p.example', entry(u));
      const leases: Array<[RedisStore, RedisLease]> = [];
      for (let i = 0; i < urls.length; i++) {
        const worker = i % 2 === 0 ? a : b;
        const got = await worker.claim('p.example');
        if (isLease(got)) leases.push([worker, got]);
      }
      expect(leases).toHaveLength(40);
      const cent = { currency: 'USD', micros: 10_000 };
      // A budget of 0.25 with 0.24 spent: forty reservations race for the last cent, from both workers at once.
      const [first, firstLease] = leases.pop()!;
      await first.complete(firstLease, '200', { currency: 'USD', micros: 240_000 });
      const granted = await Promise.all(leases.map(([w, l]) => w.reserveSpend(l, cent, 250_000)));
      expect(granted.filter(Boolean)).toHaveLength(1);
      const winner = leases[granted.indexOf(true)];
      await winner[0].complete(winner[1], '200', cent);
      expect(await b.spending()).toEqual({ USD: { micros: 250_000, hosts: { 'p.example': 250_000 } } });
      // Spent to the cent: nothing more fits.
      const rest = leases.filter((x) => x !== winner);
      expect(await rest[0][0].reserveSpend(rest[0][1], { currency: 'USD', micros: 1 }, 250_000)).toBe(false);
    });

    it("joins one crawl: seeds from any worker added once, the first worker's metadata kept", async () => {
      const crawlId = `join-${randomUUID()}`;
      const a = new RedisStore({ url: url(), crawlId });
      const b = new RedisStore({ url: url(), crawlId });
      open.push(a, b);
      expect(await a.peekMeta()).toBeUndefined(); // nothing under this id yet
      expect(await a.open({ seeds: ['http://s1/'], configFingerprint: 'f1' })).toEqual({
        resumed: false,
        finished: false,
        meta: { seeds: ['http://s1/'], configFingerprint: 'f1' },
      });
      expect(await b.open({ seeds: ['http://s1/', 'http://s2/'], configFingerprint: 'f1' })).toEqual({
        resumed: true,
        finished: false,
        meta: { seeds: ['http://s1/'], configFingerprint: 'f1' },
      });
      expect(await Promise.all([a.add('http://s1/', 's1', entry('http://s1/')), b.add('http://s1/', 's1', entry('http://s1/'))])).toEqual(
        expect.arrayContaining([true, false]),
      );
      expect(await b.add('http://s2/', 's2', entry('http://s2/'))).toBe(true);
      const c = new RedisStore({ url: url(), crawlId });
      open.push(c);
      expect(await c.peekMeta()).toEqual({ seeds: ['http://s1/', 'http://s2/'], configFingerprint: 'f1', finished: false, keyid: '' });
      const joined = await c.open({ seeds: [], configFingerprint: 'f2' });
      expect(joined.meta).toEqual({ seeds: ['http://s1/', 'http://s2/'], configFingerprint: 'f1' });
      expect([...c.hostsWithWork()].sort()).toEqual(['s1', 's2']); // a joining worker sees the queues
      expect(c.counts()).toEqual({ queued: 2, delayed: 0, leased: 0, seen: 2 });
    });

    it('a worker that found the crawl and opens it after it vanished is told it is lost, and begins nothing', async () => {
      const crawlId = `vanish-${randomUUID()}`;
      const a = new RedisStore({ url: url(), crawlId });
      const b = new RedisStore({ url: url(), crawlId });
      open.push(a, b);
      await a.open({ seeds: ['http://s1/'], configFingerprint: 'f1' });
      expect(await b.peekMeta()).toMatchObject({ seeds: ['http://s1/'] }); // "joining the crawl"
      const { createClient } = await import('redis');
      const admin = createClient({ url: url() });
      await admin.connect();
      try {
        await admin.del(`${a.keyPrefix}meta`); // its marker evicted (or the slot flushed) before b's OPEN
        const opened = b.open({ seeds: ['http://s1/'], configFingerprint: 'f1' });
        await expect(opened).rejects.toThrow(/is gone from Redis/);
        await expect(opened).rejects.toMatchObject({ code: 'REDIS_STATE_LOST' });
        expect(await admin.exists(`${a.keyPrefix}meta`)).toBe(0); // not created anew
      } finally {
        await admin.quit();
      }
    });

    it('never gives two workers a lease on one URL', async () => {
      const [a, b] = await workers(2);
      const hosts = ['h0', 'h1', 'h2', 'h3'];
      const urls = Array.from({ length: 200 }, (_, i) => `http://${hosts[i % 4]}.example/${i}`);
      for (const [i, u] of urls.entries()) await (i % 2 ? a : b).add(u, hosts[i % 4], entry(u));
      const take = async (store: RedisStore): Promise<Lease[]> => {
        const got: Lease[] = [];
        for (let empty = 0; empty < hosts.length;) {
          empty = 0;
          for (const key of hosts) {
            const answer = await store.claim(key);
            if (isLease(answer)) got.push(answer);
            else empty++;
          }
        }
        return got;
      };
      const [byA, byB] = await Promise.all([take(a), take(b)]);
      const all = [...byA, ...byB].map((l) => l.entry.url);
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual([...urls].sort());
      expect(byA.length).toBeGreaterThan(0);
      expect(byB.length).toBeGreaterThan(0);
      expect(new Set([...byA, ...byB].map((l) => l.id)).size).toBe(200);
      expect(a.counts()).toMatchObject({ queued: 0, leased: 200 });
    });

    it("keeps one host's gap, window and concurrency across workers, on Redis's clock", async () => {
      const window = { count: 3, windowMs: 600, label: '3/600ms' };
      const policy: SharedPolicy = { intervalMs: 100, windows: [window], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (let i = 0; i < 60; i++) await a.add(`http://h.example/${i}`, 'h', entry(`http://h.example/${i}`));
      const starts: number[] = [];
      const byWorker = [0, 0];
      let active = 0;
      let maxActive = 0;
      const holds: Array<Promise<void>> = [];
      const end = Date.now() + 1_500;
      // Both workers wake for the same due time; the one that took the last start wakes 30 ms later, so the
      // starts alternate between them (which worker wins a tie is otherwise up to timer order, and one worker
      // could take every start).
      let last = -1;
      const crawl = async (store: RedisStore, w: number): Promise<void> => {
        while (Date.now() < end) {
          const answer = await store.claim('h');
          if (answer === undefined) return;
          if (!isLease(answer)) {
            await sleep(Math.min(answer.notBefore - now() + (last === w ? 30 : 0), 1_000));
            continue;
          }
          last = w;
          starts.push(answer.reservedAt);
          await store.shared.dispatched(answer, now()); // written at once: its start counts in the window from here
          byWorker[w]++;
          maxActive = Math.max(maxActive, ++active);
          // A request that takes 250 ms: the host's two slots fill before the gap would allow a third start.
          holds.push(
            sleep(250).then(() => {
              active--;
              return store.complete(answer);
            }),
          );
        }
      };
      await Promise.all([crawl(a, 0), crawl(b, 1)]);
      await Promise.all(holds);
      starts.sort((x, y) => x - y);
      expect(starts.length).toBeGreaterThanOrEqual(5);
      expect(byWorker[0]).toBeGreaterThan(0);
      expect(byWorker[1]).toBeGreaterThan(0);
      for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(gapWithMargin(100));
      const windowWithMargin = window.windowMs * (1 + WINDOW_MARGIN.ratio) + WINDOW_MARGIN.ms;
      for (let i = window.count; i < starts.length; i++) expect(starts[i] - starts[i - window.count]).toBeGreaterThanOrEqual(windowWithMargin);
      expect(maxActive).toBeLessThanOrEqual(2);
      await a.reap(); // a's view is as of its own last answer: refresh it
      expect(a.counts()).toMatchObject({ leased: 0 });
    });

    it("holds a start granted just after Redis's clock jumped ahead by the jump; follows a jump back without holding", async () => {
      // To a worker, Redis's clock jumping ahead is its own clock falling behind Redis's, which is how b sees
      // it here (a real redis-server's clock cannot be stepped on a machine the other tests share). Every
      // start Redis logged before the jump then reads that much older, so a gap counted from one ends early.
      const policy: SharedPolicy = { intervalMs: 300, windows: [], concurrency: 1 };
      let behind = 0;
      const crawlId = `step-${randomUUID()}`;
      const a = new RedisStore({ url: url(), crawlId, policyFor: () => policy });
      const b = new RedisStore({ url: url(), crawlId, policyFor: () => policy, now: () => now() - behind });
      open.push(a, b);
      await a.open(meta);
      await b.open(meta);
      for (let i = 0; i < 3; i++) await a.add(`http://h.example/${i}`, 'h', entry(`http://h.example/${i}`));
      /** A start by `store` (a lease, written at once and over), and how long its claim took. */
      const startBy = async (store: RedisStore, clock: () => number) => {
        const t0 = performance.now();
        const lease = await store.claim('h');
        const tookMs = performance.now() - t0;
        if (!isLease(lease)) throw new Error(`no lease: ${JSON.stringify(lease)}`);
        const written = store.shared.dispatched(lease, clock());
        await store.complete(lease); // carries the start
        await written;
        return tookMs;
      };
      await startBy(a, now);
      // The gap is over: Redis grants the next claim at once. 250 ms of headroom: a loaded machine's late
      // answer to a's request moves its start later (the late-read bound), and +50 once fell short of it.
      await sleep(gapWithMargin(300) + 250);
      behind = 200;
      // Held the jump, less what b's best sample left uncertain (half its round trip, 1 ms a second of its age).
      expect(await startBy(b, () => now() - behind)).toBeGreaterThanOrEqual(150);
      // Back: the offset follows at the next answer (not after 500 s of aging), and nothing waits.
      const before = b.toRedis(0);
      await sleep(gapWithMargin(300) + 250);
      behind = -300;
      expect(await startBy(b, () => now() - behind)).toBeLessThan(150);
      expect(Math.abs(b.toRedis(0) - before + 500)).toBeLessThan(30); // within the two samples' round trips
    });

    it('keeps a later bound of when the server read a request when a start reserved after it is given back unwritten', async () => {
      // Two at once: a's request W is written, and its end (carrying when the server can have read it, late)
      // comes after b's claim X reserved the next start. X is given back unwritten (a robots.txt skip, say):
      // the host's last start goes back to what it was before X, and that is W's late bound, not W's write.
      const policy: SharedPolicy = { intervalMs: 300, windows: [], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (let i = 0; i < 3; i++) await a.add(`http://h.example/${i}`, 'h', entry(`http://h.example/${i}`));
      const w = (await a.claim('h')) as RedisLease;
      const wroteAt = now();
      await a.shared.dispatched(w, wroteAt); // its STARTED, after waiting half the gap for an end that does not come
      await sleep(wroteAt + gapWithMargin(300) + 20 - now());
      const x = await b.claim('h');
      if (!isLease(x)) throw new Error(`no lease: ${JSON.stringify(x)}`);
      // The server can have read W as late as 1.5 s after it was written: a bound far enough out that the calls
      // below, slowed by a loaded machine, still come before it (at 250 ms they once came after it, and got a lease).
      a.shared.responded(w, wroteAt + 1500);
      await a.complete(w);
      await b.release(x, x.entry);
      const next = await b.claim('h');
      expect(isLease(next)).toBe(false);
      // Not before that bound and a gap: W's write and a gap have passed already.
      expect((next as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(wroteAt + 1500 + gapWithMargin(300) - 5);
    });

    /** Two workers whose scripts are named in `scripts` as they run, a host table to save from, and a time 1 s ahead. */
    async function savingWorkers() {
      const policy: SharedPolicy = { intervalMs: 100, windows: [], concurrency: 4 };
      const scripts: string[] = [];
      const [a, b] = await workers(2, { policyFor: () => policy, timed: (name) => scripts.push(name) });
      return { a, b, scripts, table: new HostTable({ policyFor: () => ({ ...policy, jitterMs: 0 }) }), base: now() + 1_000 };
    }

    it('writes a host saved many times at once at most once in flight, ending with the newest save', async () => {
      const { a, b, table, scripts, base } = await savingWorkers();
      const saves: Array<Promise<void>> = [];
      // Twenty saves while the first is in flight, each a later pause: the crawl saves at every start, dispatch and response.
      for (let i = 1; i <= 20; i++) {
        table.get('c').limiter.pauseUntil(base + i * 100);
        saves.push(a.saveHost('c', table.save('c')!));
      }
      await Promise.all(saves);
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(2); // the first, then the newest of the other nineteen
      const [[, kept]] = (await b.loadHosts()).filter(([k]) => k === 'c');
      expect(kept.limiter.pausedUntil).toBeCloseTo(base + 2_000, -1);
      await b.add('http://c.example/1', 'c', entry('http://c.example/1'));
      const wait = await b.claim('c');
      expect((wait as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(base + 2_000 - 5);
    });

    it('writes every host saved while a write is in flight in one call, each with its newest save', async () => {
      const { a, b, table, scripts, base } = await savingWorkers();
      const saves: Array<Promise<void>> = [];
      // Twenty hosts saved at once (a crawl at full speed saves one host or another at every start, dispatch
      // and response), then the first again with a later pause while its first save is in flight.
      for (let i = 0; i < 20; i++) {
        table.get(`h${i}`).limiter.pauseUntil(base + i * 100);
        saves.push(a.saveHost(`h${i}`, table.save(`h${i}`)!));
      }
      table.get('h0').limiter.pauseUntil(base + 5_000);
      saves.push(a.saveHost('h0', table.save('h0')!));
      await Promise.all(saves);
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(2); // h0 alone, then the other nineteen and h0's newest
      const loaded = new Map(await b.loadHosts());
      for (let i = 1; i < 20; i++) expect(loaded.get(`h${i}`)!.limiter.pausedUntil).toBeCloseTo(base + i * 100, -1);
      expect(loaded.get('h0')!.limiter.pausedUntil).toBeCloseTo(base + 5_000, -1);
      // Every worker honours each host's own pause.
      for (const i of [0, 7, 19]) {
        await b.add(`http://h${i}.example/1`, `h${i}`, entry(`http://h${i}.example/1`));
        const wait = await b.claim(`h${i}`);
        expect((wait as { notBefore: number }).notBefore).toBeGreaterThanOrEqual((i === 0 ? base + 5_000 : base + i * 100) - 5);
      }
    });

    it("keeps back a save that changes only the saver's own record, and writes the newest at its close", async () => {
      const { a, b, table, scripts } = await savingWorkers();
      // Ten requests, each saved at its start: the host's last start moves, nothing every worker honours does.
      let t = now();
      for (let i = 0; i < 10; i++) {
        const ticket = table.get('k').limiter.acquire((t += 150));
        table.get('k').limiter.markDispatched(ticket, t);
        table.get('k').limiter.release(ticket);
        await a.saveHost('k', table.save('k')!);
      }
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(1); // the first only
      // A pause is every worker's business: written at once.
      table.get('k').limiter.pauseUntil(t + 1_000);
      await a.saveHost('k', table.save('k')!);
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(2);
      const ticket = table.get('k').limiter.acquire((t += 150));
      table.get('k').limiter.markDispatched(ticket, t);
      await a.saveHost('k', table.save('k')!);
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(2);
      // The worker's close writes what it kept back: the next worker to open reads the newest record.
      await a.close();
      expect(scripts.filter((n) => n === 'saveHost').length).toBe(3);
      const [[, kept]] = (await b.loadHosts()).filter(([k]) => k === 'k');
      expect(kept.limiter.lastStart).toBeCloseTo(t, -1);
    });

    it('adds to a counter at most once in flight, answering each caller the value its own addition made', async () => {
      const scripts: string[] = [];
      const [a, b] = await workers(2, { timed: (name) => scripts.push(name) });
      expect(await b.addToCounter('started', 5)).toBe(5);
      // As --max-pages reserves: each answer is what that one addition made, in the order of the calls.
      const answers = await Promise.all([1, 1, -1, 1, 1, 1, -1, 1].map((by) => a.addToCounter('started', by)));
      expect(answers).toEqual([6, 7, 6, 7, 8, 9, 8, 9]);
      expect(scripts.filter((n) => n === 'counter').length).toBe(3); // B's, A's first, then A's other seven together
      expect(await b.addToCounter('started', 1)).toBe(10);
    });

    it('adds the URLs of one turn in one call, answering each whether it was new', async () => {
      const scripts: string[] = [];
      const [a, b] = await workers(2, { timed: (name) => scripts.push(name) });
      const add = (u: string, host: string) => a.add(u, host, entry(u));
      await add('http://x.example/0', 'x');
      scripts.length = 0;
      // A page's links: one known, one found twice, one on another host, one only marked seen.
      const answers = await Promise.all([
        add('http://x.example/0', 'x'),
        add('http://x.example/1', 'x'),
        add('http://x.example/1', 'x'),
        add('http://y.example/1', 'y'),
        a.add('http://z.example/1', '', null),
      ]);
      expect(answers).toEqual([false, true, false, true, true]);
      expect(scripts).toEqual(['add']);
      expect([a.queued('x'), a.queued('y'), a.queued('z')]).toEqual([2, 1, 0]);
      expect(await b.add('http://z.example/1', '', null)).toBe(false);
      const claimed = [];
      for (let l = await b.claim('x'); isLease(l); l = await b.claim('x')) claimed.push(l.entry.url);
      expect(claimed).toEqual(['http://x.example/0', 'http://x.example/1']);
    });

    it('writes the starts made while one is on its way in one call', async () => {
      const scripts: string[] = [];
      const [a] = await workers(1, { timed: (name) => scripts.push(name) });
      const leases: RedisLease[] = [];
      for (const h of ['s0', 's1', 's2']) {
        await a.add(`http://${h}.example/1`, h, entry(`http://${h}.example/1`));
        leases.push((await a.claim(h)) as RedisLease);
      }
      await Promise.all(leases.map((l) => a.dispatched(l, now())));
      expect(scripts.filter((n) => n === 'started').length).toBe(2); // the first, then the other two together
      await Promise.all(leases.map((l) => a.complete(l)));
    });

    it('on a host with a gap, sends a STARTED only for a request not over within half the gap', async () => {
      // A gap long enough that B's second claim, sent half the gap after the slow start, lands inside it
      // even on a loaded machine; if it does not, the lease it gets must still be after the gap.
      const GAP = 400;
      const scripts: string[] = [];
      const policy: SharedPolicy = { intervalMs: GAP, windows: [], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy, timed: (name) => scripts.push(name) });
      for (const n of [1, 2]) await a.add(`http://q.example/${n}`, 'q', entry(`http://q.example/${n}`));
      // Over at once: its end carries the start, and no STARTED is sent.
      const quick = (await a.claim('q')) as Lease;
      const quickAt = now();
      const held = a.shared.dispatched(quick, quickAt);
      await a.complete(quick);
      await held;
      expect(scripts.filter((n) => n === 'started')).toHaveLength(0);
      let wait = (await b.claim('q')) as { notBefore: number };
      expect(wait.notBefore).toBeGreaterThanOrEqual(quickAt + gapWithMargin(GAP) - 2);
      // Still running after half the gap: its STARTED goes then, and lifts the hold on the host.
      await sleep(wait.notBefore - now() + 2);
      // Redis bounds the write from the claim's own times: later than it was by at most the claim's round trip.
      const { lease: slow, roundTrip } = await claimWhenDue(a, 'q');
      const slowAt = now();
      await a.shared.dispatched(slow, slowAt);
      expect(now() - slowAt).toBeGreaterThanOrEqual(GAP / 2 - 5);
      expect(scripts.filter((n) => n === 'started')).toHaveLength(1);
      await b.add('http://q.example/3', 'q', entry('http://q.example/3'));
      const claimSentAt = now();
      const answer = await b.claim('q');
      if (isLease(answer)) {
        // Right only if the claim was sent after the gap had passed: then this test stalled, and the hold
        // on the host is not what it checks. A lease inside the gap is a broken gap.
        const after = claimSentAt - slowAt;
        expect(after, `a lease for a claim sent ${after} ms after the slow start`).toBeGreaterThanOrEqual(gapWithMargin(GAP) - 2);
        await b.complete(answer);
        await a.complete(slow);
        return;
      }
      wait = answer as { notBefore: number };
      expect(wait.notBefore).toBeGreaterThanOrEqual(slowAt + gapWithMargin(GAP) - 2);
      expect(wait.notBefore).toBeLessThanOrEqual(slowAt + gapWithMargin(GAP) + roundTrip + 20);
      await a.complete(slow);
    });

    it("carries a start not landed yet with its lease's end: another worker's gap counts from it", async () => {
      const policy: SharedPolicy = { intervalMs: 100, windows: [], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (let attempt = 0; attempt < 5; attempt++) {
        const [first, slow] = [`f${attempt}`, `s${attempt}`];
        for (const h of [first, slow]) for (const n of [1, 2]) await a.add(`http://${h}.example/${n}`, h, entry(`http://${h}.example/${n}`));
        const l0 = (await a.claim(first)) as RedisLease;
        const l1 = (await a.claim(slow)) as RedisLease;
        // In one turn: the first start goes out, the slow host's waits behind it (written 300 ms after its
        // claim: a slow connect), its page ends, and worker B asks for that host. B's claim reaches Redis
        // before A's second STARTED can (that waits for the first one's answer).
        const sentAt = now();
        const late = sentAt + 300;
        const started = [a.dispatched(l0, sentAt), a.dispatched(l1, late)];
        const ended = a.complete(l1);
        const answer = await b.claim(slow);
        await Promise.all([ended, ...started, a.complete(l0)]);
        expect(isLease(answer)).toBe(false);
        const { notBefore } = answer as { notBefore: number };
        // B's claim ran before A's end, while the host was still held ("busy", 50 ms): try again.
        if (notBefore < sentAt + 75) continue;
        expect(notBefore).toBeGreaterThanOrEqual(late + gapWithMargin(100) - 5);
        return;
      }
      throw new Error("worker B's claim never ran after worker A's end");
    });

    it('makes every worker wait out a pause, a slower rate or a given-up host that one worker saved', async () => {
      const policy: SharedPolicy = { intervalMs: 100, windows: [], concurrency: 4 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      const table = new HostTable({ policyFor: () => ({ ...policy, jitterMs: 0 }) });
      // A Retry-After of 2 s seen by worker A.
      const pausedUntil = now() + 2_000;
      table.get('p').limiter.pauseUntil(pausedUntil);
      await a.saveHost('p', table.save('p')!);
      await b.add('http://p.example/1', 'p', entry('http://p.example/1'));
      const wait = await b.claim('p');
      expect(isLease(wait)).toBe(false);
      expect((wait as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(pausedUntil - 1);
      expect(b.queued('p')).toBe(1); // still B's to claim later

      // Worker A halves the rate: B's starts are 200 ms apart (plus margin).
      table.get('r').limiter.setRateFactor(0.5);
      await a.saveHost('r', table.save('r')!);
      for (const i of [1, 2]) await b.add(`http://r.example/${i}`, 'r', entry(`http://r.example/${i}`));
      const first = (await b.claim('r')) as RedisLease;
      expect(isLease(first)).toBe(true);
      const second = await b.claim('r');
      expect(isLease(second)).toBe(false);
      expect((second as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(b.toLocal(first.reservedAt + gapWithMargin(200)) - 1);
      // B's own record, never slowed, saved afterwards: A's slower rate stands (B did not change it).
      await b.loadHosts();
      const stale = new HostTable({ policyFor: () => ({ ...policy, jitterMs: 0 }) });
      stale.restore('r', (await b.loadHosts()).find(([k]) => k === 'r')![1]);
      stale.get('r').limiter.acquire(now());
      await b.saveHost('r', stale.save('r')!);
      const third = await b.claim('r');
      expect(isLease(third)).toBe(false);
      expect((third as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(b.toLocal(first.reservedAt + gapWithMargin(200)) - 1);

      // A gives the host up: B's new URLs for it are only marked seen, and what is queued is dropped.
      await b.add('http://g.example/1', 'g', entry('http://g.example/1'));
      table.get('g').givenUp = true;
      await a.saveHost('g', table.save('g')!);
      expect(await b.add('http://g.example/2', 'g', entry('http://g.example/2'))).toBe(true);
      expect(await b.claim('g')).toBeUndefined();
      expect(b.queued('g')).toBe(0);
      await b.complete(first);
    });

    it("gives a stalled or dead worker's lease back after its expiry, with its host slot", async () => {
      const policy: SharedPolicy = { intervalMs: 0, windows: [], concurrency: 1 };
      // The stalled worker never renews (its timer is an hour away); the live one reaps.
      const [stalled] = await workers(1, { policyFor: () => policy, leaseMs: 300, tickMs: 3_600_000 });
      const live = new RedisStore({ url: url(), crawlId: stalled.crawlId, policyFor: () => policy, leaseMs: 300, tickMs: 50 });
      open.push(live);
      await live.open(meta);
      await stalled.add('http://d.example/1', 'd', entry('http://d.example/1'));
      await stalled.add('http://d.example/2', 'd', entry('http://d.example/2'));
      const lost = (await stalled.claim('d')) as Lease;
      expect(lost.entry.url).toBe('http://d.example/1');
      const busy = await live.claim('d'); // the host's one slot is the stalled worker's
      expect(isLease(busy)).toBe(false);
      let back: RedisLease | undefined;
      for (const deadline = Date.now() + 3_000; !back && Date.now() < deadline; await sleep(25)) {
        const answer = await live.claim('d');
        if (isLease(answer)) back = answer;
      }
      expect(back?.entry.url).toBe('http://d.example/1'); // back at the head of its queue
      // The stalled worker wakes up and completes: not an error, and the live worker's lease stands.
      await stalled.complete(lost);
      expect(stalled.lostLeases).toBe(1);
      await live.complete(back!);
      expect(live.lostLeases).toBe(0);
      expect(live.counts()).toMatchObject({ queued: 1, leased: 0 });

      // A worker that closes (as a process that dies: nothing is released) loses its lease the same way.
      const dead = new RedisStore({ url: url(), crawlId: stalled.crawlId, policyFor: () => policy, leaseMs: 300 });
      await dead.open(meta);
      const held = (await dead.claim('d')) as Lease;
      expect(held.entry.url).toBe('http://d.example/2');
      await dead.close();
      let again: RedisLease | undefined;
      for (const deadline = Date.now() + 3_000; !again && Date.now() < deadline; await sleep(25)) {
        const answer = await live.claim('d');
        if (isLease(answer)) again = answer;
      }
      expect(again?.entry.url).toBe('http://d.example/2');
      await live.complete(again!);
    });

    it("gives a start without a URL (robots.txt, a browser's request) the host's gap and concurrency, shared with claims", async () => {
      // A gap long enough that a loaded machine (a STARTED held up to half of it, three round trips) cannot
      // let it pass before the claim that must land inside it: at 100 ms, one run claimed after the gap.
      const policy: SharedPolicy = { intervalMs: 500, windows: [], concurrency: 1 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      await a.add('http://s.example/1', 's', entry('http://s.example/1'));
      const slot = await a.shared.reserve('s');
      expect('notBefore' in slot).toBe(false);
      expect((await b.status()).workers).toEqual([]); // `crawl status` shows no lease: a slot is no URL
      // Not written yet, and the host's one slot: neither another slot nor a claim may start.
      expect(await b.shared.reserve('s')).toHaveProperty('notBefore');
      expect(isLease(await b.claim('s'))).toBe(false);
      const written = now();
      await a.shared.dispatched(slot as SharedStart, written);
      await a.shared.endStart(slot as SharedStart);
      // Ended: the host is free, but the gap counts from the slot's write.
      const wait = await b.claim('s');
      expect(isLease(wait)).toBe(false);
      expect((wait as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(written + gapWithMargin(500) - 2);
      // (asked again until it answers: a timer may fire a little before its time)
      await sleep((wait as { notBefore: number }).notBefore - now());
      let lease = await b.claim('s');
      for (const deadline = Date.now() + 1_000; !isLease(lease) && Date.now() < deadline; await sleep(5)) lease = await b.claim('s');
      expect(isLease(lease)).toBe(true);
      // A slot is no URL: the crawl's totals never counted it.
      expect(b.counts()).toMatchObject({ queued: 0, leased: 1 });
      await b.complete(lease as Lease);
    });

    it('logs a start in the windows when its request is written, not when it is claimed, and one never written not at all', async () => {
      const window = { count: 1, windowMs: 400, label: '1/400ms' };
      const policy: SharedPolicy = { intervalMs: 0, windows: [window], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (const n of [1, 2, 3]) await a.add(`http://w.example/${n}`, 'w', entry(`http://w.example/${n}`));
      // A claim given back unwritten (robots.txt to fetch first) is no request: the window stays empty.
      const unwritten = (await a.claim('w')) as Lease;
      expect(isLease(unwritten)).toBe(true);
      await a.release(unwritten, unwritten.entry);
      const slot = await b.shared.reserve('w');
      expect(slot).not.toHaveProperty('notBefore');
      await b.shared.endStart(slot as SharedStart);
      // A request written 150 ms after its claim (a slow connect): the window counts from the write.
      const lease = (await a.claim('w')) as Lease;
      expect(isLease(lease)).toBe(true);
      await sleep(150);
      const writtenAt = now();
      await a.shared.dispatched(lease, writtenAt);
      await a.complete(lease);
      const wait = (await b.claim('w')) as { notBefore: number };
      expect(wait).toHaveProperty('notBefore');
      expect(wait.notBefore).toBeGreaterThanOrEqual(writtenAt + window.windowMs * (1 + WINDOW_MARGIN.ratio) + WINDOW_MARGIN.ms - 2);
    });

    it("moves a start later where it is in a window's log, so trimming keeps the latest starts", async () => {
      // Two starts in any 300 ms. A's response says the server may have read it 20 ms late, still before B
      // was written: the log is B, A (moved). Pushed again as the newest, A would outlive B at the next
      // trim, and the fourth start could come 300 ms after A's read, inside B's window.
      const window = { count: 2, windowMs: 300, label: '2/300ms' };
      const [a] = await workers(1, { policyFor: () => ({ intervalMs: 0, windows: [window], concurrency: 3 }) });
      for (const n of [1, 2, 3, 4]) await a.add(`http://m.example/${n}`, 'm', entry(`http://m.example/${n}`));
      const claimNow = async (): Promise<Lease> => (await claimWhenDue(a, 'm')).lease;
      const t0 = now();
      const first = await claimNow();
      await a.shared.dispatched(first, t0);
      const second = await claimNow();
      await a.shared.dispatched(second, t0 + 40);
      a.shared.responded(first, t0 + 20);
      await a.complete(first);
      await a.complete(second);
      const third = await claimNow();
      await a.shared.dispatched(third, now());
      await a.complete(third);
      // Told to wait, or (on a slow machine) given the start once the wait is over: either way not before then.
      const fourth = await a.claim('m');
      const at = isLease(fourth) ? a.toLocal(fourth.reservedAt) : (fourth as { notBefore: number }).notBefore;
      expect(at).toBeGreaterThanOrEqual(t0 + 40 + window.windowMs * (1 + WINDOW_MARGIN.ratio) + WINDOW_MARGIN.ms - 2);
    });

    it('moves the next start of every worker later when a response shows the server read its request late', async () => {
      const window = { count: 1, windowMs: 300, label: '1/300ms' };
      for (const policy of [
        { intervalMs: 200, windows: [], concurrency: 1 },
        { intervalMs: 0, windows: [window], concurrency: 1 },
      ] satisfies SharedPolicy[]) {
        const [a, b] = await workers(2, { policyFor: () => policy });
        for (const n of [1, 2]) await a.add(`http://r.example/${n}`, 'r', entry(`http://r.example/${n}`));
        const lease = (await a.claim('r')) as Lease;
        expect(isLease(lease)).toBe(true);
        const writtenAt = now();
        await a.shared.dispatched(lease, writtenAt);
        // Its response says the server may have had it only 100 ms after the write.
        a.shared.responded(lease, writtenAt + 100);
        await a.complete(lease);
        const wait = (await b.claim('r')) as { notBefore: number };
        const after = policy.intervalMs > 0 ? gapWithMargin(policy.intervalMs) : window.windowMs * (1 + WINDOW_MARGIN.ratio) + WINDOW_MARGIN.ms;
        expect(wait.notBefore).toBeGreaterThanOrEqual(writtenAt + 100 + after - 2);
      }
    });

    // Regression: a claim given back unwritten (its host's robots.txt still to fetch) kept the start it had
    // reserved, so the robots.txt request it was given back for waited a whole gap behind it: a --redis
    // crawl's first request came 1 s late at 1/s.
    it('gives back the start of a claim or slot never written: the next start waits only for real requests', async () => {
      const policy: SharedPolicy = { intervalMs: 300, windows: [], concurrency: 2 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (const n of [1, 2, 3]) await a.add(`http://u.example/${n}`, 'u', entry(`http://u.example/${n}`));
      const first = (await a.claim('u')) as Lease;
      expect(isLease(first)).toBe(true);
      await a.release(first, first.entry); // robots.txt to fetch first: given back unwritten
      const robots = await b.shared.reserve('u');
      expect(robots).not.toHaveProperty('notBefore'); // no request was made: no gap to keep
      await b.shared.endStart(robots as SharedStart); // nor by this slot
      const written = (await a.claim('u')) as Lease;
      expect(isLease(written)).toBe(true);
      const writtenAt = now();
      await a.shared.dispatched(written, writtenAt);
      await a.complete(written);
      // A request written: the next start waits its gap, whichever worker asks.
      const wait = await b.shared.reserve('u');
      expect((wait as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(writtenAt + gapWithMargin(300) - 2);
      await sleep((wait as { notBefore: number }).notBefore - now() + 5);
      let skipped = await a.claim('u');
      for (const deadline = Date.now() + 1_000; !isLease(skipped) && Date.now() < deadline; await sleep(5)) skipped = await a.claim('u');
      expect(isLease(skipped)).toBe(true);
      await a.complete(skipped as Lease, 'robots'); // skipped when claimed: completed unwritten
      // Its start went back: the gap counts from the last request written, over already.
      expect(await b.shared.reserve('u')).not.toHaveProperty('notBefore');
    });

    it("gives a dead worker's start without a URL back after its expiry, with its host slot", async () => {
      const policy: SharedPolicy = { intervalMs: 0, windows: [], concurrency: 1 };
      const dead = new RedisStore({ url: url(), crawlId: `slot-${randomUUID()}`, policyFor: () => policy, leaseMs: 300 });
      await dead.open(meta);
      const live = new RedisStore({ url: url(), crawlId: dead.crawlId, policyFor: () => policy, leaseMs: 300, tickMs: 50 });
      open.push(live);
      await live.open(meta);
      await live.add('http://t.example/1', 't', entry('http://t.example/1'));
      expect('notBefore' in (await dead.shared.reserve('t'))).toBe(false);
      await dead.close(); // as a process that dies: nothing ended
      expect(isLease(await live.claim('t'))).toBe(false);
      let lease: RedisLease | undefined;
      for (const deadline = Date.now() + 3_000; !lease && Date.now() < deadline; await sleep(25)) {
        const answer = await live.claim('t');
        if (isLease(answer)) lease = answer;
      }
      expect(lease?.entry.url).toBe('http://t.example/1');
      // Reaping the slot put no URL back in any queue.
      expect(live.counts()).toMatchObject({ queued: 0, leased: 1 });
      await live.complete(lease!);
      expect(live.counts()).toMatchObject({ queued: 0, leased: 0 });
    });

    it("frees a lease's host slot when its page is handed to the browser, once, and its end leaves the count alone", async () => {
      const policy: SharedPolicy = { intervalMs: 0, windows: [], concurrency: 1 };
      const [a, b] = await workers(2, { policyFor: () => policy });
      for (const i of [1, 2, 3]) await a.add(`http://r.example/${i}`, 'r', entry(`http://r.example/${i}`));
      const page = (await a.claim('r')) as Lease;
      await a.shared.dispatched(page, now());
      expect(isLease(await b.claim('r'))).toBe(false); // the page holds the host's one slot
      await a.shared.handOff(page);
      await a.shared.handOff(page); // a second hand-off changes nothing
      const slot = await b.shared.reserve('r'); // the browser's request to the page's own host
      expect('notBefore' in slot).toBe(false);
      await b.shared.dispatched(slot as SharedStart, now());
      // Handed off: the page's end frees nothing more, and the browser's request still holds the one slot.
      await a.complete(page);
      expect(await a.shared.reserve('r')).toHaveProperty('notBefore');
      expect(isLease(await a.claim('r'))).toBe(false);
      await b.shared.endStart(slot as SharedStart);
      const next = (await b.claim('r')) as Lease;
      expect(isLease(next)).toBe(true);
      expect(isLease(await a.claim('r'))).toBe(false); // still one at a time
      await b.complete(next);
    });

    it("keeps a live worker's leases past their expiry by renewing them", async () => {
      // Renewed every 50 ms, a 600 ms lease survives a worker kept off the CPU for half a second
      // (a full suite on 2 cores did that to a 200 ms lease); unrenewed, it would be gone after 600.
      const [a, b] = await workers(2, { leaseMs: 600, tickMs: 50 });
      await a.add('http://k.example/1', 'k', entry('http://k.example/1'));
      const lease = (await a.claim('k')) as Lease;
      await sleep(1500);
      await b.reap();
      expect(await b.claim('k')).toBeUndefined();
      await a.renew(lease);
      await a.complete(lease);
      expect(a.lostLeases).toBe(0);
    });

    it('drains a crawl with nothing queued (regression: Redis refuses HINCRBY by "-0", which hung the crawl\'s end)', async () => {
      const [a] = await workers(1);
      expect(await a.drain()).toEqual([]);
      expect(await a.drain('nobody')).toEqual([]);
      expect(a.counts()).toEqual({ queued: 0, delayed: 0, leased: 0, seen: 0 });
    });

    it('counts started requests across workers', async () => {
      const [a, b] = await workers(2);
      await a.addToCounter('started', 1);
      await b.addToCounter('started', 1);
      expect(await a.addToCounter('started', 1)).toBe(3);
      expect(a.counter('started')).toBe(3);
      await b.reap(); // any answer refreshes the view
      expect(b.counter('started')).toBe(3);
    });

    it('without a page cap, counts starts with the next lease end instead of a call each, and sends the rest at close', async () => {
      const scripts: string[] = [];
      const [a, b] = await workers(2, { countStartsLater: true, timed: (name) => scripts.push(name) });
      await a.add('http://c.example/1', 'c', entry('http://c.example/1'));
      const lease = (await a.claim('c')) as Lease;
      for (let i = 0; i < 3; i++) await a.addToCounter('started', 1);
      expect(a.counter('started')).toBe(3); // this worker's view at once
      await b.reap();
      expect(b.counter('started')).toBe(0); // not sent yet
      await a.complete(lease); // carries the three
      await b.reap();
      expect(b.counter('started')).toBe(3);
      await a.addToCounter('started', 2);
      await a.addToCounter('started', -1);
      await a.close(); // sends what is left
      await b.reap();
      expect(b.counter('started')).toBe(4);
      expect(scripts.filter((n) => n === 'counter')).toHaveLength(1); // the close's only
    });

    it("answers a granted claim and a completion without the crawl's totals, which the worker counts itself", async () => {
      const [a, b] = await workers(2, { countStartsLater: true });
      const { createClient } = await import('redis');
      const admin = createClient({ url: url() });
      await admin.connect();
      // Every VIEW reads the earliest delayed entry with one ZRANGE; nothing else runs one.
      const views = async () => Number(/cmdstat_zrange:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
      try {
        for (const p of ['1', '2', '3']) await a.add(`http://g.example/${p}`, 'g', entry(`http://g.example/${p}`));
        const before = await views();
        const [one, two] = [(await a.claim('g')) as Lease, (await a.claim('g')) as Lease];
        expect(a.counts()).toMatchObject({ queued: 1, leased: 2 });
        await a.addToCounter('started', 2);
        await a.complete(one); // the other still held: no totals
        expect(await views()).toBe(before);
        expect(a.counts()).toMatchObject({ queued: 1, delayed: 0, leased: 1, seen: 3 });
        expect(a.counter('started')).toBe(2);
        await b.reap(); // another worker's answer has the crawl's totals, the starts the completion carried included
        expect(b.counts()).toMatchObject({ queued: 1, delayed: 0, leased: 1, seen: 3 });
        expect(b.counter('started')).toBe(2);
        const third = (await b.claim('g')) as Lease;
        await a.complete(two); // this worker's last lease: the totals come with it, b's claim included
        expect(await views()).toBe(before + 2); // b's reap and a's last completion
        expect(a.counts()).toMatchObject({ queued: 0, leased: 1 });
        await b.complete(third);
        expect(b.counts()).toMatchObject({ queued: 0, leased: 0 });
      } finally {
        await admin.quit();
      }
    });

    it('finishes the crawl only when no worker has work left', async () => {
      const [a, b] = await workers(2);
      await a.add('http://f.example/1', 'f', entry('http://f.example/1'));
      const lease = (await b.claim('f')) as Lease;
      await a.finish(); // b still holds a lease
      const c = new RedisStore({ url: url(), crawlId: a.crawlId });
      open.push(c);
      expect((await c.open(meta)).finished).toBe(false);
      await b.complete(lease);
      await a.finish();
      const d = new RedisStore({ url: url(), crawlId: a.crawlId });
      open.push(d);
      expect((await d.open(meta)).finished).toBe(true);
    });
  });

  it("runs a whole crawl through the crawl loop: every page once, each host's gap kept, the crawl finished", async () => {
    const web = await startWeb({
      sites: { 'a.localhost': { generate: { pages: 10, linksPerPage: 3 } }, 'b.localhost': { generate: { pages: 10, linksPerPage: 3 } } },
    });
    const settings = buildSettings(validateConfig({ defaults: { rate: '20/s' } }, 'test config'), {});
    const crawlId = `crawl-${randomUUID()}`;
    const store = new RedisStore({ url: url(), crawlId, policyFor: (key) => settings.policyFor(key) });
    const real = createFetcher({ userAgent: settings.userAgent, timeouts: settings.timeouts, maxBodyBytes: settings.maxBodyBytes, clock: systemClock });
    // When each request was written to its socket, per host: what the limiter times its gap from. (The server's
    // arrival times share this process's event loop with the crawler and Redis replies, so they jitter by a few ms.)
    const sent = new Map<string, number[]>();
    const fetcher: Fetcher = {
      fetch: (u, req) =>
        real.fetch(u, {
          ...req,
          onDispatched: (at) => (sent.set(new URL(u).hostname, [...(sent.get(new URL(u).hostname) ?? []), at]), req.onDispatched?.(at)),
        }),
      close: () => real.close(),
    };
    const records: OutputRecord[] = [];
    const sink: RecordSink = {
      write: (r) => (records.push(r), Promise.resolve()),
      close: () => Promise.resolve(),
      broken: false,
      get written() {
        return records.length;
      },
    };
    const seeds = [web.url('a.localhost', '/'), web.url('b.localhost', '/')];
    try {
      await new Crawler({ settings, seeds, clock: systemClock, fetcher, sink, store }).run();
      expect(records.filter((r) => r.type === 'page' && r.status === 200)).toHaveLength(22);
      expect(duplicates(web.requests())).toEqual([]);
      for (const host of ['a.localhost', 'b.localhost']) {
        expect(sent.get(host)).toHaveLength(12); // robots.txt and 11 pages
        expect(minGap(sent.get(host)!)).toBeGreaterThanOrEqual(gapWithMargin(50) - 1e-6);
      }
      const again = new RedisStore({ url: url(), crawlId });
      expect(await again.peekMeta()).toMatchObject({ seeds, finished: true });
      expect((await again.open({ seeds, configFingerprint: '' })).finished).toBe(true);
      expect(again.counts()).toEqual({ queued: 0, delayed: 0, leased: 0, seen: 22 });
      expect(again.counter('started')).toBe(22);
      await again.close();
    } finally {
      await store.close();
      await fetcher.close();
      await web.close();
    }
  });

  it('keeps queued entries compact: each parent stored once, forgotten when no entry names it; entries intact', async () => {
    const { createClient } = await import('redis');
    const admin = createClient({ url: url() });
    await admin.connect();
    const store = new RedisStore({ url: url(), crawlId: `compact-${randomUUID()}` });
    try {
      await store.open(meta);
      const parents = ['https://a.example/list?page=1', 'http://b.example:8080/', 'https://c.example/x|y'];
      const made: FrontierEntry[] = [];
      for (let i = 0; i < 30; i++) {
        const key = i % 2 === 0 ? 'a.example' : 'b.example:8080';
        const u = i % 3 === 0 ? `https://${key}/p/${i}` : i % 3 === 1 ? `http://${key}/p/${i}?q=a|b` : `https://other.example/${key}/${i}`;
        const e: FrontierEntry = {
          url: u,
          depth: i % 4,
          parent: i === 29 ? null : parents[i % 3],
          hops: i % 2,
          attempt: i % 5,
          ...(i % 7 === 0 ? { throttles: 0 } : {}),
          ...(i % 5 === 0 ? { extra: { kind: 'sitemap|x', n: [i, 1.5] } } : {}),
        };
        made.push(e);
        expect(await store.add(u, key, e)).toBe(true);
      }
      const par = `${store.keyPrefix}par`;
      expect(await admin.hLen(par)).toBe(3); // 29 entries name 3 parents, each stored once
      // Not JSON: no field names, no scheme and host, a tag for the parent (https://a.example/p/6, depth 2, attempt 1).
      expect(await admin.lRange(`${store.keyPrefix}q:a.example`, 0, -1)).toContainEqual(expect.stringMatching(/^2,0,1\|[0-9a-f]{12}\|\/p\/6$/));
      const leases: Lease[] = [];
      for (const key of ['a.example', 'b.example:8080']) {
        for (let l = await store.claim(key); isLease(l); l = await store.claim(key)) leases.push(l);
      }
      expect(leases.map((l) => l.entry).sort((x, y) => x.url.localeCompare(y.url))).toEqual([...made].sort((x, y) => x.url.localeCompare(y.url)));
      // Released with a new parent: the old one is forgotten once nothing names it.
      for (const l of leases) await store.release(l, { ...l.entry, parent: 'https://d.example/', attempt: l.entry.attempt + 1 }, now() + 60_000);
      expect(Object.values(await admin.hGetAll(par))).toEqual(['https://d.example/']);
      const back = await store.drain();
      expect(back).toHaveLength(30);
      expect(back.every((e) => e.parent === 'https://d.example/')).toBe(true);
      expect(await admin.hLen(par)).toBe(0);
      expect(await admin.hLen(`${store.keyPrefix}pref`)).toBe(0);
    } finally {
      await store.close();
      await admin.quit();
    }
  });

  it('keeps the lease keys as a hash table and a skip list from the first open, with no lease to show for it', async () => {
    const { createClient } = await import('redis');
    const admin = createClient({ url: url() });
    await admin.connect();
    const crawlId = `encoding-${randomUUID()}`;
    let store = new RedisStore({ url: url(), crawlId, worker: 'w1' });
    const [leases, lexp] = [`crawl:{${crawlId}}:leases`, `crawl:{${crawlId}}:lexp`];
    const encodings = async () => [await admin.sendCommand(['OBJECT', 'ENCODING', leases]), await admin.sendCommand(['OBJECT', 'ENCODING', lexp])];
    try {
      await store.open(meta);
      // A small hash or sorted set would be a listpack, scanned whole at every lease's read and write.
      expect(await encodings()).toEqual(['hashtable', 'skiplist']);
      for (const p of ['1', '2', '3']) await store.add(`http://a.example/${p}`, 'a', entry(`http://a.example/${p}`));
      const held = [(await store.claim('a')) as RedisLease, (await store.claim('a')) as RedisLease];
      expect((await store.status()).workers).toEqual([{ name: 'w1', leases: 2, expired: 0 }]);
      for (const lease of held) await store.complete(lease, '200');
      expect((await store.status()).workers).toEqual([]);
      await store.close();
      // A crawl an older version made has neither key that way: the next open makes them so.
      await admin.del([leases, lexp]);
      store = new RedisStore({ url: url(), crawlId, worker: 'w2' });
      await store.open(meta);
      expect(await encodings()).toEqual(['hashtable', 'skiplist']);
      const last = (await store.claim('a')) as RedisLease;
      expect(last.entry.url).toBe('http://a.example/3');
      expect((await store.status()).workers).toEqual([{ name: 'w2', leases: 1, expired: 0 }]);
      await store.complete(last, '200');
      expect(await store.finish()).toBe(true);
    } finally {
      await store.close();
      await admin.quit();
    }
  });

  it('fails at once with a RedisStoreError when Redis cannot be reached', async () => {
    const probe = await startRedisServer();
    const deadUrl = probe.url;
    await probe.stop(); // nothing listens there now
    const store = new RedisStore({ url: deadUrl, crawlId: 'unreachable', connectTimeoutMs: 1_000 });
    const t0 = Date.now();
    await expect(store.open(meta)).rejects.toBeInstanceOf(RedisStoreError);
    expect(Date.now() - t0).toBeLessThan(3_000);
    await store.close();
  });
});
