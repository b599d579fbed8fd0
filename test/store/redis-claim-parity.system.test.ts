/**
 * The Redis claim script re-implements HostLimiter.readyAt in Lua, on the
 * shared state and Redis's clock (redis-scripts.ts CLAIM maps each step to
 * the TypeScript). This runs both on the same cases and compares their
 * answers: the same host state handed to a HostLimiter (restore) and to a
 * real redis-server (saveHost, and the last start written where claims and
 * STARTED keep it, since a save never moves it; or real claims for window
 * logs), then
 * `readyAt(now)` against the claim's "not before". A formula that drifts on
 * one side (a margin, the rate factor, Crawl-delay, the server's pace, a
 * pause, a window) fails here instead of in a politeness test's timing.
 *
 * The two clocks differ by the offset the store measured (under a
 * millisecond on one machine: 0.05–0.12 ms measured), hence two
 * milliseconds of tolerance; every difference the cases pin is 3 ms (a
 * margin) to hundreds of milliseconds.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HostLimiter, type LimiterPolicy, type LimiterSaved } from '../../src/politeness/host-limiter.js';
import type { FrontierEntry } from '../../src/store/crawl-store.js';
import { RedisStore, type RedisLease } from '../../src/store/redis-store.js';
import { redisServerMissing, useRedisServer } from '../support/system-fixtures.js';

const HOST = 'a.test';
const TOLERANCE_MS = 2;

const entry = (path: string): FrontierEntry => ({ url: `http://${HOST}${path}`, depth: 0, parent: null, hops: 0, attempt: 0 });

function saved(over: Partial<LimiterSaved>): LimiterSaved {
  return {
    lastStart: null,
    pausedUntil: null,
    crawlDelayMs: 0,
    serverGapMs: 0,
    serverGapUntil: null,
    rateFactor: 1,
    nextJitterMs: 0,
    minRoundTripMs: null,
    windows: [],
    ...over,
  };
}

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'the Redis claim and HostLimiter.readyAt agree', () => {
  const redis = useRedisServer();
  const stores: RedisStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  async function storeFor(policy: LimiterPolicy): Promise<RedisStore> {
    const store = new RedisStore({ url: redis.url, crawlId: `parity-${randomUUID()}`, policyFor: () => policy });
    stores.push(store);
    await store.open({ seeds: [], configFingerprint: 'f' });
    for (const path of ['/1', '/2', '/3', '/4']) await store.add(entry(path).url, HOST, entry(path));
    return store;
  }

  /** The host's shared state as `state` says: saveHost, and its last start where the claims keep it. */
  // Connected ahead: a case's instants are a few ms from now.
  let admin: ReturnType<typeof createClient> | undefined;
  beforeAll(async () => {
    admin = createClient({ url: redis.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.quit();
  });
  async function share(store: RedisStore, state: LimiterSaved): Promise<void> {
    await store.saveHost(HOST, { limiter: state, feedback: null, givenUp: false });
    if (state.lastStart !== null) await admin!.hSet(`${store.keyPrefix}h:${HOST}`, 'last', String(store.toRedis(state.lastStart)));
  }

  // Each case: the policy and the state, as offsets from now (ms) where they are instants.
  const cases: Array<{ name: string; policy: Partial<LimiterPolicy>; state: (now: number) => Partial<LimiterSaved> }> = [
    { name: 'the gap with its margin after the last start', policy: { intervalMs: 500 }, state: (now) => ({ lastStart: now - 100 }) },
    { name: 'a short gap (20 ms) with its margin', policy: { intervalMs: 20 }, state: (now) => ({ lastStart: now - 5 }) },
    { name: 'the gap stretched by a lowered rate factor', policy: { intervalMs: 200 }, state: (now) => ({ lastStart: now - 50, rateFactor: 0.25 }) },
    { name: 'Crawl-delay as a floor on the gap', policy: { intervalMs: 100 }, state: (now) => ({ lastStart: now - 10, crawlDelayMs: 700 }) },
    {
      name: "the server's RateLimit pace while it lasts",
      policy: { intervalMs: 100 },
      state: (now) => ({ lastStart: now - 10, serverGapMs: 600, serverGapUntil: now + 60_000 }),
    },
    {
      name: "the server's pace once it is over: the configured gap again",
      policy: { intervalMs: 300 },
      state: (now) => ({ lastStart: now - 10, serverGapMs: 900, serverGapUntil: now - 1 }),
    },
    { name: 'a Retry-After pause later than the gap', policy: { intervalMs: 100 }, state: (now) => ({ lastStart: now - 10, pausedUntil: now + 800 }) },
    { name: 'a pause earlier than the gap', policy: { intervalMs: 900 }, state: (now) => ({ lastStart: now - 10, pausedUntil: now + 200 }) },
    { name: 'a pause with no rate at all', policy: { intervalMs: 0 }, state: (now) => ({ pausedUntil: now + 400 }) },
  ];

  it.each(cases)('$name', async ({ policy: over, state }) => {
    const policy: LimiterPolicy = { intervalMs: 0, windows: [], concurrency: Infinity, jitterMs: 0, ...over };
    // A case whose wait is short (18 ms for the 20 ms gap) can be over before its claim reaches Redis on a
    // loaded machine: a lease handed out once the wait has passed is right, and the case runs again.
    for (let attempt = 1; ; attempt++) {
      const store = await storeFor(policy);
      const now = performance.timeOrigin + performance.now();
      const limiterState = saved(state(now));
      const limiter = new HostLimiter(policy);
      limiter.restore(limiterState);
      await share(store, limiterState);
      const expected = limiter.readyAt(now);
      expect(expected).toBeGreaterThan(now + 10); // every case is one that must wait
      const answer = await store.claim(HOST);
      const refused = answer !== undefined && 'notBefore' in answer;
      if (!refused && attempt < 3 && performance.timeOrigin + performance.now() >= expected - TOLERANCE_MS) continue;
      expect(refused, 'the claim should have been refused').toBe(true);
      expect(Math.abs((answer as { notBefore: number }).notBefore - expected)).toBeLessThanOrEqual(TOLERANCE_MS);
      return;
    }
  });

  it('hands out a lease exactly when readyAt has come: a gap already over', async () => {
    const policy: LimiterPolicy = { intervalMs: 100, windows: [], concurrency: Infinity, jitterMs: 0 };
    const store = await storeFor(policy);
    const now = performance.timeOrigin + performance.now();
    const state = saved({ lastStart: now - 500, pausedUntil: now - 1 });
    const limiter = new HostLimiter(policy);
    limiter.restore(state);
    await share(store, state);
    expect(limiter.readyAt(now)).toBe(now);
    const answer = await store.claim(HOST);
    expect(answer && 'entry' in answer).toBe(true);
  });

  it('windows: the oldest of the last count starts, plus the window and its margin', async () => {
    const policy: LimiterPolicy = { intervalMs: 0, windows: [{ count: 3, windowMs: 1_500, label: '3/1.5s' }], concurrency: Infinity, jitterMs: 0 };
    const store = await storeFor(policy);
    const limiter = new HostLimiter(policy);
    // Three real claims, written at once, fill the window's log; the limiter records the same starts (Redis's
    // times, on this clock). A start enters the log at its write: a claim never written would not. Redis
    // takes the write as its upper bound, later than it was by at most the claim's round trip.
    let roundTrip = 0;
    for (let i = 0; i < 3; i++) {
      const sent = performance.timeOrigin + performance.now();
      const lease = (await store.claim(HOST)) as RedisLease;
      roundTrip = Math.max(roundTrip, performance.timeOrigin + performance.now() - sent);
      expect('entry' in lease).toBe(true);
      const at = store.toLocal(lease.reservedAt);
      const ticket = limiter.acquire(at);
      limiter.markDispatched(ticket, at);
      limiter.release(ticket);
      await store.shared.dispatched(lease, at);
      await store.complete(lease);
      await new Promise((r) => setTimeout(r, 20));
    }
    const now = performance.timeOrigin + performance.now();
    const expected = limiter.readyAt(now);
    expect(expected).toBeGreaterThan(now + 1_000);
    const answer = await store.claim(HOST);
    expect(answer !== undefined && 'notBefore' in answer, 'the fourth start inside the window should have been refused').toBe(true);
    const late = (answer as { notBefore: number }).notBefore - expected;
    expect(late).toBeGreaterThanOrEqual(-TOLERANCE_MS);
    expect(late).toBeLessThanOrEqual(TOLERANCE_MS + roundTrip);
  });

  it('concurrency: both refuse a host at its limit (the claim asks again after busyMs: no release by another worker wakes it)', async () => {
    const policy: LimiterPolicy = { intervalMs: 0, windows: [], concurrency: 1, jitterMs: 0 };
    const store = await storeFor(policy);
    const limiter = new HostLimiter(policy);
    const first = (await store.claim(HOST)) as RedisLease;
    expect('entry' in first).toBe(true);
    const now = performance.timeOrigin + performance.now();
    limiter.acquire(now);
    expect(limiter.readyAt(now)).toBe(Infinity);
    const second = await store.claim(HOST);
    expect(second !== undefined && 'notBefore' in second).toBe(true);
    expect((second as { notBefore: number }).notBefore).toBeGreaterThan(now);
  });
});
