import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, sleep, systemClock } from '../src/clock.js';
import { FakeClock } from './support/fake-clock.js';

const DAY = 86_400_000;

describe('systemClock timers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // Regression: `--rate 1/30d` set 30-day timers; Node overflowed each to 1 ms with a
  // TimeoutOverflowWarning (17,373 warnings in 20 s) and the host was polled, not waited for.
  it('waits out a delay longer than setTimeout takes, in steps, without firing early', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const fired: number[] = [];
    const start = performance.now();
    systemClock.setTimer(() => fired.push(performance.now() - start), 30 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS + 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 2);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([30 * DAY]);
  });

  it('cancels a long timer in any of its steps', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let fired = false;
    const timer = systemClock.setTimer(() => (fired = true), 60 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5); // now in its second step
    systemClock.clearTimer(timer);
    vi.advanceTimersByTime(60 * DAY);
    expect(fired).toBe(false);
  });

  it('emits no TimeoutOverflowWarning for a 30-day timer', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const timer = systemClock.setTimer(() => {}, 30 * DAY);
      await new Promise((r) => setTimeout(r, 20));
      systemClock.clearTimer(timer);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });
});

describe('sleep', () => {
  it('resolves after its time, or at once when its signal aborts, leaving no timer behind', async () => {
    const clock = new FakeClock(0);
    let slept = false;
    const plain = sleep(clock, 100).then(() => (slept = true));
    clock.advance(99);
    await Promise.resolve();
    expect(slept).toBe(false);
    clock.advance(1);
    await plain;

    const abort = new AbortController();
    let woke = false;
    const cut = sleep(clock, 1_000, abort.signal).then(() => (woke = true));
    expect(clock.pendingTimers()).toBe(1);
    abort.abort();
    await cut;
    expect(woke).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    expect(clock.now()).toBe(100);
  });
});
