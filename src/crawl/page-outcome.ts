/**
 * What one response means for the crawl: the record to write and the URLs it
 * leads to (a redirect target, or the page's links). Pure: the crawler
 * decides what to do with the URLs (scope, dedupe, limits).
 */
import type { FetchResult } from '../fetch/fetcher.js';
import type { FrontierEntry } from '../store/crawl-store.js';
import { extractPage } from '../parse/parser.js';
import type { PageRecord, SkipRecord } from '../types.js';
import { resolveLink } from '../parse/url.js';
import { redactCredentials } from '../fetch/redact.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface OutcomeOptions {
  maxRedirects: number;
  respectNofollow: boolean;
  emitLinks: boolean;
  /** Our robots product token, for `<meta name="TOKEN">` and `X-Robots-Tag: TOKEN: …`. */
  userAgentToken: string;
  /** The URLs of the redirect chain that led to this one, first hop first: a redirect back to one of them (or to itself) is a loop. @default none */
  chain?: readonly string[];
}

export interface PageOutcome {
  record: PageRecord;
  /** Where to go next: a redirect target (same depth, one more hop) or links (one deeper). */
  next: Array<{ url: string; depth: number; hops: number }>;
  /** Links held back by nofollow. */
  nofollow: string[];
}

export function pageOutcome(entry: FrontierEntry, res: FetchResult, base: PageRecord, opts: OutcomeOptions): PageOutcome {
  const record: PageRecord = { ...base, status: res.status, contentType: res.contentType, bytes: res.bytes, elapsedMs: Math.round(res.elapsedMs) };
  if (res.truncated) record.truncated = true;
  const out: PageOutcome = { record, next: [], nofollow: [] };
  if (REDIRECT_STATUSES.has(res.status) && res.location !== null) {
    const target = resolveLink(res.location, entry.url);
    if (target === null) {
      record.location = res.location;
      record.error = { code: 'REDIRECT_INVALID', message: `unusable redirect target ${JSON.stringify(res.location)}` };
    } else if (target === entry.url || (opts.chain !== undefined && opts.chain.includes(target))) {
      // Seen already, and by this very chain: following it would end quietly at the dedupe.
      record.location = target;
      record.error = { code: 'REDIRECT_LOOP', message: `redirects back to ${target}, already in its own redirect chain` };
    } else if (entry.hops + 1 > opts.maxRedirects) {
      record.location = target;
      record.error = { code: 'REDIRECT_LIMIT', message: `more than ${opts.maxRedirects} redirects in a row` };
    } else {
      record.location = target;
      out.next.push({ url: target, depth: entry.depth, hops: entry.hops + 1 });
    }
    return out;
  }
  if (res.body !== null && res.status >= 200 && res.status < 300) {
    const page = extractPage(res.body, entry.url, {
      respectNofollow: opts.respectNofollow,
      xRobotsTag: res.headers['x-robots-tag'] ?? null,
      userAgentToken: opts.userAgentToken,
    });
    record.title = page.title;
    record.links = page.links.length;
    if (opts.emitLinks) record.linkList = page.links;
    for (const link of page.links) out.next.push({ url: link, depth: entry.depth + 1, hops: 0 });
    out.nofollow = page.nofollowLinks;
  }
  return out;
}

/**
 * The record as it may be written: credentials in its URLs and messages
 * (`http://user:secret@host/`) replaced by `***`. The same object when there
 * are none, which is nearly always (one `includes('@')` per field).
 */
export function redactRecord<R extends PageRecord | SkipRecord>(record: R): R {
  // The fields either kind may carry, as one loose shape.
  type Fields = { url: string; parent: string | null; location?: string; detail?: string; error?: { message: string }; linkList?: string[] };
  const r = record as unknown as Fields;
  const hit = (v: string | null | undefined) => v != null && v !== redactCredentials(v);
  if (!(hit(r.url) || hit(r.parent) || hit(r.location) || hit(r.detail) || hit(r.error?.message) || r.linkList?.some(hit))) return record;
  const out: Fields = { ...r, url: redactCredentials(r.url), parent: r.parent === null ? null : redactCredentials(r.parent) };
  if (r.location !== undefined) out.location = redactCredentials(r.location);
  if (r.detail !== undefined) out.detail = redactCredentials(r.detail);
  if (r.error) out.error = { ...r.error, message: redactCredentials(r.error.message) };
  if (r.linkList) out.linkList = r.linkList.map(redactCredentials);
  return out as unknown as R;
}
