/**
 * What one response means for the crawl: the record to write and the URLs it
 * leads to (a redirect target, or the page's links). Pure: the crawler
 * decides what to do with the URLs (scope, dedupe, limits).
 *
 * content/ (`--content`, `--extract`) is reached only through `loadContent`'s
 * `import()`: it brings the DOM code, domutils, dom-serializer and a second
 * `entities` with its encode tables, which a crawl that asks for neither
 * would otherwise compile before its first request.
 */
import type { FetchResult } from '../fetch/fetcher.js';
import type { EntryExtra, FrontierEntry } from '../store/crawl-store.js';
import { extractPage, extractPageYielding, parseXRobotsTag, type ExtractedPage } from '../parse/parser.js';
import { usageOf, type UsageSource } from '../usage/page-usage.js';
import { parsesInSlices } from '../parse/bounded-parser.js';
import type { OutputRecord, PageRecord } from '../types.js';
import { resolveLink } from '../parse/url.js';
import { redactCredentials } from '../fetch/redact.js';
import { canonicalFromLinkHeader } from '../parse/link-header.js';
import type { Document } from '../content/dom.js';
import type { ContentSettings } from '../config/settings-types.js';
import { withFields } from '../util/with-fields.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface OutcomeOptions {
  maxRedirects: number;
  respectNofollow: boolean;
  emitLinks: boolean;
  /** Our robots product token, for `<meta name="TOKEN">` and `X-Robots-Tag: TOKEN: …`. */
  userAgentToken: string;
  /** The URLs of the redirect chain that led to this one, first hop first: a redirect back to one of them (or to itself) is a loop. @default none */
  chain?: readonly string[];
  /** `--content` / `--extract`: what to add to a 2xx HTML page's record, and the code that adds it (`loadContent`). @default nothing */
  content?: PageContentStep;
  /** What the robots.txt in force states the URL's content may be used for (robots/gate.ts `usage`). @default nothing */
  robotsUsage?: (url: string) => readonly UsageSource[];
}

/** Settings that ask for content or extracted fields, with content/ loaded to serve them. */
export interface PageContentStep {
  settings: ContentSettings;
  features: Pick<typeof import('../content/page-content.js'), 'pageContent' | 'parseDomYielding'>;
}

/** What `--content` and `--extract` need, content/ loaded now; undefined when `settings` ask for neither (nothing is loaded). */
export async function loadContent(settings: ContentSettings): Promise<PageContentStep | undefined> {
  if (settings.format === null && settings.extract.length === 0) return undefined;
  return { settings, features: await import('../content/page-content.js') };
}

export interface PageOutcome {
  record: PageRecord;
  /**
   * Where to go next: a redirect target (same depth, one more hop) or links
   * (one deeper). `extra` travels with the entry (entry-kind.ts); `named`
   * URLs skip the scope check, as seeds do (a sitemap index's own sitemaps).
   */
  next: Array<{ url: string; depth: number; hops: number; extra?: EntryExtra; named?: boolean }>;
  /** Links held back by nofollow. */
  nofollow: string[];
}

/** What a rendered page adds to its response (render/renderer.ts). */
export interface RenderedDocument {
  /** The document's URL when its DOM was read, when it differs from the one fetched (history.pushState): relative links resolve against it. */
  documentUrl?: string;
  /** GET navigations the page tried by itself after loading: links, like its anchors. */
  navigations?: readonly string[];
}

/** A long body parsed ahead of `pageOutcome`, the event loop served between slices. */
export interface ParsedBody {
  page: ExtractedPage;
  /** The content DOM, when `--content` or `--extract` asks for one. */
  doc?: Document;
}

/** Whether `res` carries a body `pageOutcome` would parse that is long enough to parse ahead with `parseBody`. */
export function parsesLong(res: FetchResult): boolean {
  return res.body !== null && res.status >= 200 && res.status < 300 && parsesInSlices(res.body);
}

