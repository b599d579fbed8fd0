/**
 * Server feedback end to end over real HTTP: that a 429 with Retry-After and
 * a refused connection travel through undici and the real fetcher into the
 * crawl loop, measured from the server side. How the loop reacts, exactly and
 * in every variant (Retry-After forms, budgets, backoff, bursts, recovery,
 * giving up), is tested under fake time in crawl-loop.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startWeb, type Web } from '../../fixtures/web.js';
import { crawl } from '../support/crawl-harness.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const serverNow = () => performance.timeOrigin + performance.now();

/** Answers `Retry-After: 1` and records every announced pause as [from, until] on the server's clock. */
function announcer() {
  const windows: Array<[number, number]> = [];
  const retryAfter = () => {
    const at = serverNow();
    windows.push([at, at + 1000]);
    return '1';
  };
  return { windows, retryAfter };
}

function arrivalsInside(web: Web, host: string, windows: Array<[number, number]>): number[] {
  const bad: number[] = [];
  for (const r of web.requests(host)) {
    for (const [from, until] of windows) if (r.at > from && r.at < until) bad.push(r.at);
  }
  return bad;
}

describe('429 and Retry-After over real HTTP', () => {
  it("pauses for a real server-side limiter's Retry-After: every page ends 200, nothing arrives inside a pause", async () => {
    const a = announcer();
    web = await startWeb({
      sites: { 'strict.localhost': { generate: { pages: 3, linksPerPage: 1 }, limit: { perSecond: 3, status: 429, retryAfter: a.retryAfter } } },
    });
    const run = await crawl([web.url('strict.localhost', '/')], { domains: { 'strict.localhost': { rate: '20/s', concurrency: 2 } } });
    expect(run.pages).toHaveLength(4);
    expect(run.pages.every((p) => p.status === 200)).toBe(true);
    const refused = web.requests('strict.localhost').filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0); // the server really was stricter than the config
    expect(arrivalsInside(web, 'strict.localhost', a.windows)).toEqual([]);
    // The crawler heard each 429 after it arrived, and waits 1 s + 10 ms from hearing it.
    for (const r of refused) {
      const next = web.requests('strict.localhost').find((n) => n.at > r.at)!;
      expect(next.at - r.at).toBeGreaterThanOrEqual(1000 + 10);
    }
    expect(run.stats.perHost.get(`strict.localhost:${web.port}`)!.rate).toMatch(/^20\/s, throttled \d+×/);
  });
});

describe('retries and failing hosts over real HTTP', () => {
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
