import { load } from 'cheerio';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { extractPage, linkResolver, parseXRobotsTag, type ExtractOptions, type ExtractedPage } from '../../src/parse/parser.js';
import { canonicalize, resolveLink } from '../../src/parse/url.js';
import { seededRandom } from '../support/seeded-random.js';

const PAGE = 'http://example.com/dir/page.html';
const FOLLOW: ExtractOptions = { respectNofollow: true, userAgentToken: 'crawl' };

function links(html: string, opts: ExtractOptions = FOLLOW, page = PAGE): string[] {
  return extractPage(html, page, opts).links;
}

describe('extractPage: links', () => {
  it('takes a[href] and area[href] in document order, resolved and canonical', () => {
    const html = `
      <a href="b.html">b</a>
      <map><area href="/area#x" alt=""></map>
      <A HREF="HTTP://Other.COM:80/%7euser">upper-case markup</A>
      <a href="?q=1">query</a>
      <a name="anchor-without-href">no href</a>
      <link href="/stylesheet.css" rel="stylesheet">`;
    expect(links(html)).toEqual(['http://example.com/dir/b.html', 'http://example.com/area', 'http://other.com/~user', 'http://example.com/dir/page.html?q=1']);
  });

  it('de-duplicates spellings of one URL, keeping the first position', () => {
    const html = '<a href="/x">1</a><a href="/y">2</a><a href="/x#frag">3</a><a href="HTTP://EXAMPLE.COM/x">4</a>';
    expect(links(html)).toEqual(['http://example.com/x', 'http://example.com/y']);
  });

  it('drops junk schemes and unparsable hrefs', () => {
    const html = `
      <a href="javascript:void(0)">js</a>
      <a href=" JavaScript:alert(1)">js2</a>
      <a href="mailto:a@example.com">mail</a>
      <a href="tel:+1">tel</a>
      <a href="data:text/html,x">data</a>
      <a href="ftp://example.com/f">ftp</a>
      <a href="http://[broken">broken</a>
      <a href="/kept">kept</a>`;
    expect(links(html)).toEqual(['http://example.com/kept']);
  });

  it('decodes entities and trims HTML whitespace in href', () => {
    const html = '<a href="\n\t /a?x=1&amp;y=2 \n">e</a><a href="/caf&eacute;">c</a>';
    expect(links(html)).toEqual(['http://example.com/a?x=1&y=2', 'http://example.com/caf%C3%A9']);
  });

  it('resolves protocol-relative links against the page scheme', () => {
    expect(links('<a href="//cdn.example.org/x">x</a>', FOLLOW, 'https://example.com/')).toEqual(['https://cdn.example.org/x']);
  });

  it('ignores links in scripts, styles, comments and attribute values, but reads noscript', () => {
    const html = `
      <script>document.write('<a href="/from-script">x</a>')</script>
      <style>a[href="/from-style"] {}</style>
      <!-- <a href="/from-comment">x</a> -->
      <img alt='<a href="/from-attr">'>
      <noscript><a href="/from-noscript">x</a></noscript>`;
    expect(links(html)).toEqual(['http://example.com/from-noscript']);
  });
});

