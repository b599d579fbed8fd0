/**
 * The scheduler: decides WHEN a request may start, never what to fetch.
 *
 * Contract: a global slot is taken only for a host that is ready
 * now — its limiter says the gap, windows, concurrency and any pause allow a
 * start — so no slot is ever held while waiting on a host. Hosts that are not
 * ready sit in a wake heap keyed by their `readyAt`; one timer is armed for
 * the earliest. Ready hosts are served round-robin, so throughput approaches
 * the sum of the hosts' rates however the URLs are ordered.
 *
 * Work comes from two places: internal jobs submitted for a host (robots.txt
 * fetches, which go first), and the `WorkSource` (the crawler's frontier),
 * asked for a job only at the moment the host can start one.
 */
import type { Clock, Timer } from '../clock.js';
import { HostLimiter, type LimiterPolicy, type StartTicket } from '../politeness/host-limiter.js';
import { TimeHeap } from '../store/time-heap.js';

export interface JobContext {
  /** Call with clock.now() when the request is written to the socket. */
  onDispatched(at: number): void;
  /** Call with clock.now() when its response headers arrive. */
  onResponse(at: number): void;
}

export type Job = (ctx: JobContext) => Promise<void>;

export type TakeResult = Job | { notBefore: number } | null;

export interface WorkSource {
  /** Whether the host has queued work (cheap; no side effects). */
  hasWork(key: string): boolean;
  /**
   * Called only when `key` may start a request now. Returns the job to run,
   * `{ notBefore }` if its next work cannot start before then (e.g. robots.txt
   * is being fetched or must be retried later), or null if it has nothing.
   * May consume entries it decides to skip.
   */
  take(key: string, now: number): TakeResult;
}

export interface SchedulerOptions {
  clock: Clock;
  concurrency: number;
  policyFor(key: string): LimiterPolicy;
  source: WorkSource;
  /** Called after every job and whenever the scheduler may have gone quiet. */
  onSettle?: () => void;
  random?: () => number;
}

interface HostSlot {
  limiter: HostLimiter;
  jobs: Job[];
  /** The wake time this host already sits in the heap for (Infinity: not in the heap). */
  wakeAt: number;
}

const SWEEP_EVERY_MS = 30_000;

export class Scheduler {
  private readonly hosts = new Map<string, HostSlot>();
  private readonly heap = new TimeHeap<string>();
  private readonly ready: string[] = [];
  private readonly readySet = new Set<string>();
  /** Jobs running: the global slots in use. A job starts only when one is free, so nothing ever waits for a slot. */
  private running = 0;
  private timer: Timer | null = null;
  private timerAt = Infinity;
  private pumpQueued = false;
  private stopped = false;
  private lastSweep: number;

  constructor(private readonly opts: SchedulerOptions) {
    this.lastSweep = opts.clock.now();
  }

  /** Jobs running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Internal jobs waiting for their host. */
  get pendingJobs(): number {
    let n = 0;
    for (const slot of this.hosts.values()) n += slot.jobs.length;
    return n;
  }

  /** Runs `job` as the next request to `key`, through that host's limits. */
  submit(key: string, job: Job): void {
    this.slot(key).jobs.push(job);
    this.wake(key);
  }

  /** The host may have new work or changed state: re-check it soon. */
  wake(key: string): void {
    if (this.stopped || this.readySet.has(key)) return;
    this.readySet.add(key);
    this.ready.push(key);
    this.schedulePump();
  }

  /** The limiter of a host (created on first use) — the entry point for server feedback. */
  limiter(key: string): HostLimiter {
    return this.slot(key).limiter;
  }

  /** Read-only view of per-host state for progress and tests. */
  hostsSnapshot(): Array<{ key: string; inFlight: number; waiting: boolean; pausedUntil: number; rateFactor: number }> {
    const now = this.opts.clock.now();
    const out = [];
    for (const [key, slot] of this.hosts) {
      const hasWork = slot.jobs.length > 0 || this.opts.source.hasWork(key);
      out.push({
        key,
        inFlight: slot.limiter.inFlight,
        waiting: hasWork && slot.limiter.readyAt(now) > now,
        pausedUntil: slot.limiter.pausedUntil,
        rateFactor: slot.limiter.rateFactor,
      });
    }
    return out;
  }

