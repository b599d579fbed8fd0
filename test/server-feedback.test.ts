/**
 * Server feedback end to end, against local servers whose real limits are
 * stricter than the configured rate, measured from the server side.
 */
import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startWeb, minGap, type Web } from '../fixtures/web.js';
import { crawl, pathOf } from './support/crawl-harness.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const serverNow = () => performance.timeOrigin + performance.now();

/** Records every announced pause as [from, until] on the server's clock. */
function announcer(form: 'seconds' | 'date' | 'none') {
  const windows: Array<[number, number]> = [];
  const make = () => {
    const at = serverNow();
    if (form === 'seconds') {
      windows.push([at, at + 1000]);
      return '1';
    }
    // HTTP-dates have 1 s resolution: announce the next whole second at least 1 s away.
    const wall = Date.now();
    const target = Math.ceil((wall + 1000) / 1000) * 1000;
    windows.push([at, at + (target - wall)]);
    return new Date(target).toUTCString();
  };
  return { windows, retryAfter: form === 'none' ? undefined : make };
}

function arrivalsInside(web: Web, host: string, windows: Array<[number, number]>): number[] {
  const bad: number[] = [];
  for (const r of web.requests(host)) {
    for (const [from, until] of windows) if (r.at > from && r.at < until) bad.push(r.at);
  }
  return bad;
}

async function throttledCrawl(status: 429 | 503, form: 'seconds' | 'date' | 'none') {
  const a = announcer(form);
  web = await startWeb({
    sites: {
      'strict.localhost': {
        generate: { pages: 20, linksPerPage: 3 },
        limit: { perSecond: 4, status, ...(a.retryAfter ? { retryAfter: a.retryAfter } : {}) },
      },
    },
  });
  const run = await crawl([web.url('strict.localhost', '/')], {
    domains: { 'strict.localhost': { rate: '20/s', concurrency: 2, backoff: { base: '500ms', cap: '4s' } } },
  });
  return { run, windows: a.windows };
}

describe('429/503 and Retry-After', () => {
  const cases: Array<[429 | 503, 'seconds' | 'date' | 'none']> = [
    [429, 'seconds'],
    [429, 'date'],
    [503, 'seconds'],
    [429, 'none'],
  ];
  for (const [status, form] of cases) {
    it(`${status} with ${form === 'none' ? 'no Retry-After' : `Retry-After as ${form}`}: every page ends 200, nothing arrives inside a pause, few throttles`, async () => {
      const { run, windows } = await throttledCrawl(status, form);
      const pages = run.pages;
      expect(pages).toHaveLength(21);
      expect(pages.every((p) => p.status === 200)).toBe(true);
      if (form !== 'none') expect(arrivalsInside(web!, 'strict.localhost', windows)).toEqual([]);
      const refused = web!.requests('strict.localhost').filter((r) => r.status === status).length;
      if (process.env.CRAWL_TEST_VERBOSE) console.log(`${status}/${form}: ${refused} refused, ${run.wallMs.toFixed(0)} ms`);
      expect(refused).toBeGreaterThan(0); // the server really was stricter than the config
      expect(refused).toBeLessThanOrEqual(12); // the rate converged instead of bouncing
      expect(run.stats.perHost.get(`strict.localhost:${web!.port}`)!.rate).toMatch(/^20\/s, throttled \d+×/);
    }, 60_000);
  }

  it('gives a URL an error record once its throttle budget is spent', async () => {
    web = await startWeb({ sites: { 'wall.localhost': { robots: { status: 404 }, pages: { '/': { status: 429, headers: { 'retry-after': '0' } } } } } });
    const run = await crawl([web.url('wall.localhost', '/')], { domains: { 'wall.localhost': { rate: '50/s', throttleRetries: 3, adaptive: false } } });
    expect(run.pages).toHaveLength(1);
    expect(run.pages[0]).toMatchObject({ status: 429, attempts: 4, error: { code: 'THROTTLED' } });
    expect(web.count('wall.localhost', '/')).toBe(4);
  });

  it('paces a host to its announced RateLimit budget instead of waiting for a 429', async () => {
    // A fixed window of 5 requests per 2 s, announced on every response.
    let windowStart = 0;
    let used = 0;
    let refused = 0;
    web = await startWeb({
      sites: {
        'budget.localhost': {
          robots: { status: 404 },
          generate: { pages: 14, linksPerPage: 2 },
          handler: (_req, res, ctx) => {
            const now = Date.now();
            if (now - windowStart >= 2000) {
              windowStart = now;
              used = 0;
            }
            const reset = Math.max(1, Math.ceil((windowStart + 2000 - now) / 1000));
            if (used >= 5) {
              refused++;
              res.writeHead(429, { 'retry-after': String(reset) }).end();
              return;
            }
            used++;
            res.setHeader('ratelimit-limit', '5');
            res.setHeader('ratelimit-remaining', String(5 - used));
            res.setHeader('ratelimit-reset', String(reset));
            return false; // fall through to the generated page
          },
        },
      },
    });
    const run = await crawl([web.url('budget.localhost', '/')], { domains: { 'budget.localhost': { rate: '100/s', concurrency: 1 } } });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(15);
    expect(refused).toBeLessThanOrEqual(1);
  }, 30_000);
});

