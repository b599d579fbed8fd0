/**
 * Properties of Retry-After parsing (src/politeness/retry-after.ts): any
 * header value, any receipt time, any Date header → null or a delay that is
 * a finite number of milliseconds ≥ 0, and the exact delay for every value
 * written in one of the grammars.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from '../../src/politeness/retry-after.js';
import { anyString } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const SHORT_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Every instant an HTTP-date can name: whole seconds from year 0000 to 9999. */
const httpInstant = fc.integer({ min: -62_167_219_200, max: 253_402_300_799 }).map((s) => s * 1000); // 0000-01-01 to 9999-12-31
/** Receipt times a crawler sees: 1970 to 2100. */
const realisticNow = fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) });
/** Receipt times nobody should pass, but someone will: any double, NaN and ±Infinity included. */
const anyNow = fc.oneof(realisticNow, fc.double(), fc.integer(), fc.constantFrom(8.64e15, 8.64e15 + 1, -8.64e15 - 1, Number.MAX_VALUE, -0));

/** HTTP-date-shaped text with every field possibly out of range, names possibly wrong. */
const dateShaped = fc
  .record({
    grammar: fc.constantFrom('imf', 'rfc850', 'asctime'),
    weekday: fc.integer({ min: 0, max: 6 }),
    day: fc.integer({ min: 0, max: 99 }),
    month: fc.oneof(fc.constantFrom(...MONTHS), fc.constantFrom('jan', 'DEC', 'Foo', '')),
    year: fc.integer({ min: 0, max: 9999 }),
    hh: fc.integer({ min: 0, max: 99 }),
    mm: fc.integer({ min: 0, max: 99 }),
    ss: fc.integer({ min: 0, max: 99 }),
    wrongDayName: fc.boolean(),
    edge: fc.constantFrom('', ' ', '\t', 'x'),
  })
  .map((f) => {
    const short = f.wrongDayName ? 'Sunday' : SHORT_DAYS[f.weekday];
    const long = f.wrongDayName ? 'Sun' : LONG_DAYS[f.weekday];
    const time = `${pad(f.hh, 2)}:${pad(f.mm, 2)}:${pad(f.ss, 2)}`;
    const text =
      f.grammar === 'imf'
        ? `${short}, ${pad(f.day, 2)} ${f.month} ${pad(f.year, 4)} ${time} GMT`
        : f.grammar === 'rfc850'
          ? `${long}, ${pad(f.day, 2)}-${f.month}-${pad(f.year % 100, 2)} ${time} GMT`
          : `${short} ${f.month} ${String(f.day).padStart(2, ' ')} ${time} ${pad(f.year, 4)}`;
    return f.edge + text + (f.edge === 'x' ? '' : f.edge);
  });

const headerValue = fc.oneof(
  { weight: 3, arbitrary: dateShaped },
  { weight: 2, arbitrary: fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 10n ** 30n })).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '-1', '+5', '1.5', '1e3', '0x10', ' 30 ', '９', 'Infinity', 'NaN') },
  { weight: 2, arbitrary: anyString(40) },
);

/** The three spellings of one instant. RFC 850 gets a two-digit year, read against `now`. */
function spellings(at: number): { imf: string; rfc850: string; asctime: string } {
  const d = new Date(at);
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const month = MONTHS[d.getUTCMonth()];
  const day = d.getUTCDate();
  const year = d.getUTCFullYear();
  return {
    imf: d.toUTCString(),
    rfc850: `${LONG_DAYS[d.getUTCDay()]}, ${pad(day, 2)}-${month}-${pad(year % 100, 2)} ${time} GMT`,
    asctime: `${SHORT_DAYS[d.getUTCDay()]} ${month} ${String(day).padStart(2, ' ')} ${time} ${pad(year, 4)}`,
  };
}

describe('parseRetryAfter', () => {
  it(
    'never throws; gives null or a finite delay ≥ 0 in milliseconds',
    () => {
      fc.assert(
        fc.property(
          fc.oneof({ weight: 9, arbitrary: headerValue }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, 5, {}, ['1']) }),
          anyNow,
          fc.option(fc.oneof(dateShaped, anyString(30)), { nil: undefined }),
          (value, now, date) => {
            const parsed = parseRetryAfter(value as string, { now, date });
            if (parsed === null) return;
            expect(['seconds', 'date']).toContain(parsed.form);
            expect(Number.isFinite(parsed.delayMs)).toBe(true);
            expect(parsed.delayMs).toBeGreaterThanOrEqual(0);
            if (parsed.form === 'seconds') expect(Number.isSafeInteger(parsed.delayMs)).toBe(true);
          },
        ),
        fuzzParams(1500),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'reads delay-seconds exactly, clamped to a safe integer',
    () => {
      fc.assert(
        fc.property(fc.oneof(fc.nat(), fc.integer({ min: 0, max: 1e14 })), fc.constantFrom('', ' ', '\t', '00'), realisticNow, (seconds, padding, now) => {
          const value = padding === '00' ? `00${seconds}` : `${padding}${seconds}${padding}`;
          expect(parseRetryAfter(value, { now })).toEqual({ delayMs: Math.min(seconds * 1000, Number.MAX_SAFE_INTEGER), form: 'seconds' });
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'reads an IMF-fixdate or asctime date as the time from the Date header (or receipt) to it',
    () => {
      fc.assert(
        fc.property(
          httpInstant,
          realisticNow,
          fc.option(httpInstant, { nil: null }),
          fc.constantFrom(...(['imf', 'asctime'] as const)),
          (at, now, serverNow, grammar) => {
            const date = serverNow === null ? null : new Date(serverNow).toUTCString();
            const parsed = parseRetryAfter(spellings(at)[grammar], { now, date });
            expect(parsed).toEqual({ delayMs: Math.max(0, at - (serverNow ?? now)), form: 'date' });
          },
        ),
        fuzzParams(400),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('parseHttpDate', () => {
  it(
    'never throws; gives null or a whole number of epoch milliseconds',
    () => {
      fc.assert(
        fc.property(fc.oneof(dateShaped, anyString(40)), anyNow, (text, now) => {
          const at = parseHttpDate(text, now);
          if (at === null) return;
          expect(Number.isSafeInteger(at)).toBe(true);
        }),
        fuzzParams(1500),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'reads an RFC 850 two-digit year as the one at most 50 years after now (RFC 9110 §5.6.7)',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2200, 0, 1) }).map((ms) => Math.floor(ms / 1000) * 1000),
          realisticNow,
          (at, now) => {
            const parsed = parseHttpDate(spellings(at).rfc850, now);
            // "29-Feb-00" is no date in a century year that is not a leap year.
            if (parsed === null) {
              expect(new Date(at).toISOString().slice(4, 10)).toBe('-02-29');
              return;
            }
            const fiftyYearsOn = new Date(now);
            fiftyYearsOn.setUTCFullYear(fiftyYearsOn.getUTCFullYear() + 50);
            const fiftyYearsAgo = new Date(now);
            fiftyYearsAgo.setUTCFullYear(fiftyYearsAgo.getUTCFullYear() - 50);
            expect(parsed).toBeLessThanOrEqual(fiftyYearsOn.getTime());
            // A century before the latest allowed date (the second after which makes "more than 50 years").
            expect(parsed).toBeGreaterThan(fiftyYearsAgo.getTime() - 1000);
            expect(new Date(parsed).getUTCFullYear() % 100).toBe(new Date(at).getUTCFullYear() % 100);
            // Only the century can differ from the instant written.
            expect(new Date(parsed).toISOString().slice(2)).toBe(new Date(at).toISOString().slice(2));
          },
        ),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
