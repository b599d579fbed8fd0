/**
 * Quiet hours: the daily window of wall-clock time in which a host may be
 * crawled ("hours": "22:00-06:00" in "timezone": "Europe/Berlin").
 *
 * Contract:
 * - `parseCrawlHours(hours, timezone)` answers a CrawlHours, null for "always"
 *   (absent, or "00:00-24:00"), or throws HoursError with one line saying what
 *   is wrong. It throws nothing else, whatever it is given.
 * - The window is judged on the local clock of the zone: an instant is open
 *   when the zone's clock reads a time of day in [start, end) (a window whose
 *   end is earlier than its start crosses midnight). DST changes follow from
 *   that: on a spring-forward day a window starting inside the skipped hour
 *   opens when the clock jumps past it; on a fall-back day the repeated hour
 *   is judged twice, as the clock reads it each time.
 * - `isOpen(wallMs)`, `nextOpen(wallMs)` (the first open instant at or after
 *   it: `wallMs` itself when open) and `closesAt(wallMs)` (the first closed
 *   instant at or after it) take and answer epoch milliseconds. Pure but for
 *   a cache of the last answer (a host asks at every visit).
 */

/** A value of `hours` or `timezone` that cannot be used, with the reason. */
export class HoursError extends Error {}

const MINUTE = 60_000;
const DAY = 86_400_000;
const HOURS_PATTERN = /^([01]\d|2[0-4]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)$/;
export const HOURS_PATTERN_SOURCE = HOURS_PATTERN.source;

/** A window's boundary is found to this precision where a clock change sits between two guesses. */
const SEARCH_PRECISION_MS = 1;

export interface CrawlHours {
  /** As written ("22:00-06:00"). */
  readonly label: string;
  /** The IANA zone the window is read in. */
  readonly timezone: string;
  isOpen(wallMs: number): boolean;
  nextOpen(wallMs: number): number;
  closesAt(wallMs: number): number;
  /** "06:00": the zone's clock at `wallMs`, for messages. */
  clockAt(wallMs: number): string;
  /** As written: what a policy shows of it in JSON. */
  toJSON(): { hours: string; timezone: string };
}

/** Checks an IANA time zone name with Intl; answers its canonical spelling. */
export function checkTimezone(timezone: unknown): string {
  if (typeof timezone !== 'string' || timezone === '') throw new HoursError(`expected an IANA time zone name like "Europe/Berlin", got ${show(timezone)}`);
  try {
    return new Intl.DateTimeFormat('en', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw new HoursError(`unknown time zone ${show(timezone)} (expected an IANA name like "Europe/Berlin" or "UTC")`);
  }
}

/** Parses "HH:MM-HH:MM" into minutes of the day; null for the whole day. */
export function parseHoursLabel(hours: unknown): { start: number; end: number } | null {
  const m = typeof hours === 'string' ? HOURS_PATTERN.exec(hours.trim()) : null;
  if (!m) throw new HoursError(`expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got ${show(hours)}`);
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (start > 1440 || end > 1440) throw new HoursError(`a time of day is at most 24:00, got ${show(hours)}`);
  if (start === 1440) throw new HoursError(`a window cannot start at 24:00 (write 00:00), got ${show(hours)}`);
  if (start === end) throw new HoursError(`the window is empty (it starts where it ends), got ${show(hours)}; leave "hours" out to crawl at any time`);
  if (start === 0 && end === 1440) return null;
  return { start, end: end % 1440 };
}

export function parseCrawlHours(hours: unknown, timezone: unknown = 'UTC'): CrawlHours | null {
  const window = parseHoursLabel(hours);
  const zone = checkTimezone(timezone);
  return window === null ? null : new DailyWindow(String(hours).trim(), zone, window.start * MINUTE, window.end * MINUTE);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return value === undefined ? 'nothing' : 'an object';
}

const mod = (a: number, n: number) => ((a % n) + n) % n;

class DailyWindow implements CrawlHours {
  private readonly format: Intl.DateTimeFormat;
  /** The last span asked about: open or closed throughout [from, until). */
  private cached: { from: number; until: number; open: boolean } | null = null;

  constructor(
    readonly label: string,
    readonly timezone: string,
    /** Start and end of the window, ms after local midnight. */
    private readonly startMs: number,
    private readonly endMs: number,
  ) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  toJSON(): { hours: string; timezone: string } {
    return { hours: this.label, timezone: this.timezone };
  }

  /** The zone's UTC offset at `wallMs`, ms (local = wall + offset). */
  private offset(wallMs: number): number {
    const floored = Math.floor(wallMs / 1000) * 1000;
    const p: Record<string, number> = {};
    for (const part of this.format.formatToParts(floored)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - floored;
  }

  /** Ms since local midnight at `wallMs`. */
  private timeOfDay(wallMs: number): number {
    return mod(wallMs + this.offset(wallMs), DAY);
  }

  private inWindow(tod: number): boolean {
    return this.startMs < this.endMs ? tod >= this.startMs && tod < this.endMs : tod >= this.startMs || tod < this.endMs;
  }

  isOpen(wallMs: number): boolean {
    const c = this.cached;
    if (c !== null && wallMs >= c.from && wallMs < c.until) return c.open;
    return this.inWindow(this.timeOfDay(wallMs));
  }

  nextOpen(wallMs: number): number {
    return this.next(wallMs, true);
  }

  closesAt(wallMs: number): number {
    return this.next(wallMs, false);
  }

  clockAt(wallMs: number): string {
    const tod = this.timeOfDay(wallMs);
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${pad(Math.floor(tod / 3_600_000))}:${pad(Math.floor((tod % 3_600_000) / MINUTE))}`;
  }

  /** The first instant at or after `wallMs` whose openness is `open`. */
  private next(wallMs: number, open: boolean): number {
    const c = this.cached;
    if (c !== null && wallMs >= c.from && wallMs < c.until) return c.open === open ? wallMs : c.until;
    const at = this.search(wallMs, open);
    // [wallMs, at) is all of the other kind; at itself is this kind.
    if (at > wallMs) this.cached = { from: wallMs, until: at, open: !open };
    return at;
  }

  private search(wallMs: number, open: boolean): number {
    const target = open ? this.startMs : this.endMs;
    let from = wallMs;
    // Each round either answers or moves past one clock change; zones change at most a few times a year.
    for (let round = 0; round < 8; round++) {
      const offset = this.offset(from);
      const tod = mod(from + offset, DAY);
      if (this.inWindow(tod) === open) return from;
      // With the offset unchanged, the clock reads `target` this much later.
      const guess = from + (mod(target - tod, DAY) || DAY);
      if (this.offset(guess) === offset) return guess;
      // A clock change lies in (from, guess]: find it, and judge the clock from there.
      let lo = from;
      let hi = guess;
      while (hi - lo > SEARCH_PRECISION_MS) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.offset(mid) === offset) lo = mid;
        else hi = mid;
      }
      from = hi;
    }
    // Not reached for any real zone; a host asked again a day later is safe either way.
    return wallMs + DAY;
  }
}