describe('extractPage: <base href>', () => {
  it('resolves links against the first base href, itself resolved against the page', () => {
    const html = `
      <head><base target="_blank"><base href="../other/"><base href="http://ignored.example/"></head>
      <a href="x.html">x</a><a href="/root">r</a>`;
    const page = extractPage(html, PAGE, FOLLOW);
    expect(page.baseUrl).toBe('http://example.com/other/');
    expect(page.links).toEqual(['http://example.com/other/x.html', 'http://example.com/root']);
  });

  it('applies a base on another host', () => {
    const page = extractPage('<base href="https://cdn.example.net/v2/"><a href="a">a</a>', PAGE, FOLLOW);
    expect(page.baseUrl).toBe('https://cdn.example.net/v2/');
    expect(page.links).toEqual(['https://cdn.example.net/v2/a']);
  });

  it.each(['javascript:void(0)', 'mailto:x@example.com', 'http://[bad'])('ignores base href %j', (href) => {
    const page = extractPage(`<base href="${href}"><a href="a">a</a>`, PAGE, FOLLOW);
    expect(page.baseUrl).toBe(PAGE);
    expect(page.links).toEqual(['http://example.com/dir/a']);
  });

  it('reports the canonical page URL as base when there is none', () => {
    expect(extractPage('<a href="a">a</a>', 'HTTP://Example.COM/dir/page.html#x', FOLLOW).baseUrl).toBe(PAGE);
  });

  // Found by test/properties/parser.test.ts: against a page URL that is not a
  // canonical http(s) URL, linkResolver's string shortcuts built links such as
  // "ftp://x.test/x", "not a ur/x" or, for href="", the page URL itself.
  it.each(['ftp://x.test/dir/', 'not a url', '://a.aa:0', '/relative/page'])(
    'regression: a page URL that is no http(s) URL yields only absolute http(s) links (%j)',
    (pageUrl) => {
      const html = '<a href="">self</a><a href="/x">root</a><a href="y?q">relative</a><a href="#f">fragment</a><a href="HTTP://Other.test/a">absolute</a>';
      expect(links(html, FOLLOW, pageUrl)).toEqual(['http://other.test/a']);
    },
  );

  it('regression: a usable <base href> still resolves relative links on such a page', () => {
    expect(links('<base href="https://cdn.test/v2/"><a href="a">a</a><a href="">self</a>', FOLLOW, 'not a url')).toEqual([
      'https://cdn.test/v2/a',
      'https://cdn.test/v2/',
    ]);
  });
});

describe('extractPage: rel=nofollow', () => {
  const html = `
    <a href="/plain">p</a>
    <a href="/nf" rel="nofollow">nf</a>
    <a href="/nf-upper" rel="NoFollow noopener">nf2</a>
    <a href="/nf-spaced" rel="  noopener
      nofollow	">nf3</a>
    <area href="/nf-area" rel="nofollow">
    <a href="/ugc" rel="ugc sponsored">hint only</a>
    <a href="/not-a-token" rel="nofollower">x</a>
    <a href="/both" rel="nofollow">first nofollow</a>
    <a href="/both">then followable</a>`;

  it('drops nofollow links when respected and lists them separately', () => {
    const page = extractPage(html, PAGE, FOLLOW);
    expect(page.links).toEqual(['http://example.com/plain', 'http://example.com/ugc', 'http://example.com/not-a-token', 'http://example.com/both']);
    expect(page.nofollowLinks).toEqual(['http://example.com/nf', 'http://example.com/nf-upper', 'http://example.com/nf-spaced', 'http://example.com/nf-area']);
    expect(page.nofollowAll).toBe(false);
  });

  it('keeps every link when nofollow is not respected', () => {
    const page = extractPage(html, PAGE, { respectNofollow: false });
    expect(page.links).toEqual(['plain', 'nf', 'nf-upper', 'nf-spaced', 'nf-area', 'ugc', 'not-a-token', 'both'].map((path) => `http://example.com/${path}`));
    expect(page.nofollowLinks).toEqual([]);
  });
});

