/**
 * Quiet hours (src/politeness/crawl-hours.ts): parsing, the window on the
 * zone's clock, and Europe/Berlin's two clock changes of 2025 (spring
 * forward 30 March 01:00 UTC, 02:00 → 03:00; fall back 26 October 01:00
 * UTC, 03:00 → 02:00).
 */
import { describe, expect, it } from 'vitest';
import { HoursError, checkTimezone, parseCrawlHours, parseHoursLabel } from '../../src/politeness/crawl-hours.js';

const utc = (text: string) => Date.parse(text);
const iso = (ms: number) => new Date(ms).toISOString();
const berlin = (hours: string) => parseCrawlHours(hours, 'Europe/Berlin')!;

describe('parseHoursLabel', () => {
  it.each([
    ['22:00-06:00', { start: 1320, end: 360 }],
    ['09:30-17:00', { start: 570, end: 1020 }],
    ['00:00-24:00', null],
    ['18:00-24:00', { start: 1080, end: 0 }],
    [' 01:00-02:00 ', { start: 60, end: 120 }],
  ])('%j', (text, want) => {
    expect(parseHoursLabel(text)).toEqual(want);
  });

  it.each([
    ['22-06', 'expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got "22-06"'],
    ['25:00-06:00', 'expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got "25:00-06:00"'],
    ['24:30-06:00', 'a time of day is at most 24:00, got "24:30-06:00"'],
    ['24:00-06:00', 'a window cannot start at 24:00 (write 00:00), got "24:00-06:00"'],
    ['10:00-10:00', 'the window is empty (it starts where it ends), got "10:00-10:00"; leave "hours" out to crawl at any time'],
    [6, 'expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got 6'],
  ])('refuses %j in one line', (value, message) => {
    expect(() => parseHoursLabel(value)).toThrow(new HoursError(message));
  });
});

describe('checkTimezone', () => {
  it('takes IANA names and answers their canonical spelling', () => {
    expect(checkTimezone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(checkTimezone('utc')).toBe('UTC');
  });

  it('refuses a name Intl does not know', () => {
    expect(() => checkTimezone('Europe/Atlantis')).toThrow(
      new HoursError('unknown time zone "Europe/Atlantis" (expected an IANA name like "Europe/Berlin" or "UTC")'),
    );
  });
});

describe('a window on the zone clock', () => {
  it('"00:00-24:00" is no window at all', () => {
    expect(parseCrawlHours('00:00-24:00', 'Europe/Berlin')).toBeNull();
  });

  it('a window crossing midnight opens in the evening and closes the next morning', () => {
    const h = berlin('22:00-06:00');
    // Winter: Berlin is UTC+1.
    const noon = utc('2025-01-15T12:00:00Z');
    expect(h.isOpen(noon)).toBe(false);
    expect(iso(h.nextOpen(noon))).toBe('2025-01-15T21:00:00.000Z');
    expect(iso(h.closesAt(h.nextOpen(noon)))).toBe('2025-01-16T05:00:00.000Z');
    expect(h.isOpen(utc('2025-01-15T20:59:59.999Z'))).toBe(false);
    expect(h.isOpen(utc('2025-01-15T21:00:00Z'))).toBe(true);
    expect(h.isOpen(utc('2025-01-16T04:59:59.999Z'))).toBe(true);
    expect(h.isOpen(utc('2025-01-16T05:00:00Z'))).toBe(false);
    // An open instant is its own next opening; a closed one its own closing.
    expect(h.nextOpen(utc('2025-01-16T03:00:00Z'))).toBe(utc('2025-01-16T03:00:00Z'));
    expect(h.closesAt(noon)).toBe(noon);
    expect(h.clockAt(h.nextOpen(noon))).toBe('22:00');
  });

  it('spring forward: the short night is an hour shorter, and a window starting in the skipped hour opens at the jump', () => {
    const night = berlin('22:00-06:00');
    const opens = night.nextOpen(utc('2025-03-29T12:00:00Z'));
    expect(iso(opens)).toBe('2025-03-29T21:00:00.000Z'); // 22:00 CET
    expect(iso(night.closesAt(opens))).toBe('2025-03-30T04:00:00.000Z'); // 06:00 CEST: 7 hours
    expect(iso(night.nextOpen(utc('2025-03-30T12:00:00Z')))).toBe('2025-03-30T20:00:00.000Z'); // 22:00 CEST

    const skipped = berlin('02:30-05:00');
    const jump = skipped.nextOpen(utc('2025-03-29T12:00:00Z'));
    expect(iso(jump)).toBe('2025-03-30T01:00:00.000Z'); // the clock jumps from 02:00 to 03:00, inside the window
    expect(skipped.clockAt(jump)).toBe('03:00');
    expect(skipped.isOpen(jump - 1)).toBe(false);
    expect(iso(skipped.closesAt(jump))).toBe('2025-03-30T03:00:00.000Z');
  });

  it('fall back: the long night is an hour longer, and the repeated hour is judged as the clock reads it each time', () => {
    const night = berlin('22:00-06:00');
    const opens = night.nextOpen(utc('2025-10-25T12:00:00Z'));
    expect(iso(opens)).toBe('2025-10-25T20:00:00.000Z'); // 22:00 CEST
    expect(iso(night.closesAt(opens))).toBe('2025-10-26T05:00:00.000Z'); // 06:00 CET: 9 hours

    const early = berlin('01:00-02:30');
    const first = early.nextOpen(utc('2025-10-25T12:00:00Z'));
    expect(iso(first)).toBe('2025-10-25T23:00:00.000Z'); // 01:00 CEST
    expect(iso(early.closesAt(first))).toBe('2025-10-26T00:30:00.000Z'); // 02:30 CEST
    const again = early.nextOpen(early.closesAt(first));
    expect(iso(again)).toBe('2025-10-26T01:00:00.000Z'); // back to 02:00, now CET: inside the window again
    expect(iso(early.closesAt(again))).toBe('2025-10-26T01:30:00.000Z'); // 02:30 CET
  });

  it('UTC by default', () => {
    const h = parseCrawlHours('08:00-09:00')!;
    expect(h.timezone).toBe('UTC');
    expect(iso(h.nextOpen(utc('2025-06-01T10:00:00Z')))).toBe('2025-06-02T08:00:00.000Z');
  });
});
