/**
 * URL identity for the crawler: one canonical spelling per resource (the
 * dedupe key), link resolution as a browser does it, and THE function that
 * computes a politeness key. Every module that needs a host key calls
 * `hostKeyOf`; nothing else may derive one, or two spellings of one host would
 * get two budgets.
 */
import { parse as parseDomain } from 'tldts';
import type { HostKeyMode } from './types.js';

/** Thrown when a string that must be an absolute http(s) URL is not one. */
export class InvalidUrlError extends Error {
  readonly code = 'INVALID_URL';

  constructor(input: string, expected = 'an absolute http(s) URL') {
    super(`Expected ${expected}, got ${JSON.stringify(truncate(input, 200))}`);
    this.name = 'InvalidUrlError';
  }
}

const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;
// RFC 3986 §2.3: decoding these never changes what the URL means.
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Decodes escapes of unreserved characters and uppercases the hex of the rest
 * (RFC 3986 §6.2.2). Reserved escapes such as `%2F` stay encoded: `/a%2Fb` and
 * `/a/b` are different resources to most servers.
 */
function normalizePercentEncoding(part: string): string {
  if (!part.includes('%')) return part;
  return part.replace(PERCENT_ESCAPE, (_escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
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
  const url = tryParse(input);
  if (url === null || !isHttp(url)) return null;
  const userinfo = url.username || url.password
    ? `${url.username}${url.password ? `:${url.password}` : ''}@`
    : '';
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
  return toUrl(url, true).origin;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
