/**
 * Generators for the property tests: strings shaped like the hostile input
 * the crawler meets (URLs, hrefs, HTML, robots.txt, HTTP header values), with
 * the odd pieces that break parsers mixed in, plus plain random text and bytes.
 */
import fc from 'fast-check';
import { canonicalize } from '../../src/parse/url.js';

/** Any string, lone surrogates and control characters included. */
export const anyString = (maxLength = 40): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: fc.constantFrom('\uD800', '\uDFFF', '\u0000', '\uFEFF', '\uFFFD', 'a', '%', '/'), maxLength }),
  );

/** Random bytes decoded as a server's body might be. */
export const decodedBytes = (maxLength = 300): fc.Arbitrary<string> =>
  fc
    .tuple(fc.uint8Array({ maxLength }), fc.constantFrom('utf8', 'latin1') as fc.Arbitrary<BufferEncoding>)
    .map(([bytes, encoding]) => Buffer.from(bytes).toString(encoding));

/** Pieces with a meaning in some part of a URL. */
const URL_PIECES = [
  '/',
  '//',
  '.',
  '..',
  '%',
  '%2e',
  '%2E',
  '%2f',
  '%2F',
  '%41',
  '%7e',
  '%7E',
  '%25',
  '%zz',
  '%C3%A4',
  '%c3%a4',
  '%E4',
  '%00',
  '%3F',
  '%23',
  '?',
  '#',
  '@',
  ':',
  ';',
  '=',
  '&',
  '+',
  ',',
  '!',
  '$',
  "'",
  '(',
  ')',
  '*',
  '~',
  '-',
  '_',
  '[',
  ']',
  '{',
  '}',
  '|',
  '^',
  '`',
  '"',
  '<',
  '>',
  '\\',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u0000',
  '\u00a0',
  'ä',
  'é',
  '€',
  '😀',
  '\uFEFF',
  'a',
  'B',
  'z',
  '0',
  '9',
  'x=1',
  'index.html',
];

/** A short run of URL pieces and random characters: a path segment, a query, a fragment. */
export const urlPart = (maxPieces = 6): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...URL_PIECES) }, { weight: 1, arbitrary: anyString(6) }), { maxLength: maxPieces })
    .map((parts) => parts.join(''));

const hosts = fc.oneof(
  fc.domain(),
  fc.constantFrom(
    'example.com',
    'EXAMPLE.com',
    'example.com.',
    'a.b.c.example.co.uk',
    'alice.github.io',
    'localhost',
    'shop.localhost',
    'xn--bcher-kva.example',
    'bücher.example',
    'BÜCHER.example',
    'xn--a.example',
    'xn--',
    '127.0.0.1',
    '0x7f.1',
    '2130706433',
    '1.2.3',
    '256.1.1.1',
    '[::1]',
    '[2001:DB8::1]',
    '[::ffff:127.0.0.1]',
    '[',
    'a..b',
    '..',
    '%41.com',
    'ex%2Eample.com',
    'a_b.com',
    '-a.com',
    'a-.com',
    'x.123',
    'münchen.de',
    'faß.de',
    'ا.com',
    '',
  ),
  fc.ipV4(),
  fc.ipV6().map((ip) => `[${ip}]`),
  fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '.', '%', 'é', '_', '~', '*'), minLength: 1, maxLength: 12 }),
);

const ports = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 70_000 }).map((n) => `:${n}`) },
  { weight: 1, arbitrary: fc.constantFrom(':', ':80', ':443', ':080', ':0443', ':8080', ':65535', ':65536', ':-1', ':8o') },
);

/** Absolute-URL-shaped strings: many valid http(s) URLs in odd spellings, some of other schemes, some broken. */
export const urlish: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('http', 'https', 'HTTP', 'HtTpS', 'http', 'https', 'ftp', 'javascript', 'mailto', 'data', 'file', 'ws', 'h ttp', ''),
    fc.constantFrom('://', '://', '://', ':/', ':', ':///', ':\\\\', '://\t'),
    fc.constantFrom('', '', '', 'user@', 'u:p@', ':@', '@', 'a%40b@', 'ü@'),
    hosts,
    ports,
    fc.array(urlPart(4), { maxLength: 5 }).map((segments) => segments.map((s) => `/${s}`).join('')),
    fc.oneof(
      fc.constant(''),
      fc.constant('?'),
      urlPart(6).map((q) => `?${q}`),
    ),
    fc.oneof(
      fc.constant(''),
      fc.constant('#'),
      urlPart(4).map((f) => `#${f}`),
    ),
    fc.constantFrom('', '', '', ' ', '\t', '\n'),
  )
  .map(
    ([scheme, separator, userinfo, host, port, path, query, fragment, edge]) =>
      `${edge}${scheme}${separator}${userinfo}${host}${port}${path}${query}${fragment}${edge}`,
  );

/** Anything a caller might pass as a URL. */
export const anyUrlInput: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: urlish },
  { weight: 2, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  { weight: 1, arbitrary: anyString(60) },
);

/** Canonical http(s) URLs (what the crawler queues), from all of the above. */
export const canonicalUrl: fc.Arbitrary<string> = fc
  .oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), urlish)
  .map((input) => canonicalize(input))
  .filter((url): url is string => url !== null);

/** What an href attribute may hold: relative references of every shape, absolute URLs, junk. */
export const href: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom('', '/', '//', './', '../', '../../', '?', '#', 'a/', '.', '..'), urlPart(8)).map(([head, tail]) => head + tail),
  },
  { weight: 2, arbitrary: urlish },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'javascript:alert(1)',
      'mailto:a@b.c',
      'tel:+1',
      'data:text/html,x',
      'x:y',
      ' /a ',
      '\n/b\t',
      '&amp;',
      'http:/x',
      'http:x',
      'HTTP://X.COM',
    ),
  },
  { weight: 1, arbitrary: anyString(30) },
);
