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
 * fetches, which go first), and the `WorkSource` (the crawl loop, which
 * claims from its store), asked for a job only at the moment the host can
 * start one. Per-host state lives in the shared HostTable.
 *
 * Cost per decision, with H hosts known: `wake` and taking the next ready
 * host are O(1) (a ring-buffer queue, never `Array#shift`, which copies a
 * large array and made one pass over 100,000 seeded hosts quadratic);
 * filing a host under its wake time and popping the earliest are O(log H)
 * (TimeHeap); `pendingJobs` is a counter, O(1). A pass visits at most
 * MAX_VISITS_PER_PASS hosts, hosts with an internal job first, so the first
 * requests of a broad crawl leave after O(1) work, not after one visit to
 * every seeded host. Only `hostsSnapshot`
 * (progress, a few times a second) and the sweep (at most every 30 s) walk
 * every host.
 */
import type { Clock } from '../clock.js';
import { DueTimer } from './due-timer.js';
import type { HostLimiter, LimiterPolicy, StartTicket } from '../politeness/host-limiter.js';
import { HostTable, type HostState, type Job, type JobContext } from '../politeness/host-state.js';
import { TimeHeap } from '../store/time-heap.js';
import { KeyQueue } from './key-queue.js';

export type { Job, JobContext } from '../politeness/host-state.js';

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

export interface SchedulerOptions<P extends LimiterPolicy = LimiterPolicy> {
  clock: Clock;
  concurrency: number;
  /** The per-host records the scheduler reads and files hosts in (its own table from `policyFor` if absent). */
  hosts?: HostTable<P>;
  /** Used only to build a table when `hosts` is not given. */
  policyFor?(key: string): P;
  source: WorkSource;
  /** Called after every job and whenever the scheduler may have gone quiet. */
  onSettle?: () => void;
  random?: () => number;
}

type HostSlot = HostState<LimiterPolicy>;

const SWEEP_EVERY_MS = 30_000;
/** Hosts one pump pass visits at most before yielding to the event loop. */
const MAX_VISITS_PER_PASS = 1_024;

export class Scheduler<P extends LimiterPolicy = LimiterPolicy> {
  private readonly hosts: HostTable<P>;
  private readonly heap = new TimeHeap<string>();
  private readonly ready = new KeyQueue();
  /** Hosts with an internal job (robots.txt) submitted: visited before `ready`, so a broad start-up's robots.txt requests do not wait behind every other seeded host. */
  private readonly urgent = new KeyQueue();
  private readonly urgentSet = new Set<string>();
  private immediateQueued = false;
  /** Internal jobs submitted and not started yet, across all hosts. */
  private queuedJobs = 0;
  private readonly readySet = new Set<string>();
  /** Jobs running: the global slots in use. A job starts only when one is free, so nothing ever waits for a slot. */
  private running = 0;
  private readonly timer: DueTimer;
  private pumpQueued = false;
  private stopped = false;
  private lastSweep: number;

  constructor(private readonly opts: SchedulerOptions<P>) {
    this.lastSweep = opts.clock.now();
    this.timer = new DueTimer(opts.clock, () => this.pump());
    if (opts.hosts) this.hosts = opts.hosts;
    else if (opts.policyFor) this.hosts = new HostTable<P>({ policyFor: opts.policyFor, random: opts.random });
    else throw new TypeError('Expected `hosts` or `policyFor`');
  }

  /** Jobs running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Internal jobs waiting for their host. */
  get pendingJobs(): number {
    return this.queuedJobs;
  }

  /** Runs `job` as the next request to `key`, through that host's limits. */
  submit(key: string, job: Job): void {
    this.hosts.get(key).jobs.push(job);
    this.queuedJobs++;
    if (this.stopped || this.urgentSet.has(key)) return;
    this.urgentSet.add(key);
    this.urgent.push(key);
    this.schedulePump();
  }

  /** The host may have new work or changed state: re-check it soon. */
  wake(key: string): void {
    if (this.stopped || this.readySet.has(key)) return;
    this.readySet.add(key);
    this.ready.push(key);
    this.schedulePump();
  }

  /** The limiter of a host (created on first use). */
  limiter(key: string): HostLimiter {
    return this.hosts.get(key).limiter;
  }

