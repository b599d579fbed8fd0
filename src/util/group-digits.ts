/**
 * 1234567 → "1,234,567": an integer as `toLocaleString('en-US')` writes it,
 * without ICU. A process's first `toLocaleString` builds ICU's number
 * formatting, ~20 ms, and the end-of-crawl summary paid it after every crawl
 * and `crawl check`. Anything but a safe integer (a fraction, NaN, ∞) still
 * goes to `toLocaleString`, which writes those its own way.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(n < 0 ? -n : n);
  const head = digits.length % 3 || 3;
  let out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}
