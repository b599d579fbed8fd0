/**
 * The crawl-wide cache of what browsers fetched: a script, stylesheet or font
 * that a thousand pages use is requested once, not once per page.
 *
 * Contract: keyed by absolute URL (GET only); bounded in bytes, least
 * recently used evicted first; an entry is kept only when its response may
 * be reused (`reusableUntil`): a 200 without `Cache-Control: no-store`,
 * `no-cache` or `private`, and without a max-age shorter than
 * MIN_MAX_AGE_S (a server that says "stale in a second" means it). An entry
 * past its max-age is dropped on look-up. Times come from the caller (`now`,
 * ms), so tests need no real waiting.
 *
 * Failures are remembered too (negative caching, as browsers and CDNs do),
 * for a bounded time, so a script that a thousand pages load and that does
 * not exist is asked for once, not once per page: a 404 or 410 as a response
 * (RFC 9111 lets both be reused without a stated lifetime; the same
 * Cache-Control rules apply, and without a max-age NEGATIVE_TTL_S bounds it),
 * and a request that failed for its host — a name that does not resolve, a
 * refused connection, an address the crawl refuses — for FAILURE_TTL_S
 * (`putFailure`, `failure`).
 */

/** A max-age shorter than this (seconds) means "do not reuse" for a crawl. */
export const MIN_MAX_AGE_S = 10;
/** How long a 404 or 410 without a max-age is reused (seconds). */
export const NEGATIVE_TTL_S = 300;
/** How long a failed request (DNS, refused connection or address) is remembered (seconds). */
export const FAILURE_TTL_S = 60;
/** Failures remembered at most; the oldest go first. */
export const MAX_FAILURES = 10_000;

/** A request that failed, as the fetcher answered it. */
export interface CachedFailure {
  kind: 'failed' | 'blocked';
  host: string;
  detail: string;
}

export interface CachedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Entry {
  response: CachedResponse;
  /** ms; Infinity when the server gave no max-age. */
  expiresAt: number;
  bytes: number;
}

/** What Cache-Control lets a crawl do with a response: reuse it until `expiresAt` (ms), or not at all (null). */
export function reusableUntil(status: number, headers: Record<string, string>, now: number): number | null {
  const negative = status === 404 || status === 410;
  if (status !== 200 && !negative) return null;
  const cc = (headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[\s,])(no-store|no-cache|private)([\s,=]|$)/.test(cc)) return null;
  const maxAge = /(?:^|[\s,])(?:s-maxage|max-age)\s*=\s*"?(\d+)/.exec(cc);
  if (maxAge === null) return negative ? now + NEGATIVE_TTL_S * 1000 : Infinity;
  const seconds = Number(maxAge[1]);
  return seconds < MIN_MAX_AGE_S ? null : now + seconds * 1000;
}

export class SubresourceCache {
  /** Map order is recency: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Failed requests by URL, oldest first, each with when it may be tried again (ms). */
  private readonly failures = new Map<string, { failure: CachedFailure; until: number }>();
  hits = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }

  get storedBytes(): number {
    return this.bytes;
  }

  get(url: string, now: number): CachedResponse | undefined {
    const entry = this.entries.get(url);
    if (entry === undefined) return undefined;
    this.entries.delete(url);
    if (entry.expiresAt <= now) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(url, entry);
    this.hits++;
    return entry.response;
  }

  /** A failure remembered for `url` and not yet expired. */
  failure(url: string, now: number): CachedFailure | undefined {
    const kept = this.failures.get(url);
    if (kept === undefined) return undefined;
    if (kept.until > now) return kept.failure;
    this.failures.delete(url);
    return undefined;
  }

  /** Remembers that a request for `url` failed, for FAILURE_TTL_S. */
  putFailure(url: string, failure: CachedFailure, now: number): void {
    this.failures.delete(url);
    this.failures.set(url, { failure, until: now + FAILURE_TTL_S * 1000 });
    if (this.failures.size > MAX_FAILURES) this.failures.delete(this.failures.keys().next().value!);
  }

  /** Keeps `response` if Cache-Control allows and it fits; true when kept. */
  put(url: string, response: CachedResponse, now: number): boolean {
    const expiresAt = reusableUntil(response.status, response.headers, now);
    if (expiresAt === null) return false;
    const bytes = response.body.length + url.length + 256;
    if (bytes > this.maxBytes / 4) return false; // one huge bundle must not flush everything else
    const old = this.entries.get(url);
    if (old !== undefined) {
      this.entries.delete(url);
      this.bytes -= old.bytes;
    }
    this.entries.set(url, { response, expiresAt, bytes });
    this.bytes += bytes;
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
    return true;
  }
}
