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
 *
 * Hosts never visited (no record in the HostTable: seeds, new links' hosts,
 * hosts swept for being idle) wait in their own FIFO, `fresh`, and cost
 * nothing else: no record, no robots.txt load, no address lookup. A pass
 * takes them up only after the urgent and ready hosts, while a global slot
 * is still free, and while fewer than `maxOpening` (MAX_OPENING_PER_SLOT ×
 * concurrency) hosts are *opening*: taken up, and their first job (robots.txt,
 * or a page) not ended yet, nor told to wait for a known time. The first
 * job ending (or `take` answering null, a job, or a wait until a known time)
 * makes the host an ordinary one. So a broad crawl's 100,000 seeds are
 * opened about as fast as slots free up, robots.txt just ahead of the host's
 * first page, and no faster: a host whose robots.txt is in, waits in the
 * round-robin for its gap and is served before any new host is opened.
 * That keeps the work conserving (a slot is never left idle while a fresh
 * host waits and the window has room) and bounds what the hosts not reached
 * yet cost to their queued URLs. O(1) per decision (a ring buffer and a set).
 *
 * Addresses and per-IP limits (both optional): with `addresses`
 * (host-addresses.ts) a host is first resolved, in the background, and
 * visited again when its answer arrives, so a slow lookup holds no slot.
 * With `ipLimits` (politeness/ip-limits.ts) a request starts only when its
 * host's limiter AND its address's limiter allow it; a host ready but for
 * its address waits in that address's FIFO, and the address hands out one
 * host per turn (when its gap is over — filed in a second heap, O(log A) —
 * or when one of its requests is written or ends), so a start costs O(1)
 * more however many hosts share the address. Every visit of a host with an
 * address ends by passing the turn on if the address is still ready.
 */
import type { Clock } from '../clock.js';
import { DueTimer } from '../util/due-timer.js';
import type { HostLimiter, LimiterPolicy, StartTicket } from '../politeness/host-limiter.js';
import { HostTable, type HostState, type Job, type JobContext } from '../politeness/host-state.js';
import { TimeHeap } from '../util/time-heap.js';
import { RingQueue } from '../util/ring-queue.js';
import { PENDING, type HostAddresses } from './host-addresses.js';
import type { IpLimits, IpState } from '../politeness/ip-limits.js';

/** What a dropped job is called with: it is told nothing, and must start nothing. */
const DROPPED: JobContext = { onDispatched: () => {}, onResponse: () => undefined };

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
  policyFor?: (key: string) => P;
  source: WorkSource;
  /** Called after every job and whenever the scheduler may have gone quiet. */
  onSettle?: () => void;
  random?: () => number;
  /** Resolves each host before its first start (host-addresses.ts). @default none: hosts are not resolved ahead */
  addresses?: HostAddresses;
  /** Per-IP limits over the addresses `addresses` answers. @default none */
  ipLimits?: IpLimits;
  /**
   * Every answer's time to first byte, from the request's write to its
   * response headers (per request: waits for a slot, a gap or a connection
   * are not in it), before the host's record is persisted. @default none
   */
  responded?: (key: string, ttfbMs: number) => void;
}

type HostSlot = HostState<LimiterPolicy>;

const SWEEP_EVERY_MS = 30_000;
/** Hosts one pump pass visits at most before yielding to the event loop. */
const MAX_VISITS_PER_PASS = 1_024;
/**
 * Hosts opening at once (address lookup, robots.txt load, first job), per
 * global slot; at least MIN_OPENING. 2,048 at -c 256: a broad crawl's first
 * wave of robots.txt requests covers ~2,000 hosts, as many as a CPU-bound
 * crawl of hosts at 5/s keeps busy (bench/broad.js: 2,000 hosts crawl as fast
 * as with no window), while 100,000 seeds cost their queued URLs and no more
 * (bench/queued-hosts-probe.js; 4× gave a slower ramp-up at 2,000 hosts, 16×
 * ~100 MB more at 100,000).
 */
export const MAX_OPENING_PER_SLOT = 8;
const MIN_OPENING = 64;

