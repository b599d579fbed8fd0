/**
 * RobotsCache with a records store: what a durable or shared CrawlStore sees
 * and gives back, so a resumed crawl or another worker reuses robots.txt.
 */
import { describe, expect, it } from 'vitest';
import { RobotsCache, type RobotsCacheOptions } from '../../src/robots/cache.js';
import type { RobotsResponse } from '../../src/robots/types.js';
import type { RobotsRecord } from '../../src/robots/types.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { FakeClock } from '../support/fake-clock.js';

const ORIGIN = 'http://a.example';

function setup(
  answers: Array<Partial<RobotsResponse> | Error>,
  records = new MemoryStore(),
  clock = new FakeClock(0),
  extra: Partial<RobotsCacheOptions> = {},
) {
  const fetched: string[] = [];
  const cache = new RobotsCache({
    clock,
    userAgent: 'crawl/1',
    maxBytes: 512 * 1024,
    cacheTtlMs: 60_000,
    unavailableRetries: 2,
    unavailableRetryDelayMs: 1_000,
    records,
    fetchOne: async (url) => {
      fetched.push(url);
      const next = answers.shift();
      if (next === undefined) throw new Error(`unexpected fetch of ${url}`);
      if (next instanceof Error) throw next;
      return { url, status: 200, location: null, body: '', truncated: false, ...next };
    },
    ...extra,
  });
  return { cache, records, clock, fetched };
}

