/** Bounded top lists and log-histogram quantiles. */
import { describe, expect, it } from 'vitest';
import { TopN } from '../../src/report/top-n.js';
import { LogHistogram, binOf, upperEdge } from '../../src/report/log-histogram.js';

describe('TopN', () => {
  it('keeps the N largest, largest first, earlier first among equals', () => {
    const top = new TopN<string>(3);
    for (const [k, v] of [
      [5, 'a'],
      [1, 'b'],
      [9, 'c'],
      [5, 'd'],
      [7, 'e'],
      [5, 'f'],
    ] as const)
      top.add(k, v);
    expect(top.sorted()).toEqual(['c', 'e', 'a']);
    expect(top.size).toBe(3);
    expect(top.accepts(5)).toBe(false);
    expect(top.accepts(6)).toBe(true);
  });

  it('with N = 0 keeps nothing', () => {
    const top = new TopN<number>(0);
    top.add(1, 1);
    expect(top.sorted()).toEqual([]);
  });
});

describe('LogHistogram', () => {
  it('answers quantiles with the upper edge of the bin that holds them', () => {
    const h = new LogHistogram();
    for (const ms of [0, 10, 10, 10, 1000]) h.add(ms);
    // 10 ms: log2(10) = 3.32 → bin 14, upper edge 2^(14/4) = 11.3 → 11.
    expect(binOf(10)).toBe(14);
    expect(h.quantile(0.5)).toBe(11);
    expect(h.quantile(0.2)).toBe(1); // the 0 ms value, bin 0
    expect(h.quantile(1)).toBe(upperEdge(binOf(1000)));
    expect(h.count).toBe(5);
    expect(new LogHistogram().quantile(0.5)).toBeNull();
  });
});
