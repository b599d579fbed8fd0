/**
 * The report built during a rendered crawl lists rendering browsers'
 * requests per host, with the very numbers of the crawl's summary (counted
 * at the host each request went to); a report without them has no such
 * section.
 */
import { describe, expect, it } from 'vitest';
import { createReportTap } from '../../src/report/report-tap.js';
import { createStats, formatSummary, statsToJson } from '../../src/output/summary.js';
import { countSubrequest } from '../../src/render/subrequest-stats.js';
import { FakeClock } from '../support/fake-clock.js';

const policyFor = () => ({ intervalMs: 1000, rateLabel: '1/s' });

function rowsOf(html: string): string[][] {
  const section = /<section id="browser-requests">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? '';
  return [...section.matchAll(/<tr><td class="host">([^<]*)<\/td>((?:<td class="num">[^<]*<\/td>)+)<\/tr>/g)].map((m) => [
    m[1],
    ...[...m[2].matchAll(/<td class="num">([^<]*)<\/td>/g)].map((c) => c[1]),
  ]);
}

describe('report: browser requests per host', () => {
  it("shows the summary's per-host counts, most requests first", async () => {
    const stats = createStats(new FakeClock());
    const events: Array<[string, 'fetched' | 'cached' | 'blocked' | 'disallowed', number]> = [
      ['cdn.example', 'fetched', 3],
      ['cdn.example', 'cached', 40],
      ['api.example', 'fetched', 12],
      ['api.example', 'disallowed', 2],
      ['app.example', 'blocked', 9],
    ];
    for (const [host, outcome, n] of events) for (let i = 0; i < n; i++) countSubrequest(stats, { url: `https://${host}/x`, type: 'script', host, outcome });
    // A failed request and one with no host are not counted, in the summary or here.
    countSubrequest(stats, { url: 'https://cdn.example/y', type: 'script', host: 'cdn.example', outcome: 'failed' });

    const tap = createReportTap({ hostKey: 'host', policyFor });
    const html = await tap.render('crawl', stats);
    const summary = statsToJson(stats)
      .hosts.filter((h) => h.subrequests)
      .map((h) => [h.host, ...Object.values(h.subrequests!).map(String)]);
    expect(rowsOf(html)).toEqual([
      ['cdn.example', '3', '40', '0', '0'],
      ['api.example', '12', '0', '0', '2'],
      ['app.example', '0', '0', '9', '0'],
    ]);
    expect(new Set(rowsOf(html).map((r) => r.join()))).toEqual(new Set(summary.map((r) => r.join())));
    expect(formatSummary(stats)).toContain('cdn.example: 3 fetched, 40 cached, 0 blocked, 0 disallowed by robots.txt');
  });

  it('is left out when no browser asked anything', async () => {
    const tap = createReportTap({ hostKey: 'host', policyFor });
    const html = await tap.render('crawl', createStats(new FakeClock()));
    expect(html).not.toContain('browser-requests');
  });
});
