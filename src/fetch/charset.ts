/**
 * Which character encoding a response body is in, and decoding it.
 *
 * Follows the order of the WHATWG HTML encoding-sniffing algorithm, minus the
 * locale guess: a byte-order mark wins (it cannot be there by accident), then
 * the Content-Type `charset` parameter, then for HTML a `<meta charset>` /
 * `<meta http-equiv=content-type>` in the first 1024 bytes, then UTF-8.
 * Labels resolve through TextDecoder, which applies the WHATWG label table
 * ("latin1", "ascii", "iso-8859-1" all mean windows-1252). A label TextDecoder
 * does not know is skipped as if absent, never thrown.
 *
 * A small module of our own rather than cheerio's `encoding-sniffer`: that one
 * decodes through iconv-lite streams, while Node's TextDecoder (full ICU)
 * already covers every WHATWG encoding we meet, and this prescan is ~60 lines.
 */

/** How far into the body a `<meta>` charset declaration counts (WHATWG prescan window). */
export const META_PRESCAN_BYTES = 1024;

export interface ContentTypeInfo {
  /** Lowercased `type/subtype`, parameters removed. */
  mime: string;
  /** The raw `charset` parameter (unquoted), if any. */
  charset: string | null;
}

/** The last header parsed and its answer: a crawl meets the same few values page after page. */
let lastHeader: string | undefined;
let lastInfo: Readonly<ContentTypeInfo> | null = null;

/** Parses a Content-Type header value; null when absent or not a `type/subtype`. The answer is shared: do not modify it. */
export function parseContentType(header: string | null | undefined): Readonly<ContentTypeInfo> | null {
  if (!header) return null;
  if (header === lastHeader) return lastInfo;
  lastInfo = parseFresh(header);
  lastHeader = header;
  return lastInfo;
}

function parseFresh(header: string): Readonly<ContentTypeInfo> | null {
  const [essence = '', ...params] = header.split(';');
  const mime = essence.trim().toLowerCase();
  if (!/^[^\s/]+\/[^\s/]+$/.test(mime)) return null;
  let charset: string | null = null;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    charset =
      param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .trim() || null;
    break;
  }
  return Object.freeze({ mime, charset });
}

/** The canonical WHATWG encoding name for a label ("Latin1" → "windows-1252"), or null if unsupported. */
export function resolveEncoding(label: string | null | undefined): string | null {
  if (!label) return null;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return null;
  }
}

/** The encoding announced by a byte-order mark, if the bytes start with one. */
export function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

const META_START = /<meta[\s/]/gi;
// One attribute: name, then optionally = and a double-quoted, single-quoted or bare value.
const ATTRIBUTE = /[\s/]*([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/y;
const CHARSET_IN_CONTENT = /charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))/i;

/**
 * The encoding declared by a `<meta>` tag in the first 1024 bytes, per the
 * spirit of the WHATWG prescan: comments are skipped, the first declaration
 * that names a supported encoding wins, a declared UTF-16 means UTF-8 (the
 * bytes we are reading are evidently ASCII-compatible) and x-user-defined
 * means windows-1252.
 */
export function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, META_PRESCAN_BYTES))
    .toString('latin1')
    .replace(/<!--[\s\S]*?(-->|$)/g, '');
  for (const match of head.matchAll(META_START)) {
    const attrs = new Map<string, string>();
    ATTRIBUTE.lastIndex = (match.index ?? 0) + match[0].length;
    for (let m = ATTRIBUTE.exec(head); m && m[0].length > 0; m = ATTRIBUTE.exec(head)) {
      const name = m[1].toLowerCase();
      // Duplicate attributes are ignored after the first, as an HTML parser does.
      if (!attrs.has(name)) attrs.set(name, m[2] ?? m[3] ?? m[4] ?? '');
    }
    let label = attrs.get('charset') ?? null;
    if (label === null && attrs.get('http-equiv')?.trim().toLowerCase() === 'content-type') {
      const found = CHARSET_IN_CONTENT.exec(attrs.get('content') ?? '');
      label = found ? (found[1] ?? found[2] ?? found[3] ?? null) : null;
    }
    if (label?.trim().toLowerCase() === 'x-user-defined') return 'windows-1252';
    const encoding = resolveEncoding(label);
    if (encoding === null) continue;
    return encoding === 'utf-16le' || encoding === 'utf-16be' ? 'utf-8' : encoding;
  }
  return null;
}

export interface SniffOptions {
  /** The Content-Type `charset` parameter, raw. */
  headerCharset: string | null;
  /** Whether to look for `<meta>` declarations (HTML only). */
  html: boolean;
}

/** The encoding to decode `bytes` with: BOM, then header, then `<meta>` (HTML), then UTF-8. */
export function sniffEncoding(bytes: Uint8Array, options: SniffOptions): string {
  return bomEncoding(bytes) ?? resolveEncoding(options.headerCharset) ?? (options.html ? metaCharset(bytes) : null) ?? 'utf-8';
}

/** Decodes a body; malformed sequences become U+FFFD rather than failing. */
export function decodeBody(bytes: Uint8Array, options: SniffOptions): { text: string; charset: string } {
  const charset = sniffEncoding(bytes, options);
  // TextDecoder strips a BOM that matches the encoding (ignoreBOM defaults to false).
  return { text: new TextDecoder(charset).decode(bytes), charset };
}
