/**
 * docs/grafana-dashboard.json (issue 21) must never chart a series that does
 * not exist: every `crawl_…` name its queries use is found in a real scrape
 * of a real crawl (with a state file, a throttling host, an error and a skip,
 * so every series has samples). The rendering panels' series exist only in a
 * crawl that renders: render-metrics.system.test.ts checks those.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { createCrawlSession } from '../../src/api/crawl-session.js';
import { systemClock } from '../../src/clock.js';
import { buildSettings } from '../../src/config/settings.js';
import { createCrawlMetrics } from '../../src/output/metrics.js';
import { openMetricsEndpoint } from '../../src/output/metrics-endpoint.js';
import type { RecordSink } from '../../src/output/sink.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { parseScrape } from '../support/scrape.js';

let web: Web | undefined;
let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-dashboard-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Series a crawl exports only when some host renders. */
export const RENDER_SERIES = /^crawl_(render|rendered|browser)_/;

interface Dashboard {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  templating: { list: Array<{ query?: unknown }> };
}

describe('docs/grafana-dashboard.json', () => {
  it('references only series a real crawl exports', async () => {
    const dashboard = JSON.parse(await readFile(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as Dashboard;
    const exprs = [...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...dashboard.templating.list.map((v) => JSON.stringify(v.query ?? ''))];
    const referenced = new Set(exprs.flatMap((e) => e.match(/\bcrawl_[a-z0-9_]+/g) ?? []));
    // What the dashboard is for, at least.
    for (const name of [
      'crawl_pages_total',
      'crawl_errors_total',
      'crawl_throttles_total',
      'crawl_requests_in_flight',
      'crawl_urls_queued',
      'crawl_store_call_duration_seconds_bucket',
    ]) {
      expect(referenced).toContain(name);
    }

    web = await startWeb({
      sites: {
        'main.localhost': {
          generate: { pages: 8, linksPerPage: 2, crossHosts: ['elsewhere.localhost'] },
          pages: { '/loop': { status: 301, headers: { location: '/loop' } } },
        },
        'strict.localhost': { generate: { pages: 3, linksPerPage: 1 }, limit: { perSecond: 2, status: 429, retryAfter: '1', mode: 'gap' } },
      },
    });
    const metrics = createCrawlMetrics();
    const endpoint = await openMetricsEndpoint({ host: '127.0.0.1', port: 0 }, metrics);
    const store = new SqliteStore(join(dir, 'c.db'), { now: () => systemClock.now(), timed: metrics.storeTimer('sqlite') });
    const sink: RecordSink = { write: async () => {}, close: async () => {}, broken: false, written: 0 };
    try {
      const seeds = [web.url('main.localhost', '/'), web.url('main.localhost', '/loop'), web.url('strict.localhost', '/')];
      const session = createCrawlSession({ settings: buildSettings(undefined, { rate: '20/s' }), seeds, sink, store });
      metrics.attach(session);
      await session.run();
      const scrape = parseScrape(await (await fetch(endpoint.url)).text());
      const exported = new Set(scrape.samples.map((s) => s.name));
      const missing = [...referenced].filter((name) => !RENDER_SERIES.test(name) && !exported.has(name));
      expect(missing).toEqual([]);
      expect(scrape.sum('crawl_errors_total')).toBeGreaterThan(0);
      expect(scrape.sum('crawl_throttles_total')).toBeGreaterThan(0);
    } finally {
      store.close();
      await endpoint.close();
    }
  }, 30_000);
});
