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
 * - `revisitInterval` (`--revisit`): how long until the page is asked
 *   again. A page seen for the first time waits the shortest interval; a
 *   change halves the page's interval, no change makes it 1.5 times longer
 *   (StormCrawler's adaptive schedule, in spirit), so a page that changes
 *   every hour settles near an hour and a static one drifts to the
 *   longest. A server's own freshness (`Cache-Control: max-age`, or
 *   `Expires` after `Date`) is a floor: a page said to be fresh for a day
 *   is not asked again sooner. Always within [min, max].
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

/** Whether a response said `Vary: *`: whatever it varies on, its validators are good for no later request. */
export function varyStar(headers: Record<string, string>): boolean {
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

/** The bounds of `--revisit` intervals (`--revisit-min`, `--revisit-max`), ms. */
export interface RevisitBounds {
  minMs: number;
  maxMs: number;
}

/** Shorter after a change, longer after none. */
const CHANGED_FACTOR = 0.5;
const UNCHANGED_FACTOR = 1.5;

/**
 * The page's next revisit interval (see the module header). `prior`: its
 * interval so far (undefined for a page never revisited); `change`: what
 * the answer said (undefined: it told nothing, the interval stays).
 */
export function revisitInterval(prior: number | undefined, change: PageChange | undefined, headers: Record<string, string>, bounds: RevisitBounds): number {
  let interval: number;
  if (prior === undefined || change === 'new') interval = bounds.minMs;
  else if (change === 'changed' || change === 'removed') interval = prior * CHANGED_FACTOR;
  else if (change === 'unchanged') interval = prior * UNCHANGED_FACTOR;
  else interval = prior;
  const fresh = freshFor(headers);
  if (fresh !== undefined) interval = Math.max(interval, fresh);
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, interval));
}

/** How long the server says its answer stays fresh, ms (max-age, else Expires − Date); undefined when it says nothing usable. */
export function freshFor(headers: Record<string, string>): number | undefined {
  const cc = headers['cache-control'];
  if (cc !== undefined) {
    const directives = cc
      .toLowerCase()
      .split(',')
      .map((d) => d.trim());
    if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return undefined;
    const maxAge = directives.find((d) => d.startsWith('max-age='));
    if (maxAge !== undefined) {
      const seconds = Number(maxAge.slice('max-age='.length).replace(/^"|"$/g, ''));
      return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
    }
  }
  const expires = headers.expires === undefined ? NaN : Date.parse(headers.expires);
  const date = headers.date === undefined ? NaN : Date.parse(headers.date);
  return Number.isFinite(expires) && Number.isFinite(date) && expires > date ? expires - date : undefined;
}
