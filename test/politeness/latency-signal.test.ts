import { describe, expect, it } from 'vitest';
import { LATENCY, describeLatency, initialLatency, median, onLatencySample, type LatencyState } from '../../src/politeness/latency-signal.js';

const feed = (s: LatencyState, ...samples: number[]) => samples.reduce(onLatencySample, s);
const times = (n: number, ms: number) => Array.from({ length: n }, () => ms);
/** A host that answered in 100 ms until its baseline is known. */
const learnt = () => feed(initialLatency(), ...times(LATENCY.window, 100));

describe('latency signal', () => {
  it('takes the median, the mean of the middle two for an even count', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('decides nothing before minSamples answers, then knows its baseline', () => {
    let s = feed(initialLatency(), 100, 100, 100, 100);
    expect(s).toMatchObject({ baselineMs: null, medianMs: null, factor: 1 });
    s = feed(s, 100);
    expect(s).toMatchObject({ baselineMs: 100, medianMs: 100, factor: 1 });
  });

  it('one slow page alone moves nothing', () => {
    const s = feed(learnt(), 5000, ...times(LATENCY.window, 100));
    expect(s).toMatchObject({ factor: 1, baselineMs: 100, decreases: 0 });
    // Even while it is in the window, the median stays put.
    expect(feed(learnt(), 5000).medianMs).toBe(100);
  });

  it('slows the host ×0.75 once the median passes 1.5× the baseline, then waits out the cool-down', () => {
    let s = feed(learnt(), ...times(4, 160));
    expect(s).toMatchObject({ medianMs: 100, factor: 1 }); // 5 of 9 still at 100
    s = feed(s, 160); // now 5 of 9 at 160 > 150
    expect(s).toMatchObject({ medianMs: 160, factor: 0.75, decreases: 1, sinceDecrease: 0 });
    s = feed(s, ...times(LATENCY.cooldown - 1, 160));
    expect(s.factor).toBe(0.75);
    s = feed(s, 160);
    expect(s).toMatchObject({ factor: 0.5625, decreases: 2 });
  });

  it('leaves a fast host alone until its answers rise by minRiseMs, however many times its baseline that is', () => {
    const fast = feed(initialLatency(), ...times(LATENCY.window, 4));
    // 4 ms → 20 ms is 5× but a rise of 16 ms: jitter, or our own process busy.
    expect(feed(fast, ...times(LATENCY.window, 20))).toMatchObject({ factor: 1, decreases: 0 });
    // 4 ms → 30 ms rises by 26 ms: the server is slowing.
    expect(feed(fast, ...times(LATENCY.window, 30)).factor).toBe(LATENCY.decrease);
    // Once slowed, a median within half of minRiseMs of the baseline counts towards recovery.
    const slowed = feed(fast, ...times(LATENCY.minSamples, 30));
    expect(slowed).toMatchObject({ factor: LATENCY.decrease, decreases: 1 });
    const back = feed(slowed, ...times(LATENCY.window + LATENCY.recoverAfter, 12));
    expect(back).toMatchObject({ decreases: 1 });
    expect(back.factor).toBeGreaterThan(LATENCY.decrease);
  });

  it('does not act between 1.2× and 1.5× the baseline, either way', () => {
    const s = feed(learnt(), ...times(30, 145));
    expect(s).toMatchObject({ factor: 1, calm: 0, baselineMs: 100 });
  });

  it('never goes below the floor of 1/8, and at the floor the baseline creeps towards the new normal', () => {
    let s = feed(learnt(), ...times(5 + 6 * LATENCY.cooldown, 300));
    // 0.75^7 = 0.1335: still above the floor; the eighth decrease stops at it.
    expect(s.factor).toBeCloseTo(0.75 ** 7, 10);
    s = feed(s, ...times(LATENCY.cooldown, 300));
    expect(s.factor).toBe(LATENCY.floor);
    const before = s.baselineMs!;
    s = feed(s, 300);
    expect(s.factor).toBe(LATENCY.floor);
    expect(s.baselineMs).toBeCloseTo(before + (300 - before) / 64, 10);
  });

  it('recovers ×1.1 after 8 calm answers in a row, never above 1', () => {
    let s = feed(learnt(), ...times(5, 200)); // one decrease
    expect(s.factor).toBe(0.75);
    s = feed(s, ...times(5, 100)); // 5 of 9 at 100 again: the first calm sample
    expect(s).toMatchObject({ medianMs: 100, calm: 1, factor: 0.75 });
    s = feed(s, ...times(LATENCY.recoverAfter - 1, 100));
    expect(s).toMatchObject({ calm: 0 });
    expect(s.factor).toBeCloseTo(0.825, 10);
    s = feed(s, ...times(3 * LATENCY.recoverAfter, 100));
    expect(s.factor).toBe(1);
    s = feed(s, ...times(3 * LATENCY.recoverAfter, 100));
    expect(s.factor).toBe(1);
  });

  it('lowers its baseline at once when faster answers come, and raises it only slowly at full rate', () => {
    let s = feed(learnt(), ...times(5, 60));
    expect(s.baselineMs).toBe(60);
    s = feed(s, ...times(5, 70)); // 70 < 1.2 × 60: calm, at full rate
    expect(s.baselineMs).toBeGreaterThan(60);
    expect(s.baselineMs).toBeLessThan(61);
  });

  it('says why: the median against the baseline', () => {
    const s = feed(learnt(), ...times(5, 412.4));
    expect(describeLatency(s)).toBe('latency 412 ms vs 100 ms baseline');
  });

  it('keeps its state JSON-safe', () => {
    const s = feed(learnt(), ...times(5, 300));
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});
