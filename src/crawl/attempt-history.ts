/**
 * A URL's earlier attempts, carried from one try to the next and written into
 * its record: when each attempt started (`attemptStarts`) and the 429/503
 * answers it got with the pause each caused (`throttles`), so a report can
 * show retries and Retry-After pauses as they happened instead of guessing
 * them from gaps.
 *
 * The history travels in the frontier entry's `extra` (store/crawl-store.ts
 * EntryExtra, which every store keeps whole), under `extra.history`, so a
 * retry that waits in a SQLite file or in Redis keeps it too. It is bounded:
 * only the latest MAX_ATTEMPT_HISTORY starts and throttles are kept (a URL may
 * be throttled up to a thousand times); the record's `attempts` still counts
 * every attempt. Pure functions; `now` and the pause come from the caller.
 *
 * The history keeps epoch ms (compact, and what state files written by
 * earlier versions hold); the record gets them as ISO 8601 strings, the
 * records' one time convention, only when it is written (`historyFields`).
 */
import type { EntryExtra } from '../store/crawl-store.js';
import { parseRetryAfter } from '../politeness/retry-after.js';
import type { PageRecord, ThrottleEvent } from '../types.js';
import { isoInstant } from '../util/iso-time.js';

/** Starts and throttle events kept per URL, each (the latest ones). */
export const MAX_ATTEMPT_HISTORY = 10;

/** A throttle event as the history keeps it: ThrottleEvent with epoch ms instants. */
export interface ThrottleMark {
  /** Epoch ms when the answer came. */
  at: number;
  status: number;
  retryAfterMs?: number;
  /** Epoch ms until which the host was paused. */
  pausedUntil: number;
}

/** What `extra.history` holds: compact, JSON-safe. */
export interface AttemptHistory {
  /** Epoch ms starts of the attempts made so far, oldest first. */
  starts: number[];
  throttles?: ThrottleMark[];
}

/** The history an entry carries (empty when it has none, or a malformed one). */
export function historyOf(extra: EntryExtra | undefined): AttemptHistory {
  const h = extra?.history as Partial<AttemptHistory> | undefined;
  if (!h || typeof h !== 'object') return { starts: [] };
  return {
    starts: Array.isArray(h.starts) ? h.starts.filter((t): t is number => typeof t === 'number') : [],
    ...(Array.isArray(h.throttles) && {
      throttles: h.throttles.filter((t) => t !== null && typeof t === 'object' && typeof t.at === 'number' && typeof t.pausedUntil === 'number'),
    }),
  };
}

/**
 * The entry's `extra` after one more attempt that started at `startMs`
 * (and, when it was throttled, with that event): what the retried entry carries.
 */
export function withAttempt(extra: EntryExtra | undefined, startMs: number, throttle?: ThrottleMark): EntryExtra {
  const h = historyOf(extra);
  const next: AttemptHistory = { starts: keepLatest(h.starts, Math.round(startMs)) };
  const throttles = throttle ? keepLatest(h.throttles ?? [], throttle) : h.throttles;
  if (throttles && throttles.length > 0) next.throttles = throttles;
  return { ...extra, history: next };
}

/**
 * The record fields for an entry's history (nothing for a first attempt);
 * `last` is a throttle event of the attempt the record is about (a URL still
 * throttled when its throttle budget ran out).
 */
export function historyFields(extra: EntryExtra | undefined, last?: ThrottleMark): Pick<PageRecord, 'attemptStarts' | 'throttles'> {
  const h = historyOf(extra);
  const throttles = last ? keepLatest(h.throttles ?? [], last) : h.throttles;
  return {
    ...(h.starts.length > 0 && { attemptStarts: h.starts.map(isoInstant) }),
    ...(throttles && throttles.length > 0 && { throttles: throttles.map(throttleRecord) }),
  };
}

/** A kept throttle mark as the record states it. */
function throttleRecord(t: ThrottleMark): ThrottleEvent {
  const event: ThrottleEvent = { at: isoInstant(t.at), status: t.status, pausedUntil: isoInstant(t.pausedUntil) };
  if (t.retryAfterMs !== undefined) event.retryAfterMs = t.retryAfterMs;
  return event;
}

/**
 * A throttling answer as an event: it came at `now` and paused its host
 * until `pausedUntil` (HostFeedback decided that, capping Retry-After);
 * `retryAfterMs` is what the server announced, when it did.
 */
export function throttleEvent(res: { status: number; headers: Record<string, string> }, now: number, wallNow: number, pausedUntil: number): ThrottleMark {
  const event: ThrottleMark = { at: Math.round(now), status: res.status, pausedUntil: Math.round(Math.max(now, pausedUntil)) };
  const announced = parseRetryAfter(res.headers['retry-after'], { now: wallNow, date: res.headers['date'] ?? null });
  if (announced) event.retryAfterMs = Math.round(announced.delayMs);
  return event;
}

function keepLatest<T>(list: T[], item: T): T[] {
  const out = list.length >= MAX_ATTEMPT_HISTORY ? list.slice(list.length - MAX_ATTEMPT_HISTORY + 1) : list.slice();
  out.push(item);
  return out;
}
