/**
 * A report built while the crawl runs: a RecordSink that passes every record
 * on to the real sink and into a ReportBuilder, so `crawl … --report FILE`
 * needs no records file to read back (stdout may be a pipe) and memory stays
 * the builder's bounded aggregates. What the records do not carry comes from
 * the crawl itself: its configured rates (so the report never warns that
 * they may differ from the crawl's) and, at the end, its skip counts (skip
 * records are written only when asked for) and what rendering browsers asked
 * of each host.
 */
import { wrapSink, type RecordSink } from '../output/sink.js';
import type { CrawlStats } from '../output/summary.js';
import type { HostKeyMode, HostPolicy } from '../config/settings-types.js';
import type { OutputRecord } from '../types.js';
import { VERSION } from '../version.js';
import { renderReport } from './render-html.js';
import { ReportBuilder } from './report-builder.js';
import { viewRecord } from './record-view.js';

export interface ReportTap {
  /** `sink` with every record also counted into the report. */
  wrap(sink: RecordSink): RecordSink;
  /** The report's HTML for what passed so far; `stats`, the crawl's own counts, supply the skips. */
  render(source: string, stats?: Pick<CrawlStats, 'skippedByReason' | 'perHost'>): Promise<string>;
}

export function createReportTap(opts: { hostKey: HostKeyMode; policyFor: (host: string) => Pick<HostPolicy, 'intervalMs' | 'rateLabel'> }): ReportTap {
  const builder = new ReportBuilder({ policyFor: (host) => opts.policyFor(host), policyOrigin: 'crawl' });
  const take = (record: OutputRecord): void => {
    // The report reads records as they are on disk: a JSON round trip keeps the two paths identical.
    const view = viewRecord(JSON.parse(JSON.stringify(record)), opts.hostKey);
    if (view) builder.add(view);
  };
  return {
    wrap(sink) {
      return wrapSink(sink, {
        write(record) {
          take(record);
          return sink.write(record);
        },
      });
    },
    render(source, stats) {
      if (stats) builder.useSkipCounts({ byReason: stats.skippedByReason, byHost: [...stats.perHost].map(([host, h]) => [host, h.skipped]) });
      // Browser requests by the host they went to: only the crawl knows (records carry their page's counts).
      if (stats) builder.useSubrequestCounts([...stats.perHost].flatMap(([host, h]) => (h.subrequests ? [{ host, ...h.subrequests }] : [])));
      return renderReport(builder.finish({ source, generator: `crawl ${VERSION}` }));
    },
  };
}
