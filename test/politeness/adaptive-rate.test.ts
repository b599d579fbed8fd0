import { describe, expect, it } from 'vitest';
import { ADAPTIVE, describeRate, initialFeedback, onFailure, onSuccess, onThrottle, type FeedbackState } from '../../src/politeness/adaptive-rate.js';

describe('adaptive rate policy', () => {
  it('halves on each throttling event, down to a floor', () => {
    let s = initialFeedback();
    const factors: number[] = [];
    for (let i = 0; i < 8; i++) {
      s = onThrottle(s, i * 1000, i * 1000 - 1, true).state;
      factors.push(s.factor);
    }
    expect(factors).toEqual([0.5, 0.25, 0.125, 0.0625, 0.03125, ADAPTIVE.floor, ADAPTIVE.floor, ADAPTIVE.floor]);
  });

  it('counts answers to requests already in flight at the first 429 as one event', () => {
    let s = initialFeedback();
    const first = onThrottle(s, 1000, 900, true);
    expect(first.newEvent).toBe(true);
    s = first.state;
    // Three more 429s for requests started at 950, 990, 1000 (<= the first event's time): same burst.
    for (const startedAt of [950, 990, 1000]) {
      const r = onThrottle(s, 1010, startedAt, true);
      expect(r.newEvent).toBe(false);
      s = r.state;
    }
    expect(s.events).toBe(1);
    expect(s.factor).toBe(0.5);
    // A request started after the event that is throttled again is a new event.
    expect(onThrottle(s, 2000, 1500, true).newEvent).toBe(true);
  });

  it('recovers gradually after successes, up to 90% of the rate that was too fast', () => {
    let s: FeedbackState = onThrottle(initialFeedback(), 0, -1, true).state; // 1 → 0.5, ceiling 0.9
    s = onThrottle(s, 10, 5, true).state; // 0.5 → 0.25, ceiling 0.45
    const seen: number[] = [];
    for (let i = 0; i < 50; i++) {
      s = onSuccess(s, true);
      seen.push(s.factor);
    }
    expect(seen[ADAPTIVE.recoverAfter - 2]).toBe(0.25); // not before recoverAfter successes
    expect(seen[ADAPTIVE.recoverAfter - 1]).toBeCloseTo(0.3125);
    expect(Math.max(...seen)).toBeCloseTo(0.45); // capped at the learned ceiling
  });

  it('lifts a learned ceiling after a long quiet run, never above the configured rate', () => {
    let s = onThrottle(initialFeedback(), 0, -1, true).state; // factor 0.5, ceiling 0.9
    for (let i = 0; i < 2000; i++) s = onSuccess(s, true);
    expect(s.factor).toBe(1);
    expect(s.ceiling).toBe(1);
  });

  it('changes nothing about the rate when adaptation is off, but still counts events', () => {
    const r = onThrottle(initialFeedback(), 0, -1, false);
    expect(r.state.factor).toBe(1);
    expect(r.state.events).toBe(1);
    expect(r.state.eventsInRow).toBe(1);
  });

  it('counts consecutive failures and resets them on any answer', () => {
    let s = onFailure(onFailure(initialFeedback()));
    expect(s.failures).toBe(2);
    s = onSuccess(s, true);
    expect(s.failures).toBe(0);
    s = onThrottle(onFailure(s), 5, 4, true).state;
    expect(s.failures).toBe(0);
  });
});

describe('describeRate', () => {
  const table: Array<[number, number, string]> = [
    [50, 1, '20/s'],
    [50, 0.205, '4.1/s'],
    [1000, 0.5, '30/min'],
    [0, 1, 'unlimited'],
  ];
  for (const [interval, factor, want] of table) it(`${interval} ms × ${factor} → ${want}`, () => expect(describeRate(interval, factor)).toBe(want));
});
