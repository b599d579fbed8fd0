/**
 * PhaseDeadlines' cost: one timer per request, set once. Its timing
 * (to the millisecond, every phase) is tested with the fetcher in
 * test/fetcher.system.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { PhaseDeadlines } from '../../src/fetch/phase-deadlines.js';
import { FakeClock } from '../support/fake-clock.js';

/** A fake clock that counts the timers set on it. */
class CountingClock extends FakeClock {
  timersSet = 0;
  override setTimer(fn: () => void, ms: number) {
    this.timersSet++;
    return super.setTimer(fn, ms);
  }
}

describe('PhaseDeadlines', () => {
  it('sets one timer for a request that ends in time (it set two: for the total deadline, then again at dispatch)', () => {
    const clock = new CountingClock(0);
    const fired: string[] = [];
    const d = new PhaseDeadlines(clock, { headersMs: 30_000, bodyMs: 30_000, totalMs: 120_000 }, (code) => fired.push(code));
    clock.advance(1);
    d.dispatched();
    clock.advance(3);
    d.responded();
    d.data();
    d.stop();
    expect(clock.timersSet).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    expect(fired).toEqual([]);
  });

  it('still fires each phase on its own millisecond when the first timer comes early', () => {
    for (const [limits, phases, want] of [
      // headers: armed at 0 + 200 (the body's limit), fires there, re-arms for 10 + 1500
      [{ headersMs: 1500, bodyMs: 200 }, { dispatchAt: 10 }, 'HEADERS_TIMEOUT at 1510'],
      // no dispatch ever: only the total deadline applies
      [{ headersMs: 100, bodyMs: 100, totalMs: 700 }, {}, 'TOTAL_TIMEOUT at 700'],
      // the head comes after the first (early) timer fired: the body's deadline is armed then
      [{ headersMs: 1000, bodyMs: 50 }, { dispatchAt: 5, respondAt: 300 }, 'BODY_TIMEOUT at 350'],
    ] as const) {
      const clock = new FakeClock(0);
      const fired: string[] = [];
      const d = new PhaseDeadlines(clock, limits, (code) => fired.push(`${code} at ${clock.now()}`));
      for (let t = 1; t <= 5_000 && fired.length === 0; t++) {
        clock.advance(1);
        if (t === (phases as { dispatchAt?: number }).dispatchAt) d.dispatched();
        if (t === (phases as { respondAt?: number }).respondAt) d.responded();
      }
      expect(fired).toEqual([want]);
    }
  });
});
