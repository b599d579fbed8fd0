/**
 * Everything the report says about one host key: how many requests and
 * what came back, how fast it answered, and (host-timeline.ts) how its
 * request starts were spaced against its configured rate.
 */
import { HostTimeline, type Configured, type GapSummary } from './host-timeline.js';
import { LogHistogram } from './log-histogram.js';
import type { PageView, RobotsView, ThrottleView } from './record-view.js';
import { THROTTLE_STATUSES } from './throughput.js';
import { TopN } from './top-n.js';

export interface ThrottleEvent {
  atMs: number;
  status: number;
  retryAfterMs: number | null;
  pauseMs: number;
}

/** Marks kept per host for its chart: the longest pauses, the first robots.txt requests. */
export const CHART_PAUSES = 50;
export const CHART_ROBOTS = 20;

/** What a host's chart draws over its gaps: pauses from throttle events and robots.txt requests (epoch ms). */
export interface HostMarks {
  /** The longest pauses, in time order. */
  pauses: ThrottleEvent[];
  /** The first robots.txt requests: start and status (null: no answer). */
  robots: Array<{ atMs: number; status: number | null }>;
}

export interface HostRow {
  host: string;
  /** Page records (one per URL fetched, whatever its attempts). */
  requests: number;
  errors: number;
  http4xx: number;
  http5xx: number;
  /** 429/503 answers: throttle events the records list, plus records that ended on one. */
  throttled: number;
  /** Records that needed more than one attempt. */
  retried: number;
  skipped: number;
  /** robots.txt requests (`type: "robots"` records); they count in the gaps too. */
  robots: number;
  bytes: number;
  meanElapsedMs: number | null;
  p95ElapsedMs: number | null;
  maxElapsedMs: number | null;
  configured: Configured | null;
  /** The slowest gap the records say was in force (adaptive slow-down, Crawl-delay); null when they do not say. */
  slowestEffectiveIntervalMs: number | null;
  /** The lowest fraction of its configured rate the host ran at, and why (the records' `slowed`); null when never slowed. */
  slowest: { factor: number; why: string } | null;
  gaps: Omit<GapSummary, 'timeline'>;
  /** The longest pauses 429/503 answers caused (three at most). */
  throttleEvents: ThrottleEvent[];
}

export type PolicyLookup = (host: string) => { intervalMs: number; rateLabel: string } | null;

export class HostStats {
  requests = 0;
  errors = 0;
  http4xx = 0;
  http5xx = 0;
  throttled = 0;
  retried = 0;
  skipped = 0;
  robots = 0;
  bytes = 0;
  private elapsedSum = 0;
  private elapsedMax = -1;
  private readonly elapsed = new LogHistogram();
  private readonly timeline: HostTimeline | null;
  private configured: Configured | null;
  private slowestEffective: number | null = null;
  private slowest: { factor: number; why: string } | null = null;
  private readonly events = new TopN<ThrottleEvent>(CHART_PAUSES);
  private readonly robotsMarks: HostMarks['robots'] = [];

  /** `merged`: several hosts share this row (past the host cap), so gaps mean nothing and are not kept. */
  constructor(
    readonly host: string,
    configured: Configured | null,
    opts: { merged?: boolean; maxBuckets?: number; baseWidthMs?: number } = {},
  ) {
    this.configured = configured;
    this.timeline = opts.merged ? null : new HostTimeline({ maxBuckets: opts.maxBuckets, baseWidthMs: opts.baseWidthMs });
  }

  addPage(p: PageView): void {
    this.requests++;
    this.bytes += p.bytes;
    this.elapsedSum += p.elapsedMs;
    if (p.elapsedMs > this.elapsedMax) this.elapsedMax = p.elapsedMs;
    this.elapsed.add(p.elapsedMs);
    if (p.errorCode !== null) this.errors++;
    if (p.status !== null && THROTTLE_STATUSES.has(p.status)) this.throttled++;
    else if (p.status !== null && p.status >= 500) this.http5xx++;
    else if (p.status !== null && p.status >= 400) this.http4xx++;
    if (p.attempts > 1) this.retried++;
    if (p.intervalMs !== null) this.configured = { intervalMs: p.intervalMs, rateLabel: p.rateLabel ?? `${p.intervalMs} ms`, source: 'records' };
    if (p.effectiveIntervalMs !== null && (this.slowestEffective === null || p.effectiveIntervalMs > this.slowestEffective))
      this.slowestEffective = p.effectiveIntervalMs;
    if (p.slowed && (this.slowest === null || p.slowed.factor < this.slowest.factor)) this.slowest = p.slowed;
    for (const t of p.throttles) this.throttle(t);
    if (this.timeline) {
      const interval = p.intervalMs ?? this.configured?.intervalMs ?? null;
      for (const s of p.attemptStarts) this.timeline.add(s, interval);
      this.timeline.add(p.startMs, interval);
    }
  }

  /** A robots.txt request: it passed the host's limiter, so it is a start like a page's. */
  addRobots(r: RobotsView): void {
    this.robots++;
    if (r.throttle) this.throttle(r.throttle);
    if (this.robotsMarks.length < CHART_ROBOTS) this.robotsMarks.push({ atMs: r.startMs, status: r.status });
    this.timeline?.add(r.startMs, this.configured?.intervalMs ?? null);
  }

  private throttle(t: ThrottleView): void {
    this.throttled++;
    this.events.add(t.pauseMs, { atMs: t.at, status: t.status, retryAfterMs: t.retryAfterMs, pauseMs: t.pauseMs });
  }

  finish(): { row: HostRow; timeline: GapSummary['timeline'] | null; marks: HostMarks } {
    const { timeline, ...gaps } = this.timeline?.finish() ?? emptyGaps();
    const events = this.events.sorted();
    return {
      marks: { pauses: [...events].sort((a, b) => a.atMs - b.atMs), robots: [...this.robotsMarks].sort((a, b) => a.atMs - b.atMs) },
      row: {
        host: this.host,
        requests: this.requests,
        errors: this.errors,
        http4xx: this.http4xx,
        http5xx: this.http5xx,
        throttled: this.throttled,
        retried: this.retried,
        skipped: this.skipped,
        robots: this.robots,
        bytes: this.bytes,
        meanElapsedMs: this.requests > 0 ? this.elapsedSum / this.requests : null,
        p95ElapsedMs: this.elapsed.quantile(0.95),
        maxElapsedMs: this.elapsedMax >= 0 ? this.elapsedMax : null,
        configured: this.configured,
        slowestEffectiveIntervalMs: this.slowestEffective,
        slowest: this.slowest,
        gaps,
        throttleEvents: events.slice(0, 3),
      },
      timeline: this.timeline ? timeline : null,
    };
  }
}

function emptyGaps(): GapSummary {
  return {
    starts: 0,
    gaps: 0,
    firstStartMs: null,
    lastStartMs: null,
    minGapMs: null,
    medianGapMs: null,
    belowConfigured: 0,
    outOfOrder: 0,
    achievedPerSecond: null,
    pauses: [],
    timeline: { startMs: 0, widthMs: 0, columns: [[], [], []] },
  };
}
