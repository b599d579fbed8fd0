/**
 * Everything the crawl knows about one host key, in one record, and the one
 * table that owns those records.
 *
 * Contract:
 * - One `HostState` per host key, created on first use with the key's policy
 *   resolved once, and forgotten by `sweep` when forgetting it changes
 *   nothing: nothing queued or waiting for it, nothing in flight, every gap
 *   and window elapsed, no pause, no server feedback remembered, not given up.
 *   A swept host comes back as a fresh, equivalent record.
 * - The record holds the limiter (last starts, window logs, in-flight count,
 *   pause, rate factor, Crawl-delay floor, RateLimit pace), the adaptive-rate
 *   and failure state (`feedback`), the latency signal (`latency`), the
 *   given-up flag, which robots.txt rules
 *   set its Crawl-delay, and the scheduler's own bookkeeping (internal jobs,
 *   wake time). Server feedback (server-feedback.ts) and robots.txt
 *   (robots/gate.ts) change a host through its record, never through state of
 *   their own.
 * - robots.txt itself is cached per origin (RFC 9309 §2.3: one file per
 *   scheme, host and port), not per host key: a `domain` host key spans many
 *   origins. The record keeps only what robots.txt did to the host's pace.
 * - `save`/`restore` turn the politeness part of a record into plain data and
 *   back, for stores that keep it across restarts or share it between
 *   processes; in-flight requests are not part of it (a restarted crawl has
 *   none). Whoever changes a record's politeness state calls `changed(key)`
 *   (the scheduler at every start, dispatch and response; server feedback;
 *   the robots gate); with a `persist` callback the table hands it the saved
 *   form right then, before the request it starts goes out.
 */
import type { HostPolicy } from '../config/settings-types.js';
import type { FeedbackState } from './adaptive-rate.js';
import type { LatencyState } from './latency-signal.js';
import { HostLimiter, type LimiterPolicy, type LimiterSaved, type WallAt } from './host-limiter.js';

export interface JobContext {
  /** Call with clock.now() when the request is written to the socket. */
  onDispatched(at: number): void;
  /**
   * Call with clock.now() when its response headers arrive. Answers the
   * latest time the server can have read the request when the host's next
   * start depends on it (HostLimiter.markResponded), else undefined.
   */
  onResponse(at: number): number | undefined;
  /**
   * The job is about to end before its request does (a slow request giving
   * its global slot back, schedule/slow-requests.ts): returns what to call when
   * the request really ends, so its address's in-flight count (per-IP
   * limits) stays exact. Contexts built elsewhere may leave it out.
   */
  detach?(): () => void;
  /**
   * The job's request is done and what is left waits on other requests (a
   * page being rendered, render/renderer.ts): the job ends now, giving its
   * global slot and its host's concurrency back, while the work goes on.
   * Present only where the job was wrapped for it.
   */
  handOff?(): void;
}

/** One request's worth of work, run by the scheduler when its host may start one. */
export type Job = (ctx: JobContext) => Promise<void>;

/**
 * A job submitted for a host, with what says whether anyone still wants it:
 * one no longer wanted when its host is ready is dropped without taking a
 * start (a browser's request for a page that timed out meanwhile).
 */
export interface InternalJob {
  run: Job;
  wanted?: () => boolean;
}

export interface HostState<P extends LimiterPolicy = HostPolicy> {
  readonly key: string;
  readonly policy: P;
  readonly limiter: HostLimiter;
  /** Adaptive rate and failure counts; null while the host has never throttled or failed. */
  feedback: FeedbackState | null;
  /** Its times to first byte against its baseline (latency-signal.ts); null until its first answer, or with `latencyBackoff` off. */
  latency: LatencyState | null;
  /** Failed too often: nothing more is fetched from it in this crawl. */
  givenUp: boolean;
  /** The robots.txt rules whose Crawl-delay the limiter carries (null: none applied yet). */
  robotsApplied: object | null;
  /** Scheduler: internal jobs (robots.txt fetches, a browser's requests) waiting for this host, first in line. */
  readonly jobs: InternalJob[];
  /** Scheduler: the wake time this host is filed under (Infinity: not filed). */
  wakeAt: number;
}