describe('retries and failing hosts', () => {
  it('retries 5xx through the scheduler with backoff and records the attempts', async () => {
    let flaky = 0;
    web = await startWeb({
      sites: {
        'flaky.localhost': {
          robots: { status: 404 },
          pages: { '/': '<a href="/sometimes">s</a> <a href="/never">n</a>', '/never': { status: 500 } },
          handler: (_req, res, ctx) => {
            if (ctx.path !== '/sometimes') return false;
            flaky++;
            if (flaky <= 2) res.writeHead(502).end('bad gateway');
            else res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
          },
        },
      },
    });
    const run = await crawl([web.url('flaky.localhost', '/')], {
      domains: { 'flaky.localhost': { rate: '20/s', retries: 2, backoff: { base: '100ms', cap: '400ms' } } },
    });
    const byPath = new Map(run.pages.map((p) => [pathOf(p.url), p]));
    expect(byPath.get('/sometimes')).toMatchObject({ status: 200, attempts: 3 });
    expect(byPath.get('/never')).toMatchObject({ status: 500, attempts: 3 });
    expect(web.count('flaky.localhost', '/never')).toBe(3);
    // Retries paid the host's gap like everything else.
    expect(minGap(web.requests('flaky.localhost').map((r) => r.at))).toBeGreaterThanOrEqual(50 - 3);
  });

  it('gives up a host that never answers, in bounded time, while another host runs at full speed', async () => {
    web = await startWeb({
      sites: {
        'hang.localhost': { robots: { status: 404 }, pages: { '/': '<a href="/1">1</a><a href="/2">2</a><a href="/3">3</a><a href="/4">4</a><a href="/5">5</a>' }, handler: (_req, _res, ctx) => (ctx.path === '/' ? false : undefined) },
        'fine.localhost': { generate: { pages: 20, linksPerPage: 2 } },
      },
    });
    const run = await crawl([web.url('hang.localhost', '/'), web.url('fine.localhost', '/')], {
      timeout: { connect: '1s', headers: '600ms', body: '600ms' },
      domains: {
        'hang.localhost': { rate: '20/s', concurrency: 2, retries: 1, backoff: { base: '100ms', cap: '200ms' }, hostFailures: { pause: 2, giveUp: 4 } },
        'fine.localhost': { rate: '20/s' },
      },
    });
    expect(run.wallMs).toBeLessThan(10_000);
    const hangPages = run.pages.filter((p) => p.url.includes('hang.localhost') && p.status !== 200);
    expect(hangPages.length + run.skipped.filter((s) => s.reason === 'host-failed').length).toBe(5);
    expect(run.pages.filter((p) => p.url.includes('fine.localhost') && p.status === 200)).toHaveLength(21);
    const fine = web.requests('fine.localhost').map((r) => r.at);
    expect(Math.max(...fine) - Math.min(...fine)).toBeLessThan(21 * 50 * 1.3 + 500); // not slowed by the hung host
  }, 30_000);

  it('retries a refused connection, then gives the host up (robots.txt off)', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const run = await crawl([`http://127.0.0.1:${port}/`, `http://127.0.0.1:${port}/a`, `http://127.0.0.1:${port}/b`], {
      robots: { enabled: false },
      defaults: { rate: '50/s', retries: 1, backoff: { base: '50ms', cap: '100ms' }, hostFailures: { pause: 2, giveUp: 3 } },
    });
    expect(run.pages.every((p) => p.error?.code === 'CONNECTION_REFUSED')).toBe(true);
    expect(run.pages.length + run.skipped.filter((s) => s.reason === 'host-failed').length).toBe(3);
    expect(run.stats.perHost.get(`127.0.0.1:${port}`)!.notes.join()).toMatch(/gave up after 3 failures/);
  });
});
