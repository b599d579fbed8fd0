/** One host's starts: gaps in start order, against the configured gap. */
import { describe, expect, it } from 'vitest';
import { HostTimeline, REORDER_BUFFER } from '../../src/report/host-timeline.js';

describe('HostTimeline', () => {
  it('measures gaps between starts in start order, whatever the arrival order', () => {
    const h = new HostTimeline({ baseWidthMs: 1000, maxBuckets: 100 });
    // Records come in completion order; starts are 0, 1000, 2000, 2600, 8600.
    for (const t of [1000, 0, 2600, 2000, 8600]) h.add(10_000 + t, 1000);
    const s = h.finish();
    expect(s.starts).toBe(5);
    expect(s.gaps).toBe(4);
    expect(s.minGapMs).toBe(600); // 2000 → 2600
    expect(s.belowConfigured).toBe(1); // only the 600 ms gap is under 1000 ms
    expect(s.firstStartMs).toBe(10_000);
    expect(s.lastStartMs).toBe(18_600);
    expect(s.achievedPerSecond).toBeCloseTo(4000 / 8600, 10); // 4 gaps over 8.6 s
    expect(s.pauses[0]).toEqual({ atMs: 18_600, gapMs: 6000 });
    expect(s.pauses.map((p) => p.gapMs)).toEqual([6000, 1000, 1000]);
    // Buckets of 1 s from 10 s: starts 1,1,2 (2000, 2600),0,0,0,0,0,1.
    expect(s.timeline.columns[0]).toEqual([1, 1, 2, 0, 0, 0, 0, 0, 1]);
    expect(s.timeline.columns[1]).toEqual([null, 1000, 600, null, null, null, null, null, 6000]);
    expect(s.timeline.columns[2]).toEqual([null, 1000, 1000, null, null, null, null, null, 6000]);
  });

  it('allows one millisecond of rounding, and knows nothing without a configured gap', () => {
    const h = new HostTimeline();
    h.add(0, 500);
    h.add(499, 500); // 1 ms short: timestamps are whole ms, still kept
    h.add(997, 500); // 2 ms short: too short
    h.add(2000, null); // keeps the gap given before
    const s = h.finish();
    expect(s.belowConfigured).toBe(1);
    expect(s.minGapMs).toBe(498);
    const unknown = new HostTimeline();
    unknown.add(0, null);
    unknown.add(10, null);
    expect(unknown.finish()).toMatchObject({ gaps: 1, minGapMs: 10, belowConfigured: 0 });
  });

  it('counts a start older than the reorder buffer can hold as out of order', () => {
    const h = new HostTimeline();
    for (let i = 1; i <= REORDER_BUFFER + 1; i++) h.add(i * 100, null);
    h.add(50, null); // the first start was already taken: too late
    const s = h.finish();
    expect(s.outOfOrder).toBe(1);
    expect(s.starts).toBe(REORDER_BUFFER + 1);
    expect(s.minGapMs).toBe(100);
  });

  it('a single start has no gaps and no rate', () => {
    const h = new HostTimeline();
    h.add(5, 1000);
    expect(h.finish()).toMatchObject({ starts: 1, gaps: 0, minGapMs: null, achievedPerSecond: null, pauses: [] });
  });
});
