/**
 * Turns a fetched HTML body into what the crawler needs from it: the title,
 * the outgoing links (resolved, canonical, de-duplicated in document order),
 * the robots directives that govern them and the page's rel=canonical.
 *
 * This is the hot path. A document is read once, without building a DOM, by
 * the link scanner (link-scanner.ts): htmlparser2's tokenizer states, kept
 * only for the tags and attributes read here, 2-4x faster than htmlparser2's
 * Parser on the same pages (bench/parse.js). The few documents it leaves to
 * the Parser (a self-closing `<title/>`, `<script/>` or `<style/>`) are read
 * from the Parser's event stream, as every document was before. Either way
 * the result is what a walk of the DOM htmlparser2 builds gives
 * (test/parse/parser.test.ts), and the scanner's is the Parser's
 * (test/properties/parser.test.ts, test/parse/link-scanner.test.ts).
 */
import { parseHtml, parseHtmlYielding } from './bounded-parser.js';
import { linkResolver } from './link-resolver.js';
import { scanLinks } from './link-scanner.js';
import { refreshUrl } from './meta-refresh.js';
import { canonicalize, resolveLink } from './url.js';

// Where linkResolver lived before it had a module of its own; bench/memory-probe.js reads it here.
export { linkResolver } from './link-resolver.js';

export interface ExtractOptions {
  /**
   * Honour nofollow: drop links with `rel~=nofollow`, and every link when the
   * page says nofollow (meta robots or X-Robots-Tag). When false, nofollow is
   * still reported in `nofollowAll` but all links are returned.
   */
  respectNofollow: boolean;
  /**
   * The response's `X-Robots-Tag` header: one value, or one per header line.
   * @default null
   */
  xRobotsTag?: string | string[] | null;
  /**
   * Our robots product token (e.g. "crawl"). Makes `<meta name="crawl">` and
   * `X-Robots-Tag: crawl: …` apply to us; compared case-insensitively.
   * @default undefined (only directives addressed to every robot apply)
   */
  userAgentToken?: string;
}

export interface ExtractedPage {
  /** First `<title>`, whitespace collapsed, at most 1000 characters; null if absent or empty. */
  title: string | null;
  /** Links to follow: http(s) only, canonical, unique, in document order. */
  links: string[];
  /**
   * Links withheld because of nofollow (per link or page-wide), canonical and
   * unique, and not also present in `links`. Always empty unless
   * `respectNofollow`. Lets the crawler report them as skipped.
   */
  nofollowLinks: string[];
  /** The page (meta robots or X-Robots-Tag) asks robots not to follow any link. */
  nofollowAll: boolean;
  /** The page (meta robots or X-Robots-Tag) asks not to be indexed. */
  noindex: boolean;
  /**
   * Every robots directive addressed to us (meta robots, our product
   * token's meta, X-Robots-Tag), lowercased, once each, in the order met;
   * `none` stands as `noindex` and `nofollow`. Only the directives of
   * ROBOTS_DIRECTIVES; valued ones (`max-snippet: 50`) are left out.
   */
  robotsDirectives: string[];
  /** `<meta name="tdm-reservation" content>` (W3C TDMRep), trimmed; null when absent. */
  tdmReservation: string | null;
  /** The URL relative links were resolved against: `<base href>` if usable, else the page URL. */
  baseUrl: string;
  /**
   * The first `<link rel="canonical" href>`, resolved against `baseUrl` and
   * canonical; null when there is none or it is no http(s) URL.
   */
  canonical: string | null;
}

export interface RobotsDirectives {
  noindex: boolean;
  nofollow: boolean;
  /** Every directive of ROBOTS_DIRECTIVES addressed to us, once each, in the order met. */
  all: string[];
}

/**
 * The robots directives a record lists: the indexing ones search engines
 * document, and the AI ones sites use (`noai`, `noimageai`).
 */
export const ROBOTS_DIRECTIVES: ReadonlySet<string> = new Set([
  'noindex',
  'nofollow',
  'noarchive',
  'nosnippet',
  'noimageindex',
  'notranslate',
  'noai',
  'noimageai',
  'indexifembedded',
]);

const TITLE_MAX_LENGTH = 1000;

/**
 * UTF-16 units the scanner reads without a turn of the event loop: a few
 * milliseconds (bench/parse.js: ~100 MB/s and more). Past it, and for what
 * the scanner leaves to the parser, the parser reads in slices.
 */
const SCAN_AT_ONCE = 1024 * 1024;

/** The base of a document without a URL (HTML's about:blank): only absolute URLs resolve against it. */
const NO_BASE = 'about:blank';

const ASCII_WHITESPACE = /[\t\n\f\r ]+/g;

/**
 * Collects what extractPage needs from htmlparser2's events, in document
 * order. Open and close events are balanced (implied and end-of-input closes
 * included), so `depth` follows the nesting of the DOM htmlparser2 would
 * build. Everything inside <title>, <script> and <style> is ignored, as a
 * browser reads their content as text: htmlparser2 does too, except after
 * the self-closing spelling (`<title/>`), where it parses tags inside them.
 */
