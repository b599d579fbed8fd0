/**
 * Politeness state of one host key.
 *
 * Contract: `readyAt(now)` is the earliest time the next request to this host
 * may start. It is a pure function of the recorded starts, the in-flight count
 * and any pause; it never waits. The scheduler calls `acquire` only when
 * `readyAt(now) <= now`, and `release` when the response is done.
 *
 * - Gap: consecutive starts are at least `intervalMs` apart (raised by a
 *   robots.txt Crawl-delay floor, widened by the adaptive rate factor), plus a
 *   small safety margin: servers measure arrival, and a server-side limiter
 *   refuses a request that lands even 1 ms early.
 * - Windows: no more than `count` starts in ANY span of `windowMs` (a sliding
 *   log of the last `count` starts, so no bursts at window boundaries).
 * - A start is timed from when the request is actually written to the socket
 *   (`markDispatched`), not from when we decided to send it — and moved later
 *   still when its response shows the server read it late (`markResponded`):
 *   a server busy accepting many connections can read a request several ms
 *   after we wrote it, then read the next one on time, and it would see a
 *   short gap. The response time minus the host's fastest round trip seen so
 *   far bounds when the server actually had the request; with no round trip
 *   seen yet (a host's first request, usually robots.txt), the response time
 *   itself is used.
 * - While a started request has not been written yet (still connecting),
 *   a host with a gap starts nothing else: the next start is timed from that
 *   write, which is not known before it happens. Without this, a request on a
 *   fresh connection could land after the next one, sent at once on a
 *   reused connection, closer than the gap.
 * - Quiet hours (`policy.hours`, crawl-hours.ts): a start is allowed only
 *   while the daily window is open, judged on the wall clock (`wallAt` maps
 *   this clock's instants to it). Outside it, readyAt is the next opening: a
 *   pause like Retry-After's, never a drop. A request started inside the
 *   window runs to its end, whenever that is.
 */
import type { WindowLimit } from '../config/settings-types.js';
import type { CrawlHours } from './crawl-hours.js';

export interface LimiterPolicy {
  intervalMs: number;
  windows: readonly WindowLimit[];
  concurrency: number;
  jitterMs: number;
  /** Quiet hours: the daily window starts are allowed in; null or absent: any time. */
  hours?: CrawlHours | null;
}

/** Maps an instant of the crawl's clock to wall-clock epoch ms. */
export type WallAt = (now: number) => number;

/**
 * Slack added to every gap: 1% plus 3 ms, the 3 ms shrinking to two fifths
 * of the gap for gaps under 7.5 ms (a flat 3 ms was 60% of a 5 ms gap:
 * `--rate 200/s` ran at ~107/s). A tenth, then a fifth, was too thin: at
 * 200/s their 0.5 and 1 ms were less than the jitter between a request's
 * write and its arrival (servers saw 4.89 ms and 4.08 ms between arrivals
 * of crawls spaced 5.55 and 6.05 ms); two fifths give 2 ms there (7.05 ms,
 * ~122/s measured with 1 ms timers). Windows get 0.1% + 5 ms.
 */
export const GAP_MARGIN = { ratio: 0.01, ms: 3, msRatio: 0.4 } as const;

/** The gap with its margin: what the limiter actually waits between starts. */
export function gapWithMargin(gapMs: number): number {
  return gapMs + gapMs * GAP_MARGIN.ratio + Math.min(GAP_MARGIN.ms, gapMs * GAP_MARGIN.msRatio);
}
export const WINDOW_MARGIN = { ratio: 0.001, ms: 5 } as const;

export interface LimiterSnapshot {
  inFlight: number;
  lastStart: number;
  pausedUntil: number;
  effectiveIntervalMs: number;
  rateFactor: number;
  crawlDelayMs: number;
  starts: number;
}

/**
 * A limiter's state as JSON-safe data (`null` for "never"), for stores that
 * keep it across a restart. In-flight requests are not part of it.
 */
