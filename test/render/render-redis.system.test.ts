/**
 * --render in a shared Redis crawl: two real worker processes, each with its
 * own real Chromium, render one client-rendered web through one real redis-server, and every request either browser makes —
 * scripts, styles, API calls, robots.txt — keeps its host's gap and
 * concurrency across both processes, as the workers wrote them
 * (fixtures/send-log.js) and as the servers saw them.
 *
 * It also checks that a page being rendered does not hold its host's shared
 * concurrency: at one request at a time per host, the browser's request for
 * the page's own script would otherwise wait for the page, which waits for
 * the script (until --render-timeout).
 *
 * Skipped, saying why, when chromium or redis-server is missing; under
 * .ci/run (which installs both and sets CRAWL_REQUIRE_SERVICES=1) a missing
 * one fails.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { minGap, startWeb } from '../../fixtures/web.js';
import type { PageRecord } from '../../src/types.js';
import { chromium, newCrawlId, redisServerMissing, useRedisServer, useTempDir } from '../support/system-fixtures.js';
import { jsonLines, outputOf, requireBuilt, sendLog, startCrawl } from '../support/spawn-crawl.js';

const missing = chromium.missing ?? redisServerMissing;
/** 10/s: 100 ms between any two requests to a host, whichever worker or browser made them. */
const GAP_MS = 100;

describe.skipIf(missing !== undefined)(missing ?? '--render with two Redis workers', () => {
  beforeAll(requireBuilt);
  const redis = useRedisServer();
  const tmp = useTempDir('crawl-render-redis-');

  it("holds both browsers' requests to each host's shared gap and concurrency, and renders every page once", async () => {
    const web = await startWeb({ sites: sites() });
    try {
      const crawlId = newCrawlId('render');
      const args = (i: number) => [
        '--redis',
        redis.url,
        '--crawl-id',
        crawlId,
        '--worker',
        `w${i}`,
        '-q',
        '--render',
        '--allow-private',
        '--browser',
        chromium.path,
        '--rate',
        '10/s',
        '--host-concurrency',
        '2',
        '--render-timeout',
        '30s',
        '-o',
        `w${i}.jsonl`,
        web.url('app.localhost', '/'),
      ];
      const sent = sendLog(join(tmp.path, 'sent.jsonl'));
      const started = [0, 1].map((i) => startCrawl(args(i), tmp.path, sent.opts));
      // A crawl that never ends is a failure of its own: stopped here, not left running past the test.
      const stop = setTimeout(() => started.forEach((s) => s.child.kill('SIGKILL')), 90_000);
      const runs = await Promise.all(started.map((s) => s.done)).finally(() => clearTimeout(stop));
      for (const r of runs) expect(r.code, r.stderr).toBe(0);

      const pages = (await Promise.all([0, 1].map(async (i) => jsonLines<PageRecord>(await outputOf(join(tmp.path, `w${i}.jsonl`)))))).flat();
      const app = pages.filter((r) => r.type === 'page' && new URL(r.url).hostname === 'app.localhost');
      expect(app.map((r) => new URL(r.url).pathname).sort()).toEqual(['/', ...PAGES.map((p) => `/${p}`)].sort());
      // Both workers rendered, and every page's API answers are in its rendered text: nothing
      // timed out (the script each page needs from its own host was not held behind the page).
      expect(new Set(app.map((r) => r.worker))).toEqual(new Set(['w0', 'w1']));
      for (const r of app) expect([r.url, r.rendered, r.error]).toEqual([r.url, true, undefined]);
      for (const p of PAGES) {
        const record = app.find((r) => new URL(r.url).pathname === `/${p}`);
        expect(
          web.requests('api.localhost').filter((e) => e.path.startsWith(`/d/${p}-`)),
          JSON.stringify(record),
        ).toHaveLength(CALLS);
      }

      const written = await sent.written();
      for (const host of ['app.localhost', 'api.localhost']) {
        const log = web.requests(host);
        expect(web.maxInFlight(host), host).toBeLessThanOrEqual(2);
        const mine = written.filter((e) => new URL(e.origin).hostname === host);
        expect(mine.length, host).toBeGreaterThanOrEqual(log.length);
        expect(minGap(mine.map((e) => e.at)), host).toBeGreaterThanOrEqual(GAP_MS);
      }
    } finally {
      await web.close();
    }
  }, 120_000);
});

const PAGES = Array.from({ length: 16 }, (_, i) => `p${i}`);
/** The API answers each page's script asks for. */
const CALLS = 5;

/**
 * app.localhost: a home page linking to sixteen pages; each page's script
 * (from app.localhost itself, cached) asks api.localhost for five answers
 * no cache may keep, and writes them into the page. Two browsers rendering
 * at once each ask the API at the full 10/s unless their requests share one
 * gap.
 */
function sites() {
  const script = `Promise.all([0, 1, 2, 3, 4].map((i) => fetch('{{origin:api.localhost}}/d/' + location.pathname.slice(1) + '-' + i).then((r) => r.text())))
  .then((t) => { document.getElementById('out').textContent = t.join(' '); });`;
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><div id="out"></div>${body}<script src="/s.js"></script></body></html>`;
  const app: Record<string, string | { body: string; headers: Record<string, string> }> = {
    '/': page('home', PAGES.map((p) => `<a href="/${p}">${p}</a>`).join(' ')),
    '/s.js': { body: script, headers: { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600' } },
  };
  for (const p of PAGES) app[`/${p}`] = page(p, '');
  const api: Record<string, { body: string; headers: Record<string, string> }> = {};
  for (const p of ['', ...PAGES]) {
    for (let i = 0; i < CALLS; i++) {
      api[`/d/${p}-${i}`] = {
        body: `answer ${p}-${i}`,
        headers: { 'access-control-allow-origin': '*', 'content-type': 'text/plain', 'cache-control': 'no-store' },
      };
    }
  }
  return { 'app.localhost': { pages: app }, 'api.localhost': { pages: api } };
}
