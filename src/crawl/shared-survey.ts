/**
 * A shared store's survey (the Redis store: one crawl, many workers). This
 * worker's view is not the crawl's: every SURVEY_INTERVAL_MS it surveys the
 * whole crawl to take up hosts other workers queued and re-arm the due timer
 * on the crawl's earliest retry; once nothing of its own is left, every
 * SURVEY_IDLE_INTERVAL_MS, to see whether the others' leases (which may
 * still add links) have ended. When nothing is queued, delayed or leased
 * anywhere, it asks the store to finish the crawl; the store refuses if
 * another worker added work meanwhile, and the survey goes on.
 */
import type { Timer } from '../clock.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { RobotsGate } from '../robots/gate.js';
import type { Scheduler } from '../schedule/scheduler.js';
import type { SlowRequests } from '../schedule/slow-requests.js';
import { capReached, type CrawlContext } from './crawl-context.js';
import type { DueTimer } from '../util/due-timer.js';
import type { LeaseSource } from './lease-source.js';

/**
 * With a shared store, how often a worker surveys the whole crawl: to take up
 * hosts other workers queued, and, once its own part is done, to see whether
 * the others' leases (which may still add links) have ended.
 */
export const SURVEY_INTERVAL_MS = 1_000;
/**
 * A worker with nothing of its own left surveys this often, so it sees the
 * crawl end (or new work) soon after the last other worker's lease: the
 * whole crawl ends when its slowest worker notices.
 */
export const SURVEY_IDLE_INTERVAL_MS = 200;

export interface SharedSurveyParts {
  dueTimer: DueTimer;
  /** What this worker has running, waiting or held (`locallyIdle`). */
  scheduler: Scheduler<HostPolicy>;
  robots: RobotsGate;
  leases: LeaseSource;
  slow: SlowRequests;
}

export class SharedSurvey {
  /** The store said nothing is left anywhere and marked the crawl finished. */
  ended = false;
  /** A survey is under way. */
  private surveying = false;
  private timer: Timer | null = null;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: SharedSurveyParts,
  ) {}

  /**
   * Surveys a shared store: wakes the hosts with work (other workers' too),
   * re-arms the due timer on the crawl's earliest retry, and when nothing is
   * queued, delayed or leased anywhere, asks the store to finish the crawl
   * (it refuses if another worker added work meanwhile: then the survey goes on).
   */
  survey(): void {
    const { ctx, parts } = this;
    const { store, calls } = ctx;
    const shared = store.shared;
    if (this.surveying || ctx.finished || !shared) return;
    this.surveying = true;
    calls.settle(shared.survey(), (s) => {
      this.surveying = false;
      // The hosts with work, perhaps another worker's.
      for (const [key] of s.hosts) ctx.signals.wake(key);
      parts.dueTimer.armAt(store.nextDueAt());
      if (ctx.stopping || capReached(ctx) || s.queued + s.delayed + s.leased > 0 || !this.locallyIdle()) return;
      calls.pending++; // the crawl cannot end under the finish call
      Promise.resolve(store.finish()).then(
        (done) => {
          calls.pending--;
          if (done !== false) this.ended = true;
          ctx.signals.settled();
        },
        (err: unknown) => {
          calls.pending--;
          ctx.signals.fail(err);
        },
      );
    });
  }

  /** Surveys every SURVEY_INTERVAL_MS, or every SURVEY_IDLE_INTERVAL_MS while this worker is idle, until the crawl ends. */
  arm(sinceLastMs = 0): void {
    const { ctx } = this;
    this.timer = ctx.clock.setTimer(() => {
      this.timer = null;
      if (ctx.finished) return;
      const elapsed = sinceLastMs + SURVEY_IDLE_INTERVAL_MS;
      if (elapsed < SURVEY_INTERVAL_MS && !this.locallyIdle()) return this.arm(elapsed);
      this.survey();
      this.arm();
    }, SURVEY_IDLE_INTERVAL_MS);
  }

  cancel(): void {
    if (this.timer) this.ctx.clock.clearTimer(this.timer);
    this.timer = null;
  }

  /** Nothing of this worker's own is running, waiting or held. */
  private locallyIdle(): boolean {
    const { scheduler, robots, leases, slow } = this.parts;
    return (
      scheduler.inFlight === 0 &&
      scheduler.pendingJobs === 0 &&
      robots.pending === 0 &&
      leases.claimingCount === 0 &&
      slow.count === 0 &&
      leases.heldCount === 0
    );
  }
}
