/**
 * Server feedback into per-host state: the one place where answers and
 * transport failures are classified by the action they call for, and where
 * 429/503, Retry-After, RateLimit headers and failures change a host's pace.
 *
 * Contract:
 * - `answered` / `errored` classify every outcome of a page request as
 *   `throttle` (slow the host down, try the URL again after the pause),
 *   `retry` (a transient failure: try again after a backoff), `give-up` (the
 *   host failed too often; it was just given up) or `final` (write the record).
 * - Everything here acts through the host's record in the HostTable (its
 *   limiter's pause, rate factor and server gap; its feedback state; its
 *   given-up flag), so every request — robots.txt included — obeys it; nothing
 *   sleeps and nothing holds a slot. Decisions come from the pure policies in
 *   adaptive-rate.ts, retry-after.ts, rate-limit-headers.ts and backoff.ts.
 */
import type { Clock } from '../clock.js';
import { backoffDelay } from './backoff.js';
import { describeRate, initialFeedback, isQuiet, onFailure, onSuccess, onThrottle } from './adaptive-rate.js';
import type { HostTable } from './host-state.js';
import { paceForBudget, parseRateLimit } from './rate-limit-headers.js';
import { parseRetryAfter } from './retry-after.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { ErrorCode } from '../types.js';

/** Margin added to a server-announced pause: its clock and ours tick apart by a few ms. */
const PAUSE_MARGIN_MS = 10;

export interface FeedbackOptions {
  clock: Clock;
  hosts: HostTable;
  random?: () => number;
  /** A noteworthy event, once per kind and host (capped Retry-After, giving up a host). */
  note(key: string, message: string): void;
  /** Every throttling answer, `announced` when it carried a usable Retry-After (counted for metrics and the summary). */
  throttled?(key: string, announced: boolean): void;
}

export interface ResponseLike {
  status: number;
  headers: Record<string, string>;
}

export type FailureVerdict = 'retry' | 'paused' | 'give-up';

/** What the crawl does with a page request's outcome. */
export type Action = 'throttle' | 'retry' | 'give-up' | 'final';

/** Transport failures worth another try: the host may be restarting or overloaded. */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CONNECTION_REFUSED',
  'CONNECTION_RESET',
  'CONNECT_TIMEOUT',
  'HEADERS_TIMEOUT',
  'BODY_TIMEOUT',
  'DNS_FAILURE',
]);

export class HostFeedback {
  private readonly random: () => number;

  constructor(private readonly opts: FeedbackOptions) {
    this.random = opts.random ?? Math.random;
  }

  /**
   * An answer to a page request started at `startedAt`, `sinceLastMs` after
   * the host's previous request (Infinity: none): classifies it and feeds it
   * into the host's state. With `retrying` false (the crawl is stopping) a
   * failure is final and not counted against the host.
   */
  answered(key: string, res: ResponseLike, startedAt: number, retrying = true, sinceLastMs = 0): Action {
    const { policy } = this.opts.hosts.get(key);
    if (policy.throttleStatuses.includes(res.status)) {
      this.throttled(key, res, startedAt, sinceLastMs);
      return 'throttle';
    }
    if (policy.retryStatuses.includes(res.status)) return retrying ? this.failure(key) : 'final';
    this.succeeded(key, res);
    return 'final';
  }

  /** A page request that failed in transport with `code` (see `answered` for `retrying`). */
  errored(key: string, code: ErrorCode, retrying = true): Action {
    return retrying && RETRYABLE_CODES.has(code) ? this.failure(key) : 'final';
  }

  /** Counts a failure: `give-up` only the moment the host is given up; a host already given up gets `final`. */
  private failure(key: string): Action {
    if (this.failed(key) !== 'give-up') return 'retry';
    const state = this.opts.hosts.get(key);
    if (state.givenUp) return 'final';
    state.givenUp = true;
    this.opts.hosts.changed(key);
    return 'give-up';
  }

