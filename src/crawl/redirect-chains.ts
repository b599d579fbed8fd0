/**
 * Redirect chains in progress, so that a redirect back into its own chain is
 * recognised as a loop (error REDIRECT_LOOP) instead of ending quietly at the
 * dedupe of a URL already seen.
 *
 * A queued redirect target's store entry says only its hop count and the URL
 * that redirected to it (`parent`); the chain before that is kept here, for
 * queued redirect targets only (links are hop 0 and cost nothing), and
 * forgotten once the target's record is written or it is skipped. Bounded by
 * the redirect targets queued times `maxRedirects`. Not kept across a resume:
 * a target queued by an earlier run knows only its parent, so a loop through
 * it is caught when it returns to that parent or to itself.
 */
import type { FrontierEntry } from '../store/crawl-store.js';

const NONE: readonly string[] = Object.freeze([]);

export class RedirectChains {
  private readonly chains = new Map<string, readonly string[]>();

  /** Redirect targets with a chain held. */
  get size(): number {
    return this.chains.size;
  }

  /** The URLs of the chain before `entry`, first hop first; empty for a URL that was linked, not redirected to. */
  before(entry: FrontierEntry): readonly string[] {
    if (entry.hops === 0) return NONE;
    return this.chains.get(entry.url) ?? (entry.parent === null ? NONE : [entry.parent]);
  }

  /** `target` is queued as the hop after `from`, whose chain was `chain`. */
  queued(target: string, chain: readonly string[], from: string): void {
    this.chains.set(target, [...chain, from]);
  }

  /** The URL's record is out, or it was skipped: its chain is not needed any more. */
  done(url: string): void {
    this.chains.delete(url);
  }
}