export class Scheduler<P extends LimiterPolicy = LimiterPolicy> {
  private readonly hosts: HostTable<P>;
  private readonly heap = new TimeHeap<string>();
  /** Addresses whose gap ends later, with hosts waiting for them. */
  private readonly ipHeap = new TimeHeap<string>();
  private readonly ready = new RingQueue<string>();
  /** Hosts with an internal job (robots.txt) submitted: visited before `ready`, so a broad start-up's robots.txt requests do not wait behind every other seeded host. */
  private readonly urgent = new RingQueue<string>();
  private readonly urgentSet = new Set<string>();
  private immediateQueued = false;
  /** Internal jobs submitted and not started yet, across all hosts. */
  private queuedJobs = 0;
  private readonly readySet = new Set<string>();
  /** Hosts woken without a record, never visited (or swept): taken up after the ready ones, within the opening window. */
  private readonly fresh = new RingQueue<string>();
  private readonly freshSet = new Set<string>();
  /** Hosts taken up from `fresh` whose first job has not ended yet (see the header). */
  private readonly opening = new Set<string>();
  private readonly maxOpening: number;
  /** Jobs running: the global slots in use. A job starts only when one is free, so nothing ever waits for a slot. */
  private running = 0;
  private readonly timer: DueTimer;
  private pumpQueued = false;
  private stopped = false;
  private lastSweep: number;