/**
 * Parses a long body as `pageOutcome` would, in slices with the event loop
 * served between them, so progress and Ctrl-C are not held up by one big
 * page. Hand the result to `pageOutcome`.
 */
export async function parseBody(entry: FrontierEntry, res: FetchResult & RenderedDocument, opts: OutcomeOptions): Promise<ParsedBody> {
  const page = await extractPageYielding(res.body!, res.documentUrl ?? entry.url, extractOptions(res, opts));
  if (opts.content === undefined) return { page };
  return { page, doc: await opts.content.features.parseDomYielding(res.body!) };
}

function extractOptions(res: FetchResult, opts: OutcomeOptions) {
  return { respectNofollow: opts.respectNofollow, xRobotsTag: res.headers['x-robots-tag'] ?? null, userAgentToken: opts.userAgentToken };
}

/** `parsed`: the body parsed ahead by `parseBody` (a long page), else it is parsed here. */
export function pageOutcome(
  entry: FrontierEntry,
  res: FetchResult & RenderedDocument,
  base: PageRecord,
  opts: OutcomeOptions,
  parsed?: ParsedBody,
): PageOutcome {
  // A body not read (not HTML) has no size we know: null, and the size the server declared.
  const unread = res.body === null && res.bytes === 0;
  // A copy that takes five to ten more fields below (title, links, validators…): by withFields, not a spread.
  const record: PageRecord = withFields(base, {
    status: res.status,
    contentType: res.contentType,
    bytes: unread ? null : res.bytes,
    elapsedMs: Math.round(res.elapsedMs),
  });
  if (unread) {
    const declared = declaredLength(res.headers['content-length']);
    if (declared !== null) record.contentLength = declared;
  }
  if (res.truncated) record.truncated = true;
  if (res.httpVersion !== undefined) record.httpVersion = res.httpVersion;
  const out: PageOutcome = { record, next: [], nofollow: [] };
  if (REDIRECT_STATUSES.has(res.status) && res.location !== null) {
    const target = resolveLink(res.location, entry.url);
    if (target === null) {
      record.location = res.location;
      record.error = { code: 'REDIRECT_INVALID', message: `unusable redirect target ${JSON.stringify(res.location)}` };
    } else if (target === entry.url || (opts.chain !== undefined && opts.chain.includes(target))) {
      // Seen already, and by this very chain: following it would end quietly at the dedupe.
      record.location = target;
      record.error = { code: 'REDIRECT_LOOP', message: `redirects back to ${target}, already in its own redirect chain` };
    } else if (entry.hops + 1 > opts.maxRedirects) {
      record.location = target;
      record.error = { code: 'REDIRECT_LIMIT', message: `more than ${opts.maxRedirects} redirects in a row` };
    } else {
      record.location = target;
      out.next.push({ url: target, depth: entry.depth, hops: entry.hops + 1 });
    }
    return out;
  }
  if (res.body !== null && res.status >= 200 && res.status < 300) {
    const page = parsed?.page ?? extractPage(res.body, res.documentUrl ?? entry.url, extractOptions(res, opts));
    statedUsage(record, res.headers, opts.userAgentToken, page, opts.robotsUsage?.(entry.url));
    record.title = page.title;
    const links = withNavigations(page.links, res.navigations);
    record.links = links.length;
    if (opts.emitLinks) record.linkList = links;
    for (const link of links) out.next.push({ url: link, depth: entry.depth + 1, hops: 0 });
    out.nofollow = page.nofollowLinks;
    const canonical = page.canonical ?? canonicalFromLinkHeader(res.headers.link, entry.url);
    if (canonical !== null) record.canonical = canonical;
    const { content } = opts;
    if (content !== undefined) Object.assign(record, content.features.pageContent(res.body, page.baseUrl, content.settings, parsed?.doc));
  } else if (res.status >= 200 && res.status < 300) {
    // A PDF or an image may name its canonical in a header too, and say what it may be used for.
    const canonical = res.headers.link === undefined ? null : canonicalFromLinkHeader(res.headers.link, entry.url);
    if (canonical !== null) record.canonical = canonical;
    statedUsage(record, res.headers, opts.userAgentToken, undefined, opts.robotsUsage?.(entry.url));
  }
  return out;
}

