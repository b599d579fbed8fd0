/**
 * Sitemap files (sitemaps.org protocol 0.9): an XML `<urlset>` of pages, an
 * XML `<sitemapindex>` of further sitemaps, or a plain-text list of URLs, one
 * per line; any of them gzip-compressed (a `.gz` file served as it is).
 *
 * Contract:
 * - Streaming: the (decompressed) bytes go through htmlparser2 in xmlMode
 *   chunk by chunk, never as one string, and reading stops at the protocol's
 *   caps: 50,000 URLs and 50 MB (uncompressed) per file. A file over a cap
 *   is read up to it and says so (`cut`); what came before is kept.
 * - Lenient like the rest of the crawler: namespace prefixes, tag case and
 *   surrounding whitespace do not matter; an entry without `<loc>` is
 *   dropped; a text line that is not an absolute http(s) URL is ignored; `<loc>` inside extensions (`<image:image><image:loc>`) is not a
 *   page. An element left open at the end (a cut or broken file) is dropped,
 *   since its text may be cut short.
 * - Never throws on content: a file that is not a sitemap, or a gzip file
 *   that does not inflate, gives what could be read and a `problem`.
 * - `loc` and `lastmod` are the strings as written (trimmed): resolving and
 *   canonicalising the URLs is the crawl's business (crawl/entries/sitemaps.ts).
 */
import { createGunzip } from 'node:zlib';
import type { Parser } from 'htmlparser2';
import { BoundedParser } from './bounded-parser.js';

/** Most URLs one sitemap file may list (sitemaps.org). */
export const SITEMAP_MAX_URLS = 50_000;
/** Most bytes one sitemap file may hold, uncompressed (sitemaps.org: 50 MB, i.e. 52,428,800 bytes). */
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

export interface SitemapUrl {
  /** `<loc>` (or a text sitemap's line), trimmed. */
  loc: string;
  /** `<lastmod>` as written, trimmed; absent when missing or empty. */
  lastmod?: string;
}

export interface ParsedSitemap {
  /** `urlset` lists pages, `index` lists sitemaps, `text` is one URL per line; `unknown` is neither. */
  format: 'urlset' | 'index' | 'text' | 'unknown';
  /** Pages (urlset, text) or sitemaps (index), in file order. */
  urls: SitemapUrl[];
  /** Reading stopped at a cap: `urls` (SITEMAP_MAX_URLS) or `bytes` (SITEMAP_MAX_BYTES); null when the whole file was read. */
  cut: 'urls' | 'bytes' | null;
  /** Why the file is not (wholly) usable, e.g. "not a sitemap: root element <html>"; null when fine. */
  problem: string | null;
  /** Uncompressed bytes read. */
  bytes: number;
}

export interface SitemapLimits {
  /** @default SITEMAP_MAX_URLS */
  maxUrls?: number;
  /** @default SITEMAP_MAX_BYTES */
  maxBytes?: number;
}

const GZIP_MAGIC = [0x1f, 0x8b] as const;

/** Whether `data` starts like a gzip stream (the Content-Type of `.gz` files is too often wrong to trust). */
export function isGzip(data: Uint8Array): boolean {
  return data.length >= 2 && data[0] === GZIP_MAGIC[0] && data[1] === GZIP_MAGIC[1];
}

/**
 * Reads a whole sitemap body, inflating it first when it is gzip. Resolves
 * (never rejects) once the file is read or a cap is reached.
 */
export async function parseSitemap(data: Uint8Array, limits: SitemapLimits = {}): Promise<ParsedSitemap> {
  const reader = new SitemapReader(limits);
  if (!isGzip(data)) {
    reader.write(data);
    return reader.end();
  }
  const gunzip = createGunzip();
  gunzip.end(data);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (!reader.write(chunk)) break; // a cap: the rest is not inflated at all
    }
  } catch (err) {
    return reader.end(`gzip data could not be inflated (${(err as { code?: string }).code ?? (err as Error).message}); read up to there`);
  } finally {
    gunzip.destroy();
  }
  return reader.end();
}

/**
 * The push side of parseSitemap: `write` decompressed chunks until it
 * answers false (a cap was reached), then `end`.
 */
export class SitemapReader {
  private readonly maxUrls: number;
  private readonly maxBytes: number;
  private readonly decoder = new TextDecoder('utf-8');
  private readonly urls: SitemapUrl[] = [];
  private format: ParsedSitemap['format'] | null = null;
  private cut: ParsedSitemap['cut'] = null;
  private bytes = 0;
  private stopped = false;
  /** Text sitemaps: the line not ended yet. */
  private partial = '';
  /** Text sitemaps: lines that are not absolute http(s) URLs (an HTML page served as text/plain, …). */
  private junk = 0;
  private xml: XmlState | null = null;

  constructor(limits: SitemapLimits = {}) {
    this.maxUrls = limits.maxUrls ?? SITEMAP_MAX_URLS;
    this.maxBytes = limits.maxBytes ?? SITEMAP_MAX_BYTES;
  }

