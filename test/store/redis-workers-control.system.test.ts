/**
 * `--redis URL --crawl-id ID`, what the workers of one shared crawl agree
 * on besides politeness: --max-pages counted across processes, `crawl
 * status` and a finished crawl, bad flags and an unreachable Redis (one
 * line, exit 2), and a Redis that stops answering mid-crawl. Split from
 * redis-workers so the two run in parallel.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { newCrawlId, redisServerMissing, useRedisServer, useTempDir } from '../support/system-fixtures.js';
import { jsonLines, outputOf, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;

interface Rec {
  type: string;
  url: string;
  status: number | null;
  worker?: string;
}
const records = (text: string): Rec[] => jsonLines<Rec>(text);
const pagesOf = (h: string, n: number) => [web!.url(h, '/'), ...Array.from({ length: n }, (_, i) => web!.url(h, `/p/${i}`))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(redisServerMissing !== undefined)(
  redisServerMissing ?? 'several crawl processes sharing one crawl through Redis: counting, status and failures',
  () => {
    beforeAll(requireBuilt);
    const redis = useRedisServer();
    const tmp = useTempDir('crawl-workers-ctl-');
    const start = (args: string[]) => startCrawl(args, tmp.path);
    afterEach(async () => {
      await web?.close();
      web = undefined;
    });

    const shared = (crawlId: string) => ['--redis', redis.url, '--crawl-id', crawlId, '-q'];

    // Each worker saw the others' starts only with its next Redis answer, so workers at 9 of 10 each started a
    // tenth page (11 pages, seen in CI). Three rounds on four hosts at 100/s make that race likely every run.
    it('--max-pages counts across the workers: 3 workers, exactly the cap in all, every round', async () => {
      const hosts = ['a.localhost', 'b.localhost', 'c.localhost', 'd.localhost'];
      web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { generate: { pages: 40, linksPerPage: 3 } }])) });
      const seeds = hosts.map((h) => web!.url(h, '/'));
      let before = 0;
      for (const [round, cap] of [10, 7, 13].entries()) {
        const crawlId = newCrawlId(`cap${round}`);
        const args = (i: number) => [
          ...shared(crawlId),
          '--rate',
          '100/s',
          '--max-pages',
          String(cap),
          '--worker',
          `w${i}`,
          '-o',
          `r${round}w${i}.jsonl`,
          ...seeds,
        ];
        const runs = await Promise.all([0, 1, 2].map((i) => start(args(i)).done));
        for (const r of runs) expect(r.code, r.stderr).toBe(0);
        const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(tmp.path, `r${round}w${i}.jsonl`)))))).flat();
        expect(
          out.filter((r) => r.type === 'page'),
          `round ${round}`,
        ).toHaveLength(cap);
        const pages = web.requests().filter((e) => e.path !== '/robots.txt');
        expect(pages.length - before, `round ${round}`).toBe(cap);
        before = pages.length;
      }
    }, 60_000);

    it('crawl status --redis shows the shared crawl; a finished crawl is not crawled again', async () => {
      web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 5, linksPerPage: 2 } } } });
      const crawlId = newCrawlId('status');
      const first = await start([...shared(crawlId), '--rate', '50/s', '-o', 'out.jsonl', web.url('a.localhost', '/')]).done;
      expect(first.code, first.stderr).toBe(0);
      const status = await start(['status', '--redis', redis.url, '--crawl-id', crawlId, '--json']).done;
      expect(status.code, status.stderr).toBe(0);
      const s = JSON.parse(status.stdout) as { finished: boolean; doneTotal: number; queued: number; leased: number; done: Record<string, number> };
      expect(s).toMatchObject({ finished: true, doneTotal: 6, queued: 0, leased: 0, done: { '200': 6 } });
      const text = await start(['status', '--redis', redis.url, '--crawl-id', crawlId]).done;
      expect(text.stdout).toMatch(/^Redis crawl "status-.*": finished/);
      // Joining a finished crawl: nothing to do, said once, exit 0, no request made.
      const before = web.requests().length;
      const again = await start([...shared(crawlId).filter((a) => a !== '-q'), web.url('a.localhost', '/')]).done;
      expect(again.code).toBe(0);
      expect(again.stderr).toMatch(/already finished/);
      expect(web.requests()).toHaveLength(before);
    }, 30_000);

    it('bad Redis flags and an unreachable or silent Redis: one line naming the problem, exit 2', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['--redis', 'redis://127.0.0.1:1', '--crawl-id', 'x', 'http://a.localhost/'], /^crawl: cannot use Redis at redis:\/\/127\.0\.0\.1:1.*\n$/],
        [['--redis', 'redis://127.0.0.1:1', 'http://a.localhost/'], /^crawl: --redis needs --crawl-id NAME/],
        [['--crawl-id', 'x', 'http://a.localhost/'], /^crawl: --crawl-id goes with --redis URL/],
        [['--redis', 'localhost:6379', '--crawl-id', 'x', 'http://a.localhost/'], /^crawl: --redis expects a URL like redis:\/\/host:6379\/0/],
        [['--redis', redis.url, '--crawl-id', 'bad id', 'http://a.localhost/'], /^crawl: --crawl-id expects a name/],
        [['--redis', redis.url, '--crawl-id', 'x', '--state', 's.db', 'http://a.localhost/'], /^crawl: --state and --redis/],
        [
          ['--redis', redis.url, '--crawl-id', newCrawlId('none'), '--wait-for-crawl', '0'],
          /^crawl: no seed URL given, and Redis crawl ".*" does not exist yet/,
        ],
        [['status', '--redis', redis.url, '--crawl-id', newCrawlId('none')], /^crawl: Redis holds no crawl named/],
        [['status', '--redis', redis.url, '--crawl-id', 'bad id'], /^crawl: --crawl-id expects a name/],
        [['report', '--redis', 'localhost:6379', '--crawl-id', 'x'], /^crawl: --redis expects a URL/],
      ];
      // All at once: each is refused before it crawls.
      const results = await Promise.all(cases.map(([args]) => start(args).done));
      cases.forEach(([args, message], i) => {
        const r = results[i];
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
        expect(r.stdout).toBe('');
      });
    }, 30_000);

    it('Redis stopping mid-crawl: the workers say so, wait, and finish the crawl when it answers again', async () => {
      web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 30, linksPerPage: 2 } } } });
      const crawlId = newCrawlId('outage');
      const args = (i: number) => [
        '--redis',
        redis.url,
        '--crawl-id',
        crawlId,
        '--rate',
        '10/s',
        '--worker',
        `w${i}`,
        '-o',
        `w${i}.jsonl`,
        web!.url('a.localhost', '/'),
      ];
      const workers = [0, 1].map((i) => start(args(i)));
      // Paused mid-crawl: once both workers have joined (each has held a lease) and pages are being fetched.
      // (Waiting for requests alone let a loaded machine pause Redis before the second worker had connected.)
      const { createClient } = await import('redis');
      const admin = createClient({ url: redis.url });
      await admin.connect();
      const owners = new Set<string>();
      while (owners.size < 2 || web.requests().length < 8) {
        const leases = await admin.hGetAll(`crawl:{${crawlId}}:leases`);
        for (const [field, owner] of Object.entries(leases)) if (field.endsWith(':o')) owners.add(owner);
        await sleep(10);
      }
      await admin.quit();
      redis.server.pause();
      await sleep(6_500);
      redis.server.resume();
      const runs = await Promise.all(workers.map((w) => w.done));
      for (const r of runs) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ stopped answering/);
        expect(r.stderr).toMatch(/answers again after/);
        expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
      }
      const out = (await Promise.all([0, 1].map(async (i) => records(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
      expect(new Set(out.filter((r) => r.type === 'page').map((r) => r.url))).toEqual(new Set(pagesOf('a.localhost', 30)));
    }, 60_000);
  },
);