  /**
   * A throttling answer (a status in `throttleStatuses`) to a request started
   * at `startedAt`, `sinceLastMs` after the host's previous request: pause
   * the host until Retry-After (capped) or a backoff, and lower its rate once
   * per burst, unless the refusal came whatever the pace (adaptive-rate.ts).
   * Returns the pause in ms.
   */
  throttled(key: string, res: ResponseLike, startedAt: number, sinceLastMs = 0): number {
    const { clock } = this.opts;
    const now = clock.now();
    const host = this.opts.hosts.get(key);
    const { policy, limiter } = host;
    const quiet = isQuiet(sinceLastMs, limiter.effectiveIntervalMs(startedAt));
    const { state, newEvent } = onThrottle(host.feedback ?? initialFeedback(), now, startedAt, policy.adaptive, quiet);
    host.feedback = state;
    if (newEvent) limiter.setRateFactor(state.factor);
    if (newEvent && quiet)
      this.opts.note(
        key,
        `answered ${res.status} to a request sent after a long quiet: refusals that come whatever the pace pause the host but do not lower its rate`,
      );
    const announced = parseRetryAfter(res.headers['retry-after'], { now: clock.wallNow(), date: res.headers['date'] ?? null });
    let pauseMs: number;
    if (announced) {
      pauseMs = announced.delayMs;
      if (pauseMs > policy.maxRetryAfterMs) {
        this.opts.note(key, `Retry-After of ${Math.round(pauseMs / 1000)}s capped to ${Math.round(policy.maxRetryAfterMs / 1000)}s (maxRetryAfter)`);
        pauseMs = policy.maxRetryAfterMs;
      }
      pauseMs += PAUSE_MARGIN_MS;
    } else {
      pauseMs = backoffDelay(Math.max(1, state.eventsInRow), { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: this.random });
    }
    limiter.pauseUntil(now + pauseMs);
    this.opts.hosts.changed(key);
    this.opts.throttled?.(key, announced !== null && announced !== undefined);
    return pauseMs;
  }

  /** Any answer that is neither throttling nor a failure; also reads RateLimit budget headers. */
  succeeded(key: string, res: ResponseLike): void {
    // Only hosts that were throttled or failed carry state; a success changes nothing for the rest.
    const host = this.opts.hosts.get(key);
    const before = host.feedback;
    if (before) {
      const next = onSuccess(before, host.policy.adaptive);
      host.feedback = next;
      if (next.factor !== before.factor) host.limiter.setRateFactor(next.factor);
    }
    this.budget(key, res);
    if (before) this.opts.hosts.changed(key);
  }

  /**
   * A transport failure or a retry status. After `hostFailurePause` in a row
   * the host pauses with growing backoff; after `hostFailureGiveUp` it is
   * given up for this crawl.
   */
  failed(key: string): FailureVerdict {
    const host = this.opts.hosts.get(key);
    const { policy } = host;
    const state = onFailure(host.feedback ?? initialFeedback());
    host.feedback = state;
    let verdict: FailureVerdict = 'retry';
    if (state.failures >= policy.hostFailureGiveUp) verdict = 'give-up';
    else if (state.failures >= policy.hostFailurePause) {
      const step = state.failures - policy.hostFailurePause + 1;
      const pauseMs = backoffDelay(step, { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: this.random });
      host.limiter.pauseUntil(this.opts.clock.now() + pauseMs);
      verdict = 'paused';
    }
    this.opts.hosts.changed(key);
    return verdict;
  }

  /** The host's rate as it stands, e.g. "20/s" or "20/s, throttled 3× (now 4.1/s)". */
  describe(key: string, policy: HostPolicy): string {
    const s = this.opts.hosts.peek(key)?.feedback;
    if (!s || s.events === 0) return policy.rateLabel;
    const now = s.factor < 1 ? ` (now ${describeRate(policy.intervalMs, s.factor)})` : '';
    return `${policy.rateLabel}, throttled ${s.events}×${now}`;
  }

  /** Hosts running below their configured rate, for the progress line. */
  slowed(): Array<{ host: string; rate: string }> {
    const out: Array<{ host: string; rate: string }> = [];
    for (const host of this.opts.hosts.values()) {
      const s = host.feedback;
      if (s && s.factor < 1) out.push({ host: host.key, rate: describeRate(host.policy.intervalMs, s.factor) });
    }
    return out;
  }

  private budget(key: string, res: ResponseLike): void {
    const rl = parseRateLimit(res.headers, this.opts.clock.wallNow());
    if (!rl) return;
    const now = this.opts.clock.now();
    const pace = paceForBudget(rl, {});
    const { limiter } = this.opts.hosts.get(key);
    if ('pauseMs' in pace) limiter.pauseUntil(now + pace.pauseMs + PAUSE_MARGIN_MS);
    else limiter.setServerGap(pace.minGapMs, now + pace.until);
    this.opts.hosts.changed(key);
  }
}
