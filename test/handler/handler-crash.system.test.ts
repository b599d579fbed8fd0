/**
 * `crawl --handler` across crashes: each item exactly once across `kill -9`
 * and resume with `--state` (a real SQLite file), and with two Redis workers
 * one of which is killed; the label and userData of queued URLs kept in the
 * file and in Redis. Apart from handler-cli.system.test.ts so the two run
 * side by side.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { newCrawlId, redisServerMissing, useRedisServer, useTempDir } from '../support/system-fixtures.js';
import { jsonLines, killAtRandom, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-handler-crash-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

type Line = { type: string; url: string; label?: string | null; parent?: string | null; data?: Record<string, unknown> };

describe('crawl --handler --state, killed with kill -9 and resumed', () => {
  it('writes each item once, carries label and userData through the state file, and handles every page', async () => {
    const hosts = ['a.localhost', 'b.localhost'];
    const PAGES = 600;
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 4, generate: { pages: PAGES, linksPerPage: 3 } }])) });
    // Every page pushes two items; its links go on as `next` with the page's URL, which the next page's items repeat.
    await writeFile(
      join(tmp.path, 'chain.mjs'),
      `export async function handle(page, ctx) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        ctx.enqueue(page.links, { label: 'next', userData: { from: page.url } });
        ctx.push({ n: 1, from: page.userData?.from ?? null, label: page.label ?? null });
        ctx.push({ n: 2 });
        return { follow: false };
      }\n`,
    );
    const args = [
      '--handler',
      'chain.mjs',
      '--state',
      'crawl.db',
      '-o',
      'out.jsonl',
      '--max-depth',
      '1000',
      '--rate',
      'unlimited',
      '--host-concurrency',
      '8',
      '-q',
      ...hosts.map((h) => web!.url(h, '/')),
    ];
    const kills = await killAtRandom(args, tmp.path, web, { runs: 5, after: 40, maxDelayMs: 150, random: seededRandom(11) });
    expect(kills).toBeGreaterThanOrEqual(3);
    const last = await startCrawl(args, tmp.path).done;
    expect(last.code, last.stderr).toBe(0);

    const out = jsonLines<Line>(await readFile(join(tmp.path, 'out.jsonl'), 'utf8'));
    const pages = out.filter((r) => r.type === 'page');
    const expected = hosts.flatMap((h) => [web!.url(h, '/'), ...Array.from({ length: PAGES }, (_, i) => web!.url(h, `/p/${i}`))]);
    expect(new Set(pages.map((p) => p.url))).toEqual(new Set(expected));
    expect(pages.length).toBe(expected.length);
    const items = out.filter((r) => r.type === 'item').map((r) => `${r.url} ${String(r.data!.n)}`);
    const twice = items.filter((k, i) => items.indexOf(k) !== i);
    expect(twice).toEqual([]);
    expect(items.length).toBe(expected.length * 2);
    // What travelled with each queued URL, across the kills: the page it was enqueued from, and its label.
    const parentOf = new Map(pages.map((p) => [p.url, p.parent ?? null]));
    for (const item of out.filter((r) => r.type === 'item' && r.data!.n === 1)) {
      expect(item.data!.from, item.url).toBe(parentOf.get(item.url));
      expect(item.data!.label, item.url).toBe(parentOf.get(item.url) === null ? null : 'next');
    }
  }, 120_000);
});

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'crawl --handler with two Redis workers, one killed', () => {
  const redis = useRedisServer();

  it('handles every page, keeps label and userData in Redis, and writes an item as often as its page record', async () => {
    const hosts = ['a.localhost', 'b.localhost'];
    const PAGES = 300;
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 4, generate: { pages: PAGES, linksPerPage: 3 } }])) });
    await writeFile(
      join(tmp.path, 'chain.mjs'),
      `export function handle(page, ctx) {
        ctx.enqueue(page.links, { label: 'next', userData: { from: page.url } });
        ctx.push({ from: page.userData?.from ?? null, label: page.label ?? null });
        return { follow: false };
      }\n`,
    );
    const crawlId = newCrawlId('handler');
    const worker = (i: number) => [
      ...['--redis', redis.url, '--crawl-id', crawlId, '--lease', '2s', '-q', '--handler', 'chain.mjs'],
      ...['--rate', '200/s', '--host-concurrency', '4', '--max-depth', '1000', '--worker', `w${i}`, '-o', `w${i}.jsonl`],
      ...hosts.map((h) => web!.url(h, '/')),
    ];
    const killed = startCrawl(worker(1), tmp.path);
    const other = startCrawl(worker(2), tmp.path);
    const deadline = Date.now() + 20_000;
    while (web.requests().length < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    killed.child.kill('SIGKILL');
    await killed.done;
    const run = await other.done;
    expect(run.code, run.stderr).toBe(0);

    // The killed worker's file is a .partial that may end in a torn line: what it wrote before that counts.
    const lines = (await Promise.all(['w1.jsonl.partial', 'w2.jsonl'].map((f) => readFile(join(tmp.path, f), 'utf8').catch(() => ''))))
      .flatMap((text) => text.split('\n'))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Line];
        } catch {
          return [];
        }
      });
    const pages = lines.filter((l) => l.type === 'page');
    const expected = hosts.flatMap((h) => [web!.url(h, '/'), ...Array.from({ length: PAGES }, (_, i) => web!.url(h, `/p/${i}`))]);
    expect(new Set(pages.map((p) => p.url))).toEqual(new Set(expected));
    const count = (list: Line[]) => list.reduce((m, l) => m.set(l.url, (m.get(l.url) ?? 0) + 1), new Map<string, number>());
    const pageCounts = count(pages);
    const itemCounts = count(lines.filter((l) => l.type === 'item'));
    // An item goes out with its page's record, never without it: a page the dead worker had in flight is handled
    // again by the other, as its record is written again (docs/redis.md: duplicates are a dead worker's in-flight pages).
    for (const url of expected) expect(itemCounts.get(url), url).toBe(pageCounts.get(url));
    const repeated = [...pageCounts.values()].filter((n) => n > 1).length;
    expect(repeated).toBeLessThanOrEqual(8 * 2);
    const parentOf = new Map(pages.map((p) => [p.url, p.parent ?? null]));
    for (const item of lines.filter((l) => l.type === 'item')) {
      expect(item.data!.from, item.url).toBe(parentOf.get(item.url));
      expect(item.data!.label, item.url).toBe(parentOf.get(item.url) === null ? null : 'next');
    }
  }, 120_000);
});
