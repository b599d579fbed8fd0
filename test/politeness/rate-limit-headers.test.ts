import { describe, expect, it } from 'vitest';
import { paceForBudget, parseRateLimit, type RateLimitInfo } from '../../src/politeness/rate-limit-headers.js';

type Headers = Record<string, string | undefined>;

const NOW = Date.UTC(2026, 0, 1);
const NOW_S = NOW / 1000;

describe('parseRateLimit', () => {
  it.each<[string, Headers, RateLimitInfo]>([
    // draft-08+ structured fields
    [
      'structured, policy by name',
      { ratelimit: '"default";r=50;t=30', 'ratelimit-policy': '"default";q=100;w=60' },
      { remaining: 50, resetMs: 30_000, limit: 100, source: 'ratelimit-structured' },
    ],
    ['structured, no policy', { ratelimit: '"default";r=5;t=2' }, { remaining: 5, resetMs: 2000, limit: null, source: 'ratelimit-structured' }],
    [
      'structured, most restrictive item (smallest r)',
      { ratelimit: '"a";r=5;t=10, "b";r=2;t=40', 'ratelimit-policy': '"a";q=10;w=60, "b";q=3;w=60' },
      { remaining: 2, resetMs: 40_000, limit: 3, source: 'ratelimit-structured' },
    ],
    [
      'structured, equal r → longest reset',
      { ratelimit: '"a";r=2;t=40, "b";r=2;t=10', 'ratelimit-policy': '"b";q=3;w=60, "a";q=10;w=60' },
      { remaining: 2, resetMs: 40_000, limit: 10, source: 'ratelimit-structured' },
    ],
    [
      'structured, policy name unmatched → first policy',
      { ratelimit: '"x";r=1;t=5', 'ratelimit-policy': '"p";q=9;w=60, "q";q=1;w=1' },
      { remaining: 1, resetMs: 5000, limit: 9, source: 'ratelimit-structured' },
    ],
    [
      'structured, no t → the policy window bounds the reset',
      { ratelimit: '"default";r=3', 'ratelimit-policy': '"default";q=10;w=60' },
      { remaining: 3, resetMs: 60_000, limit: 10, source: 'ratelimit-structured' },
    ],
    [
      'structured, token names and extra parameters',
      { ratelimit: 'default;r=0;t=7;pk=:AQID:', 'ratelimit-policy': 'default;q=20;w=10;qu="requests"' },
      { remaining: 0, resetMs: 7000, limit: 20, source: 'ratelimit-structured' },
    ],
    [
      'structured, comma and escaped quote inside a name',
      { ratelimit: '"a,b\\"c";r=4;t=2', 'ratelimit-policy': '"z";q=1, "a,b\\"c";q=8' },
      { remaining: 4, resetMs: 2000, limit: 8, source: 'ratelimit-structured' },
    ],
    [
      'structured, an item without r is skipped',
      { ratelimit: '"a";t=1, "b";r=6;t=3' },
      { remaining: 6, resetMs: 3000, limit: null, source: 'ratelimit-structured' },
    ],
    // draft-07 dictionary
    ['dictionary', { ratelimit: 'limit=100, remaining=50, reset=30' }, { remaining: 50, resetMs: 30_000, limit: 100, source: 'ratelimit-dictionary' }],
    [
      'dictionary without limit, any order, with parameters',
      { ratelimit: 'reset=5;x=1, remaining=0' },
      { remaining: 0, resetMs: 5000, limit: null, source: 'ratelimit-dictionary' },
    ],
    // drafts ≤ 06, separate fields
    [
      'separate RateLimit-* fields, limit with policies',
      { 'ratelimit-limit': '100, 100;w=60', 'ratelimit-remaining': '50', 'ratelimit-reset': '30' },
      { remaining: 50, resetMs: 30_000, limit: 100, source: 'ratelimit-fields' },
    ],
    // X-RateLimit-*
    [
      'X-RateLimit delta seconds',
      { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '10', 'x-ratelimit-reset': '30' },
      { remaining: 10, resetMs: 30_000, limit: 60, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit epoch seconds',
      { 'x-ratelimit-remaining': '10', 'x-ratelimit-reset': String(NOW_S + 45) },
      { remaining: 10, resetMs: 45_000, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit epoch seconds with a fraction',
      { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': `${NOW_S}.25` },
      { remaining: 1, resetMs: 250, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit epoch milliseconds',
      { 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String(NOW + 1500) },
      { remaining: 3, resetMs: 1500, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit epoch already past → 0',
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW_S - 10) },
      { remaining: 0, resetMs: 0, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit delta just below the epoch threshold stays a delta',
      { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '1000000000' },
      { remaining: 1, resetMs: 1e12, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit decimal seconds rounded up to whole ms',
      { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '1.2345' },
      { remaining: 1, resetMs: 1235, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit negative remaining means none left',
      { 'x-ratelimit-remaining': '-1', 'x-ratelimit-reset': '9' },
      { remaining: 0, resetMs: 9000, limit: null, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit duplicated headers: least remaining, longest reset',
      { 'x-ratelimit-remaining': '5, 3', 'x-ratelimit-reset': '10, 20', 'x-ratelimit-limit': '60, 60' },
      { remaining: 3, resetMs: 20_000, limit: 60, source: 'x-ratelimit' },
    ],
    [
      'X-RateLimit garbage limit is dropped, the rest kept',
      { 'x-ratelimit-limit': 'lots', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '4' },
      { remaining: 2, resetMs: 4000, limit: null, source: 'x-ratelimit' },
    ],
    [
      'whitespace around values',
      { 'x-ratelimit-remaining': '  2 ', 'x-ratelimit-reset': '\t4 ' },
      { remaining: 2, resetMs: 4000, limit: null, source: 'x-ratelimit' },
    ],
    // precedence and fall-through
    [
      'RateLimit wins over X-RateLimit',
      { ratelimit: '"p";r=1;t=1', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': '99' },
      { remaining: 1, resetMs: 1000, limit: null, source: 'ratelimit-structured' },
    ],
    [
      'a malformed RateLimit falls through to X-RateLimit',
      { ratelimit: 'garbage;;', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '2' },
      { remaining: 1, resetMs: 2000, limit: null, source: 'x-ratelimit' },
    ],
    [
      'a RateLimit without a reset falls through to separate fields',
      { ratelimit: '"p";r=1', 'ratelimit-remaining': '7', 'ratelimit-reset': '8' },
      { remaining: 7, resetMs: 8000, limit: null, source: 'ratelimit-fields' },
    ],
  ])('%s', (_name, headers, expected) => {
    expect(parseRateLimit(headers, NOW)).toEqual(expected);
  });

  it('clamps huge numbers to safe integers', () => {
    const huge = '9'.repeat(30);
    expect(parseRateLimit({ 'x-ratelimit-remaining': huge, 'x-ratelimit-reset': huge }, NOW)).toEqual({
      remaining: Number.MAX_SAFE_INTEGER,
      resetMs: Number.MAX_SAFE_INTEGER,
      limit: null,
      source: 'x-ratelimit',
    });
    expect(parseRateLimit({ ratelimit: `"p";r=${huge};t=${huge}` }, NOW)).toMatchObject({
      remaining: Number.MAX_SAFE_INTEGER,
      resetMs: Number.MAX_SAFE_INTEGER,
    });
  });

  it.each<[string, Headers]>([
    ['no headers', {}],
    ['remaining without reset', { 'x-ratelimit-remaining': '5', 'x-ratelimit-limit': '10' }],
    ['reset without remaining', { 'x-ratelimit-reset': '5' }],
    ['non-numeric remaining', { 'x-ratelimit-remaining': 'five', 'x-ratelimit-reset': '5' }],
    ['negative reset', { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '-5' }],
    ['exponent', { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '1e3' }],
    ['an HTTP-date reset', { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': 'Thu, 01 Jan 2026 00:00:00 GMT' }],
    ['one bad duplicate reset', { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '5, soon' }],
    ['empty values', { 'x-ratelimit-remaining': '', 'x-ratelimit-reset': '' }],
    ['structured r not an integer', { ratelimit: '"p";r=1.5;t=1' }],
    ['structured without t or policy', { ratelimit: '"p";r=1' }],
    ['structured uppercase parameter key', { ratelimit: '"p";R=1;T=1' }],
    ['structured empty member', { ratelimit: '"p";r=1;t=1,,' }],
    ['structured unterminated string', { ratelimit: '"p;r=1;t=1' }],
    ['dictionary without reset', { ratelimit: 'limit=100, remaining=50' }],
    ['dictionary with a bad reset', { ratelimit: 'remaining=50, reset=soon' }],
    ['separate headers, reset missing', { 'ratelimit-remaining': '1' }],
    ['names must already be lowercase', { 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': '1' }],
  ])('null for %s', (_name, headers) => {
    expect(parseRateLimit(headers, NOW)).toBeNull();
  });

  it('null for epoch resets when now is not a number, instead of NaN', () => {
    expect(parseRateLimit({ 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(NOW_S + 5) }, Number.NaN)).toBeNull();
  });

  it('ignores values that are not strings (e.g. arrays from a raw header map)', () => {
    const headers = { 'x-ratelimit-remaining': ['1', '2'], 'x-ratelimit-reset': 5 } as unknown as Headers;
    expect(parseRateLimit(headers, NOW)).toBeNull();
    expect(parseRateLimit(null as unknown as Headers, NOW)).toBeNull();
  });

  it('never throws on garbage', () => {
    const garbage = ['"', '\\', '"\\"', ';', ',', ';=;', '=', '"a";r', 'r=;t=', '"";r=1;t=', '(1 2);r=1', ':::', 'NaN', 'Infinity', '\u0000', '💥'];
    const names = [
      'ratelimit',
      'ratelimit-policy',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-ratelimit-limit',
    ];
    for (const value of garbage) {
      const all: Headers = {};
      for (const name of names) all[name] = value;
      expect(() => parseRateLimit(all, NOW)).not.toThrow();
      expect(parseRateLimit(all, NOW)).toBeNull();
    }
  });
});

describe('paceForBudget', () => {
  it.each<[string, { remaining: number; resetMs: number }, number | undefined, ReturnType<typeof paceForBudget>]>([
    ['nothing left → pause until reset', { remaining: 0, resetMs: 30_000 }, undefined, { pauseMs: 30_000 }],
    ['nothing left, reset already due', { remaining: 0, resetMs: 0 }, undefined, { pauseMs: 0 }],
    ['10 left over 30 s, 90% → 9 requests', { remaining: 10, resetMs: 30_000 }, undefined, { minGapMs: 3334, until: 30_000 }],
    ['100 left over 60 s, 90% → 90 requests', { remaining: 100, resetMs: 60_000 }, undefined, { minGapMs: 667, until: 60_000 }],
    ['safety 1 uses the whole budget', { remaining: 100, resetMs: 60_000 }, 1, { minGapMs: 600, until: 60_000 }],
    ['one left: floor(0.9) = 0, still at least one request', { remaining: 1, resetMs: 30_000 }, undefined, { minGapMs: 30_000, until: 30_000 }],
    ['safety 0.5 of 3 → 1 request', { remaining: 3, resetMs: 10_000 }, 0.5, { minGapMs: 10_000, until: 10_000 }],
    ['reset due now: no gap', { remaining: 5, resetMs: 0 }, undefined, { minGapMs: 0, until: 0 }],
    ['huge budget: gap rounds up to 1 ms', { remaining: 1e9, resetMs: 1000 }, undefined, { minGapMs: 1, until: 1000 }],
  ])('%s', (_name, rl, safety, expected) => {
    expect(paceForBudget(rl, safety === undefined ? {} : { safety })).toEqual(expected);
  });

  it('defaults its options', () => {
    expect(paceForBudget({ remaining: 10, resetMs: 30_000 })).toEqual({ minGapMs: 3334, until: 30_000 });
  });

  it.each<[number]>([[0], [-0.5], [1.5], [Number.NaN], [Infinity]])('rejects safety %d', (safety) => {
    expect(() => paceForBudget({ remaining: 1, resetMs: 1 }, { safety })).toThrow(RangeError);
    expect(() => paceForBudget({ remaining: 1, resetMs: 1 }, { safety })).toThrow('Expected `safety` to be a number in (0, 1]');
  });
});
