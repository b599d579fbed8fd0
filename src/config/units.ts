/**
 * Human-written durations and sizes ("30s", "1.5m", "10MiB") → milliseconds and
 * bytes. Config files and flags both go through here, so a value means the same
 * thing wherever it is written and a bad one is reported the same way.
 *
 * The accepted spellings are also exported as regular-expression sources: the
 * config schema puts them into the generated JSON Schema as `pattern`s, so an
 * editor flags a typo before the crawler ever runs.
 */

/** A value that is not a valid duration, size, rate or window. */
export class UnitError extends Error {
  readonly code = 'UNIT_INVALID';
  /** The value as given, for callers that want to re-word the message. */
  readonly value: unknown;

  constructor(message: string, value: unknown) {
    super(message);
    this.name = 'UnitError';
    this.value = value;
  }
}

/** Shows a user's value the way they wrote it: strings quoted, everything else as JSON. */
export function showValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return JSON.stringify(value) ?? typeof value; // undefined for a function or a symbol
}

/** A non-negative decimal: "5", "0.5", "1.25". No exponents, no signs. */
export const DECIMAL = String.raw`\d+(?:\.\d+)?`;

/** Duration units and their length in ms. "m" is minutes (a duration is never metres or months). */
const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_UNIT = '(?:ms|s|min|m|h|d)';

/** A duration string: a decimal with an optional unit (no unit = milliseconds). */
export const DURATION_PATTERN = String.raw`^\s*${DECIMAL}\s*${DURATION_UNIT}?\s*$`;

const DURATION_RE = new RegExp(String.raw`^\s*(${DECIMAL})\s*(${DURATION_UNIT})?\s*$`);

const DURATION_HINT = 'expected a duration like "30s" or "500ms"';

/**
 * Parses a duration into milliseconds: "500ms", "2s", "1.5m", "1h", "1d", or a
 * bare number / numeric string meaning milliseconds. Zero is allowed (callers
 * that need a positive value check that themselves); fractions of a
 * millisecond are kept, since rates divide into them.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new UnitError(`${DURATION_HINT}, got ${showValue(value)}`, value);
    return value;
  }
  const m = typeof value === 'string' ? DURATION_RE.exec(value) : null;
  if (!m) throw new UnitError(`${DURATION_HINT}, got ${showValue(value)}`, value);
  const ms = Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms'];
  if (!Number.isFinite(ms)) throw new UnitError(`too large, got ${showValue(value)}`, value);
  return ms;
}

/**
 * A flag's bare number as seconds: "5" → "5s" (`--timeout 5`, as wget and
 * curl read it); anything else is left for parseDuration to judge.
 */
export function secondsIfBare(value: unknown): unknown {
  return typeof value === 'string' && new RegExp(String.raw`^\s*${DECIMAL}\s*$`).test(value) ? `${value.trim()}s` : value;
}

/**
 * Byte multipliers. Decimal prefixes are powers of 1000 (as disks and network
 * speeds are labelled), binary ones ("KiB") powers of 1024; matching is
 * case-insensitive because "10mb" in a config always means megabytes.
 */
const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

const SIZE_UNIT = '(?:[kKmMgGtT][iI]?)?[bB]';

/** A size string: a decimal with an optional unit (no unit = bytes). */
export const SIZE_PATTERN = String.raw`^\s*${DECIMAL}\s*(?:${SIZE_UNIT})?\s*$`;

const SIZE_RE = new RegExp(String.raw`^\s*(${DECIMAL})\s*(${SIZE_UNIT})?\s*$`);

const SIZE_HINT = 'expected a size like "10MiB", "500KB" or a number of bytes';

/**
 * Parses a size into bytes: "500KiB", "10MB" (10 000 000), "10MiB"
 * (10 485 760), "1GB", or a bare number / numeric string of bytes. The result
 * must be a whole number of bytes ("1.5KiB" is fine, "0.5B" is not).
 */
export function parseSize(value: string | number): number {
  let bytes: number;
  if (typeof value === 'number') {
    bytes = value;
  } else {
    const m = typeof value === 'string' ? SIZE_RE.exec(value) : null;
    if (!m) throw new UnitError(`${SIZE_HINT}, got ${showValue(value)}`, value);
    bytes = Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()];
  }
  if (!Number.isFinite(bytes) || bytes < 0) throw new UnitError(`${SIZE_HINT}, got ${showValue(value)}`, value);
  // 1.1 * 1e3 is 1100.0000000000002 in floating point: round away float noise
  // before deciding the value really is fractional.
  const rounded = Math.round(bytes);
  if (Math.abs(bytes - rounded) > 1e-6) {
    throw new UnitError(`${SIZE_HINT}, got ${showValue(value)} (not a whole number of bytes)`, value);
  }
  if (!Number.isSafeInteger(rounded)) throw new UnitError(`too large (max ${Number.MAX_SAFE_INTEGER} bytes), got ${showValue(value)}`, value);
  return rounded;
}