  /** Stops starting new work; running jobs finish on their own. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.opts.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private slot(key: string): HostSlot {
    let slot = this.hosts.get(key);
    if (!slot) {
      slot = { limiter: new HostLimiter(this.opts.policyFor(key), this.opts.random), jobs: [], wakeAt: Infinity };
      this.hosts.set(key, slot);
    }
    return slot;
  }

  private schedulePump(): void {
    if (this.pumpQueued || this.stopped) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped) return;
    const { clock } = this.opts;
    const now = clock.now();
    while (this.heap.peekTime() <= now) {
      const { item: key } = this.heap.pop()!;
      const slot = this.hosts.get(key);
      if (slot) slot.wakeAt = Infinity;
      if (slot && !this.readySet.has(key)) {
        this.readySet.add(key);
        this.ready.push(key);
      }
    }
    // Each ready host gets at most one start per pass; hosts still ready go to the back (round-robin).
    let budget = this.ready.length;
    while (budget-- > 0 && this.running < this.opts.concurrency && this.ready.length > 0) {
      const key = this.ready.shift()!;
      this.readySet.delete(key);
      this.visit(key, now);
    }
    if (this.ready.length > 0 && this.running < this.opts.concurrency) this.schedulePump();
    if (now - this.lastSweep > SWEEP_EVERY_MS) this.sweep(now);
    this.armTimer(now);
    this.opts.onSettle?.();
  }

  /** Starts one request for `key` if it may start now; otherwise files it under its wake time. */
  private visit(key: string, now: number): void {
    const slot = this.slot(key);
    const readyAt = slot.limiter.readyAt(now);
    if (readyAt > now) {
      if (readyAt !== Infinity && (slot.jobs.length > 0 || this.opts.source.hasWork(key))) this.sleepUntil(key, slot, readyAt);
      return; // Infinity: a running request's release will wake it
    }
    let job: Job | undefined = slot.jobs.shift();
    if (!job) {
      const taken = this.opts.source.take(key, now);
      if (taken === null) return;
      if (typeof taken !== 'function') {
        if (taken.notBefore !== Infinity) this.sleepUntil(key, slot, Math.max(taken.notBefore, now + 1));
        return;
      }
      job = taken;
    }
    this.start(key, slot, job, now);
    // Back of the round-robin: the next pass starts another request if the
    // host is still ready (concurrency > 1, no gap), or files it under its readyAt.
    this.wake(key);
  }

  private start(key: string, slot: HostSlot, job: Job, now: number): void {
    const ticket: StartTicket = slot.limiter.acquire(now);
    this.running++;
    const ctx: JobContext = {
      onDispatched: (at) => slot.limiter.markDispatched(ticket, at),
      onResponse: (at) => slot.limiter.markResponded(ticket, at),
    };
    // Runs at once, as it did inside p-queue before that was dropped: with
    // the slots counted here it never queued anything, and cost ~1 µs a job.
    void this.run(key, slot, job, ctx);
  }

  private async run(key: string, slot: HostSlot, job: Job, ctx: JobContext): Promise<void> {
    try {
      await job(ctx);
    } catch {
      // Jobs report their own failures; a throw here must not wedge the scheduler.
    } finally {
      slot.limiter.release();
      this.running--;
      this.wake(key);
      this.schedulePump();
      this.opts.onSettle?.();
    }
  }

  private sleepUntil(key: string, slot: HostSlot, at: number): void {
    if (slot.wakeAt <= at) return; // already filed to wake no later than that
    slot.wakeAt = at;
    this.heap.push(at, key);
  }

  private armTimer(now: number): void {
    const next = this.heap.peekTime();
    if (next === Infinity || next >= this.timerAt) return;
    if (this.timer) this.opts.clock.clearTimer(this.timer);
    this.timerAt = next;
    this.timer = this.opts.clock.setTimer(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(0, next - now));
  }

  /** Forgets hosts whose state no longer constrains anything (lazily recreated on next use). */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, slot] of this.hosts) {
      if (slot.jobs.length === 0 && slot.wakeAt === Infinity && !this.readySet.has(key) && !this.opts.source.hasWork(key) && slot.limiter.isIdle(now)) {
        this.hosts.delete(key);
      }
    }
  }
}
