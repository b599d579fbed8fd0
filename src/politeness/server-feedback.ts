/**
 * Server feedback into per-host limits: the one place where 429/503,
 * Retry-After, RateLimit headers and failures change a host's pace.
 *
 * Contract: everything here acts only through the host's limiter (pause until
 * T, rate factor, server gap), so every request — robots.txt included — obeys
 * it; nothing sleeps and nothing holds a slot. Decisions come from the pure
 * policies in adaptive-rate.ts, retry-after.ts, rate-limit-headers.ts and
 * backoff.ts.
 */
import type { Clock } from '../clock.js';
import { backoffDelay } from './backoff.js';
import { describeRate, initialFeedback, onFailure, onSuccess, onThrottle, type FeedbackState } from './adaptive-rate.js';
import type { HostLimiter } from './host-limiter.js';
import { paceForBudget, parseRateLimit } from './rate-limit-headers.js';
import { parseRetryAfter } from './retry-after.js';
import type { HostPolicy } from '../types.js';

/** Margin added to a server-announced pause: its clock and ours tick apart by a few ms. */
const PAUSE_MARGIN_MS = 10;

export interface FeedbackOptions {
  clock: Clock;
  limiter(key: string): HostLimiter;
  random?: () => number;
  /** A noteworthy event, once per kind and host (capped Retry-After, giving up a host). */
  note(key: string, message: string): void;
}

export interface ResponseLike {
  status: number;
  headers: Record<string, string>;
}

export type FailureVerdict = 'retry' | 'paused' | 'give-up';

export class HostFeedback {
  private readonly hosts = new Map<string, FeedbackState>();
  private readonly random: () => number;

  constructor(private readonly opts: FeedbackOptions) {
    this.random = opts.random ?? Math.random;
  }

  /**
   * A throttling answer (a status in `throttleStatuses`) to a request started
   * at `startedAt`: pause the host until Retry-After (capped) or a backoff,
   * and lower its rate once per burst. Returns the pause in ms.
   */
  throttled(key: string, policy: HostPolicy, res: ResponseLike, startedAt: number): number {
    const { clock } = this.opts;
    const now = clock.now();
    const { state, newEvent } = onThrottle(this.get(key), now, startedAt, policy.adaptive);
    this.hosts.set(key, state);
    const limiter = this.opts.limiter(key);
    if (newEvent) limiter.setRateFactor(state.factor);
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
    return pauseMs;
  }

  /** Any answer that is neither throttling nor a failure; also reads RateLimit budget headers. */
  succeeded(key: string, policy: HostPolicy, res: ResponseLike): void {
    // Only hosts that were throttled or failed carry state; a success changes nothing for the rest.
    const before = this.hosts.get(key);
    if (before) {
      const next = onSuccess(before, policy.adaptive);
      this.hosts.set(key, next);
      if (next.factor !== before.factor) this.opts.limiter(key).setRateFactor(next.factor);
    }
    this.budget(key, res);
  }

  /**
   * A transport failure or a retry status. After `hostFailurePause` in a row
   * the host pauses with growing backoff; after `hostFailureGiveUp` it is
   * given up for this crawl.
   */
  failed(key: string, policy: HostPolicy): FailureVerdict {
    const state = onFailure(this.get(key));
    this.hosts.set(key, state);
    if (state.failures >= policy.hostFailureGiveUp) return 'give-up';
    if (state.failures >= policy.hostFailurePause) {
      const step = state.failures - policy.hostFailurePause + 1;
      const pauseMs = backoffDelay(step, { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: this.random });
      this.opts.limiter(key).pauseUntil(this.opts.clock.now() + pauseMs);
      return 'paused';
    }
    return 'retry';
  }

  /** The host's rate as it stands, e.g. "20/s" or "20/s, throttled 3× (now 4.1/s)". */
  describe(key: string, policy: HostPolicy): string {
    const s = this.hosts.get(key);
    if (!s || s.events === 0) return policy.rateLabel;
    const now = s.factor < 1 ? ` (now ${describeRate(policy.intervalMs, s.factor)})` : '';
    return `${policy.rateLabel}, throttled ${s.events}×${now}`;
  }

  /** Hosts running below their configured rate, for the progress line. */
  slowed(policyFor: (key: string) => HostPolicy): Array<{ host: string; rate: string }> {
    const out: Array<{ host: string; rate: string }> = [];
    for (const [key, s] of this.hosts) {
      if (s.factor < 1) out.push({ host: key, rate: describeRate(policyFor(key).intervalMs, s.factor) });
    }
    return out;
  }

  private budget(key: string, res: ResponseLike): void {
    const rl = parseRateLimit(res.headers, this.opts.clock.wallNow());
    if (!rl) return;
    const now = this.opts.clock.now();
    const pace = paceForBudget(rl, {});
    const limiter = this.opts.limiter(key);
    if ('pauseMs' in pace) limiter.pauseUntil(now + pace.pauseMs + PAUSE_MARGIN_MS);
    else limiter.setServerGap(pace.minGapMs, now + pace.until);
  }

  private get(key: string): FeedbackState {
    return this.hosts.get(key) ?? initialFeedback();
  }
}