describe('extractPage: meta robots', () => {
  const body = '<a href="/a">a</a><a href="/b">b</a>';
  const cases: Array<[string, string | undefined, { nofollowAll: boolean; noindex: boolean }]> = [
    ['<meta name="robots" content="nofollow">', 'crawl', { nofollowAll: true, noindex: false }],
    ['<meta name="robots" content="noindex">', 'crawl', { nofollowAll: false, noindex: true }],
    ['<meta name="robots" content="none">', 'crawl', { nofollowAll: true, noindex: true }],
    ['<META NAME="ROBOTS" CONTENT="NoIndex, NoFollow">', 'crawl', { nofollowAll: true, noindex: true }],
    ['<meta name=" robots " content="noindex nofollow">', 'crawl', { nofollowAll: true, noindex: true }],
    ['<meta name="robots" content="index, follow">', 'crawl', { nofollowAll: false, noindex: false }],
    ['<meta name="robots" content="all">', 'crawl', { nofollowAll: false, noindex: false }],
    ['<meta name="crawl" content="nofollow">', 'crawl', { nofollowAll: true, noindex: false }],
    ['<meta name="Crawl" content="none">', 'CRAWL', { nofollowAll: true, noindex: true }],
    ['<meta name="crawl" content="nofollow">', undefined, { nofollowAll: false, noindex: false }],
    ['<meta name="googlebot" content="nofollow, noindex">', 'crawl', { nofollowAll: false, noindex: false }],
    ['<meta name="description" content="nofollow">', 'crawl', { nofollowAll: false, noindex: false }],
    ['<meta property="robots" content="nofollow">', 'crawl', { nofollowAll: false, noindex: false }],
    ['<meta name="robots">', 'crawl', { nofollowAll: false, noindex: false }],
  ];

  it.each(cases)('%s (token %s)', (meta, userAgentToken, expected) => {
    const page = extractPage(`<head>${meta}</head>${body}`, PAGE, { respectNofollow: true, userAgentToken });
    expect({ nofollowAll: page.nofollowAll, noindex: page.noindex }).toEqual(expected);
    expect(page.links).toEqual(expected.nofollowAll ? [] : ['http://example.com/a', 'http://example.com/b']);
    expect(page.nofollowLinks).toEqual(expected.nofollowAll ? ['http://example.com/a', 'http://example.com/b'] : []);
  });

  it('reports page-level nofollow but returns the links when not respected', () => {
    const page = extractPage(`<meta name="robots" content="nofollow">${body}`, PAGE, { respectNofollow: false });
    expect(page.nofollowAll).toBe(true);
    expect(page.links).toEqual(['http://example.com/a', 'http://example.com/b']);
  });
});

describe('extractPage: X-Robots-Tag', () => {
  const body = '<a href="/a">a</a>';
  const cases: Array<[string | string[] | null, boolean]> = [
    [null, false],
    ['nofollow', true],
    ['NONE', true],
    ['noindex', false],
    [['noindex', 'nofollow'], true],
    ['crawl: nofollow', true],
    ['CRAWL: nofollow', true],
    ['googlebot: nofollow', false],
    ['googlebot: noindex, nofollow', false],
    ['googlebot: nofollow, crawl: noarchive', false],
    ['googlebot: noindex, crawl: nofollow', true],
    [['googlebot: nofollow', 'crawl: none'], true],
    ['unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow', true],
  ];

  it.each(cases)('%j → nofollowAll %s', (xRobotsTag, nofollow) => {
    const page = extractPage(body, PAGE, { respectNofollow: true, userAgentToken: 'Crawl', xRobotsTag });
    expect(page.nofollowAll).toBe(nofollow);
    expect(page.links).toEqual(nofollow ? [] : ['http://example.com/a']);
  });
});

describe('parseXRobotsTag', () => {
  const cases: Array<[string | string[] | null | undefined, string | undefined, { noindex: boolean; nofollow: boolean }]> = [
    [undefined, 'crawl', { noindex: false, nofollow: false }],
    [null, 'crawl', { noindex: false, nofollow: false }],
    ['', 'crawl', { noindex: false, nofollow: false }],
    ['noindex, nofollow', 'crawl', { noindex: true, nofollow: true }],
    ['noindex nofollow', 'crawl', { noindex: true, nofollow: true }],
    ['none', undefined, { noindex: true, nofollow: true }],
    ['crawl: noindex', 'crawl', { noindex: true, nofollow: false }],
    ['crawl: noindex', undefined, { noindex: false, nofollow: false }],
    [' Crawl :NoIndex ', 'crawl', { noindex: true, nofollow: false }],
    ['crawl: noindex', 'crawlx', { noindex: false, nofollow: false }],
    ['otherbot: none', 'crawl', { noindex: false, nofollow: false }],
    // A header line starts addressed to everyone again.
    [['otherbot: noindex', 'nofollow'], 'crawl', { noindex: false, nofollow: true }],
    ['max-snippet: 20, noindex', 'crawl', { noindex: true, nofollow: false }],
    ['max-image-preview: large, nofollow', 'crawl', { noindex: false, nofollow: true }],
    ['unavailable_after: Friday, 25-Jun-2010 15:00:00 GMT', 'crawl', { noindex: false, nofollow: false }],
    ['all', 'crawl', { noindex: false, nofollow: false }],
    ['nofollowing', 'crawl', { noindex: false, nofollow: false }],
  ];

  it.each(cases)('%j (token %s)', (header, token, expected) => {
    expect(parseXRobotsTag(header, token)).toMatchObject(expected);
  });
});