export interface LimiterSaved {
  lastStart: number | null;
  pausedUntil: number | null;
  crawlDelayMs: number;
  serverGapMs: number;
  serverGapUntil: number | null;
  rateFactor: number;
  nextJitterMs: number;
  minRoundTripMs: number | null;
  /** The recent start times of each window, oldest first. */
  windows: Array<{ windowMs: number; starts: number[] }>;
}

const finiteOrNull = (n: number): number | null => (Number.isFinite(n) ? n : null);

/** Identifies one acquired request so its real dispatch and response times can be recorded. */
export interface StartTicket {
  readonly seq: number;
  /** When the request was written to the socket (the acquire time until known). */
  sentAt: number;
  /** Written to the socket, or ended without ever being written. */
  settled: boolean;
}

/** Ring buffer of the most recent `count` start times for one window. */
class StartLog {
  private readonly at: Float64Array;
  private readonly seqs: Float64Array;
  private filled = 0;
  private next = 0;

  constructor(readonly limit: WindowLimit) {
    this.at = new Float64Array(limit.count);
    this.seqs = new Float64Array(limit.count).fill(-1);
  }

  push(seq: number, at: number): void {
    this.at[this.next] = at;
    this.seqs[this.next] = seq;
    this.next = (this.next + 1) % this.limit.count;
    if (this.filled < this.limit.count) this.filled++;
  }

  /** Moves a start later when the request actually left later than planned. */
  update(seq: number, at: number): void {
    for (let i = 0; i < this.filled; i++) {
      if (this.seqs[i] === seq) {
        if (at > this.at[i]) this.at[i] = at;
        return;
      }
    }
  }

  /** Start times held, oldest first. */
  times(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.filled; i++) out.push(this.at[(this.next - this.filled + i + this.limit.count) % this.limit.count]);
    return out;
  }

  /** Earliest time a new start keeps at most `count` starts in every window. */
  readyAt(): number {
    if (this.filled < this.limit.count) return -Infinity;
    // The oldest of the last `count` starts must have left the window. The log
    // is in push order, but dispatch-time updates can reorder values: take the min.
    let oldest = Infinity;
    for (let i = 0; i < this.filled; i++) oldest = Math.min(oldest, this.at[i]);
    const w = this.limit.windowMs;
    return oldest + w + w * WINDOW_MARGIN.ratio + WINDOW_MARGIN.ms;
  }

  /** The last moment this log still constrains anything. */
  horizon(): number {
    let newest = -Infinity;
    for (let i = 0; i < this.filled; i++) newest = Math.max(newest, this.at[i]);
    return newest + this.limit.windowMs * (1 + WINDOW_MARGIN.ratio) + WINDOW_MARGIN.ms;
  }
}

export class HostLimiter {
  private policy: LimiterPolicy;
  private logs: StartLog[];
  private inFlightCount = 0;
  /** Started requests not yet written to the socket. */
  private awaitingDispatch = 0;
  private lastStart = -Infinity;
  private pausedUntilAt = -Infinity;
  private crawlDelay = 0;
  private serverGap = 0;
  private serverGapUntil = -Infinity;
  private factor = 1;
  private nextJitter = 0;
  private seq = 0;
  /** Fastest request→response time seen on this host. */
  private minRoundTrip = Infinity;

  constructor(
    policy: LimiterPolicy,
    private readonly random: () => number = Math.random,
    /** The crawl clock's instants on the wall clock (quiet hours). @default the same numbers: the system clock's scale */
    private readonly wallAt: WallAt = (now) => now,
  ) {
    this.policy = policy;
    this.logs = policy.windows.map((w) => new StartLog(w));
  }

  /** The gap between starts in force at `now`, before margin and jitter. */
  effectiveIntervalMs(now = -Infinity): number {
    const server = now < this.serverGapUntil ? this.serverGap : 0;
    return Math.max(this.policy.intervalMs / this.factor, this.crawlDelay, server);
  }

