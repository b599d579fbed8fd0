/**
 * The headers, body-idle and total deadlines of one request, kept to the
 * millisecond on the injected clock with one timer.
 *
 * Why not undici's own headersTimeout/bodyTimeout: undici arms them on its
 * "fast timers", a shared 499 ms tick whose timers only start counting at the
 * tick after they are set. A 1500 ms limit fired anywhere up to ~2500 ms, and
 * a 200 ms one at ~1000 ms. undici's timers stay armed with the same values
 * as a backstop; these fire first.
 *
 * Contract: `headersMs` runs from the moment the request is written to a
 * socket (`dispatched`) until the response head (`responded`); `bodyMs` is
 * the longest silence from the head or the last body chunk (`data`); `totalMs`
 * runs from construction to `stop`. Whichever passes first fires `onExpire`
 * once, with its code and limit. `data` only records the time, so a body of
 * many chunks costs no timer work; the timer re-arms itself when it finds the
 * deadline moved.
 *
 * One timer per request, set once: it is first armed for the start plus the
 * shortest limit, which no deadline can come before (each phase's deadline
 * runs from a moment at or after the start). A request that ends in time,
 * nearly every one, costs that one timer; `dispatched` and `responded` only
 * record their times until it has fired. (It used to be armed for the total
 * deadline, then again at dispatch: two timers and three look-ups a request,
 * ~2% of a fast crawl's CPU.)
 */
import type { Clock, Timer } from '../clock.js';

export type DeadlineCode = 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT' | 'TOTAL_TIMEOUT';

export interface DeadlineLimits {
  headersMs: number;
  bodyMs: number;
  /** @default none */
  totalMs?: number;
}

/** Clock times of a request's phases; undefined until they happen. */
export interface PhaseTimes {
  startedAt: number;
  dispatchedAt?: number;
  respondedAt?: number;
  lastDataAt?: number;
}

export interface Deadline {
  at: number;
  code: DeadlineCode;
  limitMs: number;
}

/** The first deadline still to come for a request in the given phase (pure: table-tested). */
export function nextDeadline(times: PhaseTimes, limits: DeadlineLimits): Deadline | null {
  let next: Deadline | null = limits.totalMs === undefined ? null : { at: times.startedAt + limits.totalMs, code: 'TOTAL_TIMEOUT', limitMs: limits.totalMs };
  const consider = (at: number, code: DeadlineCode, limitMs: number) => {
    if (next === null || at < next.at) next = { at, code, limitMs };
  };
  if (times.respondedAt !== undefined) consider(Math.max(times.respondedAt, times.lastDataAt ?? -Infinity) + limits.bodyMs, 'BODY_TIMEOUT', limits.bodyMs);
  else if (times.dispatchedAt !== undefined) consider(times.dispatchedAt + limits.headersMs, 'HEADERS_TIMEOUT', limits.headersMs);
  return next;
}

export class PhaseDeadlines {
  private readonly times: PhaseTimes;
  private timer: Timer | undefined;
  /** When the armed timer fires. */
  private armedAt = Infinity;
  private done = false;

  constructor(
    private readonly clock: Clock,
    private readonly limits: DeadlineLimits,
    private readonly onExpire: (code: DeadlineCode, limitMs: number) => void,
  ) {
    const startedAt = clock.now();
    this.times = { startedAt };
    const first = Math.min(limits.headersMs, limits.bodyMs, limits.totalMs ?? Infinity);
    if (Number.isFinite(first)) this.armAt(startedAt + first);
  }

  /** The request was written to a socket: the headers deadline starts. */
  dispatched(): void {
    if (this.done || this.times.dispatchedAt !== undefined) return;
    const at = (this.times.dispatchedAt = this.clock.now());
    if (at + this.limits.headersMs < this.armedAt) this.arm();
  }

  /** The response head arrived: the body's idle deadline starts. */
  responded(): void {
    if (this.done || this.times.respondedAt !== undefined) return;
    const at = (this.times.respondedAt = this.clock.now());
    if (at + this.limits.bodyMs < this.armedAt) this.arm();
  }

  /** A body chunk arrived. */
  data(): void {
    this.times.lastDataAt = this.clock.now();
  }

  stop(): void {
    this.done = true;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** (Re-)arms the timer when the next deadline is earlier than the one armed; a later one is found when the timer fires. */
  private arm(): void {
    const next = nextDeadline(this.times, this.limits);
    if (next === null || next.at >= this.armedAt) return;
    this.armAt(next.at);
  }

  private armAt(at: number): void {
    if (this.timer) this.clock.clearTimer(this.timer);
    this.armedAt = at;
    this.timer = this.clock.setTimer(() => this.fire(), Math.max(0, at - this.clock.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    if (this.done) return;
    const next = nextDeadline(this.times, this.limits);
    if (next === null) return;
    // Timers may wake a fraction of a millisecond early against the clock.
    if (next.at - this.clock.now() > 0.5) return this.arm();
    this.stop();
    this.onExpire(next.code, next.limitMs);
  }
}
