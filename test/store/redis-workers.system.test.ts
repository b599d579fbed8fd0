/**
 * `--redis URL --crawl-id ID`: several real worker processes (the real
 * binary) crawl one crawl through a real redis-server, and the servers' own
 * request logs show ONE polite visitor: each host's gap and concurrency held
 * across the processes, no page fetched twice, every page fetched, a
 * Retry-After seen by one worker honoured by all, a worker killed with -9
 * costing only its in-flight requests, robots.txt fetched once for all.
 * (Counting, status, bad flags and a Redis outage: redis-workers-control.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { duplicates, startWeb, type Web } from '../../fixtures/web.js';
import { newCrawlId, redisServerMissing, useRedisServer, useTempDir } from '../support/system-fixtures.js';
import { jsonLines, outputOf, requireBuilt, sendLog, startCrawl, type StartOptions } from '../support/spawn-crawl.js';
import { parseScrape } from '../support/scrape.js';

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

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'several crawl processes sharing one crawl through Redis', () => {
  beforeAll(requireBuilt);
  const redis = useRedisServer();
  const tmp = useTempDir('crawl-workers-');
  const start = (args: string[], opts?: StartOptions) => startCrawl(args, tmp.path, opts);
  afterEach(async () => {
    await web?.close();
    web = undefined;
  });

  const shared = (crawlId: string) => ['--redis', redis.url, '--crawl-id', crawlId, '-q'];
  /** Worker `i` of `crawlId`, one request at a time per host at `rate`, writing w{i}.jsonl, from `seed`. */
  const oneAtATime = (crawlId: string, rate: string, seed: string) => (i: number) => [
    ...shared(crawlId),
    ...['--rate', rate, '--host-concurrency', '1', '--worker', `w${i}`, '-o', `w${i}.jsonl`, seed],
  ];

  it("a worker waiting out its hosts' gaps does not poll the whole crawl: fewer surveys than pages", async () => {
    const hosts = ['a.localhost', 'b.localhost'];
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { generate: { pages: 15, linksPerPage: 3 } }])) });
    const run = start([
      '--redis',
      redis.url,
      '--crawl-id',
      newCrawlId('idle'),
      '--rate',
      '10/s',
      '--metrics',
      '127.0.0.1:0',
      ...hosts.map((h) => web!.url(h, '/')),
    ]);
    let stderr = '';
    run.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    let url: string | undefined;
    for (let i = 0; i < 400 && !url; i++, await sleep(25)) url = /metrics at (http:\/\/\S+)/.exec(stderr)?.[1];
    expect(url, stderr).toBeDefined();
    // Near the end (the crawl takes ~1.6 s at 10/s a host): most of it spent between requests.
    let scrape = parseScrape(await (await fetch(url!)).text());
    for (let i = 0; i < 100 && scrape.sum('crawl_pages_total') < 25; i++, await sleep(50)) scrape = parseScrape(await (await fetch(url!)).text());
    const pages = scrape.sum('crawl_pages_total');
    expect(pages).toBeGreaterThanOrEqual(25);
    // Surveys run on the survey's timer (every 200 ms while idle), not at every idle moment (it was ~75 a page).
    expect(scrape.get('crawl_store_call_duration_seconds_count', { store: 'redis', op: 'queues' })).toBeLessThan(pages / 2);
    expect((await run.done).code).toBe(0);
  });

  it("3 workers: every page fetched exactly once, each host's gap and concurrency held across the processes, all end together", async () => {
    const hosts = ['a.localhost', 'b.localhost', 'c.localhost', 'd.localhost'];
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { generate: { pages: 24, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = newCrawlId('three');
    // 10/s per host (100 ms apart), one at a time: three processes must look like one.
    const args = (i: number) => [...shared(crawlId), '--rate', '10/s', '--host-concurrency', '1', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const sent = sendLog(join(tmp.path, 'sent.jsonl'));
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i), sent.opts).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
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
      // When the workers say they wrote their requests, and when undici wrote them: 100 ms + the margin.
      expectStartedApart(pages as Started[], h, 100);
      await expectWrittenApart(sent, h, log.length, 100);
    }
  }, 60_000);

  it('3 workers, 2 requests at once per host: the gap still holds between every two starts, whichever worker made them', async () => {
    // Slow answers keep two requests in flight; a start reserved by one worker and written by it later
    // (connecting, robots.txt loading) must still hold the others back until then.
    const hosts = ['a.localhost', 'b.localhost'];
    const robots = { status: 200, body: 'User-agent: *\nAllow: /\n', delayMs: 400 };
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 120, robots, generate: { pages: 24, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = newCrawlId('pair');
    const args = (i: number) => [...shared(crawlId), '--rate', '10/s', '--host-concurrency', '2', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const sent = sendLog(join(tmp.path, 'sent.jsonl'));
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i), sent.opts).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(duplicates(web.requests())).toEqual([]);
    const out = (await Promise.all([0, 1, 2].map(async (i) => jsonLines<Started>(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
    for (const h of hosts) {
      expect(web.maxInFlight(h)).toBeLessThanOrEqual(2);
      // When each worker says it wrote its requests, and when undici wrote them: the politeness itself.
      expectStartedApart(
        out.filter((r) => r.type === 'page'),
        h,
        100,
      );
      await expectWrittenApart(sent, h, web.requests(h).length, 100);
    }
  }, 60_000);

  it("a slow answer moves every worker's next start: the gap counts from when the server can have read the request", async () => {
    // Every answer is quick but /p/3's, 300 ms late. A server that reads a request late and the next one
    // on time sees them closer than they were written; the crawler cannot tell a late read from a slow
    // answer, so it times the next start from the response less the host's fastest round trip, in one
    // process (HostLimiter.markResponded) and, through Redis, in every other worker: the next request,
    // whichever worker makes it, ~300 ms + the 100 ms gap after /p/3's write. (Before, only the worker that
    // saw the slow answer kept it: the other's next page came as soon as /p/3's lease ended.)
    const host = 'slow.localhost';
    const slow = { body: '<html><body>slow</body></html>', delayMs: 300 };
    web = await startWeb({ sites: { [host]: { pages: { '/p/3': slow }, generate: { pages: 12, linksPerPage: 4 } } } });
    const crawlId = newCrawlId('late-read');
    const args = (i: number) => [...oneAtATime(crawlId, '10/s', web!.url(host, '/'))(i), '--emit-robots'];
    const sent = sendLog(join(tmp.path, 'sent.jsonl'));
    const runs = await Promise.all([0, 1].map((i) => start(args(i), sent.opts).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const written = (await sent.written()).sort((a, b) => a.at - b.at);
    const i = written.findIndex((e) => e.path === '/p/3');
    expect(i).toBeGreaterThan(0);
    expect(i).toBeLessThan(written.length - 1);
    const gaps = written.slice(1).map((e, k) => e.at - written[k].at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
    // The fastest round trip the worker that fetched /p/3 had seen by then: no more than the quickest of its
    // earlier answers' elapsed times, robots.txt's included (a few ms; tens on a loaded machine's cold start).
    type Timed = Rec & { startedAt: string; elapsedMs: number };
    const out = (await Promise.all([0, 1].map(async (w) => jsonLines<Timed>(await outputOf(join(tmp.path, `w${w}.jsonl`)))))).flat();
    const p3 = out.find((r) => r.type === 'page' && r.url.endsWith('/p/3'))!;
    const earlier = out.filter((r) => r.worker === p3.worker && Date.parse(r.startedAt) < Date.parse(p3.startedAt));
    const fastest = Math.min(...earlier.map((r) => r.elapsedMs)); // none: the response time itself is the bound
    // 300 ms less that round trip, then the gap (100 ms and its margin).
    expect(gaps[i]).toBeGreaterThanOrEqual(400 - (Number.isFinite(fastest) ? fastest : 0) - 5);
  }, 60_000);

  it("a robots.txt request made mid-crawl keeps the host's gap to every other worker's pages", async () => {
    // Five other hosts' robots.txt redirect, late, to www's, while the three workers crawl www's pages:
    // each hop is a request to www made outside any claim of www, so it must take its start from the
    // shared gap like a page (it once passed only its own worker's limiter, which knows nothing of the
    // others' pages: a page written 90 ms after one at 10/s).
    const www = 'www.localhost';
    const apexes = ['a1.localhost', 'a2.localhost', 'a3.localhost', 'a4.localhost', 'a5.localhost'];
    web = await startWeb({
      sites: {
        [www]: { delayMs: 30, generate: { pages: 30, linksPerPage: 3 } },
        ...Object.fromEntries(
          apexes.map((h, i) => [
            h,
            { robots: { status: 301, headers: { location: `{{origin:${www}}}/robots.txt` }, delayMs: 500 + 300 * i }, generate: { pages: 1, linksPerPage: 0 } },
          ]),
        ),
      },
    });
    const crawlId = newCrawlId('robots-hops');
    const seeds = [www, ...apexes].map((h) => web!.url(h, '/'));
    const args = (i: number) => [...shared(crawlId), '--rate', '10/s', '--worker', `w${i}`, '-o', `w${i}.jsonl`, ...seeds];
    const sent = sendLog(join(tmp.path, 'sent.jsonl'));
    const runs = await Promise.all([0, 1, 2].map((i) => start(args(i), sent.opts).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const log = web.requests(www);
    // www's own robots.txt, then one hop for each apex: all while its pages were under way.
    expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1 + apexes.length);
    expect(log.filter((e) => e.path !== '/robots.txt').length).toBeGreaterThan(25);
    expect(duplicates(log.filter((e) => e.path !== '/robots.txt'))).toEqual([]);
    await expectWrittenApart(sent, www, log.length, 100);
  }, 60_000);

  it('a worker killed with -9 mid-crawl: the others fetch everything, repeating at most its in-flight requests', async () => {
    const hosts = ['a.localhost', 'b.localhost', 'c.localhost'];
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 150, generate: { pages: 20, linksPerPage: 3 } }])) });
    const seeds = hosts.map((h) => web!.url(h, '/'));
    const crawlId = newCrawlId('kill');
    const args = (i: number) => [
      ...shared(crawlId),
      '--lease',
      '2s',
      '--rate',
      '20/s',
      '--host-concurrency',
      '2',
      '--worker',
      `w${i}`,
      '-o',
      `w${i}.jsonl`,
      ...seeds,
    ];
    const victim = start(args(0));
    const others = [1, 2].map((i) => start(args(i)));
    // Mid-crawl, past robots.txt: a page asked of every host means each host's robots.txt record is in Redis, so
    // the victim holds no robots.txt lock (which its death would leave for ROBOTS_LOCK_MS: a fixed sleep under
    // load sometimes killed it there, and the others then waited 30 s for it).
    while (!hosts.every((h) => web!.requests(h).some((e) => e.path !== '/robots.txt'))) await sleep(10);
    await sleep(100);
    victim.child.kill('SIGKILL');
    expect((await victim.done).signal).toBe('SIGKILL');
    const runs = await Promise.all(others.map((o) => o.done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const out = (await Promise.all([1, 2].map(async (i) => records(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
    // The victim's file is a .partial at best; whatever it had not completed, the others did.
    const victimDone = records(await readFile(join(tmp.path, 'w0.jsonl.partial'), 'utf8').catch(() => ''))
      .filter((r) => r.type === 'page')
      .map((r) => r.url);
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
    const crawlId = newCrawlId('retry');
    const args = oneAtATime(crawlId, '20/s', web.url('limited.localhost', '/'));
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
    const out = (await Promise.all([0, 1, 2].map(async (i) => records(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
    expect(
      out
        .filter((r) => r.type === 'page' && r.status === 200)
        .map((r) => r.url)
        .sort(),
    ).toEqual(pagesOf('limited.localhost', 8).sort());
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
    const crawlId = newCrawlId('robots-hop');
    // --allow-private: www.apex.localhost is not a seed's host, and the guard would refuse its loopback address.
    const args = (i: number) => [
      ...shared(crawlId),
      '--allow-private',
      '--rate',
      '20/s',
      '--worker',
      `w${i}`,
      '-o',
      `w${i}.jsonl`,
      web!.url('apex.localhost', '/'),
    ];
    const runs = await Promise.all([0, 1].map((i) => start(args(i)).done));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(web.requests('apex.localhost').filter((e) => e.path.startsWith('/secret'))).toEqual([]);
    expect(web.requests('apex.localhost').filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    expect(web.requests('www.apex.localhost').map((e) => e.path)).toEqual(['/robots.txt']);
    const out = (await Promise.all([0, 1].map(async (i) => records(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
    expect(
      out
        .filter((r) => r.type === 'page')
        .map((r) => r.url)
        .sort(),
    ).toEqual(pagesOf('apex.localhost', 12).sort());
  }, 60_000);
});

/**
 * Every request to `host` as the workers wrote it (fixtures/send-log.js), no fewer than the server
 * saw, and all of them, robots.txt included, at least `gapMs` apart. The server's own arrival times
 * are not the judge: it runs in the test's process beside three crawls and reads late when kept off
 * the CPU.
 */
async function expectWrittenApart(sent: ReturnType<typeof sendLog>, host: string, arrived: number, gapMs: number): Promise<void> {
  const written = (await sent.written()).filter((e) => new URL(e.origin).hostname === host);
  expect(written.length, host).toBeGreaterThanOrEqual(arrived);
  const closest = closestPair(
    written.map((e) => ({ at: e.at, name: `${e.path} (pid ${e.pid})` })),
    (a, b) => `${a.name} → ${b.name}`,
  );
  expect.soft(closest.gap, `${host}, as written (send log): ${closest.between}`).toBeGreaterThanOrEqual(gapMs);
}

type Started = Rec & { host: string; startedAt: string };

/**
 * How far two workers' clocks may disagree. Each process takes its time
 * origin from the wall clock at its start (performance.timeOrigin): usually
 * within a millisecond of the others', but a process kept off the CPU between
 * its two readings at start is off by more (CI saw 2 ms). The send log
 * (expectWrittenApart) is on the machine's one monotonic clock and judges the
 * same requests across workers exactly.
 */
const CLOCK_SKEW_MS = 5;

/**
 * Page records of `host` at least `gapMs` apart by their `startedAt`: when
 * each worker saw its request written, on its own clock. Two records of one
 * worker are on one clock and judged exactly; two of different workers are
 * allowed CLOCK_SKEW_MS. The closest pairs are named with their workers;
 * soft, so the send log's view of the same requests (expectWrittenApart,
 * next) is reported too.
 */
function expectStartedApart(records: Started[], host: string, gapMs: number): void {
  const mine = records.filter((r) => r.host.startsWith(host));
  const describe = (a: { name: string; at: number }, b: { name: string }): string => `${a.name} at ${new Date(a.at).toISOString()} → ${b.name}`;
  const sorted = mine
    .map((r) => ({ at: Date.parse(r.startedAt), worker: r.worker, name: `${r.worker} ${new URL(r.url).pathname}` }))
    .sort((a, b) => a.at - b.at);
  for (const w of new Set(sorted.map((r) => r.worker))) {
    const own = closestPair(
      sorted.filter((r) => r.worker === w),
      describe,
    );
    expect.soft(own.gap, `${host}, one worker's records: ${own.between}`).toBeGreaterThanOrEqual(gapMs);
  }
  const across = closestPair(sorted, describe);
  expect.soft(across.gap, `${host}, as each worker recorded it: ${across.between}`).toBeGreaterThanOrEqual(gapMs - CLOCK_SKEW_MS);
}

/** The two instants closest together, and a description of them. */
function closestPair<T extends { at: number }>(items: T[], describe: (a: T, b: T) => string): { gap: number; between: string } {
  const sorted = [...items].sort((a, b) => a.at - b.at);
  let best = { gap: Infinity, between: '' };
  for (let i = 1; i < sorted.length; i++) {
    const gap = sorted[i].at - sorted[i - 1].at;
    if (gap < best.gap) best = { gap, between: describe(sorted[i - 1], sorted[i]) };
  }
  return best;
}
