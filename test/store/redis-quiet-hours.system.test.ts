/**
 * Quiet hours in the Redis claim script (redis-scripts.ts CLAIM and SLOT,
 * step 7): the script, not the worker, refuses a start outside the window,
 * judged on Redis's clock, and answers the window's opening as "not
 * before"; inside the window it grants. The window is UTC minutes around
 * the real now, so nothing here waits for it.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCrawlHours } from '../../src/politeness/crawl-hours.js';
import type { LimiterPolicy } from '../../src/politeness/host-limiter.js';
import type { FrontierEntry } from '../../src/store/crawl-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { redisServerMissing, useRedisServer } from '../support/system-fixtures.js';

const HOST = 'a.test';
const MIN = 60_000;
const TOLERANCE_MS = 5;
const entry = (path: string): FrontierEntry => ({ url: `http://${HOST}${path}`, depth: 0, parent: null, hops: 0, attempt: 0 });
const pad = (n: number) => String(n).padStart(2, '0');
/** "HH:MM" of a UTC instant. */
const hhmm = (ms: number) => `${pad(new Date(ms).getUTCHours())}:${pad(new Date(ms).getUTCMinutes())}`;

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'quiet hours in the Redis claim', () => {
  const redis = useRedisServer();
  const stores: RedisStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  async function storeWithin(hours: string): Promise<RedisStore> {
    const policy: LimiterPolicy = { intervalMs: 0, windows: [], concurrency: 4, jitterMs: 0, hours: parseCrawlHours(hours, 'UTC') };
    const store = new RedisStore({ url: redis.url, crawlId: `quiet-${randomUUID()}`, policyFor: () => policy });
    stores.push(store);
    await store.open({ seeds: [], configFingerprint: 'f' });
    await store.add(entry('/1').url, HOST, entry('/1'));
    return store;
  }

  it('outside the window: no lease nor slot, not before the opening on Redis time', async () => {
    // A one-minute window starting two to three hours from now.
    const opening = Math.floor((Date.now() + 2 * 3_600_000) / MIN) * MIN + MIN;
    const store = await storeWithin(`${hhmm(opening)}-${hhmm(opening + MIN)}`);
    const claim = await store.claim(HOST);
    expect(claim).toHaveProperty('notBefore');
    expect(Math.abs(store.toRedis((claim as { notBefore: number }).notBefore) - opening)).toBeLessThan(TOLERANCE_MS);
    const slot = await store.reserve(HOST);
    expect(slot).toHaveProperty('notBefore');
    expect(store.queued()).toBe(1);
  });

  it('inside the window: the claim is granted', async () => {
    const opened = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
    const store = await storeWithin(`${hhmm(opened)}-${hhmm(opened + 2 * 3_600_000)}`);
    const claim = await store.claim(HOST);
    expect(claim).toHaveProperty('entry');
  });
});
