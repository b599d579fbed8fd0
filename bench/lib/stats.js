/** Small numeric helpers for benchmark reports. */

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const min = (xs) => Math.min(...xs);
export const max = (xs) => Math.max(...xs);

/** Rounds for display: 3 significant digits, no exponent. */
export function round(x, digits = 3) {
  if (!Number.isFinite(x)) return x;
  if (x === 0) return 0;
  const p = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(Math.min(p, 6)));
}

export const MB = 1024 * 1024;
