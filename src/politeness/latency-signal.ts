/**
 * A server that slows down is given room: the latency signal of one host.
 *
 * Contract (pure: state in, new state out; each sample is a duration the
 * caller measured on the injected clock):
 * - A sample is one request's time to first byte, from its write to the
 *   socket to its response headers. Per request, never per slot: time spent
 *   waiting for a connection, a global slot or the host's gap is not the
 *   server's, and requests in flight together each measure their own. Only
 *   answers count (any status, a 304 too); a request that failed or timed
 *   out before its headers gives no sample.
 * - The signal is the median of the last `window` samples: one slow page
 *   moves it by one rank at most, so it alone never moves the rate.
 * - The baseline is the lowest such median seen (from `minSamples` samples
 *   on): faster answers lower it at once. It rises only slowly (`creep` of
 *   the way to the median per sample), and only where the rise cannot be
 *   our own doing: at full rate while the median stays under `calmBelow` ×
 *   baseline (a minimum of noisy medians reads low), or at the floor while it
 *   stays above `slowAbove` × (we are as slow as we go: the server's new
 *   normal, which the host may then recover from).
 * - Slowing: a median above `slowAbove` × baseline, and at least
 *   `minRiseMs` above it (a fast host's jitter is not a struggle), multiplies the factor by
 *   `decrease` (never below `floor`), then nothing is decided for `cooldown`
 *   samples, so that most of the window answers requests sent at the new
 *   pace before it is judged again. Acting at 1.5× rather than at 2× is what
 *   keeps the server within about 2× its idle time: a server's time rises
 *   steeply near its capacity, and a rule that waits for 2× is already late.
 * - Recovering: `recoverAfter` samples in a row with the median under
 *   `calmBelow` × baseline or within `minRiseMs` / 2 of it (the larger)
 *   multiply the factor by `increase`, never above 1 (the configured rate
 *   is a ceiling).
 * - State is plain JSON-safe data with no clock times in it, so a store keeps
 *   it as it is (host-state.ts `HostSaved`).
 */

export const LATENCY = {
  /** Samples the median is taken over (odd: an exact middle). */
  window: 9,
  /** Samples before the baseline is known and anything is decided. */
  minSamples: 5,
  /** A median above this × baseline slows the host. */
  slowAbove: 1.5,
  /** A median under this × baseline counts towards recovery. */
  calmBelow: 1.2,
  decrease: 0.75,
  /** Samples after a decrease before the next: a majority of the window. */
  cooldown: 5,
  increase: 1.1,
  /** Calm samples in a row before one increase. */
  recoverAfter: 8,
  /** The lowest factor the latency signal sets: 1/8 of the configured rate. */
  floor: 1 / 8,
  /** Share of the gap to the median the baseline rises by per sample, where it may rise. */
  creep: 1 / 64,
  /**
   * The least rise over the baseline, ms, that slows a host (half of it ends
   * calm): below it a fast host's answers only jitter, and a crawl process
   * busy rendering adds that much to every time it measures. Measured: a
   * local two-worker render crawl with answers of a few ms was slowed from
   * 19.5 s to 33 s without it.
   */
  minRiseMs: 20,
} as const;

export interface LatencyState {
  /** The last `window` times to first byte, ms, oldest first. */
  samples: number[];
  /** The host's idle time to first byte as learnt so far, ms; null until `minSamples` samples. */
  baselineMs: number | null;
  /** The median of `samples` at the last sample, ms; null until `minSamples` samples. */
  medianMs: number | null;
  /** Fraction of the configured rate the latency signal allows (floor <= factor <= 1). */
  factor: number;
  /** Samples since the last decrease (starts at `cooldown`: the first decision may come at once). */
  sinceDecrease: number;
  /** Calm samples in a row since the factor last moved. */
  calm: number;
  /** Decreases so far. */
  decreases: number;
}

export function initialLatency(): LatencyState {
  return { samples: [], baselineMs: null, medianMs: null, factor: 1, sinceDecrease: LATENCY.cooldown, calm: 0, decreases: 0 };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** One answer's time to first byte, `ttfbMs`. */
export function onLatencySample(s: LatencyState, ttfbMs: number): LatencyState {
  const samples = s.samples.length >= LATENCY.window ? [...s.samples.slice(s.samples.length - LATENCY.window + 1), ttfbMs] : [...s.samples, ttfbMs];
  const next: LatencyState = { ...s, samples, sinceDecrease: s.sinceDecrease + 1 };
  if (samples.length < LATENCY.minSamples) return next;
  const m = median(samples);
  next.medianMs = m;
  let baseline = s.baselineMs === null ? m : Math.min(s.baselineMs, m);
  const rises = (s.factor >= 1 && isCalm(m, baseline)) || (s.factor <= LATENCY.floor && isSlow(m, baseline));
  if (rises && m > baseline) baseline += (m - baseline) * LATENCY.creep;
  next.baselineMs = baseline;
  if (isSlow(m, baseline)) {
    next.calm = 0;
    if (s.factor > LATENCY.floor && next.sinceDecrease >= LATENCY.cooldown) {
      next.factor = Math.max(LATENCY.floor, s.factor * LATENCY.decrease);
      next.sinceDecrease = 0;
      next.decreases = s.decreases + 1;
    }
  } else if (isCalm(m, baseline)) {
    next.calm = s.calm + 1;
    if (s.factor < 1 && next.calm >= LATENCY.recoverAfter) {
      next.factor = Math.min(1, s.factor * LATENCY.increase);
      next.calm = 0;
    }
  } else {
    next.calm = 0;
  }
  return next;
}

/** A median that slows the host: above slowAbove × the baseline, and at least minRiseMs above it. */
function isSlow(m: number, baseline: number): boolean {
  return m - baseline > Math.max((LATENCY.slowAbove - 1) * baseline, LATENCY.minRiseMs);
}

/** A median that counts towards recovery: under calmBelow × the baseline, or within half of minRiseMs of it. */
function isCalm(m: number, baseline: number): boolean {
  return m - baseline < Math.max((LATENCY.calmBelow - 1) * baseline, LATENCY.minRiseMs / 2);
}

/** Why the latency signal holds the host back: "latency 412 ms vs 130 ms baseline". */
export function describeLatency(s: LatencyState): string {
  const ms = (n: number | null) => `${n === null ? '?' : Math.round(n)} ms`;
  return `latency ${ms(s.medianMs)} vs ${ms(s.baselineMs)} baseline`;
}
