import { describe, expect, it } from 'vitest';
import { backoffDelay, type BackoffOptions } from '../../src/politeness/backoff.js';

const fixed = (value: number) => () => value;
const opts = (random: number, baseMs = 100, capMs = 1000): BackoffOptions => ({ baseMs, capMs, random: fixed(random) });

describe('backoffDelay', () => {
  it.each<[number, number, number]>([
    // attempt, random, delay — base 100 ms, cap 1000 ms
    [1, 0, 50],
    [1, 0.5, 75],
    [1, 0.99, 99.5],
    [2, 0, 100],
    [2, 0.5, 150],
    [3, 0, 200],
    [3, 0.75, 350],
    [4, 0.5, 600],
    [5, 0, 500], // 1600 capped to 1000
    [5, 0.5, 750],
    [50, 0, 500],
    [5000, 0.999, 999.5], // 2^4999 overflows to Infinity; still the cap
  ])('attempt %d, random %d → %d ms', (attempt, random, delay) => {
    expect(backoffDelay(attempt, opts(random))).toBe(delay);
  });

  it('a base above the cap is capped from the first attempt', () => {
    expect(backoffDelay(1, opts(0, 5000, 1000))).toBe(500);
    expect(backoffDelay(1, opts(0.5, 5000, 1000))).toBe(750);
  });

  it('a zero base is always zero, even when 2^attempt overflows (0 · Infinity = NaN)', () => {
    expect(backoffDelay(1, opts(0.5, 0, 1000))).toBe(0);
    expect(backoffDelay(2000, opts(0.5, 0, 1000))).toBe(0);
  });

  it('a zero cap is always zero', () => {
    expect(backoffDelay(3, opts(0.5, 100, 0))).toBe(0);
  });

  it('stays within [step / 2, min(step, cap)] for every attempt and random draw', () => {
    for (let attempt = 1; attempt <= 64; attempt++) {
      const step = Math.min(30_000, 250 * 2 ** (attempt - 1));
      for (const r of [0, 1e-9, 0.25, 0.5, 0.999_999]) {
        const delay = backoffDelay(attempt, opts(r, 250, 30_000));
        expect(delay).toBeGreaterThanOrEqual(step / 2);
        expect(delay).toBeLessThanOrEqual(step);
        expect(delay).toBeLessThanOrEqual(30_000);
      }
    }
  });

  it('grows monotonically with the attempt for a fixed draw until it reaches the cap', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((a) => backoffDelay(a, opts(0.3)));
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]);
    expect(delays.at(-1)).toBe(650);
  });

  it('draws exactly one random number per call', () => {
    let calls = 0;
    backoffDelay(3, { baseMs: 100, capMs: 1000, random: () => (calls++, 0.5) });
    expect(calls).toBe(1);
  });

  it.each<[string, number, number]>([
    ['above 1', 7, 100],
    ['negative', -1, 50],
    ['NaN', Number.NaN, 50],
  ])('clamps a random source returning a value %s', (_name, r, delay) => {
    expect(backoffDelay(1, opts(r))).toBe(delay);
  });

  it.each<[number]>([[0], [-1], [1.5], [Number.NaN], [Infinity]])('rejects attempt %d', (attempt) => {
    expect(() => backoffDelay(attempt, opts(0))).toThrow('Expected `attempt` to be an integer from 1 and up');
  });

  it.each<[keyof BackoffOptions, number]>([
    ['baseMs', -1],
    ['baseMs', Number.NaN],
    ['baseMs', Infinity],
    ['capMs', -1],
    ['capMs', Infinity],
  ])('rejects %s = %d', (key, value) => {
    const bad = { ...opts(0), [key]: value };
    expect(() => backoffDelay(1, bad)).toThrow(RangeError);
    expect(() => backoffDelay(1, bad)).toThrow(`Expected \`${key}\` to be a finite number from 0 and up`);
  });
});
