/**
 * The crawl's progress as the live progress line (output/progress.ts) and
 * the library's `progress()` read it: a read-only snapshot built on demand,
 * never kept up to date on the hot path.
 */
import type { ProgressSnapshot } from '../output/progress.js';
import type { HostFeedback } from '../politeness/server-feedback.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { LeaseSource } from './lease-source.js';
import type { Scheduler } from '../schedule/scheduler.js';
import type { SlowRequests } from '../schedule/slow-requests.js';

/** Paused hosts listed on the progress line, at most. */
const PROGRESS_PAUSED_HOSTS = 5;

export interface ProgressParts {
  records: CrawlRecords;
  leases: LeaseSource;
  scheduler: Scheduler<HostPolicy>;
  slow: SlowRequests;
  feedback: HostFeedback;
}

export function progressSnapshot(ctx: CrawlContext, parts: ProgressParts): ProgressSnapshot {
  const { clock, settings, store, stats } = ctx;
  const { records, scheduler } = parts;
  let waiting = 0;
  let active = 0;
  const now = clock.now();
  const paused: NonNullable<ProgressSnapshot['paused']> = [];
  for (const h of scheduler.hostsSnapshot()) {
    if (h.inFlight > 0) active++;
    else if (h.waiting) waiting++;
    if (paused.length >= PROGRESS_PAUSED_HOSTS) continue;
    // Quiet hours first: a Retry-After pause inside them ends before the window opens anyway.
    if (h.quiet !== null && h.quiet.until >= h.pausedUntil) paused.push({ host: h.key, leftMs: h.quiet.until - now, quietUntil: h.quiet.opensAt });
    else if (h.pausedUntil > now) paused.push({ host: h.key, leftMs: h.pausedUntil - now });
  }
  const { maxPages } = settings;
  return {
    fetched: records.fetched,
    queued: store.queued() + parts.leases.heldCount,
    inFlight: scheduler.inFlight + parts.slow.count,
    errors: records.errors,
    skipped: records.skipped,
    ...(records.aborted > 0 && { aborted: records.aborted }),
    hostsWaiting: waiting,
    hostsActive: active,
    elapsedMs: clock.now() - stats.startedAt,
    throttled: parts.feedback.slowed(),
    paused,
    ...(Number.isFinite(maxPages) && { limit: maxPages }),
  };
}

/** Hosts by state as a metrics scrape reads them; a host may be both paused and waiting. */
export interface HostCounts {
  /** Hosts with a request in flight. */
  active: number;
  /** Hosts with work that must wait for their gap, pause or address. */
  waiting: number;
  /** Hosts paused now (Retry-After, backoff after failures, quiet hours). */
  paused: number;
  /** Hosts given up for this crawl (too many failures in a row). */
  givenUp: number;
}

export function hostCounts(ctx: CrawlContext, parts: ProgressParts): HostCounts {
  const now = ctx.clock.now();
  const counts: HostCounts = { active: 0, waiting: 0, paused: 0, givenUp: 0 };
  for (const h of parts.scheduler.hostsSnapshot()) {
    if (h.inFlight > 0) counts.active++;
    else if (h.waiting) counts.waiting++;
    if (h.pausedUntil > now || h.quiet !== null) counts.paused++;
  }
  // Given-up hosts keep their record (the idle sweep spares them), so the table knows them all.
  for (const h of ctx.hosts.values()) if (h.givenUp) counts.givenUp++;
  return counts;
}
