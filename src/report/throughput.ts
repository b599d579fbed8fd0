/**
 * The whole crawl over time: pages and bytes per second, errors per second
 * by kind, and the average number of requests in flight, in a bounded
 * number of buckets (bucket-series.ts).
 *
 * In flight is exact, not sampled: the time-average of the number of open
 * requests over a bucket is the sum of each request's overlap with it. With
 * f(t) = starts before t − ends before t, the overlap of all requests with
 * [b0, b1) is f(b0)·w + Σ_starts in bucket (b1 − s) − Σ_ends in bucket (b1 − e),
 * so each bucket keeps the count and the sum of its starts and of its ends:
 * sums, which merge exactly when the buckets do. Times are summed as offsets
 * from the first time seen, so a million epoch milliseconds keep their
 * precision.
 */
import { BucketSeries, type BucketSeriesOptions } from './bucket-series.js';
import type { PageView } from './record-view.js';

const PAGES = 0;
const BYTES = 1;
const ERRORS = 2;
const HTTP4XX = 3;
const HTTP5XX = 4;
const THROTTLED = 5;
const STARTS = 6;
const START_SUM = 7;
const ENDS = 8;
const END_SUM = 9;

export interface ThroughputData {
  /** Bucket starts, seconds from `originMs`. */
  t: number[];
  originMs: number;
  widthMs: number;
  pagesPerSecond: number[];
  bytesPerSecond: number[];
  /** Page records with an error code (no HTTP answer, or given up), per second. */
  errorsPerSecond: number[];
  /** 4xx answers other than throttling, per second. */
  http4xxPerSecond: number[];
  /** 5xx answers other than throttling, per second. */
  http5xxPerSecond: number[];
  /** 429/503 answers (throttle events and records), per second. */
  throttledPerSecond: number[];
  /** Time-averaged requests in flight. */
  inFlight: number[];
}

export const THROTTLE_STATUSES = new Set([429, 503]);

export class Throughput {
  private readonly series: BucketSeries;
  private ref = NaN;

  constructor(opts: BucketSeriesOptions = {}) {
    this.series = new BucketSeries(['sum', 'sum', 'sum', 'sum', 'sum', 'sum', 'sum', 'sum', 'sum', 'sum'], opts);
  }

  add(p: PageView): void {
    if (!Number.isFinite(p.startMs)) return;
    if (Number.isNaN(this.ref)) this.ref = p.startMs;
    const end = p.startMs + p.elapsedMs;
    const s = this.series;
    s.add(p.startMs, STARTS, 1);
    s.add(p.startMs, START_SUM, p.startMs - this.ref);
    s.add(end, ENDS, 1);
    s.add(end, END_SUM, end - this.ref);
    s.add(end, PAGES, 1);
    s.add(end, BYTES, p.bytes);
    if (p.errorCode !== null) s.add(end, ERRORS, 1);
    if (p.status !== null && THROTTLE_STATUSES.has(p.status)) s.add(end, THROTTLED, 1);
    else if (p.status !== null && p.status >= 500) s.add(end, HTTP5XX, 1);
    else if (p.status !== null && p.status >= 400) s.add(end, HTTP4XX, 1);
    for (const t of p.throttles) s.add(t.at, THROTTLED, 1);
  }

  /** `originMs` is the crawl's start, which the x axis counts from. */
  finish(originMs: number): ThroughputData {
    const d = this.series.data();
    const w = d.widthMs;
    const n = d.columns[0].length;
    const col = (i: number) => d.columns[i] as number[];
    const perSecond = (i: number) => col(i).map((v) => (v * 1000) / w);
    const inFlight: number[] = [];
    let open = 0;
    for (let i = 0; i < n; i++) {
      const b1 = d.startMs + (i + 1) * w - this.ref;
      const area = open * w + (col(STARTS)[i] * b1 - col(START_SUM)[i]) - (col(ENDS)[i] * b1 - col(END_SUM)[i]);
      inFlight.push(Math.max(0, area / w));
      open += col(STARTS)[i] - col(ENDS)[i];
    }
    return {
      t: Array.from({ length: n }, (_, i) => (d.startMs + i * w - originMs) / 1000),
      originMs,
      widthMs: w,
      pagesPerSecond: perSecond(PAGES),
      bytesPerSecond: perSecond(BYTES),
      errorsPerSecond: perSecond(ERRORS),
      http4xxPerSecond: perSecond(HTTP4XX),
      http5xxPerSecond: perSecond(HTTP5XX),
      throttledPerSecond: perSecond(THROTTLED),
      inFlight,
    };
  }
}