class PageEvents {
  hrefs: string[] = [];
  /** Parallel to `hrefs`: the anchor has rel~=nofollow. */
  nofollow: boolean[] = [];
  baseHref: string | undefined = undefined;
  /** href of the first <link rel=canonical>. */
  canonicalHref: string | undefined = undefined;
  title: string | null = null;
  /** name, content, name, content… of every <meta> that has both. */
  metaContents: string[] = [];
  private depth = 0;
  /** Depth of the <title>, <script> or <style> element being skipped, or -1. */
  private skipDepth = -1;
  /** The first <title> was seen; an empty one still wins, as in document.title. */
  private seenTitle = false;
  private inFirstTitle = false;
  private titleText = '';

  onopentag(name: string, attribs: Record<string, string>): void {
    const depth = ++this.depth;
    if (this.skipDepth !== -1) return;
    switch (name) {
      case 'a':
      case 'area':
        if (attribs.href !== undefined) {
          this.hrefs.push(attribs.href);
          this.nofollow.push(relHas(attribs.rel, 'nofollow'));
        }
        break;
      case 'base':
        if (this.baseHref === undefined && attribs.href !== undefined) this.baseHref = attribs.href;
        break;
      case 'link':
        if (this.canonicalHref === undefined && attribs.href !== undefined && relHas(attribs.rel, 'canonical')) this.canonicalHref = attribs.href;
        break;
      case 'meta':
        if (attribs.name !== undefined && attribs.content !== undefined) this.metaContents.push(attribs.name, attribs.content);
        if (attribs['http-equiv']?.trim().toLowerCase() === 'refresh' && attribs.content !== undefined) this.addRefresh(attribs.content);
        break;
      case 'title':
        this.inFirstTitle = !this.seenTitle;
        this.seenTitle = true;
        this.skipDepth = depth;
        break;
      case 'script':
      case 'style':
        this.skipDepth = depth;
        break;
    }
  }

  /** A meta refresh's target is one more link of the page (meta-refresh.ts). */
  private addRefresh(content: string): void {
    const url = refreshUrl(content);
    if (url === null) return;
    this.hrefs.push(url);
    this.nofollow.push(false);
  }

  ontext(data: string): void {
    // The title's own text children only, as document.title reads them.
    if (this.inFirstTitle && this.depth === this.skipDepth) this.titleText += data;
  }

  onclosetag(): void {
    if (this.depth-- !== this.skipDepth) return;
    this.skipDepth = -1;
    if (this.inFirstTitle) {
      this.inFirstTitle = false;
      this.title = cleanTitle(this.titleText);
    }
  }
}

/**
 * Extracts title, links and robots directives from an HTML document. Never
 * throws on malformed input: broken markup yields whatever links a lenient
 * parser can recover.
 */
export function extractPage(html: string, pageUrl: string, opts: ExtractOptions): ExtractedPage {
  return scannedPage(html, pageUrl, opts) ?? extractPageParsed(html, pageUrl, opts);
}

/**
 * The page as the link scanner reads it, what the parser would read at a
 * fraction of the cost; undefined for the few documents it leaves to the parser.
 */
function scannedPage(html: string, pageUrl: string, opts: ExtractOptions): ExtractedPage | undefined {
  const events = new PageEvents();
  return scanLinks(html, events) ? pageFrom(events, pageUrl, opts) : undefined;
}

/**
 * `extractPage` by htmlparser2's Parser alone: the reference the scanner
 * (link-scanner.ts) is held to, and its fallback.
 */
export function extractPageParsed(html: string, pageUrl: string, opts: ExtractOptions): ExtractedPage {
  const events = new PageEvents();
  // Events, not a tree, and nesting capped (bounded-parser.ts): absurdly deep nesting costs nothing extra and no stack.
  parseHtml(html, events);
  return pageFrom(events, pageUrl, opts);
}

/** `extractPage`, giving the event loop a turn between slices of a long document (bounded-parser.ts). */
export async function extractPageYielding(html: string, pageUrl: string, opts: ExtractOptions): Promise<ExtractedPage> {
  const scanned = html.length <= SCAN_AT_ONCE ? scannedPage(html, pageUrl, opts) : undefined;
  if (scanned !== undefined) return scanned;
  const events = new PageEvents();
  await parseHtmlYielding(html, events);
  return pageFrom(events, pageUrl, opts);
}