  readyAt(now: number): number {
    if (this.inFlightCount >= this.policy.concurrency) return Infinity;
    let at = this.pausedUntilAt;
    const gap = this.effectiveIntervalMs(now);
    if (gap > 0 && this.awaitingDispatch > 0) return Infinity; // its dispatch wakes the host
    if (gap > 0 && this.lastStart > -Infinity) {
      at = Math.max(at, this.lastStart + gapWithMargin(gap) + this.nextJitter);
    }
    for (const log of this.logs) at = Math.max(at, log.readyAt());
    if (at < now) at = now;
    return this.policy.hours ? this.openAtOrAfter(at) : at;
  }

  /** The first instant at or after `at` inside the host's quiet-hours window. */
  private openAtOrAfter(at: number): number {
    const wall = this.wallAt(at);
    const open = this.policy.hours!.nextOpen(wall);
    return open === wall ? at : at + (open - wall);
  }

  /**
   * When the host's quiet hours let it start again, if they forbid a start
   * at `now` (crawl clock; -Infinity when they do not). Progress and status
   * show it; readyAt already includes it.
   */
  quietUntil(now: number): number {
    return this.quiet(now)?.until ?? -Infinity;
  }

  /** As quietUntil, with the zone's clock at the opening ("06:00") for messages; null while the window is open. */
  quiet(now: number): { until: number; opensAt: string } | null {
    const hours = this.policy.hours;
    if (!hours) return null;
    const wall = this.wallAt(now);
    const open = hours.nextOpen(wall);
    return open === wall ? null : { until: now + (open - wall), opensAt: hours.clockAt(open) };
  }

  /** Records a start at `now`. Callers must have seen `readyAt(now) <= now`. */
  acquire(now: number): StartTicket {
    const seq = ++this.seq;
    this.inFlightCount++;
    this.lastStart = Math.max(this.lastStart, now);
    for (const log of this.logs) log.push(seq, now);
    this.nextJitter = this.policy.jitterMs > 0 ? this.random() * this.policy.jitterMs : 0;
    this.awaitingDispatch++;
    return { seq, sentAt: now, settled: false };
  }

  /** The request actually left at `at` (>= its acquire time): time the gap from there. */
  markDispatched(ticket: StartTicket, at: number): void {
    ticket.sentAt = Math.max(ticket.sentAt, at);
    this.settle(ticket);
    this.moveStart(ticket, at);
  }

  private settle(ticket: StartTicket): void {
    if (ticket.settled) return;
    ticket.settled = true;
    if (this.awaitingDispatch > 0) this.awaitingDispatch--;
  }

  /**
   * Its response headers arrived at `at`: the server had the request no
   * later than that, less a round trip. Answers that bound when the host's
   * next start depends on it (a gap or a window), for a shared store to
   * hear; undefined otherwise.
   */
  markResponded(ticket: StartTicket, at: number): number | undefined {
    const roundTrip = Math.max(0, at - ticket.sentAt);
    const latestArrival = at - (this.minRoundTrip === Infinity ? 0 : this.minRoundTrip);
    this.minRoundTrip = Math.min(this.minRoundTrip, roundTrip);
    this.moveStart(ticket, latestArrival);
    return this.logs.length > 0 || this.effectiveIntervalMs(at) > 0 ? latestArrival : undefined;
  }

  private moveStart(ticket: StartTicket, at: number): void {
    this.lastStart = Math.max(this.lastStart, at);
    for (const log of this.logs) log.update(ticket.seq, at);
  }

