/** The report counts a re-crawl's changes (crawl/recrawl.ts), from records and from what a state file keeps. */
import { describe, expect, it } from 'vitest';
import { ReportBuilder } from '../../src/report/report-builder.js';
import { viewRecord } from '../../src/report/record-view.js';
import { keptRecord } from '../../src/report/kept-record.js';
import { renderReport } from '../../src/report/render-html.js';
import type { PageRecord } from '../../src/types.js';
import { pageRecord } from '../support/page-record.js';

const page = (n: number, change?: PageRecord['change']): PageRecord =>
  pageRecord(`http://a.test/${n}`, { status: change === 'removed' ? 404 : 200, ...(change && { change }) });

describe('report: changes since the last pass', () => {
  it('counts each kind, also from the fields a state file keeps, and shows the table only for a re-crawl', async () => {
    const records = [page(1, 'unchanged'), page(2, 'unchanged'), page(3, 'changed'), page(4, 'new'), page(5, 'removed'), page(6)];
    const b = new ReportBuilder();
    for (const r of records) b.add(viewRecord(keptRecord(r))!);
    const d = b.finish({ source: 'x', generator: 'test', now: new Date(0) });
    expect(d.changes).toEqual([
      ['unchanged', 2],
      ['changed', 1],
      ['new', 1],
      ['removed', 1],
    ]);
    expect(await renderReport(d)).toContain('Changes since the last pass');
    const first = new ReportBuilder();
    first.add(viewRecord(page(1))!);
    const plain = first.finish({ source: 'x', generator: 'test', now: new Date(0) });
    expect(plain.changes).toEqual([]);
    expect(await renderReport(plain)).not.toContain('Changes since the last pass');
  });
});