function pageFrom(events: PageEvents, pageUrl: string, opts: ExtractOptions): ExtractedPage {
  const token = opts.userAgentToken?.trim().toLowerCase() || undefined;
  const robots = parseXRobotsTag(opts.xRobotsTag, token);
  const meta = events.metaContents;
  let tdmReservation: string | null = null;
  for (let i = 0; i < meta.length; i += 2) {
    if (isMetaForUs(meta[i], token)) mergeDirectives(robots, meta[i + 1].split(/[\s,]+/));
    else if (tdmReservation === null && meta[i].trim().toLowerCase() === 'tdm-reservation') tdmReservation = meta[i + 1].trim();
  }

  const { baseUrl, canonical } = resolveBase(events.baseHref, pageUrl);
  // linkResolver's shortcuts trust a canonical http(s) base. Without one (a
  // page URL the crawler never holds, but a library caller might pass), hrefs
  // resolve as in a document that has no URL: only absolute ones.
  const resolve = canonical ? linkResolver(baseUrl) : (href: string) => resolveLink(href, NO_BASE);
  const followed = new Set<string>();
  const withheld = new Set<string>();
  const dropAll = opts.respectNofollow && robots.nofollow;
  const { hrefs, nofollow } = events;
  for (let i = 0; i < hrefs.length; i++) {
    const link = resolve(hrefs[i]);
    if (link === null) continue;
    if (dropAll || (opts.respectNofollow && nofollow[i])) withheld.add(link);
    else followed.add(link);
  }
  for (const link of followed) withheld.delete(link);

  return {
    title: events.title,
    links: [...followed],
    nofollowLinks: [...withheld],
    nofollowAll: robots.nofollow,
    noindex: robots.noindex,
    robotsDirectives: robots.all,
    tdmReservation,
    baseUrl,
    canonical: events.canonicalHref === undefined ? null : resolveLink(events.canonicalHref, canonical ? baseUrl : NO_BASE),
  };
}

// Directives that carry a value after a colon; any other "name:" prefix in
// X-Robots-Tag names the robot the following directives are addressed to.
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

const AGENT_PREFIX = /^([^:\s]+)\s*:\s*(.*)$/s;

/**
 * Reads `X-Robots-Tag` header values. Directives without a prefix apply to
 * every robot; after a `name:` prefix they apply only to that robot, until the
 * next prefix or the end of that header value, so `googlebot: noindex,
 * nofollow` says nothing to us. Pass header lines as an array when you have
 * them: once comma-joined, an unprefixed directive that followed a prefixed
 * line reads as addressed to that line's robot.
 *
 * @param token our product token; prefixed directives are ignored without one.
 */
export function parseXRobotsTag(header: string | string[] | null | undefined, token?: string): RobotsDirectives {
  const result: RobotsDirectives = { noindex: false, nofollow: false, all: [] };
  if (header === null || header === undefined) return result;
  const ours = token?.trim().toLowerCase() || undefined;
  for (const value of Array.isArray(header) ? header : [header]) {
    let addressee: string | null = null;
    for (const part of value.split(',')) {
      let words = part.trim();
      const prefixed = AGENT_PREFIX.exec(words);
      if (prefixed !== null) {
        const name = prefixed[1].toLowerCase();
        if (VALUED_DIRECTIVES.has(name)) continue;
        addressee = name;
        words = prefixed[2]!;
      }
      if (addressee === null || addressee === ours) mergeDirectives(result, words.split(/\s+/));
    }
  }
  return result;
}

function mergeDirectives(into: RobotsDirectives, words: string[]): void {
  for (const word of words) {
    const directive = word.toLowerCase();
    switch (directive) {
      case 'none':
        into.noindex = true;
        into.nofollow = true;
        addDirective(into, 'noindex');
        addDirective(into, 'nofollow');
        break;
      case 'noindex':
        into.noindex = true;
        break;
      case 'nofollow':
        into.nofollow = true;
        break;
    }
    if (ROBOTS_DIRECTIVES.has(directive)) addDirective(into, directive);
  }
}

function addDirective(into: RobotsDirectives, directive: string): void {
  if (!into.all.includes(directive)) into.all.push(directive);
}

function isMetaForUs(name: string | undefined, token: string | undefined): boolean {
  if (name === undefined) return false;
  const normalized = name.trim().toLowerCase();
  return normalized === 'robots' || (token !== undefined && normalized === token);
}

function relHas(rel: string | undefined, token: string): boolean {
  if (rel === undefined) return false;
  return rel.toLowerCase().split(ASCII_WHITESPACE).includes(token);
}

/**
 * HTML's "frozen base URL": the first `<base href>` resolved against the page
 * URL. A base that is not http(s) (e.g. `javascript:`) would make every
 * relative link unfetchable, so it is ignored instead. `canonical`: the base
 * is a canonical http(s) URL (false only when the page URL is not one and no
 * `<base href>` is usable).
 */
function resolveBase(baseHref: string | undefined, pageUrl: string): { baseUrl: string; canonical: boolean } {
  const page = canonicalize(pageUrl);
  // Against a page URL that is no http(s) URL, a relative base href could only
  // make another URL that is not http(s) either.
  const base = baseHref === undefined ? null : resolveLink(baseHref, page ?? NO_BASE);
  if (base !== null) return { baseUrl: base, canonical: true };
  return page === null ? { baseUrl: pageUrl, canonical: false } : { baseUrl: page, canonical: true };
}

function cleanTitle(text: string): string | null {
  let title = text.replace(ASCII_WHITESPACE, ' ').trim();
  if (title.length > TITLE_MAX_LENGTH) {
    // Do not cut a surrogate pair in half.
    const cut = isHighSurrogate(title.charCodeAt(TITLE_MAX_LENGTH - 1)) ? TITLE_MAX_LENGTH - 1 : TITLE_MAX_LENGTH;
    title = title.slice(0, cut).trimEnd();
  }
  return title === '' ? null : title;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
