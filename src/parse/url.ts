/**
 * URL identity for the crawler: one canonical spelling per resource (the
 * dedupe key), link resolution as a browser does it, and THE function that
 * computes a politeness key. Every module that needs a host key calls
 * `hostKeyOf`; nothing else may derive one, or two spellings of one host would
 * get two budgets.
 *
 * Fast paths: the crawler asks for the host key, origin and scope of every
 * URL it queues, and those URLs are already canonical strings, nearly all of
 * the plain shape "http://name.example:port/path?query". Running the WHATWG
 * parser on each again was ~5 parses per page. `canonicalize`, `hostKeyOf`,
 * `originOf` and `hostnameOf` slice such strings instead, and vouch only for
 * strings whose parse is known to change nothing: lowercase scheme and
 * host, an ASCII DNS name, no userinfo, IP literal, punycode, trailing dot,
 * default port or "%". Everything else goes through the parser as before;
 * test/parse/url.test.ts compares both paths on tricky and fuzzed URLs.
 */
import { createRequire } from 'node:module';
import type { HostKeyMode } from '../config/settings-types.js';

type Tldts = typeof import('tldts');
let tldts: Tldts | undefined;

/**
 * tldts (the public suffix list, ~140 KB of code) is loaded at the first
 * registrable domain asked for: only `--scope domain`, `hostKey: "domain"`
 * and `crawl check` ask, and loading it cost every other crawl ~12 ms of
 * start-up. Through createRequire, like re2js and cheerio: the callers are
 * synchronous.
 */
const parseDomain: Tldts['parse'] = (url, options) => (tldts ??= createRequire(import.meta.url)('tldts') as Tldts).parse(url, options);

/** Thrown when a string that must be an absolute http(s) URL is not one. */
export class InvalidUrlError extends Error {
  readonly code = 'INVALID_URL';

  constructor(input: string, expected = 'an absolute http(s) URL') {
    super(`Expected ${expected}, got ${JSON.stringify(truncate(input, 200))}`);
    this.name = 'InvalidUrlError';
  }
}

/**
 * What is wrong with a string that did not parse as an absolute http(s) URL,
 * in words a user can act on: "port 99999 is out of range (1-65535)" rather
 * than the parser's bare "Invalid URL". `expected` is the fallback.
 */
export function urlProblem(text: string, expected = 'expected an absolute http:// or https:// URL'): string {
  const port = /^\s*https?:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?=[/?#\s]|$)/i.exec(text)?.[1];
  if (port !== undefined && Number(port) > 65535) return `port ${port} is out of range (1-65535)`;
  return expected;
}

const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;
// RFC 3986 §2.3: decoding these never changes what the URL means.
const UNRESERVED = /[A-Za-z0-9\-._~]/;

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || ((code | 0x20) >= 97 && (code | 0x20) <= 102);
}

/** `text` has a stray "%" (WHATWG leaves it as is) right before `end`, or one followed by a hex digit. */
function endsInOpenEscape(text: string, end: number): boolean {
  return text.charCodeAt(end - 1) === 37 || (text.charCodeAt(end - 2) === 37 && isHexDigit(text.charCodeAt(end - 1)));
}

/**
 * Decodes escapes of unreserved characters and uppercases the hex of the rest
 * (RFC 3986 §6.2.2). Reserved escapes such as `%2F` stay encoded: `/a%2Fb` and
 * `/a/b` are different resources to most servers. An escape of a hex digit
 * right after a stray "%" stays encoded too: decoding `%41` in `/%a%41` would
 * make `/%aA`, which a server reads as the byte 0xAA.
 */
function normalizePercentEncoding(part: string): string {
  if (!part.includes('%')) return part;
  return part.replace(PERCENT_ESCAPE, (escape, hex: string, offset: number, whole: string) => {
    const code = parseInt(hex, 16);
    const char = String.fromCharCode(code);
    if (!UNRESERVED.test(char)) return `%${hex.toUpperCase()}`;
    // Looking at the input is enough: the output so far ends in "%" or "%" +
    // one hex digit exactly when the input does, as a decoded escape is never
    // "%" and one right after a stray "%" is kept.
    if (isHexDigit(code) && endsInOpenEscape(whole, offset)) return escape.toUpperCase();
    return char;
  });
}

