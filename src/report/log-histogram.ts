/**
 * Approximate quantiles of millisecond durations in constant memory: counts
 * in logarithmic bins, four per doubling (each bin ~19% wide), so a median
 * or 95th percentile is off by at most one bin's width. Plenty for "this
 * host answers in about 300 ms"; exact figures (minimum, mean) are kept
 * separately by the callers.
 */
const BINS_PER_DOUBLING = 4;
const BINS = 4 * 40; // up to 2^40 ms, far beyond any crawl

export class LogHistogram {
  private readonly counts = new Uint32Array(BINS);
  private total = 0;

  add(ms: number): void {
    if (!(ms >= 0)) return;
    this.counts[binOf(ms)]++;
    this.total++;
  }

  get count(): number {
    return this.total;
  }

  /** The upper edge of the bin holding quantile q (0..1), or null when empty. */
  quantile(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < BINS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return upperEdge(i);
    }
    return upperEdge(BINS - 1);
  }
}

/** Bin 0 holds [0, 1); bin i ≥ 1 holds [2^((i-1)/4), 2^(i/4)). */
export function binOf(ms: number): number {
  if (ms < 1) return 0;
  return Math.min(BINS - 1, Math.floor(Math.log2(ms) * BINS_PER_DOUBLING) + 1);
}

export function upperEdge(bin: number): number {
  return bin === 0 ? 1 : Math.round(2 ** (bin / BINS_PER_DOUBLING));
}