describe('extractPage: title', () => {
  const cases: Array<[string, string | null]> = [
    ['<title>Hello</title>', 'Hello'],
    ['<title>\n  Hello \t\r\n  World  </title>', 'Hello World'],
    ['<title>Fish &amp; Chips &lt;3</title>', 'Fish & Chips <3'],
    ['<title>a <b>bold</b> c</title>', 'a <b>bold</b> c'],
    ['<title>Non\u00a0breaking</title>', 'Non\u00a0breaking'],
    ['<TITLE>Upper</TITLE>', 'Upper'],
    ['<title>First</title><title>Second</title>', 'First'],
    ['<title>   </title><title>Second</title>', null],
    ['<title></title>', null],
    ['<h1>No title</h1>', null],
    ['<title>Unclosed', 'Unclosed'],
  ];

  it.each(cases)('%j → %j', (html, expected) => {
    expect(extractPage(html, PAGE, FOLLOW).title).toBe(expected);
  });

  it('caps the title at 1000 characters', () => {
    const title = extractPage(`<title>${'x'.repeat(5000)}</title>`, PAGE, FOLLOW).title!;
    expect(title).toBe('x'.repeat(1000));
  });

  it('does not split a surrogate pair at the cap', () => {
    const title = extractPage(`<title>${'x'.repeat(999)}😀tail</title>`, PAGE, FOLLOW).title!;
    expect(title).toBe('x'.repeat(999));
    expect(title.length).toBe(999);
  });
});

describe('extractPage: malformed input', () => {
  const cases: Array<[string, string]> = [
    ['unclosed tags', '<html><body><div><p><a href="/a">a<a href="/b">b<span><a href="/c'],
    ['unquoted attributes', '<a href=/a?x=1 rel=nofollow>a</a><a href=/b>b</a>'],
    ['stray closing tags', '</a></div></body><a href="/a">a</a></html></html>'],
    ['attribute without value', '<a href>x</a><a href="/a">a</a>'],
    ['duplicate attributes', '<a href="/first" href="/second">x</a>'],
    ['null bytes', '<a href="/a\u0000b">x</a>\u0000<a\u0000 href="/c">'],
    ['lone surrogates', '<title>\ud800</title><a href="/\udfff">x</a>'],
    ['empty document', ''],
    ['just text', 'hello world'],
    ['xml-ish', '<?xml version="1.0"?><!DOCTYPE html><![CDATA[<a href="/cdata">]]><a href="/a"/>'],
  ];

  it.each(cases)('survives %s', (_name, html) => {
    const page = extractPage(html, PAGE, FOLLOW);
    for (const link of page.links) expect(canonicalize(link)).toBe(link);
  });

  it('recovers links from unclosed markup', () => {
    expect(links('<div><p><a href="/a">a<a href="/b">b<span><a href="/c">')).toEqual(['http://example.com/a', 'http://example.com/b', 'http://example.com/c']);
  });

  it('handles a huge attribute value', () => {
    const huge = `/${'a'.repeat(2_000_000)}`;
    const page = extractPage(`<a href="${huge}" data-x="${'y'.repeat(1_000_000)}">x</a><a href="/b">b</a>`, PAGE, FOLLOW);
    expect(page.links).toEqual([`http://example.com${huge}`, 'http://example.com/b']);
  });

  it('handles deep nesting without recursion', () => {
    const html = `${'<div><span>'.repeat(20_000)}<a href="/deep">x</a>`;
    expect(links(html)).toEqual(['http://example.com/deep']);
  });

  it('handles binary garbage', () => {
    const random = seededRandom(42);
    for (let round = 0; round < 50; round++) {
      const bytes = Buffer.alloc(4096);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      for (const encoding of ['latin1', 'utf8'] as const) {
        const page = extractPage(bytes.toString(encoding), PAGE, FOLLOW);
        for (const link of page.links) expect(canonicalize(link)).toBe(link);
      }
    }
  });

  it('survives fuzzed HTML-shaped input and keeps its output invariants', () => {
    const random = seededRandom(7);
    const pieces = [
      '<a href="',
      '<a href=',
      '<area href="',
      '<base href="',
      '<title>',
      '</title>',
      '<meta name="robots" content="',
      '<script>',
      '</script>',
      '<style>',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<',
      '>',
      '"',
      "'",
      '=',
      '/',
      ' ',
      '\n',
      'rel="nofollow"',
      'nofollow',
      'none',
      'javascript:',
      'http://',
      '//',
      '../',
      '?',
      '#',
      '&amp;',
      '&#x',
      ';',
      '%',
      '%2f',
      '%7E',
      'é',
      '\u0000',
      '\ufffd',
      '😀',
      'a',
      'x.html',
      '<div>',
      '</div>',
      '</a>',
      '<noscript>',
    ];
    for (let round = 0; round < 1000; round++) {
      let html = '';
      const length = Math.floor(random() * 80);
      for (let i = 0; i < length; i++) html += pieces[Math.floor(random() * pieces.length)];
      const page = extractPage(html, PAGE, { respectNofollow: random() < 0.5, userAgentToken: 'crawl' });
      expect(new Set(page.links).size).toBe(page.links.length);
      for (const link of [...page.links, ...page.nofollowLinks]) {
        expect(canonicalize(link)).toBe(link);
        expect(page.links.includes(link) && page.nofollowLinks.includes(link)).toBe(false);
      }
      if (page.title !== null) {
        expect(page.title.length).toBeLessThanOrEqual(1000);
        expect(page.title).toBe(page.title.trim());
      }
      expect(canonicalize(page.baseUrl)).toBe(page.baseUrl);
    }
  });
});

