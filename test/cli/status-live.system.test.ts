/**
 * `crawl status` on a crawl that is running (issue 23): its rate measured
 * over the time actually observed (3 s into a 16 pages/s crawl it said
 * "0.97/s over the last minute"); with --redis, claims a live worker holds
 * named as live (they read "left by a stop or crash"), expired ones as left
 * by a stopped worker, and workers by their --worker name (they showed as
 * HOST:PID:hex).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';

let web: Web | undefined;
let dir = '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-status-live-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function status(args: string[]): Promise<{ text: string; json: Record<string, unknown> }> {
  const io = memoryIo(dir);
  expect(await main(['status', ...args], io), io.err()).toBe(0);
  const jio = memoryIo(dir);
  expect(await main(['status', ...args, '--json'], jio), jio.err()).toBe(0);
  return { text: io.out(), json: JSON.parse(jio.out()) as Record<string, unknown> };
}

/** Waits until the site's server has seen `n` requests. */
async function served(n: number): Promise<void> {
  for (let i = 0; i < 200 && web!.requests().length < n; i++) await sleep(50);
}

describe('crawl status --state while the crawl runs', () => {
  it('gives the rate over the seconds observed, not a whole minute', async () => {
    web = await startWeb({ sites: { 'fast.localhost': { generate: { pages: 400, linksPerPage: 2 } } } });
    const run = startCrawl(['--state', 'c.db', '--rate', '16/s', '-q', '-o', 'out.jsonl', web.url('fast.localhost', '/')], dir);
    try {
      await served(10);
      await sleep(2500);
      const { text, json } = await status(['--state', 'c.db']);
      // About 16/s; the old figure was done-in-the-last-minute / 60 (under 1/s here).
      expect(json.recentRate as number).toBeGreaterThan(3);
      expect(json.recentRate as number).toBeLessThan(20);
      expect(text).toMatch(/; \d+(\.\d+)?\/s over the last \d+s\n/);
    } finally {
      run.child.kill('SIGKILL');
      await run.done;
    }
  });
});

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'crawl status --redis while a worker runs', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("names workers by --worker and their claims as live; a killed worker's as expired", async () => {
    // Slow answers: the worker holds its claims while the status is read.
    web = await startWeb({ sites: { 'slow.localhost': { generate: { pages: 50, linksPerPage: 3 }, delayMs: 3000, robots: null } } });
    const crawlId = `live-${randomUUID()}`;
    const shared = ['--redis', redis!.url, '--crawl-id', crawlId];
    const run = startCrawl(
      [
        ...shared,
        '--worker',
        'alpha',
        '--lease',
        '2s',
        '--rate',
        'unlimited',
        '--host-concurrency',
        '3',
        '-q',
        '-o',
        'out.jsonl',
        web.url('slow.localhost', '/'),
      ],
      dir,
    );
    try {
      await served(3); // robots.txt, / … then wait for its links to be claimed
      await sleep(3500);
      const live = await status(shared);
      expect(live.text).toMatch(/running \(1 worker\(s\) holding requests: alpha \d+\)/);
      expect(live.text).not.toMatch(/left by a stop or crash/);
      expect(live.text).toMatch(/claimed \d+ \(all held by live workers\)/);
      expect((live.json.workers as Array<{ name: string }>).map((w) => w.name)).toEqual(['alpha']);

      run.child.kill('SIGKILL');
      await run.done;
      await sleep(2500); // past the 2 s lease: nobody renews or reaps them now
      const dead = await status(shared);
      expect(dead.text).toMatch(/claimed \d+ \(\d+ expired: left by a stopped worker; back in the queue when a worker runs\)/);
    } finally {
      run.child.kill('SIGKILL');
      await run.done;
    }
  });
});
