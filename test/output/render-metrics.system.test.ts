/**
 * The render series of `--metrics`, scraped from a real rendered crawl (real
 * Chromium, the client-rendered test web plus a static host rendered
 * `auto`): pages rendered, render decisions by reason, browser subrequests
 * by outcome and browser restarts must say what the records say. A crawl
 * with no host rendering exports none of them.
 *
 * Skipped, saying why, when chromium is not installed (as render.system.test.ts).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { appSites } from '../../fixtures/app-web.js';
import { createCrawlSession, loadRendering } from '../../src/api/crawl-session.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { createCrawlMetrics } from '../../src/output/metrics.js';
import { openMetricsEndpoint, parseMetricsAddress } from '../../src/output/metrics-endpoint.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { OutputRecord, PageRecord } from '../../src/types.js';
import { parseScrape } from '../support/scrape.js';

const browser = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const available = existsSync(browser) || process.env.CRAWL_REQUIRE_SERVICES === '1';
if (!available) console.warn(`render metrics: skipped, no chromium at ${browser}`);

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const staticSite = {
  pages: {
    '/': `<title>Static</title><p>${'Text that reads fine without a browser. '.repeat(12)}</p><a href="/a">a</a> <a href="/b">b</a> <a href="/data.json">data</a>`,
    '/a': `<title>A</title><p>${'Static. '.repeat(40)}</p>`,
    '/b': `<title>B</title><p>${'Static. '.repeat(40)}</p>`,
    '/data.json': { body: '{}', headers: { 'content-type': 'application/json' } },
  },
};

function collect(records: OutputRecord[]): RecordSink {
  return {
    write: async (r) => void records.push(r),
    close: async () => {},
    broken: false,
    get written() {
      return records.length;
    },
  };
}

async function crawlWithMetrics(seeds: string[], settings: ReturnType<typeof buildSettings>, browserPath?: string) {
  const metrics = createCrawlMetrics();
  const endpoint = await openMetricsEndpoint(parseMetricsAddress('0'), metrics);
  const records: OutputRecord[] = [];
  try {
    const session = createCrawlSession({ settings, seeds, sink: collect(records), ...(browserPath && { render: await loadRendering(browserPath) }) });
    metrics.attach(session);
    await session.run();
    const scrape = parseScrape(await (await fetch(endpoint.url)).text());
    return { scrape, pages: records.filter((r): r is PageRecord => r.type === 'page') };
  } finally {
    await endpoint.close();
  }
}

describe.skipIf(!available)('render metrics', () => {
  it('say what the records say: pages rendered, decisions by reason, subrequests by outcome, no restart', async () => {
    web = await startWeb({ sites: { ...appSites({ items: 3 }), 'static.localhost': staticSite } });
    const file = validateConfig({ allowPrivate: true, domains: { 'app.localhost': { render: true }, 'static.localhost': { render: 'auto' } } });
    const settings = buildSettings(file, { rate: 'unlimited', hostConcurrency: '2' });
    const { scrape, pages } = await crawlWithMetrics([web.url('app.localhost', '/'), web.url('static.localhost', '/')], settings, browser);

    const rendered = pages.filter((p) => p.rendered === true);
    expect(rendered.length).toBeGreaterThan(3);
    expect(scrape.get('crawl_rendered_pages_total')).toBe(rendered.length);

    // Every page of a rendering host was decided once, and the record says how.
    const decided: Record<string, number> = {};
    for (const p of pages.filter((r) => r.renderReason !== undefined)) {
      const key = `${p.rendered === true}:${p.renderReason}`;
      decided[key] = (decided[key] ?? 0) + 1;
    }
    const series: Record<string, number> = {};
    for (const s of scrape.samples.filter((x) => x.name === 'crawl_render_decisions_total')) series[`${s.labels.render}:${s.labels.reason}`] = s.value;
    expect(series).toEqual(decided);
    expect(decided['false:static']).toBeGreaterThanOrEqual(3);
    expect(decided['false:not-html']).toBe(1);

    // Subrequests: the sum of the records' counts, outcome by outcome.
    for (const outcome of ['fetched', 'cached', 'blocked', 'disallowed'] as const) {
      const fromRecords = pages.reduce((n, p) => n + (p.subrequests?.[outcome] ?? 0), 0);
      expect(scrape.get('crawl_render_subrequests_total', { outcome }), outcome).toBe(fromRecords);
    }
    expect(scrape.get('crawl_render_subrequests_total', { outcome: 'fetched' })).toBeGreaterThan(0);
    expect(scrape.get('crawl_browser_restarts_total')).toBe(0);

    // The dashboard's rendering panels chart only series that exist (grafana-dashboard.system.test.ts checks the rest).
    const dashboard = await readFile(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
    const charted = new Set((dashboard.match(/\bcrawl_[a-z0-9_]+/g) ?? []).filter((name) => /^crawl_(render|rendered|browser)_/.test(name)));
    expect(charted.size).toBeGreaterThanOrEqual(3);
    const exported = new Set(scrape.samples.map((s) => s.name));
    expect([...charted].filter((name) => !exported.has(name))).toEqual([]);
  }, 120_000);

  it('are not exported by a crawl where no host renders', async () => {
    web = await startWeb({ sites: { 'static.localhost': staticSite } });
    const settings = buildSettings(validateConfig({ allowPrivate: true }), { rate: 'unlimited' });
    const { scrape, pages } = await crawlWithMetrics([web.url('static.localhost', '/')], settings);
    expect(pages.length).toBe(4);
    expect(scrape.names().filter((n) => n.includes('render') || n.includes('browser'))).toEqual([]);
  });
});