/**
 * `usage`, `usageSources` and `robotsDirectives` on the record, when
 * robots.txt, the response or its document stated any (usage/page-usage.ts).
 * Costs a page that states nothing three lookups.
 */
function statedUsage(
  record: PageRecord,
  headers: Readonly<Record<string, string>>,
  token: string | undefined,
  page: ExtractedPage | undefined,
  robots: readonly UsageSource[] | undefined,
): void {
  const directives = page?.robotsDirectives ?? headerDirectives(headers, token);
  const tdmMeta = page?.tdmReservation ?? null;
  const fromRobots = robots !== undefined && robots.length > 0;
  if (!fromRobots && directives.length === 0 && tdmMeta === null && headers['content-usage'] === undefined && headers['tdm-reservation'] === undefined) return;
  if (directives.length > 0) record.robotsDirectives = [...directives];
  // A parsed page's directives already include the header's (parse/parser.ts): it is read again only to say where a noai came from.
  const noaiFromHeader = directives.includes('noai') && (page === undefined || headerDirectives(headers, token).includes('noai'));
  const stated = usageOf({ headers, tdmMeta, robotsDirectives: directives, noaiFromHeader, robots });
  if (stated !== undefined) Object.assign(record, stated);
}

/** The robots directives of the X-Robots-Tag header alone. */
function headerDirectives(headers: Readonly<Record<string, string>>, token: string | undefined): readonly string[] {
  const xRobotsTag = headers['x-robots-tag'];
  return xRobotsTag === undefined ? NO_DIRECTIVES : parseXRobotsTag(xRobotsTag, token).all;
}

const NO_DIRECTIVES: readonly string[] = [];

/** A page's links, then the navigations it tried that are not among them (already absolute: the browser resolved them). */
function withNavigations(links: string[], navigations: readonly string[] | undefined): string[] {
  if (navigations === undefined || navigations.length === 0) return links;
  const seen = new Set(links);
  return [...links, ...navigations.filter((url) => !seen.has(url))];
}

/** A Content-Length value as a number; null when absent or not one plain decimal number. */
function declaredLength(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d{1,15}\s*$/.test(value)) return null;
  return Number(value);
}

/** Whether a field names a URL with credentials (one `includes('@')` when it does not). */
function hasCredentials(v: string | null | undefined): boolean {
  return v != null && v.includes('@') && v !== redactCredentials(v);
}

/**
 * The record as it may be written: credentials in its URLs and messages
 * (`http://user:secret@host/`) replaced by `***`. The same object when there
 * are none, which is nearly always (one `includes('@')` per field).
 */
export function redactRecord<R extends OutputRecord>(record: R): R {
  // The fields either kind may carry, as one loose shape.
  type Fields = {
    url: string;
    parent: string | null;
    location?: string;
    canonical?: string;
    detail?: string;
    error?: { message: string };
    linkList?: string[];
  };
  const r = record as unknown as Fields;
  if (!(
    hasCredentials(r.url) ||
    hasCredentials(r.parent) ||
    hasCredentials(r.location) ||
    hasCredentials(r.canonical) ||
    hasCredentials(r.detail) ||
    hasCredentials(r.error?.message) ||
    r.linkList?.some(hasCredentials)
  ))
    return record;
  // An item has no parent: none is added to it.
  const out: Fields = { ...r, url: redactCredentials(r.url), parent: r.parent == null ? r.parent : redactCredentials(r.parent) };
  if (r.location !== undefined) out.location = redactCredentials(r.location);
  if (r.canonical !== undefined) out.canonical = redactCredentials(r.canonical);
  if (r.detail !== undefined) out.detail = redactCredentials(r.detail);
  if (r.error) out.error = { ...r.error, message: redactCredentials(r.error.message) };
  if (r.linkList) out.linkList = r.linkList.map(redactCredentials);
  return out as unknown as R;
}
