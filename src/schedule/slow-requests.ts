/**
 * Slow requests give their global slot back.
 *
 * Contract: a page request that has been written to its socket and is still
 * running after `afterMs` stops counting against the crawl's global
 * concurrency: its scheduler job ends (so the scheduler starts work for other
 * hosts) while the request itself runs on, until it completes or hits its
 * total deadline. At most `max` requests are released like this at once;
 * past that, a slow request keeps its slot until its deadline. The host's own
 * concurrency is NOT released: `holds(key)` tells the crawl how many released
 * requests a host still has in flight, and the crawl counts them against the
 * host's limit before it starts another.
 *
 * Why: a total deadline alone frees a slot only after minutes. Twenty URLs on
 * ten hosts that drip their bodies a byte a second, queued before a good
 * site, would otherwise hold every global slot (ten hosts × 2 per host ≥ 16)
 * and the good site would get nothing until the deadlines passed. With this,
 * the good site waits `afterMs`, and sockets stay bounded (at most `max`
 * released requests besides the global concurrency).
 *
 * One timer serves every request: running requests are kept in start order,
 * and the timer is armed for the oldest one's `afterMs`.
 */
import type { Clock } from '../clock.js';
import type { Job, JobContext } from '../politeness/host-state.js';
import { DueTimer } from '../util/due-timer.js';

/** A request running this long has its global slot released. */
export const SLOW_AFTER_MS = 10_000;

export interface SlowRequestsOptions {
  clock: Clock;
  /** @default SLOW_AFTER_MS */
  afterMs?: number;
  /** Requests released at once, at most (the crawl's global concurrency). */
  max: number;
  /** A released request of `key` has ended: the host may start another. */
  onEnd(key: string): void;
}

interface Running {
  key: string;
  startedAt: number;
  dispatched: boolean;
  release: () => void;
  /** Released: what ends the request's share of its address (JobContext.detach). */
  ended?: () => void;
  ctx: JobContext;
}

export class SlowRequests {
  private readonly afterMs: number;
  private readonly running = new Map<number, Running>();
  private readonly released = new Map<string, number>();
  private releasedCount = 0;
  private seq = 0;
  private readonly timer: DueTimer;

  constructor(private readonly opts: SlowRequestsOptions) {
    this.afterMs = opts.afterMs ?? SLOW_AFTER_MS;
    this.timer = new DueTimer(opts.clock, () => this.sweep());
  }

  /** Released requests still running, across all hosts. */
  get count(): number {
    return this.releasedCount;
  }

  /** Released requests of `key` still running (they still count against its concurrency). */
  holds(key: string): number {
    return this.released.get(key) ?? 0;
  }

  /** Wraps a scheduler job so that it may end early, once slow; see the module contract. */
  wrap(key: string, job: Job): Job {
    return (ctx) => this.run(key, ctx, job);
  }

  private run(key: string, ctx: JobContext, job: Job): Promise<void> {
    const id = ++this.seq;
    return new Promise<void>((resolve) => {
      const entry: Running = { key, startedAt: this.opts.clock.now(), dispatched: false, release: resolve, ctx };
      this.running.set(id, entry);
      this.timer.armAt(entry.startedAt + this.afterMs);
      const inner: JobContext = {
        onDispatched: (at) => {
          entry.dispatched = true;
          ctx.onDispatched(at);
        },
        onResponse: (at) => ctx.onResponse(at),
      };
      const finish = () => {
        if (this.running.delete(id)) return resolve();
        // It was released: it ends now for its host (and its address).
        entry.ended?.();
        this.releasedCount--;
        const left = (this.released.get(key) ?? 1) - 1;
        if (left === 0) this.released.delete(key);
        else this.released.set(key, left);
        this.opts.onEnd(key);
      };
      job(inner).then(finish, finish);
    });
  }

  /** Releases every request past `afterMs` that has been written, while fewer than `max` are released. */
  private sweep(): void {
    const now = this.opts.clock.now();
    let recheck = Infinity;
    for (const [id, entry] of this.running) {
      const due = entry.startedAt + this.afterMs;
      if (due > now) {
        recheck = Math.min(recheck, due);
        break; // start order: the rest are younger
      }
      if (!entry.dispatched || this.releasedCount >= this.opts.max) {
        recheck = Math.min(recheck, now + this.afterMs);
        continue;
      }
      this.running.delete(id);
      this.releasedCount++;
      this.released.set(entry.key, (this.released.get(entry.key) ?? 0) + 1);
      entry.ended = entry.ctx.detach?.();
      entry.release();
    }
    this.timer.armAt(recheck);
  }

  /** Stops the timer; the crawl calls it when it ends, so no armed timer keeps the process alive. */
  cancel(): void {
    this.timer.cancel();
  }
}