  /** The request is over. Without its ticket, the oldest start still waiting for its write counts as never written. */
  release(ticket?: StartTicket): void {
    if (this.inFlightCount > 0) this.inFlightCount--;
    if (ticket) this.settle(ticket);
    else if (this.awaitingDispatch > 0) this.awaitingDispatch--;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get concurrency(): number {
    return this.policy.concurrency;
  }

  /** Server feedback: no request starts before `until` (never shortens an existing pause). */
  pauseUntil(until: number): void {
    this.pausedUntilAt = Math.max(this.pausedUntilAt, until);
  }

  get pausedUntil(): number {
    return this.pausedUntilAt;
  }

  /**
   * Server feedback: run at `factor` × the configured rate (0 < factor <= 1).
   * The configured rate is a ceiling; the factor only ever slows the host.
   */
  setRateFactor(factor: number): void {
    this.factor = Math.min(1, Math.max(factor, 1e-6));
  }

  get rateFactor(): number {
    return this.factor;
  }

  /**
   * Server feedback: a budget announced in RateLimit headers. Until `until`,
   * starts are at least `gapMs` apart, so the budget lasts to its reset.
   */
  setServerGap(gapMs: number, until: number): void {
    this.serverGap = Math.max(0, gapMs);
    this.serverGapUntil = until;
  }

  /** robots.txt Crawl-delay as a floor on the gap (already capped by the caller). */
  setCrawlDelay(ms: number): void {
    this.crawlDelay = Math.max(0, ms);
  }

  /** True when forgetting this limiter changes nothing: nothing in flight, no pause, every gap and window elapsed. */
  isIdle(now: number): boolean {
    if (this.inFlightCount > 0 || this.pausedUntilAt > now || this.factor < 1 || this.serverGapUntil > now) return false;
    const gap = this.effectiveIntervalMs(now);
    if (this.lastStart + gapWithMargin(gap) + this.nextJitter > now) return false;
    return this.logs.every((log) => log.horizon() <= now);
  }

  save(): LimiterSaved {
    return {
      lastStart: finiteOrNull(this.lastStart),
      pausedUntil: finiteOrNull(this.pausedUntilAt),
      crawlDelayMs: this.crawlDelay,
      serverGapMs: this.serverGap,
      serverGapUntil: finiteOrNull(this.serverGapUntil),
      rateFactor: this.factor,
      nextJitterMs: this.nextJitter,
      minRoundTripMs: finiteOrNull(this.minRoundTrip),
      windows: this.logs.map((log) => ({ windowMs: log.limit.windowMs, starts: log.times() })),
    };
  }

  /**
   * Takes over saved state. Window logs are matched to the current policy's
   * windows by length (a log keeps its newest `count` starts); a window the
   * saved state did not have starts empty. `shiftMs` moves every saved
   * instant back (the clock was set back by that much since the save), so
   * gaps, windows and pauses keep what they had left.
   */
  restore(saved: LimiterSaved, shiftMs = 0): void {
    const at = (t: number | null) => (t === null ? -Infinity : t - shiftMs);
    this.lastStart = at(saved.lastStart);
    this.pausedUntilAt = at(saved.pausedUntil);
    this.crawlDelay = saved.crawlDelayMs;
    this.serverGap = saved.serverGapMs;
    this.serverGapUntil = at(saved.serverGapUntil);
    this.setRateFactor(saved.rateFactor);
    this.nextJitter = saved.nextJitterMs;
    this.minRoundTrip = saved.minRoundTripMs ?? Infinity;
    for (const log of this.logs) {
      const kept = saved.windows.find((w) => w.windowMs === log.limit.windowMs);
      for (const start of kept?.starts ?? []) log.push(-1, start - shiftMs);
    }
  }

  /**
   * Requests may have started, unrecorded, during the `spanMs` before `at`
   * (a crashed process's last moments): time the gap from `at`, and count in
   * every window as many starts at `at` as could have fitted in the span.
   * Never loosens anything; only makes the host wait longer.
   */
  assumeStartedUntil(at: number, spanMs: number): void {
    this.lastStart = Math.max(this.lastStart, at);
    const gap = Math.max(1, this.effectiveIntervalMs(at));
    const possible = this.policy.concurrency + Math.ceil(spanMs / gap);
    for (const log of this.logs) {
      for (let i = Math.min(possible, log.limit.count); i > 0; i--) log.push(-1, at);
    }
  }

  snapshot(): LimiterSnapshot {
    return {
      inFlight: this.inFlightCount,
      lastStart: this.lastStart,
      pausedUntil: this.pausedUntilAt,
      effectiveIntervalMs: this.effectiveIntervalMs(this.lastStart),
      rateFactor: this.factor,
      crawlDelayMs: this.crawlDelay,
      starts: this.seq,
    };
  }
}
