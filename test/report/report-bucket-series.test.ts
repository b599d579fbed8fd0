/** Bucketed time series: exact folds, and coarsening that merges exactly. */
import { describe, expect, it } from 'vitest';
import { BucketSeries } from '../../src/report/bucket-series.js';

describe('BucketSeries', () => {
  it('sums, minima and maxima per bucket, aligned to the epoch', () => {
    const s = new BucketSeries(['sum', 'min', 'max'], { baseWidthMs: 100, maxBuckets: 10 });
    for (const [t, v] of [
      [1050, 5],
      [1099, 3],
      [1100, 7],
      [1350, 1],
    ] as const) {
      s.add(t, 0, 1);
      s.add(t, 1, v);
      s.add(t, 2, v);
    }
    // Buckets [1000,1100) [1100,1200) [1200,1300) [1300,1400).
    expect(s.data()).toEqual({
      startMs: 1000,
      widthMs: 100,
      columns: [
        [2, 1, 0, 1],
        [3, 7, null, 1],
        [5, 7, null, 1],
      ],
    });
  });

  it('takes values out of time order by growing at the front', () => {
    const s = new BucketSeries(['sum'], { baseWidthMs: 10, maxBuckets: 10 });
    s.add(50, 0, 1);
    s.add(20, 0, 2);
    expect(s.data()).toEqual({ startMs: 20, widthMs: 10, columns: [[2, 0, 0, 1]] });
  });

  it('doubles the width and merges neighbours when the span outgrows maxBuckets', () => {
    const s = new BucketSeries(['sum', 'min'], { baseWidthMs: 10, maxBuckets: 4 });
    // Indexes 3..6 at width 10: four buckets, the limit.
    for (const t of [30, 40, 50, 60]) {
      s.add(t, 0, 1);
      s.add(t, 1, t);
    }
    expect(s.widthMs).toBe(10);
    s.add(75, 0, 1); // index 7: five buckets → width 20, indexes 1..3
    s.add(75, 1, 75);
    // Width 20: [20,40) holds 30; [40,60) holds 40, 50; [60,80) holds 60, 75.
    expect(s.data()).toEqual({
      startMs: 20,
      widthMs: 20,
      columns: [
        [1, 2, 2],
        [30, 40, 60],
      ],
    });
  });

  it('a value far away coarsens first instead of allocating the whole span', () => {
    const s = new BucketSeries(['sum'], { baseWidthMs: 1, maxBuckets: 8 });
    s.add(0, 0, 1);
    s.add(1_000_000, 0, 1);
    const d = s.data();
    expect(d.columns[0].length).toBeLessThanOrEqual(8);
    expect(d.columns[0].reduce((a, b) => a! + b!, 0)).toBe(2);
    expect(Math.log2(d.widthMs) % 1).toBe(0); // still the base width times a power of two
  });

  it('coarsenTo lines a series up with a wider one', () => {
    const s = new BucketSeries(['sum'], { baseWidthMs: 10 });
    s.add(5, 0, 1);
    s.add(15, 0, 1);
    s.coarsenTo(40);
    expect(s.data()).toEqual({ startMs: 0, widthMs: 40, columns: [[2]] });
  });
});
