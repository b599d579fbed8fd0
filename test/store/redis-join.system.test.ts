/**
 * A worker started without seeds before the worker that gives them (issue
 * 23: both started at once, the seedless one exited 2 "does not exist yet"):
 * it waits for the crawl to appear, bounded by --wait-for-crawl, saying so.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { duplicates, startWeb, type Web } from '../../fixtures/web.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';

let redis: RedisServer | undefined;
let web: Web | undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'a worker without seeds joining a Redis crawl', () => {
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await web?.close();
    web = undefined;
  });

  it('waits for the crawl the other worker starts, then shares it', async () => {
    web = await startWeb({ sites: { 'j.localhost': { generate: { pages: 12, linksPerPage: 2 } } } });
    const shared = ['--redis', redis!.url, '--crawl-id', `join-${randomUUID()}`, '--rate', '20/s'];
    const joinerIo = memoryIo(process.cwd());
    const joiner = main([...shared, '--worker', 'late'], joinerIo);
    for (let t = 0; t < 100 && !joinerIo.err(); t++) await sleep(100);
    expect(joinerIo.err()).toMatch(/does not exist yet; waiting up to 30s for the worker that gives the seeds/);
    const seederIo = memoryIo(process.cwd());
    const [a, b] = await Promise.all([main([...shared, '--worker', 'first', web.url('j.localhost', '/')], seederIo), joiner]);
    expect(a, seederIo.err()).toBe(0);
    expect(b, joinerIo.err()).toBe(0);
    expect(joinerIo.err()).toMatch(/joining the crawl in Redis crawl/);
    expect(duplicates(web.requests())).toEqual([]);
    expect(web.count('j.localhost')).toBe(14); // robots.txt, /, 12 pages
  });

  it('gives up after --wait-for-crawl with exit 2 and one line', async () => {
    const io = memoryIo(process.cwd());
    const started = performance.now();
    expect(await main(['--redis', redis!.url, '--crawl-id', `none-${randomUUID()}`, '-q', '--wait-for-crawl', '1s'], io)).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(io.err()).toMatch(
      /^crawl: no seed URL given, and Redis crawl "none-[^"]+" did not appear within 1s \(the first worker gives the seeds: crawl --redis URL --crawl-id ID <seed-url\.\.\.>\)\n$/,
    );
  });

  it('--wait-for-crawl 0 does not wait', async () => {
    const io = memoryIo(process.cwd());
    expect(await main(['--redis', redis!.url, '--crawl-id', `now-${randomUUID()}`, '--wait-for-crawl', '0'], io)).toBe(2);
    expect(io.err()).toMatch(/does not exist yet/);
  });

  it('--wait-for-crawl goes with --redis', async () => {
    const io = memoryIo(process.cwd());
    expect(await main(['--wait-for-crawl', '5s', 'http://a.example/'], io)).toBe(2);
    expect(io.err()).toBe('crawl: --wait-for-crawl goes with --redis URL\n');
  });
});
