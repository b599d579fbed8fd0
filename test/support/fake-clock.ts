import type { Clock, Timer } from '../../src/clock.js';

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

  /** Lets pending promise continuations and microtasks run. */
  static async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  }
}
