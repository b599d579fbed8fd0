/**
 * Hostile servers and hostile input (issue 10), end to end: bodies dripped a
 * byte at a time (pages and robots.txt), slow hosts that would hold every
 * global slot, our own resource shortages, bodies that lie about their size,
 * and credentials in URLs. Real servers on 127.0.0.1 with short configured
 * deadlines, so each test takes well under two seconds.
 */
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { ROBOTS_TIMEOUT_MS, type Crawler } from '../../src/crawl/crawler.js';
import type { Fetcher, FetchRequest } from '../../src/fetch/fetcher.js';
import { RobotsCache } from '../../src/robots/cache.js';
import { crawl, pathOf } from '../support/crawl-harness.js';
import { FakeClock } from '../support/fake-clock.js';

let web: Web | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await web?.close();
  web = undefined;
});

/** A route handler that sends headers, then one byte every `everyMs` until the client hangs up. */
function drip(everyMs: number, type = 'text/html'): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': type });
    const timer = setInterval(() => res.write('x'), everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return condition();
};

describe('total deadlines', () => {
  it('ends a page dripped a byte at a time with TOTAL_TIMEOUT at the configured total, and does not retry it', async () => {
    web = await startWeb({ sites: { 'drip.localhost': { handler: (req, res) => (req.url === '/' ? drip(20)(req, res) : false) } } });
    const run = await crawl([web.url('drip.localhost', '/')], { timeout: { total: '300ms', body: '5s' }, defaults: { rate: 'unlimited' } });
    expect(run.pages).toHaveLength(1);
    expect(run.pages[0].error?.code).toBe('TOTAL_TIMEOUT');
    expect(run.pages[0].elapsedMs).toBeGreaterThanOrEqual(290);
    // The page's own time says the deadline ended it; the whole run (robots.txt, start, stop) only has to end
    // (at < 1000 ms, one run on a loaded machine took 1,048 ms).
    expect(run.pages[0].elapsedMs).toBeLessThan(1000);
    expect(run.wallMs).toBeLessThan(3000);
    expect(web.count('drip.localhost', '/')).toBe(1);
  });

  it('gives robots.txt at most the total deadline, so one dripped a byte at a time cannot hold its host', async () => {
    web = await startWeb({
      sites: {
        // 8 s of robots.txt, against a total of 300 ms.
        'drip.localhost': { robots: { status: 200, chunks: { parts: Array.from({ length: 400 }, () => '#'), intervalMs: 20 } }, pages: { '/': 'home' } },
      },
    });
    const run = await crawl([web.url('drip.localhost', '/')], {
      timeout: { total: '300ms', body: '5s' },
      robots: { unavailableRetries: 0 },
      defaults: { rate: 'unlimited' },
    });
    expect(run.skipped).toEqual([expect.objectContaining({ reason: 'robots-unavailable', detail: expect.stringContaining('TOTAL_TIMEOUT') })]);
    expect(run.wallMs).toBeLessThan(3000);
  });

  it('asks for robots.txt with its own hard limit of 10 s, and for pages with the configured total', async () => {
    web = await startWeb({ sites: { 'a.localhost': { robots: 'User-agent: *\nAllow: /', pages: { '/': 'home' } } } });
    const asked: Array<[string, number | undefined]> = [];
    const record = (f: Fetcher): Fetcher => ({
      fetch: (url: string, req: FetchRequest) => (asked.push([pathOf(url), req.totalMs]), f.fetch(url, req)),
      close: () => f.close(),
    });
    await crawl([web.url('a.localhost', '/')], { defaults: { rate: 'unlimited' } }, {}, { wrapFetcher: record });
    // The page gets the fetcher's configured total (3 min by default), robots.txt at most ROBOTS_TIMEOUT_MS.
    expect(asked).toEqual([
      ['/robots.txt', ROBOTS_TIMEOUT_MS],
      ['/', undefined],
    ]);
    expect(ROBOTS_TIMEOUT_MS).toBe(10_000);
  });
});

describe('slow hosts and global slots', () => {
  it('twenty dripping URLs on ten hosts seeded before a good site do not starve it: slow requests give their global slot back', async () => {
    const dripHosts = Array.from({ length: 10 }, (_, i) => `drip${i}.localhost`);
    const sites: Record<string, import('../../fixtures/web.js').SiteSpec> = { 'good.localhost': { generate: { pages: 5, linksPerPage: 1 } } };
    for (const host of dripHosts) sites[host] = { handler: (req, res) => (req.url === '/robots.txt' ? false : drip(50)(req, res)) };
    web = await startWeb({ sites });
    const w = web;
    const seeds = [...dripHosts.flatMap((h) => [w.url(h, '/a'), w.url(h, '/b')]), w.url('good.localhost', '/')];
    let crawler: Crawler | undefined;
    const started = Date.now();
    // Deadlines far beyond the test: only releasing slow requests' slots can let the good site in.
    const running = crawl(
      seeds,
      { concurrency: 16, timeout: { total: '60s', body: '60s' }, defaults: { rate: 'unlimited', concurrency: 2 } },
      {},
      {
        slowAfterMs: 200,
        onCrawler: (c) => (crawler = c),
      },
    );
    // Only the good site's pages can complete (the drips never do): six records out means it was crawled.
    const goodDone = await until(() => (crawler?.progress().fetched ?? 0) >= 6, 1500);
    const tookMs = Date.now() - started;
    // Sixteen global slots, and all twenty drips got a request out: the released ones do not hold slots, but still count per host.
    const dripsStarted = dripHosts.reduce((n, h) => n + w.requests(h).filter((r) => r.path !== '/robots.txt').length, 0);
    const maxPerHost = Math.max(...dripHosts.map((h) => w.maxInFlight(h)));
    crawler!.stop();
    crawler!.abort();
    const run = await running;
    expect(goodDone, `good site done after ${tookMs} ms`).toBe(true);
    expect(tookMs).toBeLessThan(1500);
    expect(dripsStarted).toBe(20);
    expect(maxPerHost).toBeLessThanOrEqual(3); // robots.txt (already answered) + 2 pages: never more than the host's 2 page requests at once
    expect(run.pages.filter((p) => p.url.includes('good.localhost') && p.status === 200)).toHaveLength(6);
  });
});