describe('extractPage memory', () => {
  it('returns links that do not keep the page they came from alive', () => {
    // Attribute values are slices of the document; a link built from one
    // would pin the whole page for as long as the link sits in the frontier.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // Hot first, as in a crawl: Node 24's optimised code kept the slice inside a
    // link that the first few thousand calls had copied (14 MB retained here).
    const warm = linkResolver(PAGE);
    const source = `${'x'.repeat(100)}/relative/path/abc/http://h1.example.com/abs/1`;
    for (let i = 0; i < 50_000; i++) {
      warm(source.slice(100, 118 + (i % 3)));
      warm(source.slice(119));
    }
    const kept: string[] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100; i++) {
      const html = `<p>${'filler '.repeat(20_000)}</p><a href="/relative/path/${i}">r</a><a href="http://h${i}.example.com/abs/${i}">a</a>${i}`;
      kept.push(...extractPage(html, PAGE, FOLLOW).links);
    }
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    expect(kept).toHaveLength(200);
    // 100 pages of 140 KB each would be 14 MB; 200 short URLs are a few KB.
    expect(retained).toBeLessThan(2_000_000);
  });
});

/**
 * What extractPage returned when it walked cheerio's DOM (the implementation
 * before the streaming one), kept as the reference the event-based version
 * must agree with.
 */
