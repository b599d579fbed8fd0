import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from '../../src/politeness/retry-after.js';

/** RFC 9110's example instant: Sun, 06 Nov 1994 08:49:37 GMT. */
const EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37);
const NOW = Date.UTC(2026, 0, 1);

describe('parseRetryAfter: delay-seconds', () => {
  it.each<[string, number]>([
    ['120', 120_000],
    ['0', 0],
    ['1', 1000],
    ['007', 7000],
    ['  30\t', 30_000],
    ['86400', 86_400_000],
  ])('%j → %d ms', (value, delayMs) => {
    expect(parseRetryAfter(value, { now: NOW })).toEqual({ delayMs, form: 'seconds' });
  });

  it('ignores the Date header for seconds (a delay is already relative)', () => {
    const date = 'Thu, 01 Jan 2026 00:10:00 GMT';
    expect(parseRetryAfter('5', { now: NOW, date })).toEqual({ delayMs: 5000, form: 'seconds' });
  });

  it('clamps absurdly long digit strings to a finite safe integer', () => {
    for (const value of ['9'.repeat(400), '9'.repeat(20)]) {
      const parsed = parseRetryAfter(value, { now: NOW });
      expect(parsed).toEqual({ delayMs: Number.MAX_SAFE_INTEGER, form: 'seconds' });
    }
    // Just under the clamp, the value is exact; one second more and it clamps.
    expect(parseRetryAfter('9007199254740', { now: NOW })?.delayMs).toBe(9_007_199_254_740_000);
    expect(parseRetryAfter('9007199254741', { now: NOW })?.delayMs).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each<[unknown]>([
    [''],
    ['   '],
    ['-1'],
    ['+5'],
    ['1.5'],
    ['1e3'],
    ['0x10'],
    ['1 20'],
    ['120s'],
    ['Infinity'],
    ['NaN'],
    ['120, 120'],
    ['١٢'], // Arabic-Indic digits: not DIGIT
    [null],
    [undefined],
    [120],
  ])('rejects %j', (value) => {
    expect(parseRetryAfter(value as string, { now: NOW })).toBeNull();
  });

  it('does not read "120" as the year 120 (the Date.parse trap)', () => {
    expect(Number.isNaN(Date.parse('120'))).toBe(false); // the trap is real
    expect(parseRetryAfter('120', { now: NOW })).toEqual({ delayMs: 120_000, form: 'seconds' });
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  it.each<[string, string]>([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime', 'Sun Nov  6 08:49:37 1994'],
  ])('%s: delay from receipt when there is no Date header', (_form, value) => {
    expect(parseRetryAfter(value, { now: EXAMPLE - 30_000 })).toEqual({ delayMs: 30_000, form: 'date' });
  });

  it('measures against the server Date header, absorbing our clock skew', () => {
    // Our clock runs an hour fast: against it the date is long past.
    const parsed = parseRetryAfter('Sun, 06 Nov 1994 08:50:37 GMT', {
      now: EXAMPLE + 3_600_000,
      date: 'Sun, 06 Nov 1994 08:49:37 GMT',
    });
    expect(parsed).toEqual({ delayMs: 60_000, form: 'date' });
  });

  it('accepts a Date header in any HTTP-date form', () => {
    const opts = { now: 0, date: 'Sunday, 06-Nov-94 08:49:37 GMT' };
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', { ...opts, now: EXAMPLE })?.delayMs).toBe(10_000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', { now: 0, date: 'Sun Nov  6 08:49:37 1994' })?.delayMs).toBe(10_000);
  });

  it.each<[string | null | undefined]>([[undefined], [null], [''], ['yesterday'], ['1994-11-06T08:49:37Z'], ['784111777']])(
    'falls back to receipt time when the Date header is %j',
    (date) => {
      expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', { now: EXAMPLE, date })).toEqual({
        delayMs: 10_000,
        form: 'date',
      });
    },
  );

  it('a date in the past means retry now (0), never a negative delay', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', { now: NOW })).toEqual({ delayMs: 0, form: 'date' });
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', { now: NOW, date: 'Sun, 06 Nov 1994 09:00:00 GMT' })).toEqual({ delayMs: 0, form: 'date' });
  });

  it('a date exactly at the server time is 0', () => {
    const value = 'Thu, 01 Jan 2026 00:00:00 GMT';
    expect(parseRetryAfter(value, { now: NOW + 5000, date: value })).toEqual({ delayMs: 0, form: 'date' });
  });
});

