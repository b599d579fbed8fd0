/**
 * --check-links: the "find my broken links" job. In-scope pages are crawled
 * as usual; a link that leaves the scope is not skipped but checked: one
 * request, HEAD, its body never read, nothing parsed or followed.
 *
 * Contract:
 * - Only links out of `--scope` are checked (skip reason "scope"); links
 *   refused for other reasons (filters, depth, traps, caps) are skipped as
 *   always. Sitemap files are never turned into checks.
 * - A check is a frontier entry of kind "link-check" (entry-kind.ts), so it
 *   goes through its host's limits, robots.txt (one robots.txt request per
 *   checked host, as polite link checkers make), retries and `--max-pages`
 *   like any request.
 * - HEAD first; when the answer says the server does not do HEAD (405, 501)
 *   or the request failed in a way HEAD-shy servers fail (the connection
 *   reset or closed, an answer undici cannot parse, no headers in time), the
 *   link is checked again with GET, as a new request through the host's
 *   limits; that GET's body is not read either.
 * - A redirect is followed as usual: a target out of scope is checked, one
 *   in scope is crawled.
 * - A checked host that cannot be connected to (its robots.txt request
 *   failed so) gets a page record with that error, as any dead link does;
 *   one whose robots.txt keeps answering 5xx is skipped (robots-unavailable):
 *   it was not checked.
 * - Broken means a status of 400 or more, or an error.
 */
import type { ScopeVerdict } from '../../parse/scope.js';
import type { EntryExtra, FrontierEntry } from '../../store/crawl-store.js';
import type { ErrorCode } from '../../types.js';
import { entryKind } from './entry-kind.js';

/** Statuses that say "no HEAD here, ask with GET". */
const HEAD_REFUSED = new Set([405, 501]);
/** Transport failures that servers which mishandle HEAD cause; a refused or unknown host is not one of them. */
const HEAD_FAILURES = new Set<ErrorCode>(['CONNECTION_RESET', 'INVALID_RESPONSE', 'HEADERS_TIMEOUT']);

/**
 * The `extra` that makes a URL refused by the scope a link check, or null
 * when it stays a skip.
 */
export function linkCheckExtra(verdict: ScopeVerdict, checkLinks: boolean, extra: EntryExtra | undefined): EntryExtra | null {
  if (!checkLinks || verdict.ok || verdict.reason !== 'scope') return null;
  if (extra?.kind === 'sitemap') return null;
  return { ...extra, kind: 'link-check' };
}

/** Whether a link check's HEAD answer (a status) or failure (an error code) calls for a GET. */
export function wantsGet(entry: FrontierEntry, answer: { status: number } | { code: ErrorCode }): boolean {
  if (entryKind(entry) !== 'link-check' || entry.extra?.method === 'GET') return false;
  return 'status' in answer ? HEAD_REFUSED.has(answer.status) : HEAD_FAILURES.has(answer.code);
}

/** The same link, to be checked with GET. */
export function asGet(entry: FrontierEntry): FrontierEntry {
  return { ...entry, extra: { ...entry.extra, method: 'GET' } };
}