  /** Feeds bytes; false once reading has stopped (a cap), when further chunks are ignored. */
  write(chunk: Uint8Array): boolean {
    if (this.stopped) return false;
    let part = chunk;
    const room = this.maxBytes - this.bytes;
    if (part.length > room) {
      part = part.subarray(0, room);
      this.cut = 'bytes';
    }
    this.bytes += part.length;
    this.text(this.decoder.decode(part, { stream: true }));
    if (this.cut !== null) this.stopped = true;
    return !this.stopped;
  }

  /** Finishes the file: what was read, and `problem` (the caller's, or the reader's own). */
  end(problem?: string): ParsedSitemap {
    const cutShort = this.cut !== null || problem !== undefined;
    if (!this.stopped) this.text(this.decoder.decode());
    if (this.format === 'text' && !cutShort) this.line(this.partial);
    if (this.xml) {
      this.xml.closing = true;
      this.xml.parser.end();
    }
    // A text file without a single URL line is not a text sitemap.
    if (this.format === 'text' && this.urls.length === 0 && this.junk > 0) this.format = null;
    const format = this.format ?? 'unknown';
    let why: string | null = problem ?? null;
    if (why === null && format === 'unknown') {
      why = this.xml?.root ? `not a sitemap: root element <${this.xml.root}>` : this.bytes === 0 ? 'empty file' : 'not a sitemap: no line is a URL';
    }
    this.stopped = true;
    return { format, urls: this.urls, cut: this.cut, problem: why, bytes: this.bytes };
  }

  private text(text: string): void {
    if (text === '' || this.stopped) return;
    if (this.format === null && this.xml === null) {
      // The first character that is not whitespace (or a byte-order mark) decides: "<" is XML.
      const first = /[^\s\uFEFF]/.exec(text);
      if (!first) return;
      if (first[0] === '<') this.xml = this.startXml();
      else this.format = 'text';
    }
    if (this.xml) {
      this.xml.parser.write(text);
      return;
    }
    const lines = (this.partial + text).split(/\r\n|\r|\n/);
    this.partial = lines.pop()!;
    for (const line of lines) if (!this.line(line)) return;
  }

  /** One text line; false once the URL cap is reached. */
  private line(raw: string): boolean {
    const loc = raw.replace(/^\uFEFF/, '').trim();
    if (loc === '') return true;
    // The protocol wants full URLs; in a text file anything else is not a URL at all.
    if (!/^https?:\/\//i.test(loc)) {
      this.junk++;
      return true;
    }
    return this.add({ loc });
  }

  /** Keeps an entry, or stops at the URL cap (the protocol's 50,000 is a maximum: a 50,001st means the file is over it). */
  private add(url: SitemapUrl): boolean {
    if (this.stopped) return false;
    if (this.urls.length >= this.maxUrls) {
      this.cut = 'urls';
      this.stopped = true;
      return false;
    }
    this.urls.push(url);
    return true;
  }

  private startXml(): XmlState {
    const state: XmlState = { root: null, stack: [], item: null, field: null, closing: false, parser: null as unknown as Parser };
    const ITEM_OF = { urlset: 'url', sitemapindex: 'sitemap' } as const;
    // Nesting capped, as for HTML: a hostile sitemap of nested tags parses in linear time (bounded-parser.ts).
    state.parser = new BoundedParser(
      {
        onopentag: (name) => {
          if (this.stopped) return;
          const local = localName(name);
          const parent = state.stack[state.stack.length - 1];
          state.stack.push(local);
          if (state.stack.length === 1) {
            state.root = local;
            if (local === 'urlset') this.format = 'urlset';
            else if (local === 'sitemapindex') this.format = 'index';
            return;
          }
          const itemName = state.root === 'urlset' || state.root === 'sitemapindex' ? ITEM_OF[state.root] : null;
          if (state.stack.length === 2 && local === itemName) state.item = { loc: '', lastmod: '' };
          else if (state.stack.length === 3 && state.item && parent === itemName && (local === 'loc' || local === 'lastmod')) state.field = local;
        },
        ontext: (text) => {
          if (state.field && state.item) state.item[state.field] += text;
        },
        onclosetag: (_name, implied) => {
          if (this.stopped && !state.closing) return;
          state.stack.pop();
          if (state.field && state.stack.length === 2) {
            state.field = null;
            return;
          }
          if (state.stack.length === 1 && state.item) {
            const { loc, lastmod } = state.item;
            state.item = null;
            // An element closed only by the end of the input may hold cut-short text.
            if (implied || state.closing || this.stopped) return;
            const url: SitemapUrl = { loc: loc.trim() };
            const mod = lastmod.trim();
            if (mod !== '') url.lastmod = mod;
            if (url.loc !== '') this.add(url);
          }
        },
      },
      { xmlMode: true, decodeEntities: true },
    );
    return state;
  }
}

interface XmlState {
  /** Local name of the root element, once seen. */
  root: string | null;
  /** Local names of the open elements. */
  stack: string[];
  /** The `<url>` / `<sitemap>` being read. */
  item: { loc: string; lastmod: string } | null;
  /** The child of `item` whose text is being collected. */
  field: 'loc' | 'lastmod' | null;
  /** end() is closing what was left open: nothing more is kept. */
  closing: boolean;
  parser: Parser;
}

/** "sm:URL" → "url": namespace prefix dropped, lowercased. */
function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1).toLowerCase();
}
