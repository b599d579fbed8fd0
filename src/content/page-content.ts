/**
 * What `--content` and `--extract` add to a page record, from its HTML. One
 * DOM is built per page (dom.ts), only when either is asked for; the link
 * stream of parse/parser.ts does not change. The crawl loads this module
 * (and all it imports) with one `import()`, only when the crawl asks for
 * either (crawl/page-outcome.ts `loadContent`).
 */
import { DomUtils } from 'htmlparser2';
import type { ContentSettings } from '../config/settings-types.js';
import { parseDom, type Document } from './dom.js';
import { HTML_OUT, runExtract, type ExtractValue } from './extract.js';
import { mainContent } from './main-content.js';
import { toMarkdown } from './markdown.js';
import { toText } from './text.js';

// The crawl's one import() of content/ also brings this: a long page's DOM, built ahead in slices.
export { parseDomYielding } from './dom.js';

export interface PageContent {
  content?: string;
  /** `content` was cut at the cap. */
  contentTruncated?: true;
  extract?: Record<string, ExtractValue>;
}

/**
 * The content (main part of the page, as text, HTML or Markdown) and the
 * extracted fields. Links and images in Markdown resolve against `baseUrl`
 * (the page's `<base href>` or its URL). `parsed`: the DOM of `html`, when
 * the caller built it already (dom.ts `parseDomYielding`). Never throws on any HTML.
 */
export function pageContent(html: string, baseUrl: string, settings: ContentSettings, parsed?: Document): PageContent {
  const out: PageContent = {};
  const doc = parsed ?? parseDom(html);
  const cut = (text: string) => cutUtf8(text, settings.maxBytes);
  // Before the content is chosen: that prunes the DOM, and a rule may want what it drops (a nav link).
  if (settings.extract.length > 0) out.extract = runExtract(doc, settings.extract, cut);
  if (settings.format !== null) {
    const { root } = mainContent(doc);
    const full = settings.format === 'text' ? toText(root) : settings.format === 'markdown' ? toMarkdown(root, baseUrl) : DomUtils.getOuterHTML(root, HTML_OUT);
    const content = cut(full);
    out.content = content;
    if (content.length < full.length) out.contentTruncated = true;
  }
  return out;
}

/** `text` cut to at most `maxBytes` of UTF-8, never inside a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  // Each UTF-16 unit is at most 3 UTF-8 bytes: short strings need no encoding.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back to the start of the character that does not fit
  return bytes.subarray(0, end).toString('utf8');
}
