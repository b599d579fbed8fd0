/**
 * A time series in a bounded number of buckets, for charts of crawls of any
 * length.
 *
 * Contract: buckets are aligned to whole multiples of the bucket width on the
 * epoch (`index = floor(t / width)`), and the width is the base width times a
 * power of two. When a new value would make the series span more than
 * `maxBuckets` buckets, the width doubles and neighbouring buckets merge
 * (2i and 2i+1 become i): exact for sums, minima and maxima, and possible at
 * any moment without knowing the crawl's length in advance. Two series with
 * the same base width can always be brought to a common width the same way.
 * Values may arrive out of time order.
 */

/** How a field folds the values that land in one bucket. */
export type Fold = 'sum' | 'min' | 'max';

export interface BucketSeriesOptions {
  /** The finest bucket width. @default 100 */
  baseWidthMs?: number;
  /** At most this many buckets between the first and the last (inclusive). @default 1000 */
  maxBuckets?: number;
}

/** A finished series: bucket `i` covers [startMs + i·widthMs, startMs + (i+1)·widthMs). */
export interface BucketData {
  startMs: number;
  widthMs: number;
  /** One column per field; empty min/max buckets are null. */
  columns: Array<Array<number | null>>;
}

const EMPTY: Record<Fold, number> = { sum: 0, min: Infinity, max: -Infinity };

export class BucketSeries {
  private width: number;
  private readonly maxBuckets: number;
  /** Bucket index of columns[f][0]; NaN while empty. */
  private lo = NaN;
  private readonly columns: number[][];

  constructor(
    private readonly folds: readonly Fold[],
    opts: BucketSeriesOptions = {},
  ) {
    this.width = opts.baseWidthMs ?? 100;
    this.maxBuckets = Math.max(2, opts.maxBuckets ?? 1000);
    this.columns = folds.map(() => []);
  }

  get widthMs(): number {
    return this.width;
  }

  get length(): number {
    return this.columns[0].length;
  }

  /** Folds `value` into field `field` of the bucket holding time `t` (epoch ms). */
  add(t: number, field: number, value: number): void {
    if (!Number.isFinite(t)) return;
    const i = this.slot(t);
    const col = this.columns[field];
    switch (this.folds[field]) {
      case 'sum':
        col[i] += value;
        break;
      case 'min':
        if (value < col[i]) col[i] = value;
        break;
      case 'max':
        if (value > col[i]) col[i] = value;
        break;
    }
  }

  /** Doubles the width until it is at least `widthMs` (used to line series up). */
  coarsenTo(widthMs: number): void {
    while (this.width < widthMs) this.coarsen();
  }

  data(): BucketData {
    const startMs = Number.isNaN(this.lo) ? 0 : this.lo * this.width;
    return {
      startMs,
      widthMs: this.width,
      columns: this.columns.map((col, f) => (this.folds[f] === 'sum' ? col.slice() : col.map((v) => (Number.isFinite(v) ? v : null)))),
    };
  }

  /** The array position for time t, growing (and coarsening) the series as needed. */
  private slot(t: number): number {
    let idx = Math.floor(t / this.width);
    if (Number.isNaN(this.lo)) {
      this.lo = idx;
      this.grow(1, false);
      return 0;
    }
    for (;;) {
      const hi = this.lo + this.length - 1;
      const span = Math.max(hi, idx) - Math.min(this.lo, idx) + 1;
      if (span <= this.maxBuckets) break;
      this.coarsen();
      idx = Math.floor(t / this.width);
    }
    if (idx < this.lo) {
      this.grow(this.lo - idx, true);
      this.lo = idx;
    } else if (idx >= this.lo + this.length) {
      this.grow(idx - this.lo - this.length + 1, false);
    }
    return idx - this.lo;
  }

  private grow(n: number, front: boolean): void {
    this.folds.forEach((fold, f) => {
      const fill = new Array<number>(n).fill(EMPTY[fold]);
      const col = this.columns[f];
      if (front) col.unshift(...fill);
      else for (const v of fill) col.push(v);
    });
  }

  private coarsen(): void {
    const newLo = Math.floor(this.lo / 2);
    const length = this.length;
    this.folds.forEach((fold, f) => {
      const old = this.columns[f];
      const next: number[] = [];
      for (let i = 0; i < length; i++) {
        const j = Math.floor((this.lo + i) / 2) - newLo;
        const v = old[i];
        if (j >= next.length) next.push(v);
        else next[j] = fold === 'sum' ? next[j] + v : fold === 'min' ? Math.min(next[j], v) : Math.max(next[j], v);
      }
      this.columns[f] = next;
    });
    this.width *= 2;
    this.lo = newLo;
  }
}
