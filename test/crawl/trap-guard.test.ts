/**
 * The trap defences' pure parts (src/crawl/admission.ts), as tables.
 */
import { describe, expect, it } from 'vitest';
import { CountTable, queryParamCount, queryPathKey, repeatedSegment, withoutQuery } from '../../src/crawl/admission.js';
import { Admission } from '../../src/crawl/admission.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { ADAPTIVE, initialFeedback, isQuiet, onThrottle } from '../../src/politeness/adaptive-rate.js';

describe('repeatedSegment', () => {
  it.each<[string, number, { segment: string; count: number } | null]>([
    ['http://a.test/', 3, null],
    ['http://a.test/a/a/a', 3, null],
    ['http://a.test/a/a/a/a', 3, { segment: 'a', count: 4 }],
    ['http://a.test/a/b/a/b/a/b/', 3, null],
    ['http://a.test/a/b/a/b/a/b/a/b/', 3, { segment: 'a', count: 4 }],
    ['http://a.test/x/b/a/b/a/b/a/b/', 3, { segment: 'b', count: 4 }],
    ['http://a.test/2011/11/11/11', 3, null],
    ['http://a.test/a/a?x=/a/a/a/a', 3, null], // the query is not the path
    ['http://a.test/a/a#/a/a/a', 3, null],
    ['http://a.test/a//b//c//d', 2, { segment: '', count: 3 }], // empty segments count too
    ['http://a.test/x/x/', 1, { segment: 'x', count: 2 }],
    ['http://a.test', 1, null],
  ])('%s (max %i)', (url, max, expected) => {
    expect(repeatedSegment(url, max)).toEqual(expected);
  });

  it('stays fast on a long hostile path of distinct segments', () => {
    const url = `http://a.test/${Array.from({ length: 300_000 }, (_, i) => i.toString(36)).join('/')}/0`;
    const t0 = performance.now();
    expect(repeatedSegment(url, 1)).toEqual({ segment: '0', count: 2 });
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});

describe('query parameters', () => {
  it.each<[string, number]>([
    ['http://a.test/', 0],
    ['http://a.test/?', 0],
    ['http://a.test/?a', 1],
    ['http://a.test/?a=1&b=2', 2],
    ['http://a.test/?a=1&&b=2&', 2],
    ['http://a.test/p?a=1&b=2#c&d', 2],
  ])('%s has %i', (url, n) => {
    expect(queryParamCount(url)).toBe(n);
  });

  it('keys a URL by scheme, host and path when it has a query', () => {
    expect(queryPathKey('http://a.test/cal')).toBe(0);
    expect(queryPathKey('http://a.test/cal?d=1')).toBe(queryPathKey('http://a.test/cal?d=2'));
    expect(queryPathKey('http://a.test/cal?d=1')).not.toBe(queryPathKey('https://a.test/cal?d=1'));
    expect(withoutQuery('http://a.test/cal?d=1')).toBe('http://a.test/cal');
  });

  it('counts per key in a table that grows, never below zero', () => {
    const t = new CountTable();
    for (let k = 1; k <= 5_000; k++) t.add(k * 7919, k % 3);
    for (let k = 1; k <= 5_000; k++) expect(t.get(k * 7919)).toBe(k % 3);
    expect(t.get(123)).toBe(0);
    expect(t.add(7919, -5)).toBe(0);
  });
});

describe('Admission', () => {
  const admission = (config: Record<string, unknown>, queued = () => 0) => new Admission(buildSettings(validateConfig(config), {}), queued);

  it('judges the URL itself: depth, then repeated path, then query parameters', () => {
    const a = admission({ maxDepth: 2, traps: { maxPathRepeats: 1, maxQueryParams: 1 } });
    expect(a.check('http://a.test/x/x?a&b', 3)).toEqual({ reason: 'max-depth' });
    expect(a.check('http://a.test/x/x?a&b', 2)?.reason).toBe('repeated-path');
    expect(a.check('http://a.test/x?a&b', 2)).toEqual({ reason: 'query-explosion', detail: '2 query parameters, over traps.maxQueryParams (1)' });
    expect(a.check('http://a.test/x?a', 2)).toBeNull();
  });

  it('reserves room, gives it back for a repeat, and never refuses a seed', () => {
    let queued = 0;
    const a = admission({ maxQueued: 10, defaults: { maxPagesPerHost: 2 }, traps: { maxQueryVariants: 1 } }, () => queued);
    expect(a.reserve('http://a.test/1', 'a.test', false)).toBeNull();
    expect(a.reserve('http://a.test/2', 'a.test', false)).toBeNull();
    expect(a.reserve('http://a.test/3', 'a.test', false)?.reason).toBe('max-pages-per-host');
    a.release('http://a.test/2', 'a.test');
    expect(a.reserve('http://a.test/q?x=1', 'a.test', false)).toBeNull();
    expect(a.reserve('http://a.test/q?x=2', 'a.test', true)).toBeNull(); // a seed: counted, not refused
    expect(a.reserve('http://b.test/q?x=1', 'b.test', false)).toBeNull(); // another host: another path
    expect(a.reserve('http://b.test/q?x=2', 'b.test', false)).toEqual({
      reason: 'query-explosion',
      detail: '1 query strings of http://b.test/q accepted already (traps.maxQueryVariants)',
    });
    queued = 10;
    expect(a.reserve('http://c.test/', 'c.test', false)).toEqual({ reason: 'queue-full', detail: '10 URLs queued (maxQueued)' });
  });
});

describe('refusals that come whatever the pace (a challenge wall)', () => {
  it('takes a request sent at least 4 gaps and 1 s after the previous one as sent after a quiet', () => {
    expect(ADAPTIVE.quietGaps).toBe(4);
    expect(isQuiet(999, 10)).toBe(false);
    expect(isQuiet(1000, 10)).toBe(true);
    expect(isQuiet(3999, 1000)).toBe(false);
    expect(isQuiet(4000, 1000)).toBe(true);
    expect(isQuiet(Infinity, 1000)).toBe(true);
  });

  it('lowers the rate only when neither this refusal nor the previous one came after a quiet', () => {
    let s = onThrottle(initialFeedback(), 0, -1, true).state; // paced: 1 → 0.5
    expect(s.factor).toBe(0.5);
    s = onThrottle(s, 2000, 1100, true, true).state; // after a quiet: kept
    expect([s.factor, s.quietRefusal, s.events]).toEqual([0.5, true, 2]);
    s = onThrottle(s, 3000, 2100, true).state; // paced, but right after a quiet refusal: kept
    expect([s.factor, s.quietRefusal]).toEqual([0.5, false]);
    s = onThrottle(s, 4000, 3100, true).state; // two paced refusals in a row: lowered
    expect(s.factor).toBe(0.25);
    // A record saved before the field existed reads as "not quiet".
    const { quietRefusal: _, ...old } = s;
    expect(onThrottle(old, 5000, 4100, true).state.factor).toBe(0.125);
  });
});
