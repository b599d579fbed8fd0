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

export const systemClock: Clock = {
  now: () => origin + performance.now(),
  wallNow: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { id: handle };
  },
  clearTimer(timer) {
    clearTimeout(timer.id as NodeJS.Timeout);
  },
};

/** Resolves after `ms` on the given clock. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}
