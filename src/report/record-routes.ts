/**
 * Where a command-line crawl's records go besides the output: into the report
 * built during the crawl (`--report`), into the state's record log (`--state`,
 * `--redis`, for `crawl report --state` later), and robots.txt records to the
 * output only when asked (`--emit-robots`: scripts that count lines or filter
 * on `.type` see no new kind of record unless they ask for it). With
 * `--items-only`, the output gets the handlers' items and nothing else.
 *
 * The crawl writes robots.txt records whenever one of those wants them
 * (`robotsRecords`); the report and the record log always get them.
 */
import { wrapSink, type RecordSink } from '../output/sink.js';
import type { RecordLog } from '../store/crawl-store.js';
import type { OutputRecord } from '../types.js';
import { keptRecord } from './kept-record.js';
import type { ReportTap } from './report-tap.js';

export interface RecordRoutes {
  /** The sink to give the crawl. */
  sink: RecordSink;
  /** Whether the crawl should write robots.txt records at all. */
  robotsRecords: boolean;
}

export function routeRecords(out: RecordSink, opts: { emitRobots?: boolean; itemsOnly?: boolean; tap?: ReportTap; log?: RecordLog }): RecordRoutes {
  const { tap, log } = opts;
  const emitRobots = opts.emitRobots ?? false;
  const itemsOnly = opts.itemsOnly ?? false;
  let sink = out;
  if (log || !emitRobots || itemsOnly) {
    sink = wrapSink(out, {
      write(record: OutputRecord) {
        const kept = log?.append(keptRecord(record));
        const wanted = itemsOnly ? record.type === 'item' : record.type !== 'robots' || emitRobots;
        const written = wanted ? out.write(record) : undefined;
        if (kept instanceof Promise) return written ? Promise.all([kept, written]).then(() => undefined) : kept;
        return written ?? Promise.resolve();
      },
    });
  }
  if (tap) sink = tap.wrap(sink);
  return { sink, robotsRecords: emitRobots || tap !== undefined || log !== undefined };
}
