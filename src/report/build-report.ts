/**
 * The report as a library: records in, one self-contained HTML file out.
 *
 *   const data = await aggregateRecords(createReadStream(file), { source: file });
 *   const html = await renderReport(data);
 */
import { VERSION } from '../version.js';
import type { HostKeyMode } from '../config/settings-types.js';
import type { PolicyLookup } from './host-stats.js';
import { readRecords, ReportInputError } from './record-reader.js';
import { viewRecord } from './record-view.js';
import { ReportBuilder, type ReportData, type ReportLimits } from './report-builder.js';

export interface AggregateOptions {
  /** Names the input in the report and in error messages. */
  source: string;
  /** How host keys are derived from URLs when the records do not carry one. @default "host" */
  hostKey?: HostKeyMode;
  /** Configured rates per host key, when the records do not carry them. */
  policyFor?: PolicyLookup;
  limits?: Partial<ReportLimits>;
  /** Stamped as the report's generation time. @default new Date() */
  now?: Date;
}

export async function aggregateRecords(input: AsyncIterable<Buffer | string>, opts: AggregateOptions): Promise<ReportData> {
  const builder = new ReportBuilder({ policyFor: opts.policyFor, limits: opts.limits });
  await readRecords(input, opts.source, { record: (r) => builder.add(r), badLine: (n) => builder.addBadLine(n) }, opts.hostKey);
  return builder.finish({ source: opts.source, generator: `crawl ${VERSION}`, now: opts.now });
}

/**
 * The same from records already parsed (a state file's record log, whose
 * rows are the records' JSON): values that are not records are counted as
 * bad lines, by position.
 */
export async function aggregateValues(input: AsyncIterable<unknown>, opts: AggregateOptions): Promise<ReportData> {
  const builder = new ReportBuilder({ policyFor: opts.policyFor, limits: opts.limits });
  let n = 0;
  for await (const value of input) {
    n++;
    const view = viewRecord(value, opts.hostKey);
    if (view) builder.add(view);
    else builder.addBadLine(n);
  }
  if (builder.recordCount === 0) throw new ReportInputError(`${opts.source}: no crawl records in it yet`);
  return builder.finish({ source: opts.source, generator: `crawl ${VERSION}`, now: opts.now });
}

export { renderReport } from './render-html.js';
export type { ReportData } from './report-builder.js';