function isHttp(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

function tryParse(input: string | URL, base?: string): URL | null {
  if (input instanceof URL) return input;
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

/**
 * The canonical spelling of an http(s) URL, or null for anything else.
 *
 * The WHATWG parser already lowercases scheme and host, converts IDN hosts to
 * punycode, normalises IP literals, drops default ports, resolves dot segments
 * (including `%2e` ones) and turns an empty path into "/". On top of that we
 * drop the fragment and a lone trailing "?" and normalise percent-encoding in
 * path and query. The query keeps its order: servers may care about it.
 */
export function canonicalize(input: string | URL): string | null {
  if (typeof input === 'string' && isPlainCanonical(input)) return input;
  const url = tryParse(input);
  if (url === null || !isHttp(url)) return null;
  const userinfo = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  // `url.search` is "" for both "no query" and a bare "?", which is exactly
  // the identity we want.
  const path = normalizePercentEncoding(url.pathname);
  const query = normalizePercentEncoding(url.search);
  return `${url.protocol}//${userinfo}${url.host}${path}${query}`;
}

// HTML's "strip leading and trailing ASCII whitespace" (TAB, LF, FF, CR, SPACE).
const HTML_EDGE_WHITESPACE = /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g;

/**
 * Resolves an `href` as a browser would against `base` (the page URL or its
 * `<base href>`), then canonicalizes it. Returns null for links the crawler
 * can never fetch: `javascript:`, `mailto:`, `tel:`, `data:` and every other
 * non-http(s) scheme, unparsable hrefs, or a base that is not http(s).
 */
export function resolveLink(href: string, base: string): string | null {
  const url = tryParse(href.replace(HTML_EDGE_WHITESPACE, ''), base);
  return url === null ? null : canonicalize(url);
}

function toUrl(url: URL | string, httpOnly: boolean): URL {
  const parsed = tryParse(url);
  if (parsed === null || (httpOnly && !isHttp(parsed))) throw new InvalidUrlError(String(url), httpOnly ? undefined : 'an absolute URL');
  return parsed;
}

/** A last label the WHATWG host parser takes for an IPv4 number: decimal, or "0x" hex. */
const ENDS_IN_NUMBER = /(?:^|\.)(?:\d+|0x[0-9a-f]*)$/;

/**
 * The registrable domain ("eTLD+1") of a hostname, used to group
 * `a.example.co.uk` and `b.example.co.uk`.
 *
 * Private suffixes from the Public Suffix List count (`alice.github.io` is its
 * own domain, not `github.io`), because the people behind two such
 * subdomains are unrelated: `--scope domain` from one blog must not wander
 * into every other blog on the platform.
 *
 * Falls back to the hostname itself where there is no registrable domain: IP
 * literals, `localhost`, and single-label names. Names under `.localhost`
 * use their last two labels, so `a.shop.localhost` → `shop.localhost`.
 */
export function registrableDomain(hostname: string): string {
  const host = hostname.toLowerCase();
  if (host.startsWith('[')) return host; // IPv6 literal
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return host.split('.').slice(-2).join('.');
  }
  const info = parseDomain(host, { allowPrivateDomains: true, extractHostname: false });
  if (info.isIp || info.domain === null) return host;
  // "a.0.." is a valid URL host but "a.0", the domain the list gives, is not
  // (WHATWG reads a name ending in a number as an IPv4 address and fails):
  // a key must stay a hostname.
  if (ENDS_IN_NUMBER.test(info.domain)) return host;
  return info.domain;
}

/**
 * THE politeness key of a URL. `host` mode: the lowercased hostname; `domain`
 * mode: its registrable domain. Either way `:port` is appended when the port
 * is not the scheme's default, so two local test servers on different ports
 * are two hosts. `http://a.com/` and `https://a.com/` share a key: one
 * server, one budget.
 *
 * Any absolute URL is accepted so that skip bookkeeping for, say, an `ftp:`
 * link cannot crash; a URL without a host (`mailto:`) has the key "".
 *
 * @throws InvalidUrlError when `url` is not an absolute URL.
 */
export function hostKeyOf(url: URL | string, mode: HostKeyMode): string {
  if (typeof url === 'string') {
    const pathStart = plainAuthorityEnd(url);
    if (pathStart !== -1) {
      const authority = url.slice(url.charCodeAt(4) === COLON ? 7 : 8, pathStart);
      if (mode === 'host') return authority; // host[:port], exactly hostname + ":" + port
      const colon = authority.indexOf(':');
      return colon === -1 ? registrableDomain(authority) : `${registrableDomain(authority.slice(0, colon))}${authority.slice(colon)}`;
    }
  }
  const parsed = toUrl(url, false);
  const name = mode === 'domain' ? registrableDomain(parsed.hostname) : parsed.hostname;
  // WHATWG leaves `port` empty when it is the scheme default.
  return parsed.port === '' ? name : `${name}:${parsed.port}`;
}

/**
 * "scheme://host[:port]", the unit robots.txt applies to (RFC 9309 §2.3).
 *
 * @throws InvalidUrlError when `url` is not an absolute http(s) URL.
 */
export function originOf(url: URL | string): string {
  if (typeof url === 'string') {
    const pathStart = plainAuthorityEnd(url);
    if (pathStart !== -1) return url.slice(0, pathStart);
  }
  return toUrl(url, true).origin;
}

/**
 * The hostname of an absolute URL as the URL parser gives it (lowercased,
 * punycode, no port), or null when `url` is not an absolute URL.
 */
export function hostnameOf(url: string): string | null {
  const pathStart = plainAuthorityEnd(url);
  if (pathStart !== -1) {
    const start = url.charCodeAt(4) === COLON ? 7 : 8;
    const colon = url.indexOf(':', start);
    return url.slice(start, colon !== -1 && colon < pathStart ? colon : pathStart);
  }
  return tryParse(url)?.hostname ?? null;
}

// ---------------------------------------------------------------- plain shape

const COLON = 58;
const SLASH = 47;
const DOT = 46;

/**
 * For a string starting with a plain canonical http(s) authority, the index
 * of the "/" that ends it; otherwise -1. Plain means the URL parser would copy
 * it unchanged: lowercase "http://" or "https://", then a DNS name of
 * lowercase ASCII letters, digits and hyphens (no empty label, so no trailing
 * dot; no "xn--" label, whose punycode the parser validates; the last label
 * starting with a letter, so it is never read as an IPv4 number), then an
 * optional port from 1 to 65535 without leading zeros that is not the
 * scheme's default, then "/". Nothing after the "/" can change how the parser
 * reads the authority (tabs and newlines, which it strips anywhere, fail the
 * host check), so this alone vouches for the host key and origin.
 */
function plainAuthorityEnd(url: string): number {
  let i: number;
  let defaultPort: number;
  if (url.startsWith('http://')) {
    i = 7;
    defaultPort = 80;
  } else if (url.startsWith('https://')) {
    i = 8;
    defaultPort = 443;
  } else {
    return -1;
  }
  const n = url.length;
  let labelStart = i;
  let c = 0;
  for (; i < n; i++) {
    c = url.charCodeAt(i);
    if (c === DOT) {
      if (i === labelStart) return -1; // empty label
      labelStart = i + 1;
      continue;
    }
    if (i === labelStart && c === 120 /* x */ && url.startsWith('xn--', i)) return -1;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45) continue; // a-z 0-9 -
    break;
  }
  if (i === n || i === labelStart) return -1; // no path, or an empty last label (trailing dot)
  const first = url.charCodeAt(labelStart);
  if (first < 97 || first > 122) return -1; // last label must start with a letter
  if (c === COLON) {
    const portStart = ++i;
    let port = 0;
    for (; i < n; i++) {
      c = url.charCodeAt(i);
      if (c < 48 || c > 57) break;
      port = port * 10 + (c - 48);
      if (port > 65535) return -1;
    }
    if (i === portStart || url.charCodeAt(portStart) === 48 || port === defaultPort) return -1;
  }
  return i < n && url.charCodeAt(i) === SLASH ? i : -1;
}

/**
 * Path and query characters the parser copies unchanged into an http(s) URL
 * and `canonicalize` leaves alone: RFC 3986 pchar without "%" (nothing to
 * normalise), and in the query also "?" but not "'" (special URLs encode
 * it). The query, if any, is not empty: `canonicalize` drops a lone "?".
 */
const PLAIN_PATH_AND_QUERY = /[A-Za-z0-9\-._~!$&()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]+)?$/y;
/** A "." or ".." path segment, which the parser resolves away. (May also match inside a query: that only costs a parse.) */
const DOT_SEGMENT = /\/\.\.?(?:[/?]|$)/;

/** True when `canonicalize(url)` is `url` itself and no parse is needed to know it. */
export function isPlainCanonical(url: string): boolean {
  const pathStart = plainAuthorityEnd(url);
  if (pathStart === -1) return false;
  PLAIN_PATH_AND_QUERY.lastIndex = pathStart;
  return PLAIN_PATH_AND_QUERY.test(url) && !DOT_SEGMENT.test(url);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
