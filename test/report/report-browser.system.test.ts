/**
 * The report in a real browser (Debian's chromium through playwright-core):
 * opened from disk, every chart drawn with data, not one network request,
 * the failures filter working, and a screenshot in test-output/ to look at.
 * Skipped, saying why, when chromium is not installed; under .ci/run (which
 * installs it) a missing browser fails instead.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createReadStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { aggregateRecords, renderReport, type ReportData } from '../../src/report/build-report.js';
import { writeSyntheticRecords } from '../../bench/report.js';
import { chromium as browserFixture } from '../support/system-fixtures.js';

// CI (.ci/run) installs chromium and sets CRAWL_REQUIRE_SERVICES=1: there a missing browser fails the tests instead of skipping them.
const executablePath = browserFixture.path;
const available = browserFixture.missing === undefined;
if (!available) console.warn(`report-browser: skipped, ${browserFixture.missing}`);

const outputDir = fileURLToPath(new URL('../../test-output/', import.meta.url));

describe.skipIf(!available)('the report in chromium', () => {
  let dir: string;
  let browser: Browser;
  let page: Page;
  let data: ReportData;
  let reportUrl: string;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-report-browser-'));
    const records = join(dir, 'pages.jsonl');
    const { hosts } = await writeSyntheticRecords(records, { records: 20_000, hosts: 12 });
    const intervals = new Map(hosts.map((h) => [h.host, h.intervalMs]));
    data = await aggregateRecords(createReadStream(records), {
      source: 'pages.jsonl',
      policyFor: (host) => (intervals.has(host) ? { intervalMs: intervals.get(host)!, rateLabel: `${1000 / intervals.get(host)!}/s` } : null),
    });
    const file = join(dir, 'report.html');
    await writeFile(file, await renderReport(data));
    reportUrl = pathToFileURL(file).href;

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'], timeout: 30_000 });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(reportUrl, { waitUntil: 'load', timeout: 30_000 });
    await page.waitForSelector('html[data-ready="1"]', { timeout: 10_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('draws every chart, with data, without a script error', async () => {
    const charts = await page.$$eval('.chart', (els) =>
      els.map((el) => {
        const canvas = el.querySelector('canvas');
        let inked = 0;
        if (canvas) {
          const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
        }
        return { id: el.id, points: Number(el.getAttribute('data-points') ?? 0), inked, width: canvas?.width ?? 0 };
      }),
    );
    expect(charts.map((c) => c.id)).toEqual(['chart-throughput', 'chart-load', ...data.charts.map((_, i) => `chart-host-${i}`)]);
    expect(data.charts.length).toBe(8);
    for (const c of charts) {
      expect(c.points, c.id).toBeGreaterThan(10);
      expect(c.width, c.id).toBeGreaterThan(200);
      expect(c.inked, c.id).toBeGreaterThan(500); // lines actually drawn on the canvas
    }
    expect(errors).toEqual([]);
  });

  it("shades each host's 429 pauses and marks its robots.txt requests", async () => {
    const marks = await page.$$eval('[id^="chart-host-"]', (els) =>
      els.map((el) => {
        const plot = (
          el as unknown as {
            __plot: { valToPos(v: number, s: string, c: boolean): number; bbox: { top: number; height: number }; ctx: CanvasRenderingContext2D };
          }
        ).__plot;
        const chart = (JSON.parse(document.getElementById('report-data')!.textContent) as { charts: Array<{ pauses: number[][] }> }).charts[
          Number(el.id.slice(11))
        ];
        // Down the middle of the longest pause: the share of pixels shaded cyan (bluer than red; lines cross it here and there).
        const longest = [...chart.pauses].sort((a, b) => b[1] - b[0] - (a[1] - a[0]))[0];
        let cyan: number | null = null;
        if (longest) {
          const x = Math.round(plot.valToPos((longest[0] + longest[1]) / 2, 'x', true));
          const px = plot.ctx.getImageData(x, Math.round(plot.bbox.top), 1, Math.round(plot.bbox.height)).data;
          let n = 0;
          for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i + 2] - px[i] > 10) n++;
          cyan = n / (px.length / 4);
        }
        return { pauses: Number(el.getAttribute('data-pauses')), robots: Number(el.getAttribute('data-robots')), cyan };
      }),
    );
    expect(marks.map((m) => m.robots)).toEqual(data.charts.map(() => 1));
    expect(marks.map((m) => m.pauses)).toEqual(data.charts.map((c) => c.pauses.length));
    const shaded = marks.filter((m) => m.cyan !== null);
    expect(shaded.length).toBeGreaterThan(0);
    for (const m of shaded) expect(m.cyan).toBeGreaterThan(0.6);
  });

  it('makes no network request: the file itself is the only one', () => {
    expect(requests).toEqual([reportUrl]);
  });

  it('filters the failures table by text and by kind', async () => {
    const visible = () =>
      page.$$eval('#failures tbody tr', (rows) => rows.filter((r) => !(r as HTMLElement).hidden && (r as HTMLElement).offsetParent !== null).length);
    const rows = data.failures.rows;
    expect(await visible()).toBe(rows.length);
    await page.fill('#failure-filter', 'dns_failure');
    const dns = rows.filter((r) => r.kind === 'DNS_FAILURE').length;
    expect(dns).toBeGreaterThan(0);
    expect(await visible()).toBe(dns);
    expect(await page.textContent('#failure-count')).toBe(`${dns} of ${rows.length.toLocaleString('en-US')} rows shown`);
    await page.fill('#failure-filter', 'h3.example');
    const h3 = rows.filter((r) => `${r.url} ${r.host} ${r.kind} ${r.message ?? ''}`.toLowerCase().includes('h3.example')).length;
    expect(await visible()).toBe(h3);
    await page.fill('#failure-filter', '');
    await page.selectOption('#failure-kind', 'HTTP 404');
    expect(await visible()).toBe(rows.filter((r) => r.kind === 'HTTP 404').length);
    await page.selectOption('#failure-kind', '');
    expect(await visible()).toBe(rows.length);
  });

  it('saves a screenshot to test-output/report.png', async () => {
    await mkdir(outputDir, { recursive: true });
    await page.screenshot({ path: join(outputDir, 'report.png'), fullPage: true });
    // One picture per section too: a full page is too tall to look at.
    for (const id of ['overview', 'politeness', 'outcomes', 'speed', 'redirects', 'failures-section']) {
      await page.locator(`#${id}`).screenshot({ path: join(outputDir, `report-${id}.png`) });
    }
    expect(existsSync(join(outputDir, 'report.png'))).toBe(true);
    // The report page's picture (docs/report.md): `UPDATE_SCREENSHOT=1 npx vitest run test/report-browser.system.test.ts` renews it.
    if (process.env.UPDATE_SCREENSHOT) await page.locator('#politeness').screenshot({ path: fileURLToPath(new URL('../../docs/report.png', import.meta.url)) });
    expect(requests).toEqual([reportUrl]);
  });
});
