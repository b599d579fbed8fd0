/**
 * Redirect chains, followed through the records: a page with a 3xx status
 * and a `location` opens (or extends) a chain waiting for its target's
 * record; the target's record extends it, and a chain ends at the first
 * record that is not a redirect, at a skip, at an error, or at a loop.
 * The crawler sends a redirect target through the frontier, so its record
 * comes later in the file, or never (already crawled, out of scope, cut by
 * max-pages): chains still waiting at the end are "not fetched".
 *
 * Memory: at most `maxPending` chains wait at once (the oldest are closed as
 * "not fetched" when more come); only the `keep` longest are kept whole.
 */
import type { PageView, SkipView } from './record-view.js';
import { TopN } from './top-n.js';

export interface Hop {
  url: string;
  status: number | null;
}

export interface RedirectChain {
  hops: Hop[];
  /** How it ended: the final status ("200"), an error code, "skipped: robots", "loop", "not fetched". */
  end: string;
  /** Where the last hop pointed, when the chain ended without that URL's record. */
  target?: string;
}

export interface RedirectSummary {
  chains: number;
  /** Chains by number of redirects (hops that answered 3xx), shortest first: [["1", 40], ["2", 3]]. */
  byLength: Array<[string, number]>;
  /** How chains ended, most frequent first: [["200", 41], ["not fetched", 2]]. */
  byEnd: Array<[string, number]>;
  /** The longest chains (most redirects first). */
  longest: RedirectChain[];
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

export class RedirectTracker {
  /** Target URL → the chain waiting for its record. */
  private readonly pending = new Map<string, Hop[]>();
  private readonly top: TopN<RedirectChain>;
  private readonly byLength = new Map<number, number>();
  private readonly byEnd = new Map<string, number>();
  private chains = 0;

  constructor(private readonly opts: { maxPending?: number; keep?: number } = {}) {
    this.top = new TopN(opts.keep ?? 20);
  }

  add(r: PageView | SkipView): void {
    const waiting = this.pending.get(r.url);
    if (waiting) this.pending.delete(r.url);
    if (r.kind === 'skipped') {
      if (waiting) this.close(waiting, `skipped: ${r.reason}`);
      return;
    }
    const isRedirect = r.status !== null && REDIRECT.has(r.status) && r.location !== null;
    if (!waiting && !isRedirect) return;
    const hops = waiting ?? [];
    hops.push({ url: r.url, status: r.status });
    if (!isRedirect) return this.close(hops, r.errorCode ?? String(r.status));
    if (r.errorCode !== null) return this.close(hops, r.errorCode); // REDIRECT_LIMIT, REDIRECT_INVALID
    const target = r.location!;
    if (hops.some((h) => h.url === target)) return this.close(hops, 'loop', target);
    const other = this.pending.get(target);
    if (other) {
      // Two chains meet at one target: the crawler fetches it once, so the older one waits for it.
      this.close(hops, 'joins another chain', target);
      return;
    }
    this.pending.set(target, hops);
    if (this.pending.size > (this.opts.maxPending ?? 10_000)) {
      const [oldest, chain] = this.pending.entries().next().value as [string, Hop[]];
      this.pending.delete(oldest);
      this.close(chain, 'not fetched', oldest);
    }
  }

  finish(): RedirectSummary {
    for (const [target, hops] of this.pending) this.close(hops, 'not fetched', target);
    this.pending.clear();
    return {
      chains: this.chains,
      byLength: [...this.byLength].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]),
      byEnd: [...this.byEnd].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
      longest: this.top.sorted(),
    };
  }

  private close(hops: Hop[], end: string, target?: string): void {
    const redirects = hops.filter((h) => h.status !== null && REDIRECT.has(h.status)).length;
    this.chains++;
    this.byLength.set(redirects, (this.byLength.get(redirects) ?? 0) + 1);
    this.byEnd.set(end, (this.byEnd.get(end) ?? 0) + 1);
    this.top.add(redirects, target === undefined ? { hops, end } : { hops, end, target });
  }
}
