/**
 * The end of a crawl. Termination is a predicate (`check`, run whenever
 * something settles): nothing running, no internal job queued, no robots.txt
 * being loaded, no store call or claim pending, and nothing queued, delayed
 * or held that may still be fetched (with a shared store: nothing anywhere,
 * as its survey says, shared-survey.ts). Then, as the store allows:
 * - a durable crawl that was stopped or hit --max-pages keeps what is left
 *   for a later run (held leases go back);
 * - a shared crawl the store marked finished ends as it is;
 * - otherwise what is left is skipped (`interrupted`, `max-pages`) and the
 *   store marked finished (unless stopped).
 * Also a host given up, whose queue is skipped, and a failure (`fail`),
 * which ends the crawl with that error.
 */
import { addNote, finishStats } from '../output/summary.js';
import type { HostFeedback } from '../politeness/server-feedback.js';
import type { RobotsGate } from '../robots/gate.js';
import type { Cleared } from '../store/crawl-store.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { SkipReason } from '../types.js';
import { capReached, type CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { DueTimer } from '../util/due-timer.js';
import type { LeaseSource } from './lease-source.js';
import type { LeaseFate } from './lease-fate.js';
import type { Scheduler } from '../schedule/scheduler.js';
import type { SharedSurvey } from './shared-survey.js';
import type { SlowRequests } from '../schedule/slow-requests.js';

export interface CrawlEndParts {
  records: CrawlRecords;
  leases: LeaseSource;
  scheduler: Scheduler<HostPolicy>;
  robots: RobotsGate;
  slow: SlowRequests;
  dueTimer: DueTimer;
  feedback: HostFeedback;
  survey: SharedSurvey;
  /** Where held leases end (lease-fate.ts). */
  fate: LeaseFate;
  /** Aborted when the crawl fails: requests still running end at once. */
  abort: AbortController;
  /** Pages being rendered after their job ended (render/renderer.ts). @default none */
  renderer?: { readonly pending: number };
  /** Pages whose handler runs after their job ended (handler/page-handlers.ts). @default none */
  handlers?: { readonly pending: number };
}

export class CrawlEnd {
  /** Resolves when the crawl has ended, rejects with what made it fail. */
  readonly done: Promise<void>;
  /** Seeds are in the store: until then the crawl cannot end, even when stopped (every seed gets a record). */
  private seeded = false;
  /** `done` has resolved or rejected. */
  private doneSettled = false;
  private resolveDone!: () => void;
  private rejectDone!: (err: unknown) => void;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: CrawlEndParts,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = () => {
        this.doneSettled = true;
        resolve();
      };
      this.rejectDone = (err) => {
        this.doneSettled = true;
        reject(err);
      };
    });
  }

  /** The seeds are in the store: the crawl may end from now on. */
  markSeeded(): void {
    this.seeded = true;
  }

  /** Termination is a predicate: nothing running, waiting, loading or still to fetch. */
  check(): void {
    const { ctx, parts } = this;
    const { store } = ctx;
    if (ctx.finished || !this.seeded) return;
    if (parts.scheduler.inFlight > 0 || parts.scheduler.pendingJobs > 0 || parts.robots.pending > 0) return;
    if (
      ctx.calls.pending > 0 ||
      parts.leases.claimingCount > 0 ||
      parts.slow.count > 0 ||
      (parts.renderer?.pending ?? 0) > 0 ||
      (parts.handlers?.pending ?? 0) > 0
    )
      return;
    if (!ctx.stopping && (!capReached(ctx) || parts.leases.reservedCount > 0)) {
      if (parts.leases.heldCount > 0) return;
      if (store.shared) {
        // Shared: this worker's view is not the crawl's. Done only when the store says so for everyone.
        if (!parts.survey.ended) {
          // Work left as of the store's last answer: its hosts wake when due, and the survey's timer takes up
          // other workers' (surveying at every idle moment asked Redis ~75 times a page at 20/s).
          const c = store.counts();
          if (c.queued + c.delayed > 0) return;
          return parts.survey.survey();
        }
      } else {
        const c = store.counts();
        if (c.queued > 0 || c.delayed > 0) return;
      }
    }
    this.halt();
    if (store.durable && (ctx.stopping || capReached(ctx))) {
      // A durable crawl goes on later (after a stop, or with a higher --max-pages):
      // what is left stays in the store, held leases go back.
      for (const lease of parts.leases.takeAllHeld()) parts.fate.putBack(lease);
      this.closeStats(ctx.stopping);
      this.resolveDone();
      return;
    }
    if (parts.survey.ended) {
      // Nothing left anywhere, and the store marked the crawl finished: no queue to clear (another worker's would be lost).
      this.closeStats(false);
      this.resolveDone();
      return;
    }
    const reason: SkipReason = ctx.stopping ? 'interrupted' : 'max-pages';
    for (const lease of parts.leases.takeAllHeld()) {
      parts.fate.complete(lease, reason);
      parts.records.skip(lease.entry.url, reason, lease.entry.depth, lease.entry.parent);
    }
    this.skipLeft(reason, undefined, () => {
      this.closeStats(ctx.stopping);
      if (ctx.stopping) this.resolveDone();
      else ctx.calls.settle(store.finish(), () => this.resolveDone());
    });
  }

  /** The host was just given up (the `hostGivenUp` signal): skip everything queued or waiting for it. */
  giveUpHost(key: string, policy: HostPolicy): void {
    const { ctx, parts } = this;
    const held = parts.leases.takeHeld(key);
    if (held) {
      const wrote = parts.records.skip(held.entry.url, 'host-failed', held.entry.depth, held.entry.parent);
      parts.fate.completeAfterRecord(held, 'host-failed', wrote);
    }
    this.skipLeft('host-failed', key, (left) => {
      const count = left + (held ? 1 : 0);
      const message = `gave up after ${policy.hostFailureGiveUp} failures in a row; ${count} queued URL(s) skipped`;
      addNote(ctx.stats, message, key);
      ctx.log?.warn(`${key}: ${message}`);
    });
  }

  /** A store call (or the archive) failed: nothing can be trusted any more; stop and report it (also when it failed while finishing). */
  fail(err: unknown): void {
    if (this.doneSettled) return;
    this.halt();
    this.parts.abort.abort();
    this.rejectDone(err);
  }

  /** Nothing starts, no timer fires again. */
  private halt(): void {
    const { parts } = this;
    this.ctx.finished = true;
    parts.scheduler.stop();
    parts.dueTimer.cancel();
    parts.slow.cancel();
    parts.survey.cancel();
  }

  /** The summary's last fields: each host's final rate, the end time. */
  private closeStats(interrupted: boolean): void {
    const { settings, stats, clock } = this.ctx;
    for (const [key, row] of stats.perHost) row.rate = this.parts.feedback.describe(key, settings.policyFor(key));
    finishStats(stats, clock, { interrupted });
  }

  /**
   * Empties the store (or one host key's part of it), each URL left counting
   * as skipped for `reason`. Per-URL records are built only when they will be
   * written (emitSkipped, or depth 0); the rest is counted in bulk, so this
   * costs the same whatever the size of the queue. `then` gets the number skipped.
   */
  private skipLeft(reason: SkipReason, key: string | undefined, then: (left: number) => void): void {
    const { ctx, parts } = this;
    const { records } = parts;
    if (ctx.settings.emitSkipped) {
      ctx.calls.settle(ctx.store.drain(key), (left) => {
        for (const e of left) records.skip(e.url, reason, e.depth, e.parent);
        then(left.length);
      });
      return;
    }
    ctx.calls.settle(ctx.store.clear(key), (cleared: Cleared) => {
      let left = cleared.depthZero.length;
      for (const e of cleared.depthZero) records.skip(e.url, reason, e.depth, e.parent);
      left += records.skippedInBulk(reason, cleared.counts);
      then(left);
    });
  }
}
