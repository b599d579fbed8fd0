/**
 * Properties of link extraction (src/parse/parser.ts `extractPage`): random
 * bytes, random text or HTML-shaped soup, any page URL the crawler can hold
 * → no exception, and every link is a canonical http(s) URL, once; and the
 * scanner (src/parse/link-scanner.ts) finds exactly what htmlparser2 does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractPage, extractPageParsed, parseXRobotsTag } from '../../src/parse/parser.js';
import { canonicalize } from '../../src/parse/url.js';
import { anyString, anyUrlInput, canonicalUrl, decodedBytes, href } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const attributeValue = fc.oneof(
  { weight: 4, arbitrary: href },
  { weight: 1, arbitrary: fc.constantFrom('nofollow', 'NoFollow noopener', 'robots', 'crawl', 'none', 'noindex, nofollow', 'all') },
);
const attribute = fc
  .tuple(fc.constantFrom('href', 'HREF', 'rel', 'name', 'content', 'charset', 'http-equiv', 'x', 'href'), attributeValue, fc.constantFrom('"', "'", ''))
  .map(
    ([name, value, quote]) =>
      `${name}=${quote}${quote === '"' ? value.replaceAll('"', '&quot;') : quote === "'" ? value.replaceAll("'", '&#39;') : value}${quote}`,
  );
const tag = fc
  .tuple(
    fc.constantFrom('a', 'A', 'area', 'base', 'BASE', 'meta', 'link', 'title', 'script', 'style', 'div', 'svg', 'template', 'noscript', 'textarea', 'iframe'),
    fc.array(attribute, { maxLength: 3 }),
    fc.constantFrom('>', '/>', ' >', ''),
  )
  .map(([name, attributes, end]) => `<${[name, ...attributes].join(' ')}${end}`);
const quoted = (value: string) => `"${value.replaceAll('"', '&quot;')}"`;
/** The commonest shapes, well-formed: a link, a nofollow link, a base, a robots meta. */
const wellFormed = fc.oneof(
  { weight: 6, arbitrary: href.map((h) => `<a href=${quoted(h)}>x</a>`) },
  { weight: 2, arbitrary: href.map((h) => `<a rel="nofollow" href=${quoted(h)}>`) },
  { weight: 1, arbitrary: href.map((h) => `<area href=${quoted(h)}>`) },
  { weight: 1, arbitrary: href.map((h) => `<base href=${quoted(h)}>`) },
  { weight: 1, arbitrary: fc.constantFrom('<meta name="robots" content="nofollow">', '<meta name="crawl" content="none">', '<title> a  title </title>') },
);
/** HTML soup: tags with links, closing tags, text, entities, comments and the constructs that switch tokenizer states. */
const htmlSoup = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: wellFormed },
      { weight: 4, arbitrary: tag },
      { weight: 2, arbitrary: fc.constantFrom('</a>', '</title>', '</script>', '</style>', '</div>', '</textarea>', '</', '<', '>') },
      {
        weight: 2,
        arbitrary: fc.constantFrom('<!--', '-->', '<![CDATA[', ']]>', '<!doctype html>', '<?xml?>', '&amp;', '&#x2F;', '&#0;', '&', '"', "'", '=', '\n', ' '),
      },
      { weight: 2, arbitrary: anyString(12) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));
/**
 * Soup for the scanner's states: every spelling htmlparser2's tokenizer
 * treats apart (raw-text elements and the names it mistakes for them,
 * declarations, comments, closing tags, attributes with and without
 * values and quotes, character references legacy and not), in pieces small
 * enough that random neighbours make the odd cases.
 */
