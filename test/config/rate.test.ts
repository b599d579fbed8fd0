import { describe, expect, it } from 'vitest';
import { MAX_RATE_PER_SECOND, RATE_PATTERN, WINDOW_PATTERN, parseRate, parseWindow } from '../../src/config/rate.js';
import { DURATION_PATTERN, SIZE_PATTERN, UnitError, parseDuration, parseSize } from '../../src/config/units.js';

/** Asserts `fn` throws a UnitError whose message contains every fragment. */
function expectUnitError(fn: () => unknown, ...fragments: string[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(UnitError);
  expect((caught as UnitError).code).toBe('UNIT_INVALID');
  for (const fragment of fragments) expect((caught as UnitError).message).toContain(fragment);
}

describe('parseDuration', () => {
  it.each<[string | number, number]>([
    ['500ms', 500],
    ['2s', 2000],
    ['1.5m', 90_000],
    ['2min', 120_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['0ms', 0],
    [' 30 s ', 30_000],
    ['250', 250],
    [750, 750],
    [0, 0],
    [0.5, 0.5],
  ])('%j → %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each<[unknown]>([['abc'], [''], ['-1s'], ['1e3'], ['5 sec'], ['1h30m'], ['ms'], [-1], [Number.NaN], [Infinity], [null], [true]])('rejects %j', (input) => {
    expectUnitError(() => parseDuration(input as string), 'expected a duration like "30s" or "500ms", got');
  });

  it('quotes the bad value exactly', () => {
    expect(() => parseDuration('abc')).toThrow('expected a duration like "30s" or "500ms", got "abc"');
    expect(() => parseDuration(-5)).toThrow('got -5');
  });
});

describe('parseSize', () => {
  it.each<[string | number, number]>([
    ['500KiB', 512_000],
    ['10MB', 10_000_000],
    ['10MiB', 10 * 1024 * 1024],
    ['1GB', 1_000_000_000],
    ['1GiB', 2 ** 30],
    ['10mb', 10_000_000],
    ['1.5KiB', 1536],
    ['1.1kB', 1100],
    ['100B', 100],
    ['4096', 4096],
    [4096, 4096],
    [0, 0],
  ])('%j → %d bytes', (input, bytes) => {
    expect(parseSize(input)).toBe(bytes);
  });

  it.each<[unknown, string]>([
    ['10K', 'got "10K"'],
    ['lots', 'got "lots"'],
    ['-1MB', 'got "-1MB"'],
    ['0.5B', 'not a whole number of bytes'],
    [1.5, 'not a whole number of bytes'],
    [-1, 'got -1'],
    [false, 'got false'],
  ])('rejects %j', (input, fragment) => {
    expectUnitError(() => parseSize(input as string), 'expected a size like', fragment);
  });

  it('rejects a size past 2^53 bytes as too large, echoing it as typed', () => {
    expectUnitError(() => parseSize('99999999TiB'), 'too large (max 9007199254740991 bytes)', '"99999999TiB"');
  });
});

describe('parseRate', () => {
  it.each<[string, number]>([
    ['2/s', 500],
    ['30/min', 2000],
    ['30/m', 2000],
    ['1/h', 3_600_000],
    ['0.5/s', 2000],
    ['5/10s', 2000],
    ['3/2s', 2000 / 3],
    ['100/second', 10],
    ['500ms', 500],
    ['2s', 2000],
    ['unlimited', 0],
    [`${MAX_RATE_PER_SECOND}/s`, 0.1],
  ])('%s → gap of %d ms', (input, intervalMs) => {
    const rate = parseRate(input);
    expect(rate.intervalMs).toBeCloseTo(intervalMs, 9);
    expect(rate.label).toBe(input);
  });

  it('labels the rate as written, trimmed', () => {
    expect(parseRate('  2 / s ')).toEqual({ intervalMs: 500, label: '2 / s' });
  });

  it.each<[unknown, string]>([
    ['fast', 'got "fast"'],
    ['', 'got ""'],
    ['0/s', 'must be more than zero'],
    ['2/0s', 'must be more than zero'],
    ['0ms', 'must be more than zero'],
    ['-1/s', 'got "-1/s"'],
    ['NaN/s', 'got "NaN/s"'],
    ['Infinity/s', 'got "Infinity/s"'],
    ['1e3/s', 'got "1e3/s"'],
    ['10001/s', `faster than ${MAX_RATE_PER_SECOND}/s`],
    ['20/ms', `faster than ${MAX_RATE_PER_SECOND}/s`],
    ['500', 'got "500"'],
    ['2/fortnight', 'got "2/fortnight"'],
    [2, 'got 2'],
  ])('rejects %j', (input, fragment) => {
    expectUnitError(() => parseRate(input as string), 'expected a rate like "2/s", "30/min" or "500ms"', fragment);
  });
});

describe('parseWindow', () => {
  it.each<[string, number, number]>([
    ['100/min', 100, 60_000],
    ['2000/h', 2000, 3_600_000],
    ['10/s', 10, 1000],
    ['5/10s', 5, 10_000],
    ['1/day', 1, 86_400_000],
  ])('%s → %d per %d ms', (input, count, windowMs) => {
    expect(parseWindow(input)).toEqual({ count, windowMs, label: input });
  });

  it.each<[unknown, string]>([
    ['1.5/min', 'whole number of requests'],
    ['0/min', 'whole number of requests'],
    ['5/0s', 'longer than zero'],
    ['100', 'got "100"'],
    ['500ms', 'got "500ms"'],
    ['unlimited', 'got "unlimited"'],
    ['-5/min', 'got "-5/min"'],
    [100, 'got 100'],
  ])('rejects %j', (input, fragment) => {
    expectUnitError(() => parseWindow(input as string), 'expected a window like "100/min" or "2000/h"', fragment);
  });
});

// The JSON Schema patterns are what an editor checks; they must accept what
// the parsers accept, or the editor would flag valid configs.
describe('exported patterns agree with the parsers', () => {
  const cases: Array<[string, string, (v: string) => unknown, string[]]> = [
    ['duration', DURATION_PATTERN, parseDuration, ['500ms', '1.5m', '2min', '250', ' 30 s ', 'abc', '-1s', '1e3']],
    ['size', SIZE_PATTERN, parseSize, ['10MiB', '10mb', '1.5KiB', '4096', '100B', '10K', 'lots']],
    ['rate', RATE_PATTERN, parseRate, ['2/s', '5/10s', '500ms', 'unlimited', '30/minute', 'fast', '500', '2/fortnight']],
  ];
  it.each(cases)('%s', (_name, pattern, parse, samples) => {
    const re = new RegExp(pattern);
    for (const sample of samples) {
      let parses = true;
      try {
        parse(sample);
      } catch {
        parses = false;
      }
      // The pattern may be looser than the parser (ranges are checked in code), never stricter.
      if (parses) expect(re.test(sample), `${sample} parses but fails the pattern`).toBe(true);
    }
    expect(re.test(samples.at(-1)!)).toBe(false);
  });

  it('window', () => {
    const re = new RegExp(WINDOW_PATTERN);
    for (const ok of ['100/min', '5/10s', '1/day']) expect(re.test(ok)).toBe(true);
    for (const bad of ['1.5/min', '100', 'unlimited']) expect(re.test(bad)).toBe(false);
  });
});
