/**
 * Retry-After (RFC 9110 §10.2.3) → a delay in milliseconds.
 *
 * Contract:
 * - Pure: no clock reads. The caller passes `now`, the wall-clock epoch ms at
 *   which the response arrived, and the response's own `Date` header.
 * - The answer is a *delay*, never an instant: the scheduler runs on the
 *   monotonic clock, so a wall-clock date must be turned into "how long from
 *   receipt" here, once, and then added to the monotonic `now()`.
 * - A date is measured against the server's `Date` header when that parses,
 *   because both stamps come from the server's clock: a client clock that is
 *   minutes off would otherwise turn "retry in 30 s" into "retry now" or
 *   "retry in 10 min". Without a usable Date header, our receipt time is used.
 * - Never `Date.parse` on the raw value: it accepts "120" as the year 120,
 *   local-time strings and whatever else the engine likes. HTTP-dates are
 *   parsed by the three grammars below, all in GMT.
 * - No capping: the policy (`maxRetryAfterMs`) caps, so that it can report the
 *   cut. Huge second counts are clamped to a safe integer only so that the
 *   number stays finite.
 * - Invalid input → null (the caller falls back to backoff); never throws.
 */

/** A parsed Retry-After. */
export interface RetryAfter {
  /** Milliseconds from receipt until the server wants to hear from us again; ≥ 0. */
  delayMs: number;
  /** Which grammar the value used: `delay-seconds` or an HTTP-date. */
  form: 'seconds' | 'date';
}

/** Inputs besides the header value. */
export interface RetryAfterOptions {
  /** Wall-clock epoch milliseconds at which the response was received. */
  now: number;
  /** The response's `Date` header, if any; a date value is measured against it when it parses. */
  date?: string | null;
}

const SHORT_DAYS = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAYS = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// Names match case-insensitively (cheap robustness; RFC 9110 makes HTTP-date
// case-sensitive but nothing else could be meant). The weekday is checked for
// being a weekday name, not for matching the date: recipients are told to be
// lenient, and a wrong weekday does not make the instant ambiguous.
// The day of the month may have one digit in IMF-fixdate: some servers write
// "Sun, 6 Nov 1994", and it is still unambiguous.

/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_RE = new RegExp(`^${SHORT_DAYS}, (\\d{1,2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** Obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`. */
const RFC850_RE = new RegExp(`^${LONG_DAYS}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
/** Obsolete asctime: `Sun Nov  6 08:49:37 1994` (day space-padded, or two digits). */
const ASCTIME_RE = new RegExp(`^${SHORT_DAYS} ${MONTH} {1,2}(\\d{1,2}) ${TIME} (\\d{4})$`, 'i');

const DELAY_SECONDS_RE = /^\d+$/;

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) into epoch milliseconds, or null.
 *
 * `now` (wall-clock epoch ms) is needed only for RFC 850's two-digit year: a
 * year that would be more than 50 years in the future is taken from the
 * previous century.
 */
export function parseHttpDate(value: string, now: number): number | null {
  const text = value.trim();
  let m = IMF_RE.exec(text);
  if (m) {
    const [, day, month, year, hh, mm, ss] = m;
    return toEpoch(Number(year), month, Number(day), hh, mm, ss);
  }
  m = ASCTIME_RE.exec(text);
  if (m) {
    const [, month, day, hh, mm, ss, year] = m;
    return toEpoch(Number(year), month, Number(day), hh, mm, ss);
  }
  m = RFC850_RE.exec(text);
  if (m) {
    const [, day, month, yy, hh, mm, ss] = m;
    const when = [MONTHS.indexOf(month.toLowerCase()), Number(day), Number(hh), Number(mm), Number(ss)];
    const year = fullYear(Number(yy), when, now);
    return year === null ? null : toEpoch(year, month, Number(day), hh, mm, ss);
  }
  return null;
}

/**
 * RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years in
 * the future" is the most recent past year with those digits. So: take the
 * most recent year up to this one that ends in `yy`; the same date a century
 * later wins only if it is at most 50 years after `now`. `when` is the rest
 * of the date as [month (0-11), day, hour, minute, second]; the dates are
 * compared field by field, so a 29 February is placed by its place in the
 * calendar even in a year without one (which then rejects it), never moved
 * to the other century.
 */
function fullYear(yy: number, when: readonly number[], now: number): number | null {
  const limit = new Date(now);
  const nowYear = limit.getUTCFullYear();
  // NaN, ±Infinity and anything beyond ±8.64e15 ms (Date's range) have no
  // year: there is no century to read the two digits in.
  if (Number.isNaN(nowYear)) return null;
  const past = nowYear - ((((nowYear - yy) % 100) + 100) % 100);
  limit.setUTCFullYear(nowYear + 50);
  const latest = [limit.getUTCFullYear(), limit.getUTCMonth(), limit.getUTCDate(), limit.getUTCHours(), limit.getUTCMinutes(), limit.getUTCSeconds()];
  const later = [past + 100, ...when];
  const i = later.findIndex((field, k) => field !== latest[k]);
  return i === -1 || later[i] < latest[i] ? past + 100 : past;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Epoch ms for a calendar date and time in GMT, or null if any field is out of range. */
function toEpoch(year: number, monthName: string, day: number, hh: string, mm: string, ss: string): number | null {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  const hour = Number(hh);
  const minute = Number(mm);
  const second = Number(ss);
  // Second 60 is a leap second (RFC 9110 allows it): it lands on the next minute's first second.
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return null;
  const monthDays = month === 1 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month];
  if (day < 1 || day > monthDays) return null;
  // Date.UTC maps years 0–99 to 1900–1999, so the year is set separately (2000 is
  // a leap year, so 29 Feb survives until then). Seconds are added last so a
  // leap second cannot roll the date before the year is set.
  const d = new Date(Date.UTC(2000, month, day, hour, minute));
  d.setUTCFullYear(year, month, day);
  return d.getTime() + second * 1000;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * Parses a Retry-After value: `delay-seconds` (digits only) or an HTTP-date.
 * Returns the delay from receipt in milliseconds, or null when the value is
 * absent or invalid.
 */
export function parseRetryAfter(value: string | null | undefined, opts: RetryAfterOptions): RetryAfter | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (DELAY_SECONDS_RE.test(text)) {
    // Number('9'.repeat(400)) is Infinity; clamp so callers always get a finite number.
    return { delayMs: Math.min(Number(text) * 1000, Number.MAX_SAFE_INTEGER), form: 'seconds' };
  }
  const at = parseHttpDate(text, opts.now);
  if (at === null) return null;
  const serverNow = typeof opts.date === 'string' ? parseHttpDate(opts.date, opts.now) : null;
  const reference = serverNow ?? opts.now;
  if (!Number.isFinite(reference)) return null;
  return { delayMs: Math.max(0, at - reference), form: 'date' };
}
