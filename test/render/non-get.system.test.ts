/**
 * A rendered page's non-GET requests (a POST by fetch(), a sendBeacon) are
 * refused and counted `blocked`: a crawler reads, it does not act on a site
 * (docs/javascript-sites.md says why). The server's own log has the GET the
 * page made and no POST; the page still renders with what its GETs brought.
 *
 * Skipped, saying why, when chromium is not installed (as render.system.test.ts).
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { createCrawlSession, loadRendering } from '../../src/api/crawl-session.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { PageRecord } from '../../src/types.js';

const browser = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const available = existsSync(browser) || process.env.CRAWL_REQUIRE_SERVICES === '1';
if (!available) console.warn(`non-GET browser requests: skipped, no chromium at ${browser}`);

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const site = {
  pages: {
    '/': '<title>App</title><div id="app"></div><script src="/app.js"></script>',
    '/app.js': {
      body:
        'fetch("/vote", { method: "POST", body: "up" }).catch(() => {});' +
        'navigator.sendBeacon("/beacon", "seen");' +
        'fetch("/items").then((r) => r.json()).then((d) => { document.getElementById("app").innerHTML = \'<a href="/items/1">\' + d.name + "</a>"; });',
      headers: { 'content-type': 'text/javascript' },
    },
    '/items': json({ name: 'from a GET' }),
    '/vote': json({ ok: true }),
    '/beacon': json({ ok: true }),
    '/items/1': '<title>Item</title>',
  },
};

describe.skipIf(!available)('non-GET browser requests', () => {
  it('are refused and counted blocked; the GETs are made and the page renders', async () => {
    web = await startWeb({ sites: { 'app.localhost': site } });
    const settings = buildSettings(validateConfig({ allowPrivate: true, render: true }), { rate: 'unlimited' });
    const records: PageRecord[] = [];
    const sink: RecordSink = { write: async (r) => void (r.type === 'page' && records.push(r)), close: async () => {}, broken: false, written: 0 };
    await createCrawlSession({ settings, seeds: [web.url('app.localhost', '/')], sink, render: await loadRendering(browser) }).run();

    const home = records.find((r) => new URL(r.url).pathname === '/')!;
    expect(home.rendered).toBe(true);
    expect(home.subrequests?.blocked).toBeGreaterThanOrEqual(2);
    expect(records.map((r) => new URL(r.url).pathname)).toContain('/items/1');
    const log = web.requests();
    expect(log.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(log.some((r) => r.path === '/vote' || r.path === '/beacon')).toBe(false);
    expect(log.filter((r) => r.path === '/items')).toHaveLength(1);
  }, 90_000);
});
