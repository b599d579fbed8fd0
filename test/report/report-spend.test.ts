/** The report adds up what servers charged (HTTP 402 pricing) per currency and host, exactly, from records and from what a state file keeps. */
import { describe, expect, it } from 'vitest';
import { ReportBuilder } from '../../src/report/report-builder.js';
import { viewRecord } from '../../src/report/record-view.js';
import { keptRecord } from '../../src/report/kept-record.js';
import { renderReport } from '../../src/report/render-html.js';
import type { OutputRecord, PageRecord } from '../../src/types.js';
import { pageRecord } from '../support/page-record.js';

const page = (url: string, charged?: string): PageRecord => pageRecord(url, charged ? { charged: { amount: charged, currency: 'USD' } } : {});

describe('report: spend on priced pages', () => {
  it('sums charges per host and in total, exactly, and shows the table only then', async () => {
    // Ten charges of 0.1 are 1.00 exactly (floats say 0.9999999999999999).
    const records: OutputRecord[] = [
      ...Array.from({ length: 10 }, (_, i) => page(`http://a.test/${i}`, '0.1')),
      page('http://b.test/1', '0.01'),
      page('http://b.test/2'),
    ];
    for (const view of [(r: OutputRecord) => viewRecord(r), (r: OutputRecord) => viewRecord(keptRecord(r))]) {
      const b = new ReportBuilder();
      for (const r of records) b.add(view(r)!);
      const d = b.finish({ source: 'x', generator: 'test', now: new Date(0) });
      expect(d.spend).toEqual([
        { currency: 'USD', host: '', amount: '1.01', pages: 11 },
        { currency: 'USD', host: 'a.test', amount: '1.00', pages: 10 },
        { currency: 'USD', host: 'b.test', amount: '0.01', pages: 1 },
      ]);
      expect(await renderReport(d)).toContain('Spent on priced pages (HTTP 402)');
    }
    const none = new ReportBuilder();
    none.add(viewRecord(page('http://c.test/'))!);
    const d = none.finish({ source: 'x', generator: 'test', now: new Date(0) });
    expect(d.spend).toEqual([]);
    expect(await renderReport(d)).not.toContain('Spent on priced pages');
  });
});
