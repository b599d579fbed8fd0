/**
 * What joins the frontier: every URL the crawl finds (a seed, a link, a
 * redirect target, a sitemap entry, a canonical) is judged here once — scope
 * and filters, the trap defences and caps of admission.ts, a given-up host —
 * and either goes to the store (which dedupes it) or gets its skip record.
 * Also the scopes themselves, which follow every seed the crawl was ever
 * given (`allow`, on a resume).
 */
import { createScope, type ScopeCheck } from '../parse/scope.js';
import type { EntryExtra } from '../store/crawl-store.js';
import type { SkipReason } from '../types.js';
import type { Admission } from './admission.js';
import { hostKey, type CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import { linkCheckExtra } from './entries/link-check.js';
import type { RedirectChains } from './redirect-chains.js';

export interface FrontierIntakeParts {
  admission: Admission;
  records: CrawlRecords;
  redirects: RedirectChains;
}

export class FrontierIntake {
  /** Where a page's links may go. */
  inScope!: ScopeCheck;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: FrontierIntakeParts,
    seeds: string[],
  ) {
    this.scopeTo(seeds);
  }

  /** Scope follows these seeds (and the sitemaps the user named). */
  scopeTo(seeds: string[]): void {
    this.inScope = this.scopeFor(seeds);
  }

  private scopeFor(seeds: string[]): ScopeCheck {
    const { scope, include, exclude, maxUrlLength, sitemaps } = this.ctx.settings;
    // A sitemap the user named puts its host in scope, as a seed does (`crawl --sitemap URL` needs no seed).
    seeds = [...seeds, ...sitemaps.urls];
    return createScope({ scope, seeds, include, exclude, maxUrlLength });
  }

  /**
   * Accepts a canonical URL into the store, or records why not; true when it
   * went to the store (which may still find it a repeat).
   */
  enqueue(url: string, depth: number, parent: string | null, hops: number, isSeed = false, extra?: EntryExtra): boolean {
    const { ctx, parts } = this;
    // Most links are repeats: drop them before any URL parsing (every branch below ignores a seen URL).
    if (ctx.store.isSeen(url)) return false;
    if (!isSeed) {
      const verdict = this.inScope(url);
      if (!verdict.ok) {
        // --check-links: a link out of scope is checked (link-check.ts), not skipped.
        const check = linkCheckExtra(verdict, ctx.settings.checkLinks, extra);
        if (check === null) return this.skipOnce(url, verdict.reason, depth, parent, verdict.detail);
        extra = check;
      }
      const trap = parts.admission.check(url, depth);
      if (trap) return this.skipOnce(url, trap.reason, depth, parent, trap.detail);
    } else if (url.length > ctx.settings.maxUrlLength) {
      // Links meet this in the scope check; a seed meets it here (a 5 MB seed is not requested).
      return this.skipOnce(url, 'url-too-long', depth, parent, `${url.length} characters, over the limit of ${ctx.settings.maxUrlLength}`);
    }
    const key = hostKey(ctx, url);
    if (ctx.hosts.isGivenUp(key)) return this.skipOnce(url, 'host-failed', depth, parent);
    const full = parts.admission.reserve(url, key, isSeed);
    if (full) {
      // Not remembered (admission.ts): counted, and recorded with emitSkipped, each time it is found.
      parts.records.skip(url, full.reason, depth, parent, full.detail);
      return false;
    }
    ctx.calls.settle(ctx.calls.add(url, key, { url, depth, parent, hops, attempt: 0, ...(extra && { extra }) }), (isNew) => {
      if (isNew) return ctx.signals.wake(key);
      parts.admission.release(url, key);
      if (hops > 0) parts.redirects.done(url); // a store that answers later found it a repeat after all
    });
    return true;
  }

  /**
   * `--follow-canonical`: the page's content stands for its canonical URL,
   * so that URL is marked seen and never queued (one already queued or
   * fetched stays as it is). Only a canonical the crawl's scope (and
   * filters) would follow counts.
   */
  claimCanonical(url: string, canonical: string | undefined): void {
    const { ctx } = this;
    if (canonical === undefined || canonical === url || ctx.store.isSeen(canonical) || !this.inScope(canonical).ok) return;
    ctx.calls.settle(ctx.calls.add(canonical, '', null));
  }

  /** Marks a URL seen and writes its skip record, the first time only. */
  private skipOnce(url: string, reason: SkipReason, depth: number, parent: string | null, detail?: string): false {
    this.ctx.calls.settle(this.ctx.calls.add(url, '', null), (isNew) => {
      if (isNew) this.parts.records.skip(url, reason, depth, parent, detail);
    });
    return false;
  }
}
