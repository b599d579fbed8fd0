/**
 * Properties of URL identity (src/parse/url.ts, link-resolver.ts): whatever
 * the input, canonicalisation never throws, is idempotent and yields http(s)
 * URLs that parse; every spelling of one page gets one canonical form and one
 * host key; a host key is a host a URL can be built on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linkResolver } from '../../src/parse/link-resolver.js';
import { InvalidUrlError, canonicalize, hostKeyOf, hostnameOf, originOf, resolveLink } from '../../src/parse/url.js';
import { anyUrlInput, canonicalUrl, href } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const MODES = ['host', 'domain'] as const;

/** The parts of a canonical URL: everything before the path, and path + query. */
function split(url: string): { authority: string; path: string; query: string; parsed: URL } {
  const parsed = new URL(url);
  const tail = parsed.pathname + parsed.search;
  expect(url.endsWith(tail)).toBe(true);
  return { authority: url.slice(0, url.length - tail.length), path: parsed.pathname, query: parsed.search, parsed };
}

/**
 * Percent-encodes the unreserved characters `pick` chooses, and lowercases
 * the hex of existing escapes. A hex digit right after a stray "%" is left
 * alone: canonicalize keeps its escape (decoding it could form a new escape),
 * so "/%%61" and "/%a" are one page with two canonical forms, a known and
 * harmless gap (at worst a page fetched twice).
 */
function respell(part: string, pick: (index: number) => boolean): string {
  let out = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i];
    if (c === '%' && /^[0-9A-F]{2}$/.test(part.slice(i + 1, i + 3))) {
      out += part.slice(i, i + 3).toLowerCase();
      i += 2;
    } else if (/[A-Za-z0-9\-._~]/.test(c) && pick(i) && !(/[0-9A-Fa-f]/.test(c) && /%[0-9A-Fa-f]?$/.test(out))) {
      out += `%${c.charCodeAt(0).toString(16)}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** Other spellings of the same page: case, default port, escapes, dot segments, fragment, whitespace. */
const sameUrlSpellings = canonicalUrl.chain((url) =>
  fc
    .record({
      upperScheme: fc.boolean(),
      upperHost: fc.boolean(),
      defaultPort: fc.boolean(),
      encodeMask: fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
      dotSegment: fc.constantFrom('', '/.', '/zz/..', '/%2e', '/a/%2E%2e'),
      emptyQuery: fc.boolean(),
      fragment: fc.constantFrom('', '#', '#top', '#a?b#c'),
      whitespace: fc.constantFrom('', ' ', '\t', '\n '),
      innerTab: fc.boolean(),
    })
    .map((how) => {
      const { authority, path, query, parsed } = split(url);
      let head = authority;
      if (how.upperScheme) head = head.replace(/^https?/, (s) => s.toUpperCase());
      if (how.upperHost) head = head.slice(0, head.length - parsed.host.length) + parsed.host.toUpperCase();
      if (how.defaultPort && parsed.port === '') head += parsed.protocol === 'http:' ? ':80' : ':443';
      const pick = (i: number) => how.encodeMask[i % how.encodeMask.length];
      let newPath = how.dotSegment + respell(path, pick);
      if (how.innerTab) newPath = newPath.replace('/', '/\t');
      const newQuery = query === '' ? (how.emptyQuery ? '?' : '') : `?${respell(query.slice(1), pick)}`;
      return { url, spelling: `${how.whitespace}${head}${newPath}${newQuery}${how.fragment}${how.whitespace}` };
    }),
);

describe('canonicalize', () => {
  it(
    'never throws; gives null or an http(s) URL that parses, is its own canonical form, and matches the URL-object path',
    () => {
      fc.assert(
        fc.property(anyUrlInput, (input) => {
          const out = canonicalize(input);
          if (out === null) return;
          const parsed = new URL(out);
          expect(['http:', 'https:']).toContain(parsed.protocol);
          expect(parsed.hash).toBe('');
          expect(canonicalize(out)).toBe(out);
          expect(canonicalize(new URL(input))).toBe(out);
        }),
        fuzzParams(600),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'gives every spelling of a page the canonical form and host keys of the page',
    () => {
      fc.assert(
        fc.property(sameUrlSpellings, ({ url, spelling }) => {
          expect(canonicalize(spelling)).toBe(url);
          for (const mode of MODES) expect(hostKeyOf(spelling, mode)).toBe(hostKeyOf(url, mode));
          expect(originOf(spelling)).toBe(originOf(url));
        }),
        fuzzParams(400),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('hostKeyOf, originOf, hostnameOf', () => {
  it(
    'agree between the string fast path and the URL parser, and a key is a host a URL can be built on',
    () => {
      fc.assert(
        fc.property(canonicalUrl, (url) => {
          const parsed = new URL(url);
          for (const mode of MODES) {
            const key = hostKeyOf(url, mode);
            expect(hostKeyOf(parsed, mode)).toBe(key);
            const rebuilt = new URL(`http://${key}/`);
            // The key's host part is a hostname as the parser writes it.
            expect(rebuilt.hostname).toBe(key.replace(/:\d+$/, ''));
            if (mode === 'host') expect(key).toBe(parsed.port === '' ? parsed.hostname : `${parsed.hostname}:${parsed.port}`);
          }
          expect(originOf(url)).toBe(parsed.origin);
          expect(hostnameOf(url)).toBe(parsed.hostname);
        }),
        fuzzParams(500),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'throw nothing but InvalidUrlError, on any input',
    () => {
      fc.assert(
        fc.property(anyUrlInput, fc.constantFrom(...MODES), (input, mode) => {
          for (const run of [() => hostKeyOf(input, mode), () => originOf(input)]) {
            try {
              expect(typeof run()).toBe('string');
            } catch (error) {
              expect(error).toBeInstanceOf(InvalidUrlError);
            }
          }
          const hostname = hostnameOf(input);
          expect(hostname === null || typeof hostname === 'string').toBe(true);
        }),
        fuzzParams(500),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('resolveLink and linkResolver', () => {
  it(
    'never throw; give null or a canonical http(s) URL; the fast resolver agrees with resolveLink',
    () => {
      fc.assert(
        fc.property(canonicalUrl, href, (base, link) => {
          const resolved = resolveLink(link, base);
          expect(linkResolver(base)(link)).toBe(resolved);
          if (resolved === null) return;
          expect(canonicalize(resolved)).toBe(resolved);
          expect(/^https?:\/\//.test(resolved)).toBe(true);
        }),
        fuzzParams(800),
      );
    },
    FUZZ_TIMEOUT,
  );
});
