/**
 * A report built while the crawl runs: a RecordSink that passes every record
 * on to the real sink and into a ReportBuilder, so `crawl … --report FILE`
 * needs no records file to read back (stdout may be a pipe) and memory stays
 * the builder's bounded aggregates.
 */
import { wrapSink, type RecordSink } from '../output/sink.js';
import type { HostKeyMode, HostPolicy, OutputRecord } from '../types.js';
import { VERSION } from '../version.js';
import { renderReport } from './render-html.js';
import { ReportBuilder } from './report-builder.js';
import { viewRecord } from './record-view.js';

export interface ReportTap {
  /** `sink` with every record also counted into the report. */
  wrap(sink: RecordSink): RecordSink;
  /** The report's HTML for what passed so far. */
  render(source: string): Promise<string>;
}

export function createReportTap(opts: { hostKey: HostKeyMode; policyFor: (host: string) => Pick<HostPolicy, 'intervalMs' | 'rateLabel'> }): ReportTap {
  const builder = new ReportBuilder({ policyFor: (host) => opts.policyFor(host) });
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
    render: (source) => renderReport(builder.finish({ source, generator: `crawl ${VERSION}` })),
  };
}
