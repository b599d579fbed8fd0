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
import type { OutputRecord } from '../types.js';

const PAGE_FIELDS = [
  'type',
  'url',
  'host',
  'status',
  'bytes',
  'location',
  'startedAt',
  'elapsedMs',
  'attempts',
  'attemptStarts',
  'throttles',
  'error',
  'change',
] as const;
// A skip's parent lets a resume after a crash drop the skip records of a page fetched again (SqliteStore).
const SKIP_FIELDS = ['type', 'url', 'reason', 'detail', 'parent'] as const;
const ROBOTS_FIELDS = ['type', 'url', 'host', 'status', 'startedAt', 'elapsedMs', 'bytes', 'pausedUntil', 'retryAfterMs', 'error'] as const;

export function keptRecord(record: OutputRecord): Record<string, unknown> {
  const from = record as unknown as Record<string, unknown>;
  const fields = record.type === 'page' ? PAGE_FIELDS : record.type === 'skipped' ? SKIP_FIELDS : ROBOTS_FIELDS;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (from[f] !== undefined) out[f] = from[f];
  if (record.type === 'page') {
    if (record.startedAt === undefined) out.fetchedAt = record.fetchedAt;
    if (record.error !== undefined || (record.status !== null && record.status >= 400)) out.parent = record.parent;
  }
  return out;
}
