/**
 * The library's `metrics` option (issue 21): the same endpoint as
 * `--metrics`, bound at the first pull, serving while the crawl runs and
 * closed when it ends; a bad value or a port in use is refused before any
 * request.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { crawl } from '../../src/index.js';
import { parseScrape } from '../support/scrape.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe('crawl({ metrics })', () => {
  it("serves the running crawl's series and closes with it", async () => {
    web = await startWeb({ sites: { 'lib.localhost': { generate: { pages: 10, linksPerPage: 2 } } } });
    const infos: string[] = [];
    const run = crawl({
      seeds: [web.url('lib.localhost', '/')],
      defaults: { rate: '20/s' },
      metrics: '0',
      metricsHosts: 1,
      log: { info: (m) => infos.push(m), warn: () => {} },
    });
    let url: string | undefined;
    let midPages = 0;
    let seen = 0;
    for await (const record of run) {
      if (record.type !== 'page') continue;
      seen++;
      if (seen === 3) {
        url = /metrics at (\S+)/.exec(infos.join('\n'))?.[1];
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
        const scrape = parseScrape(await (await fetch(url!)).text());
        midPages = scrape.sum('crawl_pages_total');
        expect(Object.keys(scrape.byLabel('crawl_host_requests_total', 'host'))).toHaveLength(1);
      }
    }
    const summary = await run.done;
    expect(midPages).toBeGreaterThanOrEqual(3);
    expect(midPages).toBeLessThanOrEqual(summary.pages);
    await expect(fetch(url!)).rejects.toThrow();
  }, 30_000);

  it('refuses a bad value at once, and a port in use at the first pull, before any request', async () => {
    expect(() => crawl({ seeds: ['http://a.localhost/'], metrics: 'nope' })).toThrow(
      'options: metrics: expects [HOST:]PORT, e.g. 9464 or 0.0.0.0:9464 (port 0 to 65535), got "nope"',
    );
    web = await startWeb({ sites: { 'lib.localhost': { generate: { pages: 3, linksPerPage: 1 } } } });
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = crawl({ seeds: [web.url('lib.localhost', '/')], metrics: String(port) });
      await expect(run.next()).rejects.toMatchObject({ code: 'USAGE', message: `metrics 127.0.0.1:${port}: cannot listen: the port is already in use` });
      await expect(run.done).rejects.toMatchObject({ code: 'USAGE' });
      expect(web.requests()).toHaveLength(0);
    } finally {
      taken.close();
    }
  }, 30_000);
});
