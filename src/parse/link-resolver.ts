/**
 * Resolves a page's hrefs against its base URL, fast: `linkResolver(base)`
 * gives the same answer as `resolveLink(href, base)` for every href, but
 * builds the canonical form of the commonest simple shapes by string
 * arithmetic instead of running the WHATWG URL parser on each. extractPage
 * (parser.ts) makes one resolver per page and runs every href through it.
 */
import { resolveLink } from './url.js';

// Characters WHATWG URL parsing copies unchanged into an http(s) path (no
// percent-encoding, no "%" to normalise, no "\" it would turn into "/"), and
// into a query (the same, plus "?" and minus "'", which special URLs encode).
const PATH_CHARS = '[A-Za-z0-9\\-._~!$&()*+,;=:@/]';
const QUERY_CHARS = '[A-Za-z0-9\\-._~!$&()*+,;=:@/?]';
/** "/path" or "/path?query": path-absolute, not "//" (scheme-relative), a non-empty query. */
const SIMPLE_PATH = new RegExp(`^/(?!/)${PATH_CHARS}*(?:\\?${QUERY_CHARS}+)?$`);
/** "?query", non-empty. */
const SIMPLE_QUERY = new RegExp(`^\\?${QUERY_CHARS}+$`);
/** "name/name?query" relative to the base's directory; no ":" at all, so it can never be read as a scheme. */
const SIMPLE_RELATIVE = /^[A-Za-z0-9\-._~!$&()*+,;=@][A-Za-z0-9\-._~!$&()*+,;=@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]+)?$/;
/**
 * An absolute http(s) URL already in canonical form: lowercase ASCII DNS
 * name (no empty label, no trailing dot, no punycode to validate, last label
 * starting with a letter so it can never read as an IPv4 number), a non-default
 * port without leading zeros, then a simple path and query as above.
 */
const SIMPLE_ABSOLUTE = new RegExp(
  `^(https?)://(?!(?:[a-z0-9-]+\\.)*xn--)(?:[a-z0-9-]+\\.)*[a-z][a-z0-9-]*(?::([1-9][0-9]{0,4}))?/${PATH_CHARS}*(?:\\?${QUERY_CHARS}+)?$`,
);
/** A "." or ".." path segment, which the parser would resolve away. */
const DOT_SEGMENT = /\/\.\.?(?:[/?]|$)/;

/**
 * `resolveLink(href, baseUrl)` for a canonical `baseUrl`, with shortcuts for
 * the commonest hrefs whose canonical form is plain string arithmetic:
 * "/path?query", "name?query", "../name", "?query", "#fragment" and an
 * absolute URL that is already canonical. Resolution is most of the cost of a link-heavy
 * page, and the URL parser would otherwise parse every one of them. Anything
 * the patterns do not vouch for takes the full path; test/parse/link-resolver.test.ts
 * checks every shortcut against it.
 */
export function linkResolver(baseUrl: string): (href: string) => string | null {
  // "scheme://userinfo@host:port" of a canonical URL: "/" cannot occur before
  // the path (WHATWG percent-encodes it in userinfo; hosts cannot hold it).
  const pathStart = baseUrl.indexOf('/', baseUrl.indexOf('//') + 2);
  const origin = baseUrl.slice(0, pathStart);
  const queryStart = baseUrl.indexOf('?', pathStart);
  const withoutQuery = queryStart === -1 ? baseUrl : baseUrl.slice(0, queryStart);
  const directory = withoutQuery.slice(0, withoutQuery.lastIndexOf('/') + 1);
  /** Leading "../" segments walk the directory up (never above the root); the rest must be simple. */
  const upward = (target: string): string | null => {
    let dir = directory;
    let rest = target;
    while (rest.startsWith('../')) {
      rest = rest.slice(3);
      if (dir.length > pathStart + 1) dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1);
    }
    if (rest !== '' && !(SIMPLE_RELATIVE.test(rest) && !DOT_SEGMENT.test(`/${rest}`))) return null;
    return detached(dir, rest);
  };
  return (href) => {
    const hash = href.indexOf('#');
    const target = hash === -1 ? href : href.slice(0, hash);
    if (target === '') return baseUrl; // "" and "#fragment" name the page itself
    switch (target.charCodeAt(0)) {
      case 47: // "/"
        if (SIMPLE_PATH.test(target) && !DOT_SEGMENT.test(target)) return detached(origin, target);
        break;
      case 63: // "?"
        if (SIMPLE_QUERY.test(target)) return detached(withoutQuery, target);
        break;
      case 46: // ".": "../../name"
        return upward(target) ?? resolveLink(href, baseUrl);
      default: {
        if (SIMPLE_RELATIVE.test(target)) {
          if (!DOT_SEGMENT.test(`/${target}`)) return detached(directory, target);
          break;
        }
        const absolute = SIMPLE_ABSOLUTE.exec(target);
        if (absolute !== null && !DOT_SEGMENT.test(target.slice(absolute[1].length + 3)) && isKeptPort(absolute[1], absolute[2])) {
          return detached(absolute[1], target.slice(absolute[1].length));
        }
      }
    }
    return resolveLink(href, baseUrl);
  };
}

/**
 * `head + tail` as a string of its own. An attribute value from the parser
 * is a slice of the whole document, and V8 keeps the document alive for as
 * long as any slice of it lives: a queued link would pin its page's HTML (tens
 * of KB per URL). `head + tail` is a rope that still holds the slice, and
 * reading a character of it is no cure: optimised code reads through the rope
 * without flattening it, or drops an unused read altogether (Node 24 does
 * both once this function is hot). `join` writes both parts into one new
 * buffer in every tier, for ~15 ns more than the concatenation.
 */
function detached(head: string, tail: string): string {
  return [head, tail].join('');
}

/** The URL parser drops a scheme's default port and rejects ports above 65535. */
function isKeptPort(scheme: string, port: string | undefined): boolean {
  if (port === undefined) return true;
  const n = Number(port);
  return n <= 65535 && n !== (scheme === 'http' ? 80 : 443);
}
