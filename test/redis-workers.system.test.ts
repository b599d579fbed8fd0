/**
 * `--redis URL --crawl-id ID`: several real worker processes (the real
 * binary) crawl one crawl through a real redis-server, and the servers' own
 * request logs show ONE polite visitor: each host's gap and concurrency held
 * across the processes, no page fetched twice, every page fetched, a
 * Retry-After seen by one worker honoured by all, a worker killed with -9
 * costing only its in-flight requests.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { duplicates, minGap, startWeb, type Web } from '../fixtures/web.js';
import { redisServerMissing, startRedisServer, type RedisServer } from './support/redis-server.js';
import { jsonLines, outputOf, requireBuilt, startCrawl } from './support/spawn-crawl.js';


let redis: RedisServer | undefined;
let web: Web | undefined;
let dir = '';

const start = (args: string[]) => startCrawl(args, dir);

interface Rec {
  type: string;
  url: string;
  status: number | null;
  worker?: string;
}
const records = (text: string): Rec[] => jsonLines<Rec>(text);
const pagesOf = (h: string, n: number) => [web!.url(h, '/'), ...Array.from({ length: n }, (_, i) => web!.url(h, `/p/${i}`))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'several crawl processes sharing one crawl through Redis', () => {
  beforeAll(async () => {
    await requireBuilt();
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-workers-'));
  });
  afterEach(async () => {
    await web?.close();
    web = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const shared = (crawlId: string) => ['--redis', redis!.url, '--crawl-id', crawlId, '-q'];

  it('3 workers: every page fetched exactly once, each host\'s gap and concurrency held across the processes, all end together', async () => {
    const hosts = ['a.localhost', 'b.localhost', 'c.localhost', 'd.localhost'];
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { generate: { pages: 24, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = `three-${randomUUID()}`;
    // 10/s per host (100 ms apart), one at a time: three processes must look like one.
    const args = (i: number) => [...shared(crawlId), '--rate', '10/s', '--host-concurrency', '1', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    const pages = out.filter((r) => r.type === 'page');
    const expected = hosts.flatMap((h) => pagesOf(h, 24)).sort();
    expect(pages.map((r) => r.url).sort()).toEqual(expected); // every page, each once
    expect(pages.every((r) => r.status === 200)).toBe(true);
    // The work was shared, and every record names its worker.
    const byWorker = new Map<string, number>();
    for (const r of pages) byWorker.set(r.worker!, (byWorker.get(r.worker!) ?? 0) + 1);
    expect([...byWorker.keys()].sort()).toEqual(['w0', 'w1', 'w2']);

    // The servers' view: one polite visitor.
    expect(duplicates(web.requests())).toEqual([]);
    for (const h of hosts) {
      const log = web.requests(h);
      expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1); // fetched once per crawl
      expect(web.maxInFlight(h)).toBe(1);
      // When the workers wrote their requests (records' startedAt; one machine, one clock): 100 ms + the margin.
      expect(minGap(pages.filter((r) => (r as Rec & { host: string }).host.startsWith(h)).map((r) => Date.parse((r as Rec & { startedAt: string }).startedAt)))).toBeGreaterThanOrEqual(100);
      // As the server saw them: the same, give or take its event loop's jitter on this shared machine.
      expect(minGap(log.map((e) => e.at))).toBeGreaterThanOrEqual(80);
    }
  }, 60_000);

  it('3 workers, 2 requests at once per host: the gap still holds between every two starts, whichever worker made them', async () => {
    // Slow answers keep two requests in flight; a start reserved by one worker and written by it later
    // (connecting, robots.txt loading) must still hold the others back until then.
    const hosts = ['a.localhost', 'b.localhost'];
    const robots = { status: 200, body: 'User-agent: *\nAllow: /\n', delayMs: 400 };
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 120, robots, generate: { pages: 24, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = `pair-${randomUUID()}`;
    const args = (i: number) => [...shared(crawlId), '--rate', '10/s', '--host-concurrency', '2', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(duplicates(web.requests())).toEqual([]);
    const out = (await Promise.all([0, 1, 2].map(async (i) => jsonLines<Rec & { host: string; startedAt?: string }>(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    for (const h of hosts) {
      expect(web.maxInFlight(h)).toBeLessThanOrEqual(2);
      // When each worker wrote its requests (records' startedAt; one machine, one clock): the politeness itself.
      const written = out.filter((r) => r.type === 'page' && r.host.startsWith(h)).map((r) => Date.parse(r.startedAt!));
      expect(minGap(written)).toBeGreaterThanOrEqual(100);
      // As the server saw them: the same, give or take its event loop's jitter on this shared machine.
      expect(minGap(web.requests(h).map((e) => e.at))).toBeGreaterThanOrEqual(80);
    }
  }, 60_000);

  it('a worker killed with -9 mid-crawl: the others fetch everything, repeating at most its in-flight requests', async () => {
    const hosts = ['a.localhost', 'b.localhost', 'c.localhost'];
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 150, generate: { pages: 20, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = `kill-${randomUUID()}`;
    const args = (i: number) => [...shared(crawlId), '--lease', '2s', '--rate', '20/s', '--host-concurrency', '2', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const victim = start(args(0));
    const others = [1, 2].map((i) => start(args(i)));
    await sleep(900);
    victim.child.kill('SIGKILL');
    expect((await victim.done).signal).toBe('SIGKILL');
    const runs = await Promise.all(others.map((o) => o.done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const out = (await Promise.all([1, 2].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    // The victim's file is a .partial at best; whatever it had not completed, the others did.
    const victimDone = records(await readFile(join(dir, 'w0.jsonl.partial'), 'utf8').catch(() => '')).filter((r) => r.type === 'page').map((r) => r.url);
    const fetched = new Set([...out.filter((r) => r.type === 'page').map((r) => r.url), ...victimDone]);
    expect([...fetched].sort()).toEqual(hosts.flatMap((h) => pagesOf(h, 20)).sort());
    // Repeats: only what the victim had in flight (at most its host concurrency on each host).
    const repeats = duplicates(web.requests()).filter((d) => d.path !== '/robots.txt');
    expect(repeats.reduce((n, d) => n + d.count - 1, 0)).toBeLessThanOrEqual(hosts.length * 2);
    for (const h of hosts) expect(web.maxInFlight(h)).toBeLessThanOrEqual(2);
  }, 60_000);

  it('a Retry-After seen by one worker holds every worker off the host', async () => {
    // limited.localhost answers 429 + Retry-After: 1 when asked more than 4 times a second; the crawl asks faster.
    web = await startWeb({
      sites: {
        'limited.localhost': { limit: { perSecond: 4, status: 429, retryAfter: '1', mode: 'gap' }, generate: { pages: 8, linksPerPage: 2 } },
      },
    });
    const crawlId = `retry-${randomUUID()}`;
    const args = (i: number) => [...shared(crawlId), '--rate', '20/s', '--host-concurrency', '1', '--worker', `w${i}`, '-o', `w${i}.jsonl`, web!.url('limited.localhost', '/')];
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const log = web.requests('limited.localhost');
    const throttled = log.filter((e) => e.status === 429);
    expect(throttled.length).toBeGreaterThan(0); // the server did push back
    for (const t of throttled) {
      const next = log.find((e) => e.at > t.at);
      // Nobody, in any process, asked again within the second the server asked for.
      if (next) expect(next.at - t.at).toBeGreaterThanOrEqual(995);
    }
    const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    expect(out.filter((r) => r.type === 'page' && r.status === 200).map((r) => r.url).sort()).toEqual(pagesOf('limited.localhost', 8).sort());
  }, 60_000);

  it('--max-pages counts across the workers: 3 workers, 10 pages in all', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 40, linksPerPage: 3 } }, 'b.localhost': { generate: { pages: 40, linksPerPage: 3 } } } });
    const crawlId = `cap-${randomUUID()}`;
    const seeds = [web.url('a.localhost', '/'), web.url('b.localhost', '/')];
    const args = (i: number) => [...shared(crawlId), '--rate', '50/s', '--max-pages', '10', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    expect(out.filter((r) => r.type === 'page')).toHaveLength(10);
    expect(web.requests().filter((e) => e.path !== '/robots.txt')).toHaveLength(10);
  }, 30_000);

  it('crawl status --redis shows the shared crawl; a finished crawl is not crawled again', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 5, linksPerPage: 2 } } } });
    const crawlId = `status-${randomUUID()}`;
    const first = await start([...shared(crawlId), '--rate', '50/s', '-o', 'out.jsonl', web.url('a.localhost', '/')]).done;
    expect(first.code, first.stderr).toBe(0);
    const status = await start(['status', '--redis', redis!.url, '--crawl-id', crawlId, '--json']).done;
    expect(status.code, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout) as { finished: boolean; doneTotal: number; queued: number; leased: number; done: Record<string, number> };
    expect(s).toMatchObject({ finished: true, doneTotal: 6, queued: 0, leased: 0, done: { '200': 6 } });
    const text = await start(['status', '--redis', redis!.url, '--crawl-id', crawlId]).done;
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
      [['--redis', redis!.url, '--crawl-id', 'bad id', 'http://a.localhost/'], /^crawl: --crawl-id expects a name/],
      [['--redis', redis!.url, '--crawl-id', 'x', '--state', 's.db', 'http://a.localhost/'], /^crawl: --state and --redis/],
      [['--redis', redis!.url, '--crawl-id', `none-${randomUUID()}`, '--wait-for-crawl', '0'], /^crawl: no seed URL given, and Redis crawl ".*" does not exist yet/],
      [['status', '--redis', redis!.url, '--crawl-id', `none-${randomUUID()}`], /^crawl: Redis holds no crawl named/],
      [['status', '--redis', redis!.url, '--crawl-id', 'bad id'], /^crawl: --crawl-id expects a name/],
      [['report', '--redis', 'localhost:6379', '--crawl-id', 'x'], /^crawl: --redis expects a URL/],
    ];
    for (const [args, message] of cases) {
      const r = await start(args).done;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  }, 30_000);

  it('Redis stopping mid-crawl: the workers say so, wait, and finish the crawl when it answers again', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 30, linksPerPage: 2 } } } });
    const crawlId = `outage-${randomUUID()}`;
    const args = (i: number) => ['--redis', redis!.url, '--crawl-id', crawlId, '--rate', '10/s', '--worker', `w${i}`, '-o', `w${i}.jsonl`, web!.url('a.localhost', '/')];
    const workers = [0, 1].map((i) => start(args(i)));
    // Paused mid-crawl: once both workers have joined (each has held a lease) and pages are being fetched.
    // (Waiting for requests alone let a loaded machine pause Redis before the second worker had connected.)
    const { createClient } = await import('redis');
    const admin = createClient({ url: redis!.url });
    await admin.connect();
    const owners = new Set<string>();
    while (owners.size < 2 || web.requests().length < 8) {
      const leases = await admin.hGetAll(`crawl:{${crawlId}}:leases`);
      for (const [field, owner] of Object.entries(leases)) if (field.endsWith(':o')) owners.add(owner);
      await sleep(10);
    }
    await admin.quit();
    redis!.pause();
    await sleep(6_500);
    redis!.resume();
    const runs = await Promise.all(workers.map((w) => w.done));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ stopped answering/);
      expect(r.stderr).toMatch(/answers again after/);
      expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    }
    const out = (await Promise.all([0, 1].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    expect(new Set(out.filter((r) => r.type === 'page').map((r) => r.url))).toEqual(new Set(pagesOf('a.localhost', 30)));
  }, 60_000);
  it('robots.txt redirected to another host: one worker follows the chain, every worker obeys the rules it found', async () => {
    const links = Array.from({ length: 12 }, (_, i) => `<a href="/p/${i}">p</a>`).join(' ');
    const pages: Record<string, string> = { '/': `${links} <a href="/secret">s</a>` };
    for (let i = 0; i < 12; i++) pages[`/p/${i}`] = `<a href="/secret">s</a> <a href="/secret/${i}">s</a>`;
    web = await startWeb({
      sites: {
        'apex.localhost': { robots: { status: 301, headers: { location: '{{origin:www.apex.localhost}}/robots.txt' } }, pages },
        'www.apex.localhost': { robots: 'User-agent: *\nDisallow: /secret\n' },
      },
    });
    const crawlId = `robots-hop-${randomUUID()}`;
    // --allow-private: www.apex.localhost is not a seed's host, and the guard would refuse its loopback address.
    const args = (i: number) => [...shared(crawlId), '--allow-private', '--rate', '20/s', '--worker', `w${i}`, '-o', `w${i}.jsonl`, web!.url('apex.localhost', '/')];
    const runs = await Promise.all([0, 1].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(web.requests('apex.localhost').filter((e) => e.path.startsWith('/secret'))).toEqual([]);
    expect(web.requests('apex.localhost').filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    expect(web.requests('www.apex.localhost').map((e) => e.path)).toEqual(['/robots.txt']);
    const out = (await Promise.all([0, 1].map(async (i) => records(await outputOf(join(dir, `w${i}.jsonl`)))))).flat();
    expect(out.filter((r) => r.type === 'page').map((r) => r.url).sort()).toEqual(pagesOf('apex.localhost', 12).sort());
  }, 60_000);
});
