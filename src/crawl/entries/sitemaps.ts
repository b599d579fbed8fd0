/**
 * Sitemaps as a source of URLs: which sitemap files seed the crawl, and what
 * a fetched one means (its record and the URLs it leads to).
 *
 * Contract:
 * - Seeding: the files named by the user (`--sitemap`, `sitemaps` in the
 *   config) are queued at the start; with `--sitemaps` (`robotsSitemaps`),
 *   the `Sitemap:` lines of each seed origin's robots.txt are queued once
 *   that file is read. Sitemap files are queued like seeds (depth 0, never
 *   refused by scope or caps: the user or the site named them), as frontier
 *   entries of kind "sitemap" (entry-kind.ts), so they are paced, checked
 *   against robots.txt, retried and counted (`--max-pages`) like pages.
 * - A sitemap's pages are one deeper than the sitemap (depth 1 from a named
 *   one) and scope-checked like links; `<lastmod>` travels with the entry to
 *   the page's record. The sitemaps of an index keep its depth (an index
 *   only splits one list in parts), up to SITEMAP_MAX_NESTING indexes deep;
 *   on the index's own origin they skip the scope check, as it does.
 * - The record of a sitemap is a page record with `kind: "sitemap"` and
 *   `links` = the URLs it lists (`linkList` with --links). A file over the
 *   protocol's caps (50,000 URLs, 50 MB) is read up to the cap, and a note
 *   says so once per file; so does a file that is not a sitemap.
 */
import type { FetchResult } from '../../fetch/fetcher.js';
import { parseSitemap, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS } from '../../parse/sitemap.js';
import { canonicalize, originOf, resolveLink } from '../../parse/url.js';
import type { RobotsState } from '../../robots/types.js';
import type { FrontierEntry } from '../../store/crawl-store.js';
import type { CrawlSettings } from '../../config/settings-types.js';
import type { PageRecord } from '../../types.js';
import { pageOutcome, type OutcomeOptions, type PageOutcome } from '../page-outcome.js';
import { groupDigits } from '../../util/group-digits.js';

/**
 * Sitemap indexes followed inside one another. The protocol allows none (an
 * index lists sitemaps, not indexes); real sites nest a level or two, and a
 * cap keeps an index that lists itself under another name from going on.
 */
export const SITEMAP_MAX_NESTING = 3;

const MB = 1024 * 1024;

/** A sitemap file to queue: where it is, and who named it (null: the user; else the robots.txt URL). */
export interface SitemapSeed {
  url: string;
  parent: string | null;
}

/** Which sitemap files seed the crawl: the named ones, and the seed origins' robots.txt lines. */
export class SitemapSeeds {
  /** Seed origins whose robots.txt `Sitemap:` lines are still to be read. */
  private readonly waiting = new Set<string>();

  constructor(
    private readonly settings: Pick<CrawlSettings, 'sitemaps'>,
    /** Queues one sitemap file. */
    private readonly queue: (seed: SitemapSeed) => void,
    /** Says something about the crawl's sitemaps once (a robots.txt without any, a file over a cap). */
    readonly note: (message: string) => void,
  ) {}

  /**
   * Queues the named sitemaps, and returns the seeds whose robots.txt the
   * crawl should load now (for its `Sitemap:` lines): one per origin, none
   * without `--sitemaps`.
   */
  start(seeds: readonly string[]): string[] {
    for (const url of this.settings.sitemaps.urls) this.queue({ url, parent: null });
    if (!this.settings.sitemaps.fromRobots) return [];
    const load: string[] = [];
    for (const seed of seeds) {
      const origin = originOf(seed);
      if (this.waiting.has(origin)) continue;
      this.waiting.add(origin);
      load.push(seed);
    }
    return load;
  }

  /** An origin's robots.txt was read (or given up): a seed origin's `Sitemap:` lines are queued, once. */
  robotsLoaded(origin: string, state: RobotsState): void {
    if (!this.waiting.has(origin)) return;
    // Unreachable for now: wait for the retry's answer.
    if (state.kind === 'unavailable' && state.retryAt !== null) return;
    this.waiting.delete(origin);
    const robotsUrl = `${origin}/robots.txt`;
    const listed = state.kind === 'rules' ? state.sitemaps : [];
    if (listed.length === 0) {
      const why = state.kind === 'rules' ? 'lists no Sitemap' : `could not be read (${state.reason})`;
      this.note(`--sitemaps: ${robotsUrl} ${why}`);
      return;
    }
    for (const raw of listed) {
      const url = canonicalize(raw);
      if (url !== null) this.queue({ url, parent: robotsUrl });
    }
  }
}

export interface SitemapOutcome extends PageOutcome {
  /** What to say once about this file (over a cap, not a sitemap). */
  notes: string[];
}

/**
 * What a fetched sitemap file means: its record and the URLs it lists.
 * A redirect is followed as the same sitemap; an error status is only recorded.
 */
export async function sitemapOutcome(
  entry: FrontierEntry,
  res: FetchResult,
  base: PageRecord,
  opts: Pick<OutcomeOptions, 'maxRedirects' | 'emitLinks' | 'chain'>,
): Promise<SitemapOutcome> {
  // The page outcome without a body: the record's common fields, and a redirect's target.
  const plain = pageOutcome(entry, { ...res, body: null }, base, { ...opts, respectNofollow: false, userAgentToken: '' });
  const record: PageRecord = { ...plain.record, kind: 'sitemap' };
  const out: SitemapOutcome = { record, next: [], nofollow: [], notes: [] };
  for (const hop of plain.next) out.next.push({ ...hop, extra: entry.extra, named: true });
  if (plain.next.length > 0 || res.raw === undefined || res.status < 200 || res.status >= 300) return out;

  const parsed = await parseSitemap(res.raw);
  const level = typeof entry.extra?.level === 'number' ? entry.extra.level : 0;
  const isIndex = parsed.format === 'index';
  const found: string[] = [];
  let tooDeep = 0;
  for (const item of parsed.urls) {
    const url = resolveLink(item.loc, entry.url);
    if (url === null) continue;
    if (isIndex) {
      if (level + 1 > SITEMAP_MAX_NESTING) {
        tooDeep++;
        continue;
      }
      found.push(url);
      out.next.push({ url, depth: entry.depth, hops: 0, extra: { kind: 'sitemap', level: level + 1 }, named: originOf(url) === originOf(entry.url) });
    } else {
      found.push(url);
      out.next.push({ url, depth: entry.depth + 1, hops: 0, extra: item.lastmod === undefined ? undefined : { lastmod: item.lastmod } });
    }
  }
  record.links = found.length;
  if (opts.emitLinks) record.linkList = found;
  if (parsed.cut === 'urls')
    out.notes.push(`sitemap ${entry.url} lists more than ${groupDigits(SITEMAP_MAX_URLS)} URLs (the protocol's limit): read up to there, the rest ignored`);
  if (parsed.cut === 'bytes' || (res.truncated && parsed.cut === null)) {
    out.notes.push(`sitemap ${entry.url} is over ${SITEMAP_MAX_BYTES / MB} MB uncompressed (the protocol's limit): read up to there, the rest ignored`);
    record.truncated = true;
  }
  if (parsed.problem !== null) out.notes.push(`sitemap ${entry.url}: ${parsed.problem}`);
  if (tooDeep > 0) out.notes.push(`sitemap index ${entry.url} is nested more than ${SITEMAP_MAX_NESTING} indexes deep: its ${tooDeep} sitemap(s) not read`);
  return out;
}
