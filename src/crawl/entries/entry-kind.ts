/**
 * Frontier entries of a special kind. Most entries are pages, crawled as
 * usual; two features queue others, marked in the entry's `extra` (which
 * every store keeps whole, so a resumed or shared crawl knows them too):
 *
 * - `{ kind: "sitemap", level }`: a sitemap file (crawl/entries/sitemaps.ts); its
 *   body is read as bytes (it may be gzip) and parsed as a sitemap.
 * - `{ kind: "link-check", method? }`: an out-of-scope link checked with
 *   --check-links (crawl/entries/link-check.ts): HEAD, or GET after HEAD was refused,
 *   body never read.
 * - `{ lastmod }` on a page listed by a sitemap: kept for its record.
 *
 * Every kind is claimed, paced, robots-checked, retried and recorded like a
 * page; only the request and what the answer means differ.
 */
import type { FetchRequest } from '../../fetch/fetcher.js';
import { SITEMAP_MAX_BYTES } from '../../parse/sitemap.js';
import type { FrontierEntry } from '../../store/crawl-store.js';
import type { PageRecord } from '../../types.js';

export type EntryKind = 'page' | 'sitemap' | 'link-check';

export function entryKind(entry: Pick<FrontierEntry, 'extra'>): EntryKind {
  const kind = entry.extra?.kind;
  return kind === 'sitemap' || kind === 'link-check' ? kind : 'page';
}

/** The request an entry asks for. */
export function requestFor(entry: FrontierEntry): Pick<FetchRequest, 'read' | 'method' | 'maxBodyBytes'> {
  switch (entryKind(entry)) {
    case 'sitemap':
      // The protocol's cap is on the uncompressed file; parse/sitemap.ts holds an inflated .gz file to it too.
      return { read: 'raw', maxBodyBytes: SITEMAP_MAX_BYTES };
    case 'link-check':
      return { read: 'none', method: entry.extra?.method === 'GET' ? 'GET' : 'HEAD' };
    default:
      return { read: 'html' };
  }
}

/** The record fields an entry's kind adds (set on the base record before the request). */
export function decorateRecord(record: PageRecord, entry: FrontierEntry): void {
  const kind = entryKind(entry);
  if (kind !== 'page') record.kind = kind;
  if (kind === 'link-check') record.method = entry.extra?.method === 'GET' ? 'GET' : 'HEAD';
  const lastmod = entry.extra?.lastmod;
  if (typeof lastmod === 'string') record.lastmod = lastmod;
}