const tokenizerSoup = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: href.map((h) => `<a href=${quoted(h)}>x</a>`) },
      { weight: 2, arbitrary: tag },
      {
        weight: 6,
        arbitrary: fc.constantFrom(
          '<a href="',
          '<a href=',
          "<A HREF='",
          '<area href=',
          '<a/href=q>',
          '<a href=v/>',
          '<a href  =  "w">',
          '<a href>',
          '<a href=>',
          '<a href=x href=y>',
          '<base href=',
          '<link rel="canonical" href="',
          '<link rel=CANONICAL href=',
          '<lin\u212a rel=canonical href=/k>',
          '<meta name="robots" content="',
          '<meta http-equiv="refresh" content="0; url=',
          '<meta name=crawl content=',
          '<meta content=none name=ROBOTS>',
          '<title>',
          '</title>',
          '<TITLE >',
          '</title ',
          '</title/>',
          '<title/>',
          '<title',
          '<xitle>',
          '<textarea>',
          '</textarea>',
          '<textarea/>',
          '<tmp>',
          '<xmp>',
          '</xmp>',
          '<svg>',
          '</svg>',
          '<math>',
          '<p>',
          '</p>',
          '<script>',
          '</script>',
          '</script/>',
          '</SCRIPT\n',
          '<script/>',
          '<scriptx>',
          '<style>',
          '</style>',
          '<style/>',
          '<noscript>',
          '</noscript>',
          '<script>\u001c/script>',
          '</x\u001c/script>',
          '<!--',
          '-->',
          '--->',
          '<!-->',
          '<!--->',
          '<!>',
          '<!-x>',
          '<!-',
          '<!DOCTYPE html>',
          '<![CDATA[',
          '<![CDAT',
          ']]>',
          ']]]>',
          '<?xml ?>',
          '</>',
          '</ a>',
          '</%x>',
          '<',
          '>',
          '/>',
          '/',
          '/ >',
          '"',
          "'",
          '=',
          ' ',
          '\n',
          '\t',
          '\f',
          '\r',
          '\u001c',
          '\u000f',
          '&amp;',
          '&amp',
          '&ampx',
          '&not',
          '&noti',
          '&notin;',
          '&lt;',
          '&lt',
          '&#x41;',
          '&#65',
          '&#',
          '&#x;',
          '&#x',
          '&',
          '&&',
          '&nbsp',
          'rel="nofollow"',
          'rel=nofollow',
          ' rel="x NoFollow" ',
          'nofollow',
          'none',
          'noindex',
          'href=',
          'http://h.example/',
          '//o.example/z',
          'x',
          '/x',
          '../y',
          '?q',
          '#f',
          'é',
          '😀',
          '\u0000',
          '<b>',
          '<div class="x" data-a=\'>\' hidden>',
          '</div>',
          '</a>',
        ),
      },
      { weight: 1, arbitrary: anyString(8) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

const body = fc.oneof({ weight: 4, arbitrary: htmlSoup }, { weight: 1, arbitrary: decodedBytes(400) }, { weight: 1, arbitrary: anyString(200) });

const options = fc.record({
  respectNofollow: fc.boolean(),
  xRobotsTag: fc.option(
    fc.oneof(
      anyString(20),
      fc.array(fc.constantFrom('nofollow', 'crawl: nofollow', 'googlebot: noindex', 'none', 'unavailable_after: x', ':', ''), { maxLength: 3 }),
    ),
  ),
  userAgentToken: fc.option(fc.constantFrom('crawl', 'CRAWL ', 'bot2000', '', ' '), { nil: undefined }),
});

describe('extractPage', () => {
  it(
    'never throws; every link is a canonical http(s) URL, listed once, and nofollow only withholds links',
    () => {
      fc.assert(
        fc.property(body, canonicalUrl, options, (html, pageUrl, opts) => {
          const page = extractPage(html, pageUrl, opts);
          const all = [...page.links, ...page.nofollowLinks];
          for (const link of all) {
            expect(canonicalize(link)).toBe(link);
            expect(/^https?:\/\//.test(link)).toBe(true);
          }
          expect(new Set(all).size).toBe(all.length);
          if (!opts.respectNofollow) expect(page.nofollowLinks).toEqual([]);
          if (opts.respectNofollow && page.nofollowAll) expect(page.links).toEqual([]);
          expect(canonicalize(page.baseUrl)).toBe(page.baseUrl);
          if (page.title !== null) {
            expect(page.title).toBe(page.title.trim());
            expect(page.title.length).toBeGreaterThan(0);
            expect(page.title.length).toBeLessThanOrEqual(1000);
          }
        }),
        fuzzParams(500),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'gives only canonical http(s) links whatever the page URL, even one the crawler would never hold',
    () => {
      fc.assert(
        fc.property(htmlSoup, anyUrlInput, (html, pageUrl) => {
          for (const link of extractPage(html, pageUrl, { respectNofollow: false }).links) {
            expect(canonicalize(link)).toBe(link);
            expect(/^https?:\/\//.test(link)).toBe(true);
          }
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'finds the same links whatever the option, only sorted differently between links and nofollowLinks',
    () => {
      fc.assert(
        fc.property(htmlSoup, canonicalUrl, (html, pageUrl) => {
          const followAll = extractPage(html, pageUrl, { respectNofollow: false });
          const respecting = extractPage(html, pageUrl, { respectNofollow: true });
          expect(new Set([...respecting.links, ...respecting.nofollowLinks])).toEqual(new Set(followAll.links));
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('the link scanner', () => {
  it(
    'finds exactly what htmlparser2 finds: links, nofollow, base, canonical, title and robots directives',
    () => {
      fc.assert(
        fc.property(fc.oneof(tokenizerSoup, htmlSoup, anyString(200)), canonicalUrl, options, (html, pageUrl, opts) => {
          expect(extractPage(html, pageUrl, opts)).toEqual(extractPageParsed(html, pageUrl, opts));
        }),
        fuzzParams(3000),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('parseXRobotsTag', () => {
  it(
    'never throws on any header value',
    () => {
      fc.assert(
        fc.property(
          fc.oneof(anyString(40), fc.array(anyString(20), { maxLength: 3 }), fc.constant(null)),
          fc.option(anyString(8), { nil: undefined }),
          (header, token) => {
            const directives = parseXRobotsTag(header, token);
            expect(typeof directives.noindex).toBe('boolean');
            expect(typeof directives.nofollow).toBe('boolean');
          },
        ),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
