/**
 * Request rates ("2/s", "30/min", "500ms", "unlimited") and sliding-window
 * budgets ("100/min", "2000/h").
 *
 * A rate is enforced as a minimum gap between request starts, so it is stored
 * as that gap (`intervalMs`). "2/s" and "500ms" are the same policy written two
 * ways; the label keeps the user's spelling for logs and records.
 */
import type { WindowLimit } from './settings-types.js';
import { DECIMAL, UnitError, parseDuration, showValue } from './units.js';

/** A parsed rate: the minimum gap between request starts. */
export interface Rate {
  /** Minimum milliseconds between request starts; 0 = unlimited. */
  intervalMs: number;
  /** As the user wrote it (trimmed), e.g. "2/s". */
  label: string;
}

/**
 * The fastest rate accepted: 10 000 requests per second to one host. Anything
 * faster is almost certainly a typo ("2000/ms"); "unlimited" says it on purpose.
 */
export const MAX_RATE_PER_SECOND = 10_000;

/** Length in ms of each "per" unit; "m" is a minute, as in durations. */
const PER_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
};

const PER_UNIT = '(?:ms|second|sec|s|minute|min|m|hour|hr|h|day|d)';
const DELAY_UNIT = '(?:ms|s|min|m|h|d)';

/** "N/unit" or "N/<k><unit>", e.g. "2/s", "5/10s". */
const PER_RE = new RegExp(String.raw`^\s*(${DECIMAL})\s*/\s*(${DECIMAL})?\s*(${PER_UNIT})\s*$`);
/** A bare delay between starts; it needs a unit, since "500" could mean 500/s just as well. */
const DELAY_RE = new RegExp(String.raw`^\s*${DECIMAL}\s*${DELAY_UNIT}\s*$`);

/** Every spelling `parseRate` accepts, as a JSON Schema `pattern`. */
export const RATE_PATTERN = String.raw`^\s*(?:unlimited|${DECIMAL}\s*/\s*(?:${DECIMAL})?\s*${PER_UNIT}|${DECIMAL}\s*${DELAY_UNIT})\s*$`;

/** Every spelling `parseWindow` accepts, as a JSON Schema `pattern`. */
export const WINDOW_PATTERN = String.raw`^\s*\d+\s*/\s*(?:${DECIMAL})?\s*${PER_UNIT}\s*$`;

const RATE_HINT = 'expected a rate like "2/s", "30/min" or "500ms"';
const WINDOW_HINT = 'expected a window like "100/min" or "2000/h"';

/** Splits "N/[k]unit" into its count and window length; undefined if it is not that shape. */
function splitPer(text: string): { count: number; windowMs: number } | undefined {
  const m = PER_RE.exec(text);
  if (!m) return undefined;
  const multiplier = m[2] === undefined ? 1 : Number(m[2]);
  return { count: Number(m[1]), windowMs: multiplier * PER_UNITS[m[3]] };
}

/**
 * Parses a rate: "2/s", "30/min", "1/h", "0.5/s", "5/10s", a minimum delay
 * between starts ("500ms", "2s"), or "unlimited" (no gap). Zero rates and rates
 * faster than {@link MAX_RATE_PER_SECOND} are rejected.
 */
export function parseRate(value: string): Rate {
  const fail = (why?: string): never => {
    throw new UnitError(`${RATE_HINT}, got ${showValue(value)}${why ? ` (${why})` : ''}`, value);
  };
  if (typeof value !== 'string') return fail();
  const label = value.trim();
  if (label === 'unlimited') return { intervalMs: 0, label };

  let intervalMs: number;
  const per = splitPer(label);
  if (per) {
    if (per.count === 0 || per.windowMs === 0) return fail('must be more than zero; use "unlimited" for no limit');
    intervalMs = per.windowMs / per.count;
  } else if (DELAY_RE.test(label)) {
    intervalMs = parseDuration(label);
    if (intervalMs === 0) return fail('must be more than zero; use "unlimited" for no limit');
  } else {
    return fail();
  }
  if (!Number.isFinite(intervalMs)) return fail();
  if (intervalMs < 1000 / MAX_RATE_PER_SECOND) {
    return fail(`faster than ${MAX_RATE_PER_SECOND}/s; use "unlimited" for no limit`);
  }
  return { intervalMs, label };
}

/**
 * Parses a sliding-window budget: "100/min", "2000/h", "10/s", "5/10s". The
 * count is a whole number of requests (at least 1) and the window is longer
 * than zero.
 */
export function parseWindow(value: string): WindowLimit {
  const fail = (why?: string): never => {
    throw new UnitError(`${WINDOW_HINT}, got ${showValue(value)}${why ? ` (${why})` : ''}`, value);
  };
  if (typeof value !== 'string') return fail();
  const label = value.trim();
  const per = splitPer(label);
  if (!per) return fail();
  if (!Number.isSafeInteger(per.count) || per.count < 1) return fail('the count must be a whole number of requests, at least 1');
  if (!(per.windowMs > 0) || !Number.isFinite(per.windowMs)) return fail('the window must be longer than zero');
  return { count: per.count, windowMs: per.windowMs, label };
}
