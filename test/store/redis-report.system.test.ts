/**
 * `crawl report --redis URL --crawl-id ID`: every worker of a shared crawl
 * appends its records to the crawl's record log in Redis (RedisStore
 * `recordLog`), and the report is built from all of them — real worker
 * processes, a real redis-server, the real binary.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let redis: RedisServer | undefined;
let web: Web | undefined;
let dir = '';

const run = (args: string[]) => startCrawl(args, dir).done;

interface Rec {
  type: string;
  url: string;
  status?: number | null;
  worker?: string;
}
const records = (text: string): Rec[] => jsonLines<Rec>(text);

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'crawl report --redis: the record log of a shared crawl', () => {
  beforeAll(async () => {
    await requireBuilt();
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-redis-report-'));
  });
  afterEach(async () => {
    await web?.close();
    web = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("reports on a 2-worker crawl with both workers' pages", async () => {
    const hosts = ['a.localhost', 'b.localhost'];
    // The pages after the first few wait until the second worker has opened its output (it does so
    // only on joining a crawl that is not finished): it surely shares a running crawl, however late a
    // loaded machine starts it (one that came after the end found the crawl done and wrote nothing).
    let release = () => {};
    const joined = new Promise<void>((r) => (release = r));
    let served = 0;
    const handler = async (_req: unknown, _res: unknown, ctx: { path: string }): Promise<false> => {
      if (ctx.path.startsWith('/p/') && ++served > 4) await joined;
      return false;
    };
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { handler, generate: { pages: 15, linksPerPage: 3 } }])) });
    const crawlId = `report-${randomUUID()}`;
    const args = (i: number) => [
      '--redis',
      redis!.url,
      '--crawl-id',
      crawlId,
      '-q',
      '--rate',
      '20/s',
      '--worker',
      `w${i}`,
      '-o',
      `w${i}.jsonl`,
      ...hosts.map((h) => web!.url(h, '/')),
    ];
    const first = run(args(0));
    while (web.requests().filter((r) => r.path !== '/robots.txt').length === 0) await new Promise((r) => setTimeout(r, 20));
    const second = run(args(1));
    for (const deadline = Date.now() + 30_000; !existsSync(join(dir, 'w1.jsonl.partial')) && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    release();
    const done = await Promise.all([first, second]);
    for (const w of done) expect(w.code, w.stderr).toBe(0);
    const written = (await Promise.all([0, 1].map(async (i) => records(await readFile(join(dir, `w${i}.jsonl`), 'utf8'))))).flat();
    const pagesBy = (w: string) => written.filter((r) => r.type === 'page' && r.worker === w).map((r) => r.url);
    // Both workers did part of the crawl.
    expect(pagesBy('w0').length).toBeGreaterThan(0);
    expect(pagesBy('w1').length).toBeGreaterThan(0);

    // What Redis kept: every page of both workers, each once, and robots.txt once per host.
    const store = new RedisStore({ url: redis!.url, crawlId });
    const kept: Rec[] = [];
    try {
      for await (const r of store.recordLog().read()) kept.push(r as Rec);
    } finally {
      await store.close();
    }
    expect(
      kept
        .filter((r) => r.type === 'page')
        .map((r) => r.url)
        .sort(),
    ).toEqual([...pagesBy('w0'), ...pagesBy('w1')].sort());
    expect(
      kept
        .filter((r) => r.type === 'robots')
        .map((r) => r.url)
        .sort(),
    ).toEqual(hosts.map((h) => web!.url(h, '/robots.txt')).sort());

    // The report is built from all of them.
    const report = await run(['report', '--redis', redis!.url, '--crawl-id', crawlId, '-o', 'shared.html']);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toBe(`crawl: wrote shared.html (${report.stderr.match(/\(([^)]+)\)/)![1]}) from ${kept.length} records\n`);
    const html = await readFile(join(dir, 'shared.html'), 'utf8');
    for (const h of hosts) expect(html).toContain(h);
  }, 60_000);

  it('a crawl id Redis does not hold, or half of the flags: one line, exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['report', '--redis', redis!.url, '--crawl-id', `none-${randomUUID()}`], /^crawl: Redis holds no crawl named "none-/],
      [['report', '--redis', redis!.url], /^crawl: --redis needs --crawl-id NAME/],
      [['report', '--crawl-id', 'x'], /^crawl: --crawl-id goes with --redis URL/],
      [
        ['report', '--redis', redis!.url, '--crawl-id', 'x', 'pages.jsonl'],
        /^crawl: give a records file, --state FILE or --redis URL --crawl-id NAME: one of them/,
      ],
      [['report', '--redis', 'redis://127.0.0.1:1', '--crawl-id', 'x'], /^crawl: cannot use Redis at redis:\/\/127\.0\.0\.1:1/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  }, 30_000);
});
