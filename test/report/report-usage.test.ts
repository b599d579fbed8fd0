/** The report counts pages a site denied a declared purpose (--purpose), per host, and says how far and why a host was slowed, from records and from what a state file keeps. */
import { describe, expect, it } from 'vitest';
import { ReportBuilder } from '../../src/report/report-builder.js';
import { viewRecord } from '../../src/report/record-view.js';
import { keptRecord } from '../../src/report/kept-record.js';
import { renderReport } from '../../src/report/render-html.js';
import type { OutputRecord, PageRecord } from '../../src/types.js';
import { pageRecord } from '../support/page-record.js';

const page = (url: string, usageDenied?: PageRecord['usageDenied']): PageRecord => pageRecord(url, usageDenied ? { usageDenied } : {});
const skip = (url: string): OutputRecord => ({ type: 'skipped', url, reason: 'usage-denied', depth: 1, parent: null, usageDenied: 'train-ai' });

describe('report: pages denied a declared purpose', () => {
  it('counts them per host and purpose, content withheld apart from not requested, also from a state file, and shows the table only then', async () => {
    const records = [
      page('http://a.test/1', 'train-ai'),
      page('http://a.test/2', 'train-ai'),
      page('http://b.test/1', 'search'),
      page('http://a.test/3'),
      skip('http://a.test/4'),
    ];
    for (const view of [(r: OutputRecord) => viewRecord(r), (r: OutputRecord) => viewRecord(keptRecord(r))]) {
      const b = new ReportBuilder();
      for (const r of records) b.add(view(r)!);
      const d = b.finish({ source: 'x', generator: 'test', now: new Date(0) });
      expect(d.usageDenied).toEqual([
        ['a.test: train-ai, content withheld', 2],
        ['a.test: train-ai, not requested', 1],
        ['b.test: search, content withheld', 1],
      ]);
      expect(await renderReport(d)).toContain('Denied a declared purpose by the site');
    }
    const plain = new ReportBuilder();
    plain.add(viewRecord(page('http://a.test/1'))!);
    const d = plain.finish({ source: 'x', generator: 'test', now: new Date(0) });
    expect(d.usageDenied).toEqual([]);
    expect(await renderReport(d)).not.toContain('Denied a declared purpose');
  });
});

describe('report: hosts slowed below their configured rate', () => {
  it('names the lowest fraction a host ran at and why, from records and from a state file', async () => {
    const slowedPage = (n: number, factor: number, why: string): PageRecord => ({ ...page(`http://a.test/s${n}`), slowed: { factor, why } });
    const records = [
      page('http://a.test/0'),
      slowedPage(1, 0.75, 'latency 90 ms vs 50 ms baseline'),
      slowedPage(2, 0.42, 'latency 140 ms vs 50 ms baseline'),
      page('http://b.test/'),
    ];
    for (const view of [(r: OutputRecord) => viewRecord(r), (r: OutputRecord) => viewRecord(keptRecord(r))]) {
      const b = new ReportBuilder();
      for (const r of records) b.add(view(r)!);
      const d = b.finish({ source: 'x', generator: 'test', now: new Date(0) });
      expect(d.hosts.find((h) => h.host === 'a.test')!.slowest).toEqual({ factor: 0.42, why: 'latency 140 ms vs 50 ms baseline' });
      expect(d.hosts.find((h) => h.host === 'b.test')!.slowest).toBeNull();
      expect(await renderReport(d)).toContain('slowed to 42% at most: latency 140 ms vs 50 ms baseline');
    }
  });
});