describe("our own shortages are not the server's fault", () => {
  it('retries a page whose connect failed with EMFILE (LOCAL_RESOURCE) without counting it against the host', async () => {
    // Every request connects afresh (connection: close), so each one resolves the name again.
    let robotsServed = false;
    const server = http.createServer((req, res) => {
      if (req.url === '/robots.txt') robotsServed = true;
      res.writeHead(200, { connection: 'close', 'content-type': 'text/html' }).end('<title>ok</title>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const port = (server.address() as AddressInfo).port;
    let failures = 0;
    const lookup: LookupFunction = (_host, options, callback) => {
      // Lookups before robots.txt was served (an early resolution, robots.txt's own) work; then
      // two page attempts hit EMFILE, then it works again.
      const fail = robotsServed && failures < 2;
      if (fail) failures++;
      process.nextTick(() => {
        if (fail) return callback(Object.assign(new Error('getaddrinfo EMFILE'), { code: 'EMFILE' }), '', 0);
        if (options.all) (callback as unknown as (e: null, a: unknown) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
        else callback(null, '127.0.0.1', 4);
      });
    };
    const run = await crawl(
      [`http://busy.localhost:${port}/`],
      { defaults: { retries: 2, backoff: { base: '10ms', cap: '20ms' }, hostFailures: { pause: 1, giveUp: 1 }, rate: 'unlimited' } },
      {},
      { lookup },
    );
    expect(run.pages).toEqual([expect.objectContaining({ status: 200, title: 'ok', attempts: 3 })]);
    expect(run.stats.perHost.get(`busy.localhost:${port}`)?.notes ?? []).toEqual([]);
  });

  it('waits and re-fetches a robots.txt that failed on our side, instead of counting it as unavailable', async () => {
    const clock = new FakeClock();
    const answers: Array<() => Promise<never> | Promise<{ url: string; status: number; body: string; truncated: boolean; location: null }>> = [
      () => Promise.reject(Object.assign(new Error('out of file descriptors'), { code: 'LOCAL_RESOURCE' })),
      () => Promise.resolve({ url: 'http://a.test/robots.txt', status: 200, body: 'User-agent: *\nDisallow: /private', truncated: false, location: null }),
    ];
    const cache = new RobotsCache({
      clock,
      userAgent: 'crawl/1.0',
      maxBytes: 512 * 1024,
      cacheTtlMs: 60_000,
      unavailableRetries: 0, // a server failure would give the host up at once
      unavailableRetryDelayMs: 5000,
      fetchOne: () => answers.shift()!(),
    });
    const first = await cache.load('http://a.test');
    expect(first).toMatchObject({ kind: 'unavailable', attempts: 0, retryAt: clock.now() + 5000 });
    clock.advance(5000);
    const second = await cache.load('http://a.test');
    expect(second.kind).toBe('rules');
  });
});

describe('what a record says', () => {
  it('counts the bytes actually read: a non-HTML link claiming 200 MB adds nothing to the summary', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': {
          pages: { '/': '<a href="/film.mp4">film</a>' },
          handler: (req, res) => {
            if (req.url !== '/film.mp4') return false;
            res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(200 * 1024 * 1024) });
            res.write(Buffer.alloc(4096));
          },
        },
      },
    });
    const run = await crawl([web.url('a.localhost', '/')], { defaults: { rate: 'unlimited' } });
    const film = run.pages.find((p) => p.url.endsWith('/film.mp4'))!;
    expect(film).toMatchObject({ status: 200, contentType: 'video/mp4', bytes: null, contentLength: 200 * 1024 * 1024 });
    const home = run.pages.find((p) => pathOf(p.url) === '/')!;
    expect(run.stats.bytes).toBe(home.bytes);
  });

  it('never writes the credentials of a URL (http://user:secret@host/) into records', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': {
          pages: {
            '/': '<a href="http://user:secret@a.localhost:{{port}}/private">p</a> <a href="ftp://ftpuser:hunter2@files.example/x">f</a> <a href="/go">go</a>',
            '/private': 'p',
            '/go': { status: 302, headers: { location: 'http://u2:pw2@a.localhost:{{port}}/there' } },
            '/there': 'there',
          },
        },
      },
    });
    const run = await crawl([web.url('a.localhost', '/')], { defaults: { rate: 'unlimited' } }, { links: true });
    const text = run.lines.join('\n');
    for (const secret of ['secret', 'hunter2', 'pw2', 'user:', 'u2:']) expect(text).not.toContain(secret);
    expect(run.pages.map((p) => p.url)).toContain(`http://***@a.localhost:${web.port}/private`);
    expect(run.pages.find((p) => pathOf(p.url) === '/go')!.location).toBe(`http://***@a.localhost:${web.port}/there`);
    // The page was fetched without them: the server saw no Authorization.
    expect(web.requests('a.localhost').every((r) => r.headers.authorization === undefined)).toBe(true);
  });
});
