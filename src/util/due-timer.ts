/**
 * One timer for "wake me at the earliest of these times": `armAt` keeps the
 * earliest request and re-arms only when a new time is earlier, so a heap of
 * due times needs one timer however many entries it holds. The callback runs
 * once per firing; it re-arms for whatever is due next.
 */
import type { Clock, Timer } from '../clock.js';

export class DueTimer {
  private timer: Timer | null = null;
  private at = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onFire: () => void,
  ) {}

  /** Fires no later than `at` (Infinity: nothing to wait for). */
  armAt(at: number): void {
    if (at === Infinity || at >= this.at) return;
    this.cancel();
    this.at = at;
    this.timer = this.clock.setTimer(
      () => {
        this.timer = null;
        this.at = Infinity;
        this.onFire();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  cancel(): void {
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.at = Infinity;
  }
}
