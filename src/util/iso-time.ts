/**
 * Instants in records: ISO 8601 UTC strings with milliseconds, the records'
 * one time convention (`fetchedAt`, `startedAt`, `attemptStarts`, throttle
 * events, `pausedUntil`). Durations stay numbers of ms named `…Ms`.
 */

const MAX_TIME_MS = 8.64e15; // the Date range

/**
 * `(ms) => new Date(ms).toISOString()`, reusing the date and seconds while
 * they do not change: at one record per page and thousands of pages a
 * second, `toISOString` (~0.45 µs a call) was 1–2% of the crawler's CPU time.
 */
export function isoTimeFormatter(): (ms: number) => string {
  let second = NaN;
  let prefix = ''; // "YYYY-MM-DDTHH:mm:ss."
  return (ms) => {
    const t = Math.trunc(ms); // as Date does
    const s = Math.floor(t / 1000);
    if (s !== second || !(Math.abs(t) <= MAX_TIME_MS)) {
      const iso = new Date(t).toISOString(); // throws RangeError for an invalid time, as before
      second = s;
      prefix = iso.slice(0, -4);
      return iso;
    }
    const milli = t - s * 1000;
    return `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
}

/**
 * One instant for a record, rounded to the millisecond. Times on the crawl's
 * clock are finite; anything outside the Date range (a corrupt value read
 * back from a store) is clamped rather than allowed to throw mid-crawl.
 */
export function isoInstant(ms: number): string {
  const t = Number.isFinite(ms) ? Math.max(-MAX_TIME_MS, Math.min(MAX_TIME_MS, Math.round(ms))) : 0;
  return new Date(t).toISOString();
}
