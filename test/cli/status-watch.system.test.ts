/**
 * `crawl status --watch [interval]` (issue 21) against a real running crawl:
 * prints again every interval while the crawl goes on, and stops by itself
 * when the crawl ends (exit 0) or on Ctrl-C (exit 130); --state and --redis.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { redisServerMissing, startRedisServer } from '../support/redis-server.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
let dir = '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-watch-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function served(n: number): Promise<void> {
  for (let i = 0; i < 200 && web!.requests().length < n; i++) await sleep(50);
}

describe('crawl status --watch', () => {
  it('--state: prints while the crawl runs and ends with it', async () => {
    web = await startWeb({ sites: { 'w.localhost': { generate: { pages: 25, linksPerPage: 2 } } } });
    const crawl = startCrawl(['--state', 'c.db', '--rate', '5/s', '-q', '-o', 'out.jsonl', web.url('w.localhost', '/')], dir);
    await served(3);
    const watch = await startCrawl(['status', '--state', 'c.db', '--watch', '0.3', '--json'], dir).done;
    const crawled = await crawl.done;
    expect(crawled.code, crawled.stderr).toBe(0);
    expect(watch.code, watch.stderr).toBe(0);
    const prints = jsonLines<{ doneTotal: number; finished: boolean; heldBy: number | null }>(watch.stdout);
    expect(prints.length).toBeGreaterThan(3);
    for (let i = 1; i < prints.length; i++) expect(prints[i].doneTotal).toBeGreaterThanOrEqual(prints[i - 1].doneTotal);
    expect(prints[0].heldBy).not.toBeNull();
    expect(prints.at(-1)!.finished).toBe(true);
    expect(prints.at(-1)!.doneTotal).toBe(26); // 25 pages and the root
  }, 60_000);

  it('text prints are stamped off a terminal; Ctrl-C ends the watch with 130', async () => {
    web = await startWeb({ sites: { 'w.localhost': { generate: { pages: 200, linksPerPage: 2 } } } });
    const crawl = startCrawl(['--state', 'c.db', '--rate', '5/s', '-q', '-o', 'out.jsonl', web.url('w.localhost', '/')], dir);
    try {
      await served(3);
      const watch = startCrawl(['status', '--state', 'c.db', '--watch', '200ms'], dir);
      let out = '';
      watch.child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      // Ctrl-C once it has printed three times (it listens for the signal by then).
      for (let i = 0; i < 200 && (out.match(/^--- /gm) ?? []).length < 3; i++) await sleep(50);
      watch.child.kill('SIGINT');
      const done = await watch.done;
      expect(done.code, done.stderr).toBe(130);
      const stamps = done.stdout.match(/^--- \d{4}-\d\d-\d\dT[\d:.]+Z$/gm) ?? [];
      expect(stamps.length).toBeGreaterThanOrEqual(3);
      expect(done.stdout.match(/^c\.db: running \(process \d+\)$/gm)).toHaveLength(stamps.length);
    } finally {
      crawl.child.kill('SIGKILL');
      await crawl.done;
    }
  }, 60_000);

  it('a bad interval is one line and exit 2', async () => {
    const done = await startCrawl(['status', '--state', 'c.db', '--watch', '0'], dir).done;
    expect(done.code).toBe(2);
    expect(done.stderr).toBe('crawl: --watch expects an interval from 100ms to 1h (a bare number is seconds), got "0"\n');
  });
});

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'crawl status --watch --redis', () => {
  it('prints the shared crawl while a worker runs and ends when it is finished', async () => {
    const redis = await startRedisServer();
    try {
      web = await startWeb({ sites: { 'w.localhost': { generate: { pages: 20, linksPerPage: 2 } } } });
      const shared = ['--redis', redis.url, '--crawl-id', `watch-${randomUUID()}`];
      const crawl = startCrawl([...shared, '--rate', '4/s', '-q', '-o', 'out.jsonl', web.url('w.localhost', '/')], dir);
      await served(3);
      const watch = await startCrawl(['status', ...shared, '--watch', '0.3', '--json'], dir).done;
      expect((await crawl.done).code).toBe(0);
      expect(watch.code, watch.stderr).toBe(0);
      const prints = jsonLines<{ finished: boolean }>(watch.stdout);
      expect(prints.length).toBeGreaterThan(2);
      expect(prints.slice(0, -1).every((p) => !p.finished)).toBe(true);
      expect(prints.at(-1)!.finished).toBe(true);
    } finally {
      await redis.stop();
    }
  }, 60_000);
});
