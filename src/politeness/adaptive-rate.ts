/**
 * How a host's answers change its pace: the adaptive-rate policy.
 *
 * Contract (pure: state in, new state out, `now` passed in):
 * - A throttling answer (429/503) is one *event* unless the request that got
 *   it was already started when the previous event was noticed: answers to
 *   requests in flight at the time of the first 429 belong to the same burst.
 * - Each event multiplies the rate factor down (×0.5, floor 1/32) and
 *   remembers 90% of the factor that was too fast as a ceiling, so recovery
 *   converges just below the server's real limit instead of bouncing off it.
 * - Every `recoverAfter` successes in a row raise the factor ×1.25, up to the
 *   ceiling; a long quiet run at the ceiling lifts the ceiling 10% (the limit
 *   may have been temporary). Never above 1: the configured rate is a ceiling.
 * - Transport failures and 5xx count as consecutive failures; any answer
 *   resets the count.
 */

export interface FeedbackState {
  /** Fraction of the configured rate in force (0 < factor <= 1). */
  factor: number;
  /** Recovery stops here until a quiet run lifts it. */
  ceiling: number;
  /** Successes in a row since the factor last moved. */
  successes: number;
  /** Clock time the last throttling event was noticed (-Infinity: never). */
  lastEventAt: number;
  /** Throttling events so far. */
  events: number;
  /** Throttling events since the last success (drives backoff without Retry-After). */
  eventsInRow: number;
  /** Transport failures or retry statuses in a row. */
  failures: number;
}

export const ADAPTIVE = {
  decrease: 0.5,
  floor: 1 / 32,
  increase: 1.25,
  recoverAfter: 10,
  ceilingMargin: 0.9,
  /** Successes at the ceiling before it is lifted. */
  liftAfter: 30,
  lift: 1.1,
} as const;

export function initialFeedback(): FeedbackState {
  return { factor: 1, ceiling: 1, successes: 0, lastEventAt: -Infinity, events: 0, eventsInRow: 0, failures: 0 };
}

/**
 * A throttling answer arrived at `now` for a request started at `startedAt`.
 * `newEvent` is false when it belongs to a burst already counted.
 */
export function onThrottle(s: FeedbackState, now: number, startedAt: number, adaptive: boolean): { state: FeedbackState; newEvent: boolean } {
  const base = { ...s, failures: 0, successes: 0 };
  if (startedAt <= s.lastEventAt) return { state: base, newEvent: false };
  const next: FeedbackState = { ...base, lastEventAt: now, events: s.events + 1, eventsInRow: s.eventsInRow + 1 };
  if (adaptive) {
    next.ceiling = Math.max(ADAPTIVE.floor, s.factor * ADAPTIVE.ceilingMargin);
    next.factor = Math.max(ADAPTIVE.floor, s.factor * ADAPTIVE.decrease);
  }
  return { state: next, newEvent: true };
}

/** A normal answer (anything that is neither throttling nor a failure). */
export function onSuccess(s: FeedbackState, adaptive: boolean): FeedbackState {
  const next = { ...s, successes: s.successes + 1, failures: 0, eventsInRow: 0 };
  if (!adaptive || s.factor >= 1) return next;
  if (next.factor < next.ceiling && next.successes >= ADAPTIVE.recoverAfter) {
    next.factor = Math.min(next.ceiling, next.factor * ADAPTIVE.increase);
    next.successes = 0;
  } else if (next.factor >= next.ceiling && next.successes >= ADAPTIVE.liftAfter) {
    next.ceiling = Math.min(1, next.ceiling * ADAPTIVE.lift);
    next.factor = next.ceiling;
    next.successes = 0;
  }
  return next;
}

/** A transport failure or a retry status. */
export function onFailure(s: FeedbackState): FeedbackState {
  return { ...s, failures: s.failures + 1, successes: 0 };
}

/** "4.1/s" for a configured interval scaled by a factor. */
export function describeRate(intervalMs: number, factor: number): string {
  if (intervalMs <= 0) return 'unlimited';
  const perSecond = (1000 / intervalMs) * factor;
  if (perSecond >= 1) return `${round(perSecond)}/s`;
  return `${round(perSecond * 60)}/min`;
}

const round = (n: number) => (n >= 10 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, ''));
