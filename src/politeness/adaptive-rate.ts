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
 * - Unless the refusal says nothing about our pace. A request that left
 *   after a long quiet on its host (`isQuiet`: at least 4 current gaps and at
 *   least 1 s since the host's previous request) cannot have been refused
 *   for coming too fast: a server that refuses it refuses whatever the rate
 *   (a challenge wall), so it does not lower the rate, and neither does the
 *   next refusal after it. Only two refusals in a row that each could be
 *   about the pace lower it. The pause a refusal brings (Retry-After or
 *   backoff) is the caller's and holds either way.
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
  /** The last throttling event was a refusal after a long quiet (see `isQuiet`). Absent in records saved before it existed. */
  quietRefusal?: boolean;
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
  /** A request that left this many current gaps after its host's previous one… */
  quietGaps: 4,
  /** …and at least this long after it, left after a quiet: a refusal of it is not about the pace. */
  quietMinMs: 1000,
} as const;

/** Whether a request that left `sinceLastMs` after its host's previous request (Infinity: none) left after a long quiet, at a gap of `gapMs`. */
export function isQuiet(sinceLastMs: number, gapMs: number): boolean {
  return sinceLastMs >= Math.max(ADAPTIVE.quietGaps * gapMs, ADAPTIVE.quietMinMs);
}

export function initialFeedback(): FeedbackState {
  return { factor: 1, ceiling: 1, successes: 0, lastEventAt: -Infinity, events: 0, eventsInRow: 0, failures: 0 };
}

/**
 * A throttling answer arrived at `now` for a request started at `startedAt`;
 * `quiet` when that request left after a long quiet on its host (`isQuiet`).
 * `newEvent` is false when it belongs to a burst already counted.
 */
export function onThrottle(s: FeedbackState, now: number, startedAt: number, adaptive: boolean, quiet = false): { state: FeedbackState; newEvent: boolean } {
  const base = { ...s, failures: 0, successes: 0 };
  if (startedAt <= s.lastEventAt) return { state: base, newEvent: false };
  const next: FeedbackState = { ...base, lastEventAt: now, events: s.events + 1, eventsInRow: s.eventsInRow + 1, quietRefusal: quiet };
  // The pace is to blame only if neither this refusal nor the one before came after a long quiet.
  if (adaptive && !quiet && s.quietRefusal !== true) {
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
