/**
 * Properties of RateLimit / X-RateLimit parsing and pacing
 * (src/politeness/rate-limit-headers.ts): any headers, any receipt time →
 * null or a budget whose numbers are whole, finite, non-negative and safe,
 * and a pace that is one too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paceForBudget, parseRateLimit } from '../../src/politeness/rate-limit-headers.js';
import { anyString } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const SOURCES = ['ratelimit-structured', 'ratelimit-dictionary', 'ratelimit-fields', 'x-ratelimit'];
const NOW = Date.UTC(2026, 0, 1);

/** Numbers as servers write them: small, huge, negative, fractional, epoch seconds and milliseconds, and junk. */
const number = fc.oneof(
  { weight: 6, arbitrary: fc.nat(1000).map(String) },
  { weight: 2, arbitrary: fc.integer({ min: -3600, max: 3600 }).map((d) => String(Math.floor(NOW / 1000) + d)) },
  { weight: 2, arbitrary: fc.integer({ min: -3_600_000, max: 3_600_000 }).map((d) => String(NOW + d)) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: false }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 40n }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('', '-', '.', '1.', '.5', '0.25', '1e3', '0x10', 'Infinity', '-0', '-1', '00', '9'.repeat(400)) },
);
const name = fc.constantFrom('"default"', '"burst"', '"a,b"', '"q\\"x"', 'default', '*', '"', 'a b', '');
const param = (keys: string[]) =>
  fc
    .tuple(
      fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.constantFrom('R', 'pk', '1x', '') }),
      fc.constantFrom('=', '=', '=', '', ' = '),
      number,
    )
    .map(([k, eq, v]) => `${k}${eq}${eq === '' ? '' : v}`);
/** `keys`, each with a value, in any order, plus maybe a stray one. */
const params = (keys: string[]) =>
  fc
    .tuple(fc.tuple(...keys.map((k) => number.map((v) => `${k}=${v}`))), fc.array(param(keys), { maxLength: 2 }))
    .chain(([wanted, more]) => fc.shuffledSubarray([...wanted, ...more], { minLength: wanted.length }));
/** A structured-field list: members "name;key=value;…". */
const list = (keys: string[]) =>
  fc
    .array(
      fc.tuple(name, params(keys), fc.constantFrom(';', ' ; ')).map(([head, ps, sep]) => [head, ...ps].join(sep)),
      { minLength: 1, maxLength: 3 },
    )
    .map((members) => members.join(', '));
const dictionary = fc
  .tuple(
    params(['remaining', 'reset']),
    fc.array(
      fc.tuple(fc.constantFrom('limit', 'policy', 'LIMIT', 'remaining', ''), number).map(([k, v]) => `${k}=${v}`),
      { maxLength: 2 },
    ),
  )
  .map(([wanted, more]) => [...wanted, ...more].join(', '));
const plain = fc.oneof(
  { weight: 5, arbitrary: number },
  { weight: 1, arbitrary: fc.array(number, { minLength: 2, maxLength: 3 }).map((xs) => xs.join(', ')) },
  { weight: 1, arbitrary: fc.tuple(number, number).map(([a, b]) => `${a}, ${a};w=${b}`) },
);
const junk = anyString(30);

const extraKey = fc.constantFrom(null, null, null, ['__proto__', '5'], ['constructor', 'x'], ['x-ratelimit-reset', undefined]) as fc.Arbitrary<
  [string, string | undefined] | null
>;
const optional = { requiredKeys: [] as never[] };

/** Header records in one of the forms (mostly well-formed), or a mix of all of them; now and then an odd key or a non-string value. */
const headers = fc
  .tuple(
    fc.oneof(
      fc.record({ ratelimit: list(['r', 't']), 'ratelimit-policy': fc.option(list(['q', 'w']), { nil: undefined }) }),
      fc.record({ ratelimit: dictionary }),
      fc.record({ 'ratelimit-limit': fc.option(plain, { nil: undefined }), 'ratelimit-remaining': plain, 'ratelimit-reset': plain }),
      fc.record({ 'x-ratelimit-limit': fc.option(plain, { nil: undefined }), 'x-ratelimit-remaining': plain, 'x-ratelimit-reset': plain }),
      fc.record(
        {
          ratelimit: fc.oneof(list(['r', 't']), dictionary, junk),
          'ratelimit-policy': fc.oneof(list(['q', 'w']), junk),
          'ratelimit-limit': fc.oneof(plain, junk),
          'ratelimit-remaining': fc.oneof(plain, junk),
          'ratelimit-reset': fc.oneof(plain, junk),
          'x-ratelimit-limit': fc.oneof(plain, junk),
          'x-ratelimit-remaining': fc.oneof(plain, junk),
          'x-ratelimit-reset': fc.oneof(plain, junk),
        },
        optional,
      ),
    ),
    extraKey,
  )
  .map(([record, extra]) => {
    const out: Record<string, string | undefined> = { ...record };
    if (extra !== null) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
    return out;
  });

const anyNow = fc.oneof(fc.constant(NOW), fc.integer({ min: 0, max: 4e12 }), fc.double());

describe('parseRateLimit', () => {
  it(
    'never throws; gives null or whole, safe, non-negative numbers from a known source',
    () => {
      fc.assert(
        fc.property(headers, anyNow, (record, now) => {
          const info = parseRateLimit(record, now);
          if (info === null) return;
          expect(SOURCES).toContain(info.source);
          expect(Number.isSafeInteger(info.remaining) && info.remaining >= 0).toBe(true);
          expect(Number.isSafeInteger(info.resetMs) && info.resetMs >= 0).toBe(true);
          if (info.limit !== null) expect(Number.isSafeInteger(info.limit) && info.limit >= 0).toBe(true);

          const pace = paceForBudget(info);
          if ('pauseMs' in pace) {
            expect(info.remaining).toBe(0);
            expect(pace.pauseMs).toBe(info.resetMs);
          } else {
            expect(Number.isSafeInteger(pace.minGapMs) && pace.minGapMs >= 0).toBe(true);
            expect(pace.until).toBe(info.resetMs);
            // Spending the planned share of the budget at that gap never outlasts the window by more than a gap.
            expect(pace.minGapMs * Math.max(1, Math.floor(info.remaining * 0.9))).toBeGreaterThanOrEqual(info.resetMs);
          }
        }),
        fuzzParams(1500),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'tolerates whatever is passed as the header record',
    () => {
      fc.assert(
        fc.property(fc.anything(), anyNow, (record, now) => {
          const info = parseRateLimit(record as Record<string, string>, now);
          expect(info === null || typeof info === 'object').toBe(true);
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
