/**
 * What a fetched page leads to: its record (page-outcome.ts, or
 * sitemaps.ts for a sitemap file) and the URLs it names, fed to the frontier
 * (frontier-intake.ts): links, redirect targets (their chains kept by
 * redirect-chains.ts), the canonical claimed with --follow-canonical, and
 * nofollow links recorded as skipped. Never throws: a failure in link
 * handling is ours, not the page's, so the record stays what was fetched and
 * the failure is said once as a note.
 */
import type { UsageSource } from '../usage/page-usage.js';
import type { FetchResult } from '../fetch/fetcher.js';
import { redactCredentials } from '../fetch/redact.js';
import { addNote } from '../output/summary.js';
import type { EntryExtra, FrontierEntry } from '../store/crawl-store.js';
import type { PageRecord } from '../types.js';
import type { CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { FrontierIntake } from './frontier-intake.js';
import {
  loadContent,
  pageOutcome,
  parseBody,
  parsesLong,
  type OutcomeOptions,
  type PageContentStep,
  type PageOutcome,
  type ParsedBody,
} from './page-outcome.js';
import type { RedirectChains } from './redirect-chains.js';
import type { SitemapOutcome, SitemapSeeds } from './entries/sitemaps.js';
import { withFields } from '../util/with-fields.js';

export interface PageLinksParts {
  intake: FrontierIntake;
  records: CrawlRecords;
  redirects: RedirectChains;
  sitemaps: SitemapSeeds;
  /** The robots.txt product token of the crawl's user agent (for `<meta name="…">`). */
  token: string;
  /** What robots.txt states a URL's content may be used for (robots/gate.ts). @default nothing */
  robotsUsage?: (url: string) => readonly UsageSource[];
}

export class PageLinks {
  /** `--content` / `--extract`, once `loadContent` has loaded content/ for them. */
  private content: PageContentStep | undefined;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: PageLinksParts,
  ) {}

  /**
   * Loads content/ when the crawl asks for `--content` or `--extract`; the
   * crawler awaits it before the first page, so `outcome` stays synchronous
   * and a crawl that asks for neither never loads it.
   */
  async loadContent(): Promise<void> {
    this.content = await loadContent(this.ctx.settings.content);
  }

  /**
   * The record and where the page leads (all of it to `onNext`, before scope
   * and dedupe: a re-crawl keeps them), nothing queued yet: a page handler
   * runs in between, then `enqueueNext`. Never throws: a failure is said
   * once as a note, and the record is what was fetched, leading nowhere.
   */
  outcome(
    entry: FrontierEntry,
    res: FetchResult,
    base: PageRecord,
    sitemap?: SitemapOutcome | Error,
    parsed?: ParsedBody,
    onNext?: (urls: string[]) => void,
  ): PageOutcome {
    const { parts } = this;
    try {
      if (sitemap instanceof Error) throw sitemap;
      for (const message of sitemap?.notes ?? []) parts.sitemaps.note(message);
      const out = sitemap ?? pageOutcome(entry, res, base, this.outcomeOptions(parts.redirects.before(entry)), parsed);
      onNext?.(out.next.map((next) => next.url));
      return out;
    } catch (err) {
      this.linksFailed(entry.url, err);
      const record = withFields(base, { status: res.status, contentType: res.contentType, bytes: res.bytes, elapsedMs: Math.round(res.elapsedMs) });
      return { record, next: [], nofollow: [] };
    }
  }

  /**
   * Feeds the URLs an outcome leads to back into the store; `follow: false`
   * (a page handler's) keeps its links out, and the skip records of its
   * nofollow links with them (redirect targets still go).
   */
  enqueueNext(entry: FrontierEntry, out: PageOutcome, follow = true): void {
    const { ctx, parts } = this;
    const { settings } = ctx;
    // A stopping crawl that will resume (a durable store) still keeps the links of a page it
    // finishes: the page is marked done, so they would never be found again.
    if (ctx.stopping && !ctx.store.durable) return;
    try {
      const chain = parts.redirects.before(entry);
      // Before the links: one of them is often the canonical itself.
      if (settings.followCanonical) parts.intake.claimCanonical(entry.url, out.record.canonical);
      for (const next of out.next) {
        if (!follow && next.hops === 0) continue;
        if (parts.intake.enqueue(next.url, next.depth, entry.url, next.hops, next.named, next.extra) && next.hops > 0)
          parts.redirects.queued(next.url, chain, entry.url);
      }
      if (!follow) return;
      // Not marked seen: a followed link to the same URL elsewhere still counts.
      for (const link of out.nofollow) {
        if (!ctx.store.isSeen(link)) parts.records.skip(link, 'nofollow', entry.depth + 1, entry.url);
      }
    } catch (err) {
      this.linksFailed(entry.url, err);
    }
  }

  /** URLs a page handler enqueued: one deeper than the page, through the same intake as its links. */
  enqueueFrom(entry: FrontierEntry, urls: ReadonlyArray<{ url: string; extra: EntryExtra | undefined }>): void {
    const { ctx, parts } = this;
    if (ctx.stopping && !ctx.store.durable) return;
    try {
      for (const { url, extra } of urls) parts.intake.enqueue(url, entry.depth + 1, entry.url, 0, false, extra);
    } catch (err) {
      this.linksFailed(entry.url, err);
    }
  }

  /** Of the links an outcome leads to, those the crawl's scope allows (what a page handler sees as `page.links`). */
  inScope(out: PageOutcome): string[] {
    const { intake } = this.parts;
    const links: string[] = [];
    for (const next of out.next) if (next.hops === 0 && intake.inScope(next.url).ok) links.push(next.url);
    return links;
  }

  /** Whether `outcome` would parse a body long enough to be parsed ahead with `parseAhead`, the event loop served meanwhile. */
  parsesLong(res: FetchResult): boolean {
    return parsesLong(res);
  }

  /**
   * Parses a long page ahead of `follow`, in slices with the event loop
   * served between them (progress, Ctrl-C). Undefined when that failed:
   * `outcome` then parses it again and reports the failure as its own.
   */
  async parseAhead(entry: FrontierEntry, res: FetchResult): Promise<ParsedBody | undefined> {
    return parseBody(entry, res, this.outcomeOptions()).catch(() => undefined);
  }

  private outcomeOptions(chain?: readonly string[]): OutcomeOptions {
    const { settings } = this.ctx;
    return {
      maxRedirects: settings.maxRedirects,
      respectNofollow: settings.respectNofollow,
      emitLinks: settings.emitLinks,
      userAgentToken: this.parts.token,
      chain,
      content: this.content,
      robotsUsage: this.parts.robotsUsage,
    };
  }

  /** Link handling threw (a bug, or a filter V8 cannot run): said once per kind of failure, never a fetch error. */
  private linksFailed(url: string, err: unknown): void {
    const { stats, log } = this.ctx;
    let why = (err instanceof Error ? err.message : String(err)).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, 'invalid regular expression: ');
    if (why.length > 200) why = `${why.slice(0, 200)}…`;
    const note = `links not followed (our failure, not the site's): ${why}`;
    if (stats.notes.includes(note)) return;
    addNote(stats, note);
    log?.warn(redactCredentials(`${note}; first at ${url}`));
  }
}
