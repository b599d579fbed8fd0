/**
 * Redis restarted WITH persistence (`appendonly yes`, `appendfsync always`)
 * mid-crawl, after a dataset big enough that it answers LOADING for a while:
 * the two workers wait the restart out and go on where they were; the host's
 * gap holds across it, and a page is fetched twice only if its request was in
 * flight when Redis went away (at most one per worker here: one request at a
 * time per host, and a lease outlives the restart). Split from redis-lost
 * (the keys lost) so the two run in parallel.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { duplicates, minGap, type Web } from '../../fixtures/web.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { requireBuilt } from '../support/spawn-crawl.js';
import { PAGES, twoWorkers, workerOutputs } from '../support/redis-two-workers.js';

let redis: RedisServer | undefined;
let web: Web | undefined;
let dir = '';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'Redis restarted with persistence mid-crawl', () => {
  beforeAll(async () => {
    await requireBuilt();
  });
  afterEach(async () => {
    await web?.close();
    web = undefined;
    await redis?.stop();
    redis = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a restart WITH persistence (AOF, appendfsync always) mid-crawl: the workers go on where they were, politely, every page once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-aof-'));
    redis = await startRedisServer(5_000, { args: ['--appendonly', 'yes', '--appendfsync', 'always', '--enable-debug-command', 'yes'] });
    const two = await twoWorkers(redis.url, dir);
    web = two.web;
    const { workers, admin } = two;
    // A dataset that takes Redis a while to read back: for that while it answers LOADING to every command,
    // which is an outage to wait out, not a failure (a real instance has its weeks of data to load).
    await admin.sendCommand(['DEBUG', 'POPULATE', '1000000', 'filler', '64']);
    await admin.bgRewriteAof();
    while ((await admin.info('persistence')).includes('aof_rewrite_in_progress:1')) await sleep(20);
    admin.destroy();
    const atRestart = web.requests().length;
    await redis.restart();
    const runs = await Promise.all(workers.map((w) => w.done));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/is gone from Redis/);
    }
    const log = web.requests();
    expect(log.length).toBeGreaterThan(atRestart); // it went on after the restart
    // Every page; a repeat only for a request in flight at the restart (one per worker at most).
    const out = await workerOutputs(dir);
    const pages = new Set(out.filter((r) => r.type === 'page').map((r) => r.url));
    expect(pages.size).toBe(PAGES + 1);
    const repeats = duplicates(log);
    expect(repeats.reduce((n, d) => n + d.count - 1, 0)).toBeLessThanOrEqual(2);
    expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    // Politeness across the restart: 5/s is 200 ms between starts as the workers wrote them, every arrival among
    // them. (The server, in this process, read them up to 27 ms late beside the render tests: 173 ms once, while
    // the writes were 206-207 ms apart in 11 runs.)
    const written = await two.sent.written();
    expect(written.length).toBeGreaterThanOrEqual(log.length);
    expect(minGap(written.map((e) => e.at))).toBeGreaterThanOrEqual(200);
    expect(web.maxInFlight('a.localhost')).toBe(1);
  }, 90_000);
});