  constructor(private readonly opts: SchedulerOptions<P>) {
    this.lastSweep = opts.clock.now();
    this.maxOpening = Math.max(MIN_OPENING, MAX_OPENING_PER_SLOT * opts.concurrency);
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

  /**
   * Runs `job` as the next request to `key`, through that host's limits;
   * with `wanted`, only if it still says yes when the host is ready: a job
   * dropped then is called with DROPPED (it must start nothing) and takes
   * no start, so it costs its host no gap.
   */
  submit(key: string, job: Job, wanted?: () => boolean): void {
    this.hosts.get(key).jobs.push(wanted === undefined ? { run: job } : { run: job, wanted });
    this.queuedJobs++;
    if (this.stopped || this.urgentSet.has(key)) return;
    this.urgentSet.add(key);
    this.urgent.push(key);
    this.schedulePump();
  }

  /**
   * The host's address just arrived (host-addresses.ts): visit it ahead of
   * the round-robin, as a host with robots.txt to fetch is. A broad crawl's
   * hosts are all new at the start; behind the ready list, the first
   * requests would wait for a pass over every seeded host.
   */
  resolved(key: string): void {
    if (this.stopped || this.urgentSet.has(key)) return;
    this.urgentSet.add(key);
    this.urgent.push(key);
    this.schedulePump();
  }

  /** The host may have new work or changed state: re-check it soon. A host without a record waits in `fresh`. */
  wake(key: string): void {
    if (this.stopped || this.readySet.has(key)) return;
    if (this.hosts.peek(key) === undefined) {
      if (this.freshSet.has(key)) return;
      this.freshSet.add(key);
      this.fresh.push(key);
    } else {
      this.readySet.add(key);
      this.ready.push(key);
    }
    this.schedulePump();
  }

  /** Hosts taken up and not yet through their first job (at most MAX_OPENING_PER_SLOT × concurrency). */
  get openingHosts(): number {
    return this.opening.size;
  }

  /** Hosts woken that were never visited, waiting to be taken up. */
  get freshHosts(): number {
    return this.fresh.length;
  }

  /** The limiter of a host (created on first use). */
  limiter(key: string): HostLimiter {
    return this.hosts.get(key).limiter;
  }

  /** Read-only view of per-host state for progress and tests. */
  hostsSnapshot(): Array<{
    key: string;
    inFlight: number;
    waiting: boolean;
    pausedUntil: number;
    quiet: { until: number; opensAt: string } | null;
    rateFactor: number;
  }> {
    const now = this.opts.clock.now();
    const out = [];
    for (const slot of this.hosts.values()) {
      const key = slot.key;
      const hasWork = slot.jobs.length > 0 || this.opts.source.hasWork(key);
      out.push({
        key,
        inFlight: slot.limiter.inFlight,
        waiting: hasWork && (slot.limiter.readyAt(now) > now || this.waitsForAddress(key, now)),
        pausedUntil: slot.limiter.pausedUntil,
        quiet: hasWork ? slot.limiter.quiet(now) : null,
        rateFactor: slot.limiter.rateFactor,
      });
    }
    return out;
  }

  /** Whether the host waits for its address: a lookup under way, or its IP's limits. */
  private waitsForAddress(key: string, now: number): boolean {
    const answer = this.opts.addresses?.peek(key);
    if (answer === PENDING) return true;
    return typeof answer === 'string' && this.opts.ipLimits !== undefined && this.opts.ipLimits.readyAt(answer, now) > now;
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
    while (this.ipHeap.peekTime() <= now) {
      const { item: ip } = this.ipHeap.pop()!;
      const state = this.opts.ipLimits?.peek(ip);
      if (state) {
        state.wakeAt = Infinity;
        this.passTurn(state, now);
      }
    }
    while (this.urgent.length > 0 && this.running < this.opts.concurrency && !this.stopped) {
      const key = this.urgent.shift();
      this.urgentSet.delete(key);
      this.visit(key, now);
    }
    // Each ready host gets at most one start per pass; hosts still ready go to the back (round-robin).
    // A pass visits at most MAX_VISITS_PER_PASS hosts, then lets I/O and the robots.txt loads it began
    // run: a pass over 100,000 seeded hosts took a second before the first request could leave.
    const capped = this.ready.length > MAX_VISITS_PER_PASS;
    let budget = capped ? MAX_VISITS_PER_PASS : this.ready.length;
    let visits = 0;
    // A stop met inside a visit (a store call can stop the crawl) starts nothing more in this pass.
    while (budget-- > 0 && this.running < this.opts.concurrency && this.ready.length > 0 && !this.stopped) {
      const key = this.ready.shift();
      this.readySet.delete(key);
      visits++;
      this.visit(key, now);
    }
    // Then hosts never visited, while a slot is free and the opening window has room (see the header).
    let freshBudget = MAX_VISITS_PER_PASS - visits;
    while (freshBudget-- > 0 && this.running < this.opts.concurrency && this.fresh.length > 0 && this.opening.size < this.maxOpening && !this.stopped) {
      const key = this.fresh.shift();
      this.freshSet.delete(key);
      if (this.readySet.has(key)) continue; // it got a record meanwhile and waits in `ready`
      if (this.hosts.peek(key) === undefined) {
        // Nothing left for it (a cap, a stop, a give-up emptied its queue): no record made, no place taken.
        if (!this.opts.source.hasWork(key)) continue;
        this.opening.add(key);
      }
      this.visit(key, now);
    }
    if (this.running < this.opts.concurrency) {
      const freshWaits = this.fresh.length > 0 && this.opening.size < this.maxOpening;
      if (this.urgent.length > 0 || (this.ready.length > 0 && !capped)) this.schedulePump();
      else if (this.ready.length > 0 || freshWaits) this.scheduleImmediatePump();
    }
    if (now - this.lastSweep > SWEEP_EVERY_MS) this.sweep(now);
    this.timer.armAt(Math.min(this.heap.peekTime(), this.ipHeap.peekTime()));
    this.opts.onSettle?.();
  }

  /**
   * Starts one request for `key` if it and its address may start now;
   * otherwise files it under its wake time, or in its address's queue.
   */
  private visit(key: string, now: number): void {
    let ip: IpState | undefined;
    const { addresses, ipLimits } = this.opts;
    if (addresses !== undefined) {
      const answer = addresses.state(key, now);
      if (answer === PENDING) return; // its answer wakes the host
      // A failed lookup goes on to `take`, which records the host's URLs as DNS_FAILURE without a request.
      if (typeof answer === 'string' && ipLimits !== undefined) ip = ipLimits.get(answer);
    }
    this.visitHost(key, now, ip);
    // The address may still start one more (concurrency, no gap, or this host had nothing): the next host's turn.
    if (ip !== undefined) this.passTurn(ip, now);
  }

  private visitHost(key: string, now: number, ip: IpState | undefined): void {
    const slot = this.hosts.get(key);
    const readyAt = slot.limiter.readyAt(now);
    if (readyAt > now) {
      if (readyAt !== Infinity && (slot.jobs.length > 0 || this.opts.source.hasWork(key))) {
        this.sleepUntil(key, slot, readyAt);
        // A fresh host told to wait for a known time (its quiet hours) leaves the opening window to others.
        if (this.opening.size > 0) this.opened(key);
      }
      return; // Infinity: a running request's release will wake it
    }
    if (ip !== undefined && ip.limiter.readyAt(now) > now) {
      // Ready but for its address: in the address's queue (no slot, no heap entry), until the address hands it a turn.
      if (slot.jobs.length > 0 || this.opts.source.hasWork(key)) this.opts.ipLimits!.wait(ip, key);
      return;
    }
    let job: Job | undefined = this.nextJob(slot);
    if (job === undefined) {
      const taken = this.opts.source.take(key, now);
      // Opening ends with a page job, nothing to do, or a wait with a known end (not a load under way).
      if (this.opening.size > 0 && (taken === null || typeof taken === 'function' || taken.notBefore !== Infinity)) this.opened(key);
      if (typeof taken === 'function') job = taken;
      else if (slot.jobs.length > 0) {
        // Taking submitted an internal job for this host (its robots.txt): run it now,
        // as the host's next visit would. Nothing has started since readyAt said go.
        // Otherwise a broad start-up visited every seeded host once before its first request.
        job = this.nextJob(slot);
      }
      if (job === undefined) {
        if (taken !== null && typeof taken !== 'function' && taken.notBefore !== Infinity) this.sleepUntil(key, slot, Math.max(taken.notBefore, now + 1));
        return;
      }
    }
    this.start(key, slot, job, now, ip);
    // Back of the round-robin: the next pass starts another request if the
    // host is still ready (concurrency > 1, no gap), or files it under its readyAt.
    this.wake(key);
  }

  /** The host's next internal job that is still wanted; those no longer wanted are dropped on the way, taking no start. */
  private nextJob(slot: HostSlot): Job | undefined {
    for (let next = slot.jobs.shift(); next !== undefined; next = slot.jobs.shift()) {
      this.queuedJobs--;
      if (next.wanted === undefined || next.wanted()) return next.run;
      void next.run(DROPPED).catch(() => {});
    }
    return undefined;
  }

  private start(key: string, slot: HostSlot, job: Job, now: number, ip: IpState | undefined): void {
    const ticket: StartTicket = slot.limiter.acquire(now);
    this.hosts.changed(key);
    this.running++;
    const ipTicket = ip?.limiter.acquire(now);
    /** Null once the address's share is released (or handed to `detach`). */
    let ipRelease: (() => void) | null =
      ip === undefined
        ? null
        : () => {
            ip.limiter.release(ipTicket);
            this.passTurn(ip, this.opts.clock.now());
            this.schedulePump();
          };
    const ctx: JobContext = {
      onDispatched: (at) => {
        slot.limiter.markDispatched(ticket, at);
        this.hosts.changed(key);
        this.wake(key); // a host with a gap waits for this write before its next start
        if (ip !== undefined) {
          ip.limiter.markDispatched(ipTicket!, at);
          this.passTurn(ip, this.opts.clock.now()); // likewise the hosts waiting for its address
        }
      },
      onResponse: (at) => {
        const arrival = slot.limiter.markResponded(ticket, at);
        this.opts.responded?.(key, Math.max(0, at - ticket.sentAt));
        this.hosts.changed(key);
        if (ip !== undefined) ip.limiter.markResponded(ipTicket!, at);
        return arrival;
      },
      detach: () => {
        const release = ipRelease ?? (() => {});
        ipRelease = null;
        return release;
      },
    };
    // Runs at once, as it did inside p-queue before that was dropped: with
    // the slots counted here it never queued anything, and cost ~1 µs a job.
    void this.run(key, slot, job, ctx, ticket, () => ipRelease?.());
  }

  private async run(key: string, slot: HostSlot, job: Job, ctx: JobContext, ticket: StartTicket, releaseIp: () => void): Promise<void> {
    try {
      await job(ctx);
    } catch {
      // Jobs report their own failures; a throw here must not wedge the scheduler.
    } finally {
      slot.limiter.release(ticket);
      releaseIp();
      this.running--;
      if (this.opening.size > 0) this.opened(key);
      this.wake(key);
      this.schedulePump();
      this.opts.onSettle?.();
    }
  }

  /**
   * The address may start a request now: wake the next host waiting for it
   * (one; its visit passes the turn on). Not yet, at a known time: file the
   * address in the heap. Never: a write or a release calls this again.
   */
  private passTurn(ip: IpState, now: number): void {
    if (ip.waiting === null || this.stopped) return;
    const at = ip.limiter.readyAt(now);
    if (at <= now) {
      const key = this.opts.ipLimits!.next(ip);
      if (key !== undefined) this.wake(key);
    } else if (at !== Infinity && ip.wakeAt > at) {
      ip.wakeAt = at;
      this.ipHeap.push(at, ip.ip);
      this.timer.armAt(Math.min(this.heap.peekTime(), this.ipHeap.peekTime()));
    }
  }

  /** The host's first job ended (or it needs none): it leaves the opening window, and the next fresh host may be taken up. */
  private opened(key: string): void {
    if (this.opening.delete(key) && this.fresh.length > 0) this.schedulePump();
  }

  private sleepUntil(key: string, slot: HostSlot, at: number): void {
    if (slot.wakeAt <= at) return; // already filed to wake no later than that
    slot.wakeAt = at;
    this.heap.push(at, key);
  }

  /** Forgets hosts whose state no longer constrains anything (lazily recreated on next use). */
  private sweep(now: number): void {
    this.lastSweep = now;
    this.hosts.sweep(now, (key) => this.readySet.has(key) || this.freshSet.has(key) || this.opts.source.hasWork(key));
    // A host left with nothing to do while opening (its queue emptied by a cap, a give-up) frees its place in the window.
    for (const key of this.opening) {
      const slot = this.hosts.peek(key);
      if (!this.opts.source.hasWork(key) && (slot === undefined || (slot.jobs.length === 0 && slot.limiter.inFlight === 0))) this.opening.delete(key);
    }
    this.opts.ipLimits?.sweep(now);
    this.opts.addresses?.sweep((key) => this.hosts.peek(key) !== undefined);
  }
}
