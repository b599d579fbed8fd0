/**
 * One host's request starts, as the politeness they show: the gaps between
 * consecutive starts against the configured gap, the longest pauses, the
 * achieved rate, and a bucketed timeline (starts, smallest and largest gap
 * per bucket) for its chart.
 *
 * Records arrive in completion order, not start order (a host with
 * concurrency 2 finishes a slow page after a fast later one), so starts pass
 * through a small reorder buffer first: the earliest of the last
 * REORDER_BUFFER starts is taken as the next one. That is exact as long as
 * no request finishes more than REORDER_BUFFER requests later than one that
 * started after it; a start older than the last one taken is counted as
 * `outOfOrder` and left out of the gaps. Memory per host is constant.
 */
import { BucketSeries, type BucketData } from './bucket-series.js';
import { LogHistogram } from './log-histogram.js';
import { TopN } from './top-n.js';

export const REORDER_BUFFER = 16;
/** Timestamps are whole milliseconds: a gap this much under the configured one still counts as kept. */
export const GAP_TOLERANCE_MS = 1;

/** Timeline fields. */
export const STARTS = 0;
export const MIN_GAP = 1;
export const MAX_GAP = 2;

export interface Configured {
  intervalMs: number;
  rateLabel: string;
  /** Where the figure comes from: the records themselves, or the config given to `crawl report`. */
  source: 'records' | 'config';
}

export interface Pause {
  /** Epoch ms of the start that ended the pause. */
  atMs: number;
  gapMs: number;
}

export interface GapSummary {
  starts: number;
  gaps: number;
  firstStartMs: number | null;
  lastStartMs: number | null;
  minGapMs: number | null;
  medianGapMs: number | null;
  /** Gaps shorter than the configured gap (minus GAP_TOLERANCE_MS) at the time. */
  belowConfigured: number;
  /** Starts that came too late for the reorder buffer. */
  outOfOrder: number;
  /** Starts per second between the first and last start; null with fewer than two. */
  achievedPerSecond: number | null;
  pauses: Pause[];
  timeline: BucketData;
}

export class HostTimeline {
  private readonly buffer: number[] = []; // sorted ascending
  /** The configured gap, as last given: a host's policy does not change within a crawl. */
  private interval: number | null = null;
  private last: number | null = null;
  private first: number | null = null;
  private taken = 0;
  private gaps = 0;
  private minGap = Infinity;
  private below = 0;
  private outOfOrder = 0;
  private readonly gapHistogram = new LogHistogram();
  private readonly pauses: TopN<Pause>;
  private readonly series: BucketSeries;

  constructor(opts: { maxBuckets?: number; baseWidthMs?: number; pauses?: number } = {}) {
    this.series = new BucketSeries(['sum', 'min', 'max'], { maxBuckets: opts.maxBuckets ?? 120, baseWidthMs: opts.baseWidthMs });
    this.pauses = new TopN(opts.pauses ?? 3);
  }

  /** One request start (epoch ms), with the host's configured gap (null = unknown, or as given before). */
  add(startMs: number, intervalMs: number | null): void {
    if (!Number.isFinite(startMs)) return;
    let i = this.buffer.length;
    while (i > 0 && this.buffer[i - 1] > startMs) i--;
    this.buffer.splice(i, 0, startMs);
    if (intervalMs !== null) this.interval = intervalMs;
    if (this.buffer.length > REORDER_BUFFER) this.take();
  }

  finish(): GapSummary {
    while (this.buffer.length > 0) this.take();
    const span = this.first !== null && this.last !== null ? this.last - this.first : 0;
    return {
      starts: this.taken,
      gaps: this.gaps,
      firstStartMs: this.first,
      lastStartMs: this.last,
      minGapMs: this.gaps > 0 ? this.minGap : null,
      medianGapMs: this.gapHistogram.quantile(0.5),
      belowConfigured: this.below,
      outOfOrder: this.outOfOrder,
      achievedPerSecond: this.taken >= 2 && span > 0 ? ((this.taken - 1) * 1000) / span : null,
      pauses: this.pauses.sorted(),
      timeline: this.series.data(),
    };
  }

  private take(): void {
    const start = this.buffer.shift()!;
    const interval = this.interval;
    if (this.last !== null && start < this.last) {
      this.outOfOrder++;
      return;
    }
    this.taken++;
    this.series.add(start, STARTS, 1);
    if (this.last === null) {
      this.first = start;
    } else {
      const gap = start - this.last;
      this.gaps++;
      if (gap < this.minGap) this.minGap = gap;
      this.gapHistogram.add(gap);
      if (interval !== null && gap < interval - GAP_TOLERANCE_MS) this.below++;
      this.pauses.add(gap, { atMs: start, gapMs: gap });
      this.series.add(start, MIN_GAP, gap);
      this.series.add(start, MAX_GAP, gap);
    }
    this.last = start;
  }
}
