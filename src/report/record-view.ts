/**
 * What the report reads from one JSON-lines record, whichever crawler
 * version wrote it.
 *
 * Every record says when a fetch began (`fetchedAt`, ISO, taken when the
 * URL is claimed for a request) and how long it took (`elapsedMs`); older
 * records stop there, and the host key is derived from the URL. Newer ones
 * carry more (`startedAt`, `host`, `attemptStarts`, `throttles`; see
 * `FutureRecordFields`), and robots.txt requests have records of their own
 * (`type: "robots"`); the report uses what is there. Every field is checked
 * for its type here, so the aggregators never see a string where a number
 * belongs, whatever the file holds.
 *
 * Instants (`startedAt`, `attemptStarts`, a throttle's `at` and
 * `pausedUntil`, a robots.txt record's `pausedUntil`) are ISO 8601 strings
 * since the records' one time convention; the versions before it wrote
 * epoch milliseconds, and both are read (`instant`), so old files, state
 * files' record logs and Redis lists still make the same report.
 */
import { hostKeyOf } from '../parse/url.js';
import type { HostKeyMode } from '../config/settings-types.js';
import { parseAmount, type Money } from '../politeness/crawl-price.js';

/**
 * Record fields the report uses when present: the crawler writes all but the
 * three policy fields (a proposal for PageRecord still).
 */
export interface FutureRecordFields {
  /** When the request was dispatched (written to the socket): the instant the host's limiter counts. ISO 8601, or epoch ms from older versions. */
  startedAt?: string | number;
  /** The host key whose limiter paced this request (hostname[:port], or the registrable domain with hostKey "domain"). */
  host?: string;
  /** Dispatch times of this URL's earlier attempts (retries and throttled tries), oldest first; ISO 8601, or epoch ms from older versions. */
  attemptStarts?: Array<string | number>;
  /** 429/503 answers this URL got, each with the pause it caused (until `pausedUntil`); instants as in `startedAt`. */
  throttles?: Array<{ at: string | number; status: number; retryAfterMs?: number; pausedUntil: string | number }>;
  /** The host's configured minimum gap between request starts, ms (0 = none). */
  intervalMs?: number;
  /** The gap in force when this request started, after adaptive slow-down and Crawl-delay, ms. */
  effectiveIntervalMs?: number;
  /** The configured rate as written ("2/s", "500ms", "unlimited"). */
  rateLabel?: string;
}

export interface PageView {
  kind: 'page';
  url: string;
  host: string;
  status: number | null;
  /** Epoch ms the request began; NaN when the record has no usable time. */
  startMs: number;
  elapsedMs: number;
  bytes: number;
  depth: number;
  parent: string | null;
  location: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  /** Earlier attempts' starts (only from records that carry them). */
  attemptStarts: number[];
  throttles: ThrottleView[];
  intervalMs: number | null;
  effectiveIntervalMs: number | null;
  rateLabel: string | null;
  /** Whether startMs came from `startedAt` (exact) rather than `fetchedAt`. */
  exactStart: boolean;
  /** In a re-crawl: what changed since the last pass (`new`, `changed`, `unchanged`, `removed`); null otherwise. */
  change: string | null;
  /** The declared purpose the page denied (its content withheld); null otherwise. */
  usageDenied: string | null;
  /** Its host ran below its configured rate when it was requested: the fraction, and why; null at full rate. */
  slowed: { factor: number; why: string } | null;
  /** What the server charged for it (crawler-charged): micro-units of its currency; null when nothing. */
  charged: Money | null;
}

export interface SkipView {
  kind: 'skipped';
  url: string;
  host: string;
  reason: string;
  detail: string | null;
  /** A `usage-denied` skip: the declared purpose robots.txt denied; null otherwise. */
  usageDenied: string | null;
}

/** A throttling answer and the pause it caused its host. */
export interface ThrottleView {
  at: number;
  status: number;
  retryAfterMs: number | null;
  pauseMs: number;
}

/** One robots.txt request (a `type: "robots"` record). */
export interface RobotsView {
  kind: 'robots';
  url: string;
  host: string;
  status: number | null;
  startMs: number;
  elapsedMs: number;
  errorCode: string | null;
  /** The pause a 429/503 answer caused; null when it caused none. */
  throttle: ThrottleView | null;
}

/** An item a page handler pushed: a record, not charted (the report is about the visits). */
export interface ItemView {
  kind: 'item';
  url: string;
}

export type RecordView = PageView | SkipView | RobotsView | ItemView;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
/** Epoch ms of an instant written as ISO 8601 (this version) or as epoch ms (older ones); null otherwise. */
const instant = (v: unknown): number | null => {
  if (typeof v !== 'string') return num(v);
  // Date.parse alone would take "1" or "May 3" as dates.
  const ms = ISO_INSTANT.test(v) ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? ms : null;
};

