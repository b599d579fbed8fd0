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
 * - `responded` hands every answer's time to first byte (robots.txt and a
 *   rendering browser's requests included, each to its own host) to the
 *   latency signal, with `latencyBackoff` on.
 * - Everything here acts through the host's record in the HostTable (its
 *   limiter's pause, rate factor and server gap; its feedback and latency
 *   state; its given-up flag), so every request — robots.txt included — obeys
 *   it; nothing sleeps and nothing holds a slot. Decisions come from the pure
 *   policies in adaptive-rate.ts, latency-signal.ts, retry-after.ts,
 *   rate-limit-headers.ts and backoff.ts.
 * - The rate factor in force is the product of the two signals' factors
 *   (`rateFactor`), never below the adaptive floor of 1/32. A product, not
 *   the lower of the two: each signal acts on the pace actually in force, so
 *   a host throttled to half its rate whose answers then slow down is slowed
 *   at the latency signal's first decision, not only once that falls below
 *   one half.
 */
import type { Clock } from '../clock.js';
import { backoffDelay } from './backoff.js';
import { ADAPTIVE, describeRate, initialFeedback, isQuiet, onFailure, onSuccess, onThrottle, type FeedbackState } from './adaptive-rate.js';
import type { HostState, HostTable } from './host-state.js';
import { describeLatency, initialLatency, onLatencySample, type LatencyState } from './latency-signal.js';
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
  /** Each change of a host's rate by its latency signal, in words (a verbose log line). */
  latencyChanged?(key: string, message: string): void;
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

/** A host running below its configured rate (progress line, metrics). */
export interface SlowedHost {
  host: string;
  /** The rate in force, e.g. "4.1/s". */
  rate: string;
  /** Fraction of the configured rate in force. */
  factor: number;
  /** Present while the latency signal holds the host back: its own factor, and why. */
  latency?: { factor: number; medianMs: number; baselineMs: number; why: string };
}

/** The fraction of its configured rate a host runs at: both signals' factors multiplied, never below the adaptive floor. */
export function rateFactor(feedback: FeedbackState | null, latency: LatencyState | null): number {
  const product = (feedback?.factor ?? 1) * (latency?.factor ?? 1);
  return product >= 1 ? 1 : Math.max(ADAPTIVE.floor, product);
}

const round2 = (n: number) => String(Math.round(n * 100) / 100);

/** Puts the host's combined factor into its limiter: the one place that sets it. */
function applyRateFactor(host: HostState): void {
  host.limiter.setRateFactor(rateFactor(host.feedback, host.latency));
}

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
    if (newEvent) applyRateFactor(host);
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
      if (next.factor !== before.factor) applyRateFactor(host);
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

  /**
   * An answer's headers arrived `ttfbMs` after its request was written:
   * one sample of the host's latency signal (latency-signal.ts), which may
   * change its rate. The caller persists the record (it changed anyway).
   */
  responded(key: string, ttfbMs: number): void {
    const host = this.opts.hosts.get(key);
    if (!host.policy.latencyBackoff) return;
    const before = host.latency ?? initialLatency();
    const next = onLatencySample(before, ttfbMs);
    host.latency = next;
    if (next.factor === before.factor) return;
    const was = host.limiter.rateFactor;
    applyRateFactor(host);
    const { intervalMs } = host.policy;
    this.opts.latencyChanged?.(
      key,
      `${describeLatency(next)}: rate ${describeRate(intervalMs, was)} → ${describeRate(intervalMs, host.limiter.rateFactor)} (latency factor ${round2(next.factor)})`,
    );
  }

  /**
   * The host's rate as it stands, e.g. "20/s", "20/s, throttled 3× (now 4.1/s)"
   * or "20/s, slowed 2× for latency (now 11/s: latency 412 ms vs 130 ms baseline)".
   */
  describe(key: string, policy: HostPolicy): string {
    const host = this.opts.hosts.peek(key);
    const s = host?.feedback;
    const l = host?.latency;
    const events = s ? s.events : 0;
    const decreases = l ? l.decreases : 0;
    if (events === 0 && decreases === 0) return policy.rateLabel;
    const parts = [policy.rateLabel];
    if (events > 0) parts.push(`throttled ${events}×`);
    if (decreases > 0) parts.push(`slowed ${decreases}× for latency`);
    const factor = rateFactor(s ?? null, l ?? null);
    const why = l && l.factor < 1 ? `: ${describeLatency(l)}` : '';
    return `${parts.join(', ')}${factor < 1 ? ` (now ${describeRate(policy.intervalMs, factor)}${why})` : ''}`;
  }

  /** Hosts running below their configured rate, for the progress line and metrics: the factor in force, and the latency signal's when it holds the host back. */
  /** How far below its configured rate a host runs now, and why; undefined at full rate (a page record's `slowed`). */
  slowedNow(key: string): { factor: number; why: string } | undefined {
    const host = this.opts.hosts.peek(key);
    if (host === undefined) return undefined;
    const factor = rateFactor(host.feedback, host.latency);
    if (factor >= 1) return undefined;
    const why: string[] = [];
    if (host.feedback && host.feedback.factor < 1) why.push(`throttled ${host.feedback.events}× (429/503)`);
    if (host.latency && host.latency.factor < 1) why.push(describeLatency(host.latency));
    return { factor: Math.round(factor * 1000) / 1000, why: why.join('; ') };
  }

  slowed(): SlowedHost[] {
    const out: SlowedHost[] = [];
    for (const host of this.opts.hosts.values()) {
      const factor = rateFactor(host.feedback, host.latency);
      if (factor >= 1) continue;
      const l = host.latency;
      const entry: SlowedHost = { host: host.key, rate: describeRate(host.policy.intervalMs, factor), factor };
      if (l && l.factor < 1) entry.latency = { factor: l.factor, medianMs: l.medianMs ?? 0, baselineMs: l.baselineMs ?? 0, why: describeLatency(l) };
      out.push(entry);
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
