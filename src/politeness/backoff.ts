/**
 * Exponential backoff with "equal jitter", for retries after transient
 * failures and for throttling answers that carry no Retry-After.
 *
 * Contract:
 * - Pure: the random source is passed in, so tests fix it and the result is
 *   exact. No clock, no timers: the caller adds the delay to its own `now()`.
 * - The step doubles per attempt from `baseMs` and never exceeds `capMs`.
 * - Equal jitter: half the step is fixed, half is random. The fixed half
 *   guarantees real spacing (full jitter can pick ~0 ms and hammer a server
 *   that just said it is struggling); the random half keeps many URLs that
 *   failed together from retrying in lockstep. So the delay is always in
 *   [step / 2, step], hence never above the cap.
 * - Huge attempt numbers saturate at the cap instead of overflowing to
 *   Infinity or NaN.
 * - Invalid options are a programming error and throw a RangeError naming the
 *   option; they come from validated config, so this never fires on input.
 */

/** Backoff parameters. */
export interface BackoffOptions {
  /** Delay step of the first retry, in ms (the delay itself is between half of it and all of it). ≥ 0. */
  baseMs: number;
  /** Upper bound on any delay, in ms. ≥ 0. */
  capMs: number;
  /** Uniform random numbers in [0, 1), e.g. `Math.random`; injected so tests are exact. */
  random: () => number;
}

/**
 * The delay in ms before retry number `attempt` (1 = the first retry):
 * step = min(capMs, baseMs · 2^(attempt − 1)); delay = step/2 + random()·step/2.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions): number {
  const { baseMs, capMs, random } = opts;
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`Expected \`attempt\` to be an integer from 1 and up, got ${String(attempt)}`);
  }
  if (!Number.isFinite(baseMs) || baseMs < 0) {
    throw new RangeError(`Expected \`baseMs\` to be a finite number from 0 and up, got ${String(baseMs)}`);
  }
  if (!Number.isFinite(capMs) || capMs < 0) {
    throw new RangeError(`Expected \`capMs\` to be a finite number from 0 and up, got ${String(capMs)}`);
  }
  // 0 · 2^1024 would be NaN; a zero base never grows anyway.
  const grown = baseMs === 0 ? 0 : baseMs * 2 ** (attempt - 1);
  const step = Math.min(capMs, grown);
  const half = step / 2;
  // Clamp a misbehaving random source so the bounds hold whatever it returns.
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  return half + unit * half;
}