/** The host key of a URL; "(invalid url)" when it has none we can read. */
export function hostOf(url: string, mode: HostKeyMode = 'host'): string {
  try {
    return hostKeyOf(url, mode) || '(no host)';
  } catch {
    return '(invalid url)';
  }
}

/**
 * The report's view of one parsed JSON value, or null when it is not a
 * crawl record (no `type` of "page", "skipped", "robots" or "item", or no string `url`).
 */
export function viewRecord(raw: unknown, mode: HostKeyMode = 'host'): RecordView | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const url = str(r.url);
  if (url === null) return null;
  const host = str(r.host) ?? hostOf(url, mode);
  if (r.type === 'skipped') return { kind: 'skipped', url, host, reason: str(r.reason) ?? '(none)', detail: str(r.detail), usageDenied: str(r.usageDenied) };
  if (r.type === 'robots') return robotsView(r, url, host);
  if (r.type === 'item') return { kind: 'item', url };
  if (r.type !== 'page') return null;
  const startedAt = instant(r.startedAt);
  const fetchedAt = typeof r.fetchedAt === 'string' ? Date.parse(r.fetchedAt) : NaN;
  const error = r.error !== null && typeof r.error === 'object' ? (r.error as Record<string, unknown>) : null;
  return {
    kind: 'page',
    url,
    host,
    status: num(r.status),
    startMs: startedAt ?? fetchedAt,
    elapsedMs: Math.max(0, num(r.elapsedMs) ?? 0),
    bytes: Math.max(0, num(r.bytes) ?? 0),
    depth: num(r.depth) ?? 0,
    parent: str(r.parent),
    location: str(r.location),
    errorCode: error ? (str(error.code) ?? 'UNKNOWN') : null,
    errorMessage: error ? str(error.message) : null,
    attempts: Math.max(1, num(r.attempts) ?? 1),
    attemptStarts: Array.isArray(r.attemptStarts) ? r.attemptStarts.flatMap((t) => instant(t) ?? []) : [],
    throttles: Array.isArray(r.throttles) ? r.throttles.flatMap(throttleEvent) : [],
    intervalMs: num(r.intervalMs),
    effectiveIntervalMs: num(r.effectiveIntervalMs),
    rateLabel: str(r.rateLabel),
    exactStart: startedAt !== null,
    change: str(r.change),
    usageDenied: str(r.usageDenied),
    slowed: slowedOf(r.slowed),
    charged: chargedOf(r.charged),
  };
}

/** A record's `charged` ({ amount: "0.01", currency }) as exact micro-units; null when absent or malformed. */
function chargedOf(raw: unknown): PageView['charged'] {
  if (raw === null || typeof raw !== 'object') return null;
  const c = raw as Record<string, unknown>;
  const micros = typeof c.amount === 'string' ? parseAmount(c.amount) : undefined;
  return micros === undefined || typeof c.currency !== 'string' ? null : { currency: c.currency, micros };
}

function slowedOf(raw: unknown): PageView['slowed'] {
  if (raw === null || typeof raw !== 'object') return null;
  const s = raw as Record<string, unknown>;
  const factor = num(s.factor);
  return factor === null ? null : { factor, why: str(s.why) ?? '' };
}

function throttleEvent(raw: unknown): ThrottleView[] {
  if (raw === null || typeof raw !== 'object') return [];
  const t = raw as Record<string, unknown>;
  const at = instant(t.at);
  const status = num(t.status);
  if (at === null || status === null) return [];
  // `pausedUntil` as the crawler writes it; `pauseMs` as the first proposal had it.
  const until = instant(t.pausedUntil);
  const pauseMs = until !== null ? until - at : (num(t.pauseMs) ?? 0);
  return [{ at, status, retryAfterMs: num(t.retryAfterMs), pauseMs: Math.max(0, pauseMs) }];
}

function robotsView(r: Record<string, unknown>, url: string, host: string): RobotsView | null {
  const startMs = instant(r.startedAt);
  if (startMs === null) return null;
  const elapsedMs = Math.max(0, num(r.elapsedMs) ?? 0);
  const status = num(r.status);
  const until = instant(r.pausedUntil);
  const error = r.error !== null && typeof r.error === 'object' ? (r.error as Record<string, unknown>) : null;
  const end = startMs + elapsedMs;
  return {
    kind: 'robots',
    url,
    host,
    status,
    startMs,
    elapsedMs,
    errorCode: error ? (str(error.code) ?? 'UNKNOWN') : null,
    throttle: until === null || status === null ? null : { at: end, status, retryAfterMs: num(r.retryAfterMs), pauseMs: Math.max(0, until - end) },
  };
}