function extractViaDom(html: string, pageUrl: string, _opts: ExtractOptions): Pick<ExtractedPage, 'title' | 'links' | 'baseUrl'> {
  type Node = { type: string; name?: string; data?: string; attribs?: Record<string, string>; children?: Node[] };
  const root = load(html, { xml: { xmlMode: false, decodeEntities: true } }).root()[0] as unknown as Node;
  let baseHref: string | undefined;
  let title: string | null = null;
  let seenTitle = false;
  const anchors: string[] = [];
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.attribs !== undefined) {
      if ((node.name === 'a' || node.name === 'area') && node.attribs.href !== undefined) anchors.push(node.attribs.href);
      if (node.name === 'base' && baseHref === undefined && node.attribs.href !== undefined) baseHref = node.attribs.href;
      if (node.name === 'title') {
        if (!seenTitle) {
          const text = (node.children ?? [])
            .filter((c) => c.type === 'text')
            .map((c) => c.data)
            .join('');
          const cleaned = text.replace(/[\t\n\f\r ]+/g, ' ').trim();
          title = cleaned === '' ? null : cleaned;
        }
        seenTitle = true;
        continue;
      }
      if (node.name === 'script' || node.name === 'style') continue;
    }
    for (let i = (node.children?.length ?? 0) - 1; i >= 0; i--) stack.push(node.children![i]);
  }
  const page = canonicalize(pageUrl) ?? pageUrl;
  const baseUrl = baseHref === undefined ? page : (resolveLink(baseHref, page) ?? page);
  const links = new Set<string>();
  for (const href of anchors) {
    const link = resolveLink(href, baseUrl);
    if (link !== null) links.add(link);
  }
  return { title: title === null ? null : title.slice(0, 1000).trimEnd() || null, links: [...links], baseUrl };
}

describe('extractPage agrees with a walk of the DOM htmlparser2 builds', () => {
  const noRobots: ExtractOptions = { respectNofollow: false };
  const agree = (html: string) => {
    const { title, links, baseUrl } = extractPage(html, PAGE, noRobots);
    expect({ title, links, baseUrl }).toEqual(extractViaDom(html, PAGE, noRobots));
  };

  it.each([
    ['nested title in svg', '<svg><title>in svg <a href="/svg-title">x</a></title><a href="/svg">s</a></svg><title>Doc</title>'],
    ['links inside tables and lists', '<table><tr><td><a href="/t1">1<td><a href=/t2>2</table><ul><li><a href="/l">l</ul>'],
    ['implied closes', '<p><a href="/1">one<p><a href="/2">two</a><div><a href="/3"></div>'],
    ['title after body', '<body><a href="/a">a</a></body><title>Late</title>'],
    ['base after links', '<a href="x">x</a><base href="/other/"><a href="y">y</a>'],
    ['script, style and textarea', '<script><a href="/s"></script><style><a href="/st"></style><textarea><a href="/ta"></textarea>'],
    ['unclosed script', '<a href="/before">b</a><script><a href="/in-script">'],
    ['self-closing title', '<title/><a href="/in-title">x</a></title><a href="/after">y</a>'],
    ['self-closing script and style', '<script/><a href="/in-script">x</a></script><style/><a href="/in-style"></style><a href="/after">'],
    ['self-closing title in svg', '<svg><title/><a href="/svg">s</a></svg><title>Doc</title>'],
  ])('%s', (_name, html) => agree(html));

  it('ignores links inside <title/>, <script/> and <style/>, as browsers read them as text', () => {
    expect(links('<title/><a href="/t">x</a></title><script/><a href="/s"></script><style/><a href="/c"></style><a href="/ok">')).toEqual([
      'http://example.com/ok',
    ]);
  });

  it('on fuzzed HTML-shaped input', () => {
    const random = seededRandom(99);
    const pieces = [
      '<a href="',
      '<a href=',
      '<area href="',
      '<base href="',
      '<title>',
      '</title>',
      '<svg>',
      '</svg>',
      '<math>',
      '<p>',
      '<script>',
      '</script>',
      '<style>',
      '</style>',
      '<textarea>',
      '</textarea>',
      '<noscript>',
      '</noscript>',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<',
      '>',
      '/>',
      '"',
      "'",
      '=',
      '/',
      ' ',
      '\n',
      'x',
      '/x',
      '../y',
      '?q',
      '#f',
      '&amp;',
      '&lt;',
      '<div>',
      '</div>',
      '</a>',
      '<table>',
      '<td>',
      '<br/>',
      '<img src=x>',
      '<meta name="robots" content="x">',
      '<title/>',
      '<script/>',
      '<style/>',
      '<svg/>',
    ];
    for (let round = 0; round < 2000; round++) {
      let html = '';
      const length = Math.floor(random() * 60);
      for (let i = 0; i < length; i++) html += pieces[Math.floor(random() * pieces.length)];
      agree(html);
    }
  });
});