  /** Read-only view of per-host state for progress and tests. */
  hostsSnapshot(): Array<{ key: string; inFlight: number; waiting: boolean; pausedUntil: number; rateFactor: number }> {
    const now = this.opts.clock.now();
    const out = [];
    for (const slot of this.hosts.values()) {
      const key = slot.key;
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
    this.timer.cancel();
  }

  private schedulePump(): void {
    if (this.pumpQueued || this.stopped) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private scheduleImmediatePump(): void {
    if (this.immediateQueued || this.stopped) return;
    this.immediateQueued = true;
    setImmediate(() => {
      this.immediateQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped) return;
    const { clock } = this.opts;
    const now = clock.now();
    while (this.heap.peekTime() <= now) {
      const { item: key } = this.heap.pop()!;
      const slot = this.hosts.peek(key);
      if (slot) slot.wakeAt = Infinity;
      if (slot && !this.readySet.has(key)) {
        this.readySet.add(key);
        this.ready.push(key);
      }
    }
    while (this.urgent.length > 0 && this.running < this.opts.concurrency) {
      const key = this.urgent.shift();
      this.urgentSet.delete(key);
      this.visit(key, now);
    }
    // Each ready host gets at most one start per pass; hosts still ready go to the back (round-robin).
    // A pass visits at most MAX_VISITS_PER_PASS hosts, then lets I/O and the robots.txt loads it began
    // run: a pass over 100,000 seeded hosts took a second before the first request could leave.
    const capped = this.ready.length > MAX_VISITS_PER_PASS;
    let budget = capped ? MAX_VISITS_PER_PASS : this.ready.length;
    while (budget-- > 0 && this.running < this.opts.concurrency && this.ready.length > 0) {
      const key = this.ready.shift();
      this.readySet.delete(key);
      this.visit(key, now);
    }
    if (this.running < this.opts.concurrency) {
      if (this.urgent.length > 0 || (this.ready.length > 0 && !capped)) this.schedulePump();
      else if (this.ready.length > 0) this.scheduleImmediatePump();
    }
    if (now - this.lastSweep > SWEEP_EVERY_MS) this.sweep(now);
    this.timer.armAt(this.heap.peekTime());
    this.opts.onSettle?.();
  }

  /** Starts one request for `key` if it may start now; otherwise files it under its wake time. */
  private visit(key: string, now: number): void {
    const slot = this.hosts.get(key);
    const readyAt = slot.limiter.readyAt(now);
    if (readyAt > now) {
      if (readyAt !== Infinity && (slot.jobs.length > 0 || this.opts.source.hasWork(key))) this.sleepUntil(key, slot, readyAt);
      return; // Infinity: a running request's release will wake it
    }
    let job: Job | undefined = slot.jobs.length > 0 ? slot.jobs.shift() : undefined;
    if (job) this.queuedJobs--;
    else {
      const taken = this.opts.source.take(key, now);
      if (typeof taken === 'function') job = taken;
      else if (slot.jobs.length > 0) {
        // Taking submitted an internal job for this host (its robots.txt): run it now,
        // as the host's next visit would. Nothing has started since readyAt said go.
        // Otherwise a broad start-up visited every seeded host once before its first request.
        job = slot.jobs.shift()!;
        this.queuedJobs--;
      } else {
        if (taken !== null && taken.notBefore !== Infinity) this.sleepUntil(key, slot, Math.max(taken.notBefore, now + 1));
        return;
      }
    }
    this.start(key, slot, job, now);
    // Back of the round-robin: the next pass starts another request if the
    // host is still ready (concurrency > 1, no gap), or files it under its readyAt.
    this.wake(key);
  }

  private start(key: string, slot: HostSlot, job: Job, now: number): void {
    const ticket: StartTicket = slot.limiter.acquire(now);
    this.hosts.changed(key);
    this.running++;
    const ctx: JobContext = {
      onDispatched: (at) => {
        slot.limiter.markDispatched(ticket, at);
        this.hosts.changed(key);
        this.wake(key); // a host with a gap waits for this write before its next start
      },
      onResponse: (at) => {
        slot.limiter.markResponded(ticket, at);
        this.hosts.changed(key);
      },
    };
    // Runs at once, as it did inside p-queue before that was dropped: with
    // the slots counted here it never queued anything, and cost ~1 µs a job.
    void this.run(key, slot, job, ctx, ticket);
  }

  private async run(key: string, slot: HostSlot, job: Job, ctx: JobContext, ticket: StartTicket): Promise<void> {
    try {
      await job(ctx);
    } catch {
      // Jobs report their own failures; a throw here must not wedge the scheduler.
    } finally {
      slot.limiter.release(ticket);
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

  /** Forgets hosts whose state no longer constrains anything (lazily recreated on next use). */
  private sweep(now: number): void {
    this.lastSweep = now;
    this.hosts.sweep(now, (key) => this.readySet.has(key) || this.opts.source.hasWork(key));
  }
}
