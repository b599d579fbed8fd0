/**
 * The rel=canonical of an HTTP `Link` header (RFC 8288, RFC 6596):
 * `Link: <https://example.com/a>; rel="canonical"`, possibly among other
 * links in one comma-separated value (commas inside `<…>` are part of the URI).
 */
import { resolveLink } from './url.js';

// One link-value: <URI> then its parameters, up to the next link or the end.
const LINK_VALUE = /<([^>]*)>((?:\s*;\s*[^;,"]*(?:"(?:[^"\\]|\\.)*"[^;,"]*)*)*)/g;
const REL_PARAM = /;\s*rel\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;,"]+))/i;

/**
 * The first link with rel `canonical` in a `Link` header value, resolved
 * against `pageUrl` and canonical; null when there is none or it is no
 * http(s) URL.
 */
export function canonicalFromLinkHeader(header: string | undefined, pageUrl: string): string | null {
  if (header === undefined || !/canonical/i.test(header)) return null;
  for (const match of header.matchAll(LINK_VALUE)) {
    const rel = REL_PARAM.exec(match[2]);
    const tokens = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (tokens.includes('canonical')) return resolveLink(match[1].trim(), pageUrl);
  }
  return null;
}
