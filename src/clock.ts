/**
 * The one source of time for everything time-aware.
 *
 * `now()` is monotonic milliseconds on an epoch-like scale (it starts near
 * Date.now() and never goes backwards), so gaps and windows are immune to wall
 * clock steps. Wall-clock instants (Retry-After HTTP-dates, `fetchedAt`) are
 * converted to delays first and then added to `now()`.
 */
export interface Clock {
  now(): number;
  /** Wall-clock epoch milliseconds, for records and HTTP-date arithmetic. */
  wallNow(): number;
  setTimer(fn: () => void, ms: number): Timer;
  clearTimer(timer: Timer): void;
}

export type Timer = { readonly id: unknown };

const origin = performance.timeOrigin;

/**
 * The longest delay Node's setTimeout takes (about 24.8 days); a longer one
 * overflows to 1 ms with a warning. `--rate 1/30d` asked for 30 days: longer
 * delays are waited out in steps of at most this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => origin + performance.now(),
  wallNow: () => Date.now(),
  setTimer(fn, ms) {
    const timer: { id: NodeJS.Timeout | undefined } = { id: undefined };
    const due = performance.now() + Math.max(0, ms);
    const arm = (): void => {
      const left = Math.max(0, due - performance.now());
      timer.id = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, left);
    };
    arm();
    return timer;
  },
  clearTimer(timer) {
    clearTimeout((timer as { id: NodeJS.Timeout | undefined }).id);
  },
};

/** Resolves after `ms` on the given clock, or as soon as `signal` aborts (never rejects). */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal === undefined) return new Promise((resolve) => clock.setTimer(resolve, ms));
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimer(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
