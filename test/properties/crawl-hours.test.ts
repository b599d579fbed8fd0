/**
 * Properties of quiet hours (src/politeness/crawl-hours.ts): any input is
 * a window, "always", or one HoursError, never another throw; and for any
 * window, zone and instant, nextOpen and closesAt agree with isOpen: the
 * answer is on the asked side, and everything between is on the other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HoursError, parseCrawlHours } from '../../src/politeness/crawl-hours.js';
import { anyString } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const pad = (n: number) => String(n).padStart(2, '0');
const clock = fc.record({ h: fc.integer({ min: 0, max: 24 }), m: fc.integer({ min: 0, max: 59 }) }).map(({ h, m }) => `${pad(h)}:${pad(m)}`);
const windowText = fc.tuple(clock, clock).map(([a, b]) => `${a}-${b}`);
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Santiago'];
/** 2000 to 2040: the years a crawl runs in, DST changes of every kind included. */
const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) });

describe('crawl hours', () => {
  it(
    'any hours and zone: a window, always, or one HoursError',
    () => {
      fc.assert(
        fc.property(fc.oneof(windowText, anyString(), fc.anything()), fc.oneof(fc.constantFrom(...ZONES), anyString(), fc.anything()), (hours, zone) => {
          try {
            parseCrawlHours(hours, zone);
          } catch (error) {
            expect(error).toBeInstanceOf(HoursError);
            expect((error as Error).message).not.toContain('\n');
          }
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'nextOpen and closesAt agree with isOpen',
    () => {
      fc.assert(
        fc.property(windowText, fc.constantFrom(...ZONES), instant, (text, zone, t) => {
          let hours;
          try {
            hours = parseCrawlHours(text, zone);
          } catch {
            return; // refused windows are the other property's
          }
          if (hours === null) return;
          // Judged by a second, fresh copy: `hours` caches what it answered.
          const judge = parseCrawlHours(text, zone)!;
          const open = hours.nextOpen(t);
          expect(open).toBeGreaterThanOrEqual(t);
          expect(open - t).toBeLessThanOrEqual(26 * 3_600_000);
          expect(judge.isOpen(open)).toBe(true);
          expect(open === t).toBe(judge.isOpen(t));
          // Nothing before the opening is open: probe instants in between.
          for (let i = 0; i < 16 && open > t; i++) expect(judge.isOpen(t + Math.floor(((open - t) * i) / 16))).toBe(false);
          if (open > t) expect(judge.isOpen(open - 1)).toBe(false);
          const close = hours.closesAt(open);
          expect(close).toBeGreaterThan(open);
          expect(judge.isOpen(close)).toBe(false);
          expect(judge.isOpen(close - 1)).toBe(true);
        }),
        fuzzParams(200),
      );
    },
    FUZZ_TIMEOUT,
  );
});
