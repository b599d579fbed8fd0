/**
 * What a re-crawl's answer means, as pure functions of the page's history
 * (store/page-history.ts) and the answer: the conditional headers to send,
 * whether the page changed, and the history to keep.
 *
 * - Validators are sent only for a page whose last answer was a 2xx (a
 *   redirect or a 404 has nothing worth revalidating), each as it was
 *   received: a weak ETag (`W/"…"`) is sent weak; If-None-Match takes weak
 *   comparison, so a server that weakened its ETag (nginx compressing) still
 *   answers 304. A response with `Vary: *` keeps no validators: it said no
 *   later request can be matched to it.
 * - `changeOf`: `new` without history; a 304 is `unchanged`, whether asked
 *   or not, and whether or not a digest was kept (never an error); a 2xx is
 *   `unchanged` when its digest equals the kept one (whatever the ETag did),
 *   `changed` when it differs; without a digest on either side (a body not
 *   read), equal validators mean `unchanged`, anything else `changed`; a
 *   404/410 is `removed` where there was a page or a redirect, `unchanged`
 *   where it was gone already; a redirect is `removed` where there was a
 *   page, `unchanged` when it points where it pointed; other statuses are
 *   `unchanged` when equal to the last. A 5xx, a 429 or no answer at all say
 *   nothing about the page: no change, and the history stays as it was.
 */
import type { PageHistory } from '../store/page-history.js';
import type { PageChange } from '../types.js';

/** What of an answer the classification reads. */
export interface Answer {
  status: number;
  /** Response headers, lowercased names. */
  headers: Record<string, string>;
  /** The body's digest, when a body was read. */
  digest?: string;
  /** A redirect's target, absolute (resolved by the caller). */
  location?: string;
}

export function conditionalHeaders(prior: PageHistory | undefined): Record<string, string> | undefined {
  if (prior === undefined || !isOk(prior.status)) return undefined;
  const headers: Record<string, string> = {};
  if (prior.etag !== undefined) headers['if-none-match'] = prior.etag;
  if (prior.lastModified !== undefined) headers['if-modified-since'] = prior.lastModified;
  return prior.etag === undefined && prior.lastModified === undefined ? undefined : headers;
}

/** Whether the answer says anything about the page (see the module header). */
export function isTelling(status: number): boolean {
  return status < 500 && status !== 429;
}

/**
 * The change, or undefined when the answer tells nothing. `priorTarget`: where
 * the page redirected last time (its kept outlink), for a redirect after a redirect.
 */
export function changeOf(prior: PageHistory | undefined, answer: Answer, priorTarget?: string): PageChange | undefined {
  const { status } = answer;
  if (!isTelling(status)) return undefined;
  if (prior === undefined) return 'new';
  if (status === 304) return 'unchanged';
  if (isGone(status)) return isGone(prior.status) ? 'unchanged' : isOk(prior.status) || isRedirect(prior.status) ? 'removed' : 'changed';
  if (isRedirect(status)) {
    if (isOk(prior.status)) return 'removed';
    return isRedirect(prior.status) && priorTarget !== undefined && priorTarget === answer.location ? 'unchanged' : 'changed';
  }
  if (isOk(status)) {
    if (!isOk(prior.status)) return 'changed';
    if (answer.digest !== undefined && prior.digest !== undefined) return answer.digest === prior.digest ? 'unchanged' : 'changed';
    return sameValidators(prior, answer.headers) ? 'unchanged' : 'changed';
  }
  return status === prior.status ? 'unchanged' : 'changed';
}

/**
 * The history to keep after an answer, or undefined to keep the last one (an
 * answer that tells nothing). A 304 keeps the last status and digest and
 * takes any validator it sends.
 */
export function nextHistory(prior: PageHistory | undefined, answer: Answer, fetchedAt: number): PageHistory | undefined {
  const { status, headers } = answer;
  if (!isTelling(status)) return undefined;
  if (status === 304) {
    const kept: PageHistory = { ...(prior ?? { status: 200 }), fetchedAt };
    if (headers.etag !== undefined) kept.etag = headers.etag;
    if (headers['last-modified'] !== undefined) kept.lastModified = headers['last-modified'];
    return kept;
  }
  const next: PageHistory = { status, fetchedAt };
  if (!varyStar(headers)) {
    if (headers.etag !== undefined) next.etag = headers.etag;
    if (headers['last-modified'] !== undefined) next.lastModified = headers['last-modified'];
  }
  if (answer.digest !== undefined) next.digest = answer.digest;
  if (prior?.intervalMs !== undefined) next.intervalMs = prior.intervalMs;
  return next;
}

/** Same strong ETag, or (no ETag on either side) the same Last-Modified. */
function sameValidators(prior: PageHistory, headers: Record<string, string>): boolean {
  const etag = headers.etag;
  if (prior.etag !== undefined && etag !== undefined) return !isWeak(etag) && etag === prior.etag;
  const lastModified = headers['last-modified'];
  return prior.lastModified !== undefined && lastModified !== undefined && Date.parse(prior.lastModified) === Date.parse(lastModified);
}

function isWeak(etag: string): boolean {
  return etag.startsWith('W/');
}

function varyStar(headers: Record<string, string>): boolean {
  return headers.vary !== undefined && headers.vary.split(',').some((v) => v.trim() === '*');
}

function isOk(status: number): boolean {
  return status >= 200 && status < 300;
}

function isGone(status: number): boolean {
  return status === 404 || status === 410;
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}