describe('RobotsCache with a records store', () => {
  it('writes each outcome as plain data and a new cache on the same records fetches nothing', async () => {
    const first = setup([{ body: 'User-agent: *\nDisallow: /private\nCrawl-delay: 2\n' }]);
    const state = await first.cache.load(ORIGIN);
    expect(state.kind).toBe('rules');
    expect(first.records.getRobots(ORIGIN)).toEqual({
      kind: 'rules',
      source: `${ORIGIN}/robots.txt`,
      text: 'User-agent: *\nDisallow: /private\nCrawl-delay: 2\n',
      fetchedAt: 0,
      expiresAt: 60_000,
    });
    first.clock.advance(30_000);
    const second = setup([], first.records, first.clock);
    const again = await second.cache.load(ORIGIN);
    expect(second.fetched).toEqual([]);
    if (again.kind !== 'rules') throw new Error(again.kind);
    expect(again.isAllowed(`${ORIGIN}/private/x`)).toBe(false);
    expect(again.explain(`${ORIGIN}/private/x`)).toMatchObject({ rule: 'Disallow: /private', line: 2 });
    expect(again.crawlDelayMs).toBe(2_000);
    expect(again.expiresAt).toBe(60_000); // the record's own expiry, not a fresh TTL
  });

  it("keeps the origin's tdmrep.json with its robots.txt, so a resumed crawl or another worker reads the same copy without asking again", async () => {
    const tdmrep = JSON.stringify([{ location: '/r/*', 'tdm-reservation': 1 }]);
    const first = setup([{ status: 404 }, { body: tdmrep }], new MemoryStore(), new FakeClock(5), { tdmrep: () => true });
    const state = await first.cache.load(ORIGIN);
    expect(first.fetched).toEqual([`${ORIGIN}/robots.txt`, `${ORIGIN}/.well-known/tdmrep.json`]);
    expect(state).toMatchObject({
      kind: 'allow-all',
      tdmrep: { url: `${ORIGIN}/.well-known/tdmrep.json`, fetchedAt: 5, rules: [{ location: '/r/*', reservation: 1 }] },
    });
    const second = setup([], first.records, first.clock, { tdmrep: () => true });
    expect(await second.cache.load(ORIGIN)).toMatchObject({ tdmrep: { rules: [{ location: '/r/*' }] } });
    expect(second.fetched).toEqual([]);
    // Rules and a 404 for the file: read as no reservation, and kept as such.
    const third = setup([{ body: 'User-agent: *\nAllow: /\n' }, { status: 404 }], new MemoryStore(), new FakeClock(0), { tdmrep: () => true });
    expect(await third.cache.load(ORIGIN)).toMatchObject({ kind: 'rules', tdmrep: { rules: [] } });
    // A disallowed file is not asked for; without the option, never.
    const closed = setup([{ body: 'User-agent: *\nDisallow: /.well-known/\n' }], new MemoryStore(), new FakeClock(0), { tdmrep: () => true });
    expect(await closed.cache.load(ORIGIN)).toMatchObject({ tdmrep: { rules: [] } });
    expect(closed.fetched).toEqual([`${ORIGIN}/robots.txt`]);
    const off = setup([{ status: 404 }]);
    expect((await off.cache.load(ORIGIN)).kind).toBe('allow-all');
    expect(off.fetched).toEqual([`${ORIGIN}/robots.txt`]);
  });

  it('fetches again once the record has expired', async () => {
    const first = setup([{ status: 404 }]);
    expect((await first.cache.load(ORIGIN)).kind).toBe('allow-all');
    first.clock.advance(60_000);
    const second = setup([{ body: 'User-agent: *\nDisallow: /\n' }], first.records, first.clock);
    expect((await second.cache.load(ORIGIN)).kind).toBe('rules');
    expect(second.fetched).toEqual([`${ORIGIN}/robots.txt`]);
    expect(second.records.getRobots(ORIGIN)?.kind).toBe('rules');
  });

  it('keeps an unreachable robots.txt disallowed until its retry time, and counts earlier attempts', async () => {
    const first = setup([{ status: 503 }]);
    expect(await first.cache.load(ORIGIN)).toMatchObject({ kind: 'unavailable', retryAt: 1_000, attempts: 1 });
    const second = setup([{ status: 503 }, { status: 503 }], first.records, first.clock);
    expect(await second.cache.load(ORIGIN)).toMatchObject({ kind: 'unavailable', retryAt: 1_000, attempts: 1 });
    expect(second.fetched).toEqual([]);
    second.clock.advance(1_000);
    expect(await second.cache.load(ORIGIN)).toMatchObject({ kind: 'unavailable', retryAt: 1_000 + 2_000, attempts: 2 });
    second.clock.advance(2_000);
    // The third failure uses up unavailableRetries (2): given up, for this crawl and the next process.
    expect(await second.cache.load(ORIGIN)).toMatchObject({ kind: 'unavailable', retryAt: null, attempts: 3 });
    const third = setup([], first.records, first.clock);
    expect(await third.cache.load(ORIGIN)).toMatchObject({ kind: 'unavailable', retryAt: null, attempts: 3 });
    expect(third.fetched).toEqual([]);
  });

  it('shared: a worker that takes the lock just after another wrote its record and let the lock go reads the record, fetching nothing', async () => {
    const shared = new MemoryStore();
    let looked = false;
    const records = {
      getRobots: (origin: string) => {
        const found = shared.getRobots(origin);
        if (!looked) {
          looked = true;
          // Right after this worker's first look: another worker writes its record, and its lock goes with it.
          shared.putRobots(origin, { kind: 'allow-all', reason: 'robots.txt answered 404', fetchedAt: 0, expiresAt: 60_000 });
        }
        return found;
      },
      putRobots: (origin: string, record: RobotsRecord) => shared.putRobots(origin, record),
      lockRobots: () => Promise.resolve(true),
    };
    const { cache, fetched } = setup([], records as unknown as MemoryStore);
    expect((await cache.load(ORIGIN)).kind).toBe('allow-all');
    expect(fetched).toEqual([]);
  });

  it('reports a records store that fails to write, and still answers', async () => {
    const failing = new MemoryStore();
    failing.putRobots = (_origin: string, _record: RobotsRecord) => {
      throw new Error('disk full');
    };
    const errors: unknown[] = [];
    const { cache } = setup([{ status: 404 }], failing, new FakeClock(0), { onRecordError: (err) => errors.push(err) });
    expect((await cache.load(ORIGIN)).kind).toBe('allow-all');
    expect(errors.map(String)).toEqual(['Error: disk full']);
  });
});
