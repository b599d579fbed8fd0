/**
 * What a state file keeps of each record for `crawl report --state`: only the
 * fields the report reads (record-view.ts), about half a records file's line
 * (~150 bytes for a typical page). A page's `parent` is kept only on a
 * failure (the failures table names it), its `fetchedAt` only when it has no
 * `startedAt` (the report then falls back to it); a skip keeps its parent
 * (the page it was found on); depths, titles, content
 * types and link lists are dropped. The result is still a record: the report
 * reads it exactly as it reads a line of the records file.
 */
import type { OutputRecord, PageRecord } from '../types.js';

// A skip's parent lets a resume after a crash drop the skip records of a page fetched again (SqliteStore).
const SKIP_FIELDS = ['type', 'url', 'reason', 'detail', 'parent', 'usageDenied'] as const;
const ROBOTS_FIELDS = ['type', 'url', 'host', 'status', 'startedAt', 'elapsedMs', 'bytes', 'pausedUntil', 'retryAfterMs', 'error'] as const;
// An item keeps what a resume after a crash judges it by (its page's fetch), not its data: the report has no use for it.
const ITEM_FIELDS = ['type', 'url', 'fetchedAt'] as const;

export function keptRecord(record: OutputRecord): Record<string, unknown> {
  if (record.type === 'page') return keptPage(record);
  const from = record as unknown as Record<string, unknown>;
  const fields = record.type === 'skipped' ? SKIP_FIELDS : record.type === 'item' ? ITEM_FIELDS : ROBOTS_FIELDS;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (from[f] !== undefined) out[f] = from[f];
  return out;
}

/**
 * A page's kept fields as one object literal: the kind of record written a
 * page, so its shape is always the same. Copying by field name (as for the
 * other kinds) made every read and write a megamorphic lookup. A field left
 * undefined is dropped by JSON, as the loop's omission did.
 */
function keptPage(r: PageRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: r.type,
    url: r.url,
    host: r.host,
    status: r.status,
    bytes: r.bytes,
    location: r.location,
    startedAt: r.startedAt,
    elapsedMs: r.elapsedMs,
    attempts: r.attempts,
    attemptStarts: r.attemptStarts,
    throttles: r.throttles,
    error: r.error,
    change: r.change,
    usageDenied: r.usageDenied,
    slowed: r.slowed,
    charged: r.charged,
    fetchedAt: r.startedAt === undefined ? r.fetchedAt : undefined,
    parent: r.error !== undefined || (r.status !== null && r.status >= 400) ? r.parent : undefined,
  };
  return out;
}
