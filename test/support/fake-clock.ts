import type { Clock, Timer } from '../../src/clock.js';

/** Bounds on `FakeClock.runUntilDone`. */
export interface RunLimits {
  /** Simulated milliseconds after which a still-running promise fails the run. @default 3_600_000 (1 h) */
  maxMs?: number;
  /** Timers fired after which a still-running promise fails the run. @default 100_000 */
  maxSteps?: number;
  /** Extra state for the failure message, e.g. the crawler's progress. */
  describe?: () => string;
}

/**
 * A manually advanced clock. Timers fire in due order when `advance` passes
 * their deadline; a timer set from inside a firing timer fires in the same
 * `advance` call if its deadline is within the advanced span.
 */
export class FakeClock implements Clock {
  private t: number;
  private wallOffset: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void; seq: number }>();

  constructor(start = 1_000_000, wallStart = Date.UTC(2026, 0, 1)) {
    this.t = start;
    this.wallOffset = wallStart - start;
  }

  now(): number {
    return this.t;
  }

  wallNow(): number {
    return this.t + this.wallOffset;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn, seq: id });
    return { id };
  }

  clearTimer(timer: Timer): void {
    this.timers.delete(timer.id as number);
  }

  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void; seq: number }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at > end) continue;
        if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) next = entry;
      }
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }

  /** Advances and lets promise continuations run between timer firings. */
  async advanceAsync(ms: number, step = 1): Promise<void> {
    const end = this.t + ms;
    await FakeClock.settle();
    while (this.t < end) {
      this.advance(Math.min(step, end - this.t));
      await FakeClock.settle();
    }
  }

  /** When the earliest pending timer is due (Infinity when none is). */
  nextTimerAt(): number {
    let at = Infinity;
    for (const t of this.timers.values()) if (t.at < at) at = t.at;
    return at;
  }

  /**
   * Fires the earliest pending timer alone (the first set among those due at
   * the same time), moving time to its deadline. False when none is pending.
   * One timer per call, so a runner can let promise continuations run between
   * two timers due at the same instant, as Node runs microtasks between timer callbacks.
   */
  fireNext(): boolean {
    let next: [number, { at: number; fn: () => void; seq: number }] | undefined;
    for (const entry of this.timers) {
      if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) next = entry;
    }
    if (!next) return false;
    this.timers.delete(next[0]);
    this.t = Math.max(this.t, next[1].at);
    next[1].fn();
    return true;
  }

  /**
   * Drives `promise` to completion in simulated time: lets microtasks and
   * immediates settle, then jumps straight to the next timer, and again,
   * until the promise settles. Fails (rejects) instead of hanging when nothing
   * is scheduled but the promise is still pending (a stall), when the next
   * timer lies beyond `maxMs` of simulated time, or after `maxSteps` timers.
   * `describe` adds state to those failure messages.
   */
  async runUntilDone<T>(promise: Promise<T>, limits: RunLimits = {}): Promise<T> {
    const maxMs = limits.maxMs ?? 3_600_000;
    const maxSteps = limits.maxSteps ?? 100_000;
    const start = this.t;
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let steps = 0; ; steps++) {
      await FakeClock.settle();
      if (settled) return promise;
      const next = this.nextTimerAt();
      const where = () => `after ${this.t - start} ms of simulated time and ${steps} timers${limits.describe ? `; ${limits.describe()}` : ''}`;
      if (next === Infinity) throw new Error(`stalled: nothing scheduled and not done, ${where()}`);
      if (next - start > maxMs) throw new Error(`not done within ${maxMs} ms of simulated time (next timer at +${next - start} ms), ${where()}`);
      if (steps >= maxSteps) throw new Error(`not done within ${maxSteps} timers, ${where()}`);
      this.fireNext();
    }
  }

  /** Lets pending promise continuations and microtasks run. */
  static async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  }
}