/** The politeness part of a record as plain, JSON-safe data (`null` for "never"). */
export interface HostSaved {
  limiter: LimiterSaved;
  feedback: (Omit<FeedbackState, 'lastEventAt'> & { lastEventAt: number | null }) | null;
  /** Absent in records saved before the latency signal existed: the host learns its baseline again. */
  latency?: LatencyState | null;
  givenUp: boolean;
}

export interface HostTableOptions<P extends LimiterPolicy> {
  policyFor(key: string): P;
  random?: () => number;
  /** The crawl clock's instants on the wall clock quiet hours are judged on (a shared store's clock when there is one). @default the same numbers */
  wallAt?: WallAt;
  /** Keeps a record's politeness state beyond this process (a durable store's saveHost). @default none */
  persist?: (key: string, saved: HostSaved) => void;
}

export class HostTable<P extends LimiterPolicy = HostPolicy> {
  private readonly records = new Map<string, HostState<P>>();

  constructor(private readonly opts: HostTableOptions<P>) {}

  /** The record of `key`, created on first use. */
  get(key: string): HostState<P> {
    let state = this.records.get(key);
    if (!state) {
      const policy = this.opts.policyFor(key);
      state = {
        key,
        policy,
        limiter: new HostLimiter(policy, this.opts.random, this.opts.wallAt),
        feedback: null,
        latency: null,
        givenUp: false,
        robotsApplied: null,
        jobs: [],
        wakeAt: Infinity,
      };
      this.records.set(key, state);
    }
    return state;
  }

  /** The record of `key` if it exists; never creates one. */
  peek(key: string): HostState<P> | undefined {
    return this.records.get(key);
  }

  get size(): number {
    return this.records.size;
  }

  values(): IterableIterator<HostState<P>> {
    return this.records.values();
  }

  /** The politeness state of `key` changed: persist it now when the table persists. */
  changed(key: string): void {
    const { persist } = this.opts;
    if (persist) persist(key, this.save(key)!);
  }

  isGivenUp(key: string): boolean {
    return this.records.get(key)?.givenUp ?? false;
  }

  /**
   * Forgets records whose state no longer constrains anything. `busy(key)`
   * says whether the caller still has work or a wake-up for the host.
   * O(hosts); the scheduler runs it at most every 30 s.
   */
  sweep(now: number, busy: (key: string) => boolean): void {
    for (const [key, s] of this.records) {
      if (s.jobs.length === 0 && s.wakeAt === Infinity && s.feedback === null && !s.givenUp && s.limiter.isIdle(now) && !busy(key)) {
        this.records.delete(key);
      }
    }
  }

  save(key: string): HostSaved | undefined {
    const s = this.records.get(key);
    if (!s) return undefined;
    const f = s.feedback;
    return {
      limiter: s.limiter.save(),
      feedback: f === null ? null : { ...f, lastEventAt: Number.isFinite(f.lastEventAt) ? f.lastEventAt : null },
      latency: s.latency === null ? null : { ...s.latency, samples: [...s.latency.samples] },
      givenUp: s.givenUp,
    };
  }

  /**
   * Puts back a saved record (replacing any in memory), with nothing in
   * flight. `unclean` says the process that saved it died and may have
   * started requests it never recorded during `spanMs` before `until`.
   * `shiftMs` moves the saved instants back (the clock was set back since).
   */
  restore(key: string, saved: HostSaved, unclean?: { until: number; spanMs: number }, shiftMs = 0): HostState<P> {
    this.records.delete(key);
    const s = this.get(key);
    s.limiter.restore(saved.limiter, shiftMs);
    if (unclean) s.limiter.assumeStartedUntil(unclean.until, unclean.spanMs);
    const f = saved.feedback;
    s.feedback = f === null ? null : { ...f, lastEventAt: f.lastEventAt === null ? -Infinity : f.lastEventAt - shiftMs };
    s.latency = saved.latency ? { ...saved.latency, samples: [...saved.latency.samples] } : null;
    s.givenUp = saved.givenUp;
    return s;
  }
}