describe('parseHttpDate', () => {
  it.each<[string, number]>([
    ['Sun, 06 Nov 1994 08:49:37 GMT', EXAMPLE],
    ['Sun, 6 Nov 1994 08:49:37 GMT', EXAMPLE], // one-digit day, seen in the wild
    ['  Sun, 06 Nov 1994 08:49:37 GMT  ', EXAMPLE],
    ['sun, 06 nov 1994 08:49:37 gmt', EXAMPLE],
    ['Mon, 06 Nov 1994 08:49:37 GMT', EXAMPLE], // wrong weekday: accepted, ignored
    ['Sunday, 06-Nov-94 08:49:37 GMT', EXAMPLE],
    ['Friday, 06-Nov-94 08:49:37 GMT', EXAMPLE],
    ['Sun Nov  6 08:49:37 1994', EXAMPLE],
    ['Sun Nov 06 08:49:37 1994', EXAMPLE],
    ['Sun Nov 6 08:49:37 1994', EXAMPLE],
    ['Thu, 29 Feb 2024 12:00:00 GMT', Date.UTC(2024, 1, 29, 12)],
    ['Tue, 29 Feb 2000 00:00:00 GMT', Date.UTC(2000, 1, 29)],
    ['Sat, 31 Dec 2016 23:59:60 GMT', Date.UTC(2017, 0, 1)], // leap second
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Fri, 31 Dec 9999 23:59:59 GMT', Date.UTC(9999, 11, 31, 23, 59, 59)],
  ])('%j', (value, epoch) => {
    expect(parseHttpDate(value, NOW)).toBe(epoch);
  });

  it('keeps four-digit years below 100 as written (Date.UTC would add 1900)', () => {
    const at = parseHttpDate('Thu, 01 Jan 0099 00:00:00 GMT', NOW);
    expect(at).not.toBeNull();
    expect(new Date(at!).getUTCFullYear()).toBe(99);
  });

  it.each<[string]>([
    ['Sun, 31 Feb 1994 08:49:37 GMT'],
    ['Wed, 29 Feb 2023 00:00:00 GMT'],
    ['Thu, 29 Feb 1900 00:00:00 GMT'],
    ['Sun, 31 Nov 1994 08:49:37 GMT'],
    ['Sun, 00 Nov 1994 08:49:37 GMT'],
    ['Sun, 06 Nov 1994 24:00:00 GMT'],
    ['Sun, 06 Nov 1994 08:60:00 GMT'],
    ['Sun, 06 Nov 1994 08:49:61 GMT'],
    ['Sun, 06 Nov 1994 8:49:37 GMT'],
    ['Sun, 06 Nov 1994 08:49:37'],
    ['Sun, 06 Nov 1994 08:49:37 UTC'],
    ['Sun, 06 Nov 1994 08:49:37 +0000'],
    ['Sun, 06 Nov 94 08:49:37 GMT'],
    ['Sun, 06 Nov 1994 08:49:37 GMT extra'],
    ['Sun 06 Nov 1994 08:49:37 GMT'],
    ['Sunday, 06 Nov 1994 08:49:37 GMT'],
    ['Sun, 06-Nov-94 08:49:37 GMT'],
    ['Funday, 06-Nov-94 08:49:37 GMT'],
    ['Sun, 06 Foo 1994 08:49:37 GMT'],
    ['Sun Nov  6 08:49:37 94'],
    ['Sun Nov  6 08:49:37 1994 GMT'],
    ['1994-11-06T08:49:37Z'],
    ['Tue, 1 Jan 2030'],
    ['120'],
    ['Infinity'],
    [''],
  ])('rejects %j', (value) => {
    expect(parseHttpDate(value, NOW)).toBeNull();
  });

  describe('RFC 850 two-digit years (RFC 9110 §5.6.7)', () => {
    const jan2026 = Date.UTC(2026, 0, 1);
    it.each<[string, number, number]>([
      ['Thursday, 01-Jan-26 00:00:00 GMT', jan2026, Date.UTC(2026, 0, 1)],
      ['Monday, 01-Jan-25 00:00:00 GMT', jan2026, Date.UTC(2025, 0, 1)],
      ['Monday, 01-Jan-27 00:00:00 GMT', jan2026, Date.UTC(2027, 0, 1)],
      ['Monday, 01-Jan-75 00:00:00 GMT', jan2026, Date.UTC(2075, 0, 1)],
      // Exactly 50 years ahead is not "more than 50 years in the future".
      ['Monday, 01-Jan-76 00:00:00 GMT', jan2026, Date.UTC(2076, 0, 1)],
      // One second more is, so it is the past century.
      ['Monday, 01-Jan-76 00:00:01 GMT', jan2026, Date.UTC(1976, 0, 1, 0, 0, 1)],
      ['Monday, 01-Jan-99 00:00:00 GMT', jan2026, Date.UTC(1999, 0, 1)],
      ['Monday, 01-Jan-00 00:00:00 GMT', jan2026, Date.UTC(2000, 0, 1)],
      ['Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(1994, 10, 6), EXAMPLE],
      // Near a century's end, a small year is the next century, not 98 years ago.
      ['Monday, 01-Jan-01 00:00:00 GMT', Date.UTC(2099, 5, 1), Date.UTC(2101, 0, 1)],
    ])('%j seen at %d → %d', (value, now, epoch) => {
      expect(parseHttpDate(value, now)).toBe(epoch);
    });

    it('rejects 29 Feb in a year that resolves to a non-leap year', () => {
      expect(parseHttpDate('Monday, 29-Feb-23 00:00:00 GMT', NOW)).toBeNull();
      expect(parseHttpDate('Thursday, 29-Feb-24 00:00:00 GMT', NOW)).toBe(Date.UTC(2024, 1, 29));
    });

    // Found by test/properties/retry-after.test.ts: "29-Feb-00" seen in May
    // 2050 is in 2100 (not more than 50 years ahead), which has no 29 Feb; the
    // century was chosen by the date's instant, there was none, and it fell
    // back to 2000, more than 50 years in the past.
    it('regression: 29 Feb of a two-digit year whose century lacks one is null, not a date a century earlier', () => {
      const may2050 = Date.UTC(2050, 4, 15);
      expect(parseHttpDate('Tuesday, 29-Feb-00 00:00:00 GMT', may2050)).toBeNull();
      expect(parseRetryAfter('Tuesday, 29-Feb-00 00:00:00 GMT', { now: may2050 })).toBeNull();
      expect(parseHttpDate('Monday, 01-Mar-00 00:00:00 GMT', may2050)).toBe(Date.UTC(2100, 2, 1));
      // Seen in 2030, "00" is 2000, which has a 29 Feb.
      expect(parseHttpDate('Tuesday, 29-Feb-00 00:00:00 GMT', Date.UTC(2030, 0, 1))).toBe(Date.UTC(2000, 1, 29));
    });

    // Found by test/properties/retry-after.test.ts: a `now` past Date's range
    // (±8.64e15 ms) is finite but has no year, so the century came out NaN
    // and so did the date, and Retry-After answered { delayMs: NaN }.
    it.each([8.64e15 + 1, -8.64e15 - 1, Number.MAX_VALUE, NaN, Infinity])(
      'regression: a two-digit year seen at a `now` outside Date range (%d) is null, not NaN',
      (now) => {
        expect(parseHttpDate('Sunday, 01-Jan-00 00:00:00 GMT', now)).toBeNull();
        expect(parseRetryAfter('Sunday, 01-Jan-00 00:00:00 GMT', { now })).toBeNull();
        expect(parseRetryAfter('5', { now })).toEqual({ delayMs: 5000, form: 'seconds' });
      },
    );
  });
});
