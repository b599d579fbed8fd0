/**
 * What page records carry besides links: the main content (--content text,
 * html, markdown, capped), fields read with CSS selectors (--extract), the
 * rel=canonical (and --follow-canonical's dedupe), and the honest size of a
 * body the crawler did not read. Units through the src/content/ exports,
 * then real crawls of a local web through the crawl harness, the CLI and
 * the library API.
 */
import fc from 'fast-check';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { parseDom } from '../../src/content/dom.js';
import { runExtract } from '../../src/content/extract.js';
import { parseExtractFlag } from '../../src/content/extract-rules.js';
import { mainContent } from '../../src/content/main-content.js';
import { toMarkdown } from '../../src/content/markdown.js';
import { cutUtf8, pageContent } from '../../src/content/page-content.js';
import { toText } from '../../src/content/text.js';
import { ConfigError, crawl as crawlApi, type OutputRecord, type PageRecord } from '../../src/index.js';
import { extractPage } from '../../src/parse/parser.js';
import { canonicalFromLinkHeader } from '../../src/parse/link-header.js';
import { crawl, pathOf } from '../support/crawl-harness.js';
import { memoryIo } from '../support/memory-io.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const BASE = 'https://example.com/dir/page.html';
const main_ = (html: string) => mainContent(parseDom(html));
const markdown = (html: string) => toMarkdown(main_(html).root, BASE);
const text = (html: string) => toText(main_(html).root);

describe('main content', () => {
  const CHROME = '<nav><a href="/">Home</a></nav><header><h1>Site</h1></header><aside>Ads</aside><footer>© us</footer>';
  it.each([
    ['<main>', `${CHROME}<main><p>Story</p></main>`, 'main', 'Story'],
    ['[role=main] when there is no <main>', `${CHROME}<div role="main"><p>Story</p></div>`, 'role=main', 'Story'],
    ['<main> over [role=main]', '<div role="main">Side</div><main>Story</main>', 'main', 'Story'],
    ['the only <article>', `<body>${CHROME}<article><p>Story</p></article></body>`, 'article', 'Story'],
    ['<body> without its chrome when there are several articles', `<body>${CHROME}<article>One</article><article>Two</article></body>`, 'body', 'One\nTwo'],
    ['the whole document when there is no <body>', `<title>T</title>${CHROME}<p>Story</p>`, 'document', 'Story'],
    [
      "an article's own header stays",
      '<body><header>Site</header><section><header>Byline</header><p>Story</p></section><footer>x</footer></body>',
      'body',
      'Byline\nStory',
    ],
    [
      'hidden and invisible elements go',
      '<main><p hidden>secret</p><script>var x</script><style>p{}</style><noscript>js</noscript><template>t</template><svg><text>icon</text></svg><p>Story</p></main>',
      'main',
      'Story',
    ],
    ['a hidden <main> does not count', '<main hidden>old</main><body><p>Story</p></body>', 'body', 'Story'],
  ])('%s', (_name, html, via, expected) => {
    const picked = main_(html);
    expect(picked.via).toBe(via);
    expect(toText(picked.root)).toBe(expected);
  });
});

describe('text', () => {
  it('collapses whitespace, puts blocks on their own lines, keeps <pre> and separates cells by tabs', () => {
    const html = `<main><h1>  The   title </h1><p>One <b>bold</b>\n  word.<br>Next line</p>
      <ul><li>a</li><li>b</li></ul><pre>  code\n    indented</pre>
      <table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>1</td></tr></table><div><span>in</span>line</div></main>`;
    expect(text(html)).toBe('The title\nOne bold word.\nNext line\na\nb\n  code\n    indented\nk\tv\nx\t1\ninline');
  });
});

describe('markdown', () => {
  it('writes headings, paragraphs, emphasis, absolute links and images, code and quotes', () => {
    const html = `<main><h1>Title</h1><h3>Sub <em>title</em></h3>
      <p>Some <strong>strong</strong> and <i>soft</i> text with <a href="../other.html#x">a link</a>, <code>x = 1</code>
      and <img src="/img/a.png" alt="pic">.</p>
      <blockquote><p>Quoted</p><p>twice</p></blockquote>
      <pre><code class="language-js">if (a) {\n  b();\n}</code></pre>
      <p><a href="javascript:void 0">not a link</a> <del>gone</del> 2 * 3 = 6 <a href="/x"></a></p></main>`;
    expect(markdown(html)).toBe(
      [
        '# Title',
        '',
        '### Sub *title*',
        '',
        'Some **strong** and *soft* text with [a link](https://example.com/other.html#x), `x = 1` and ![pic](https://example.com/img/a.png).',
        '',
        '> Quoted',
        '>',
        '> twice',
        '',
        '```js',
        'if (a) {',
        '  b();',
        '}',
        '```',
        '',
        'not a link ~~gone~~ 2 \\* 3 = 6',
      ].join('\n'),
    );
  });

  it('writes nested and ordered lists', () => {
    const html = '<main><ul><li>one</li><li>two<ul><li>two.a</li></ul></li></ul><ol start="3"><li><p>three</p></li><li>four</li></ol></main>';
    expect(markdown(html)).toBe('- one\n- two\n  - two.a\n\n3. three\n4. four');
  });

  it('writes tables as pipe tables, the first row as header, ragged rows padded, pipes escaped', () => {
    const html = `<main><table><caption>Prices</caption><thead><tr><th>Item</th><th>Price</th></tr></thead>
      <tbody><tr><td><a href="/mug">Mug</a></td><td>5 | 6</td></tr><tr><td>Stool<br>folding</td></tr></tbody></table></main>`;
    expect(markdown(html)).toBe('Prices\n\n| Item | Price |\n| --- | --- |\n| [Mug](https://example.com/mug) | 5 \\| 6 |\n| Stool folding |  |');
  });

  it('escapes text that would read as Markdown syntax', () => {
    expect(markdown('<main><p># not a heading</p><p>1. not a list</p><p>a_b *c* [d]</p></main>')).toBe(
      '\\# not a heading\n\n1\\. not a list\n\na\\_b \\*c\\* \\[d\\]',
    );
  });

  it('never throws and stays bounded on random HTML, deep nesting included', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '<p>',
        '</p>',
        '<ul>',
        '<ol start=x>',
        '<li>',
        '</li>',
        '<table>',
        '<tr>',
        '<td>',
        '<th>',
        '</table>',
        '<pre>',
        '</pre>',
        '<code>',
        '`',
        '<a href="/x">',
        '<a href="javascript:x">',
        '</a>',
        '<blockquote>',
        '<em>',
        '</em>',
        '<h2>',
        '<br>',
        '<img src=//x alt="a]">',
        '<main>',
        '<article>',
        '<nav>',
        '<header>',
        '<script>',
        '\u0000',
        '*',
        '|',
        '#',
        '\n',
        ' ',
      ),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.constantFrom(...(['text', 'html', 'markdown'] as const)), (pieces, format) => {
        const out = pageContent(pieces.join(''), BASE, { format, maxBytes: 1000, extract: [] });
        expect(typeof out.content).toBe('string');
        expect(Buffer.byteLength(out.content!)).toBeLessThanOrEqual(1000);
      }),
      { numRuns: 300, seed: 12 },
    );
    const deep = '<div>'.repeat(100_000) + '<p>deep</p>';
    expect(pageContent(deep, BASE, { format: 'markdown', maxBytes: 1000, extract: [] }).content).toBe('deep');
  });
});

describe('the content cap', () => {
  it('cuts at a UTF-8 byte count, never inside a character, and marks the record', () => {
    expect(cutUtf8('aé€😀', 6)).toBe('aé€');
    expect(cutUtf8('aé€😀', 5)).toBe('aé');
    expect(cutUtf8('short', 5)).toBe('short');
    const out = pageContent(`<main><p>${'word '.repeat(100)}</p></main>`, BASE, { format: 'text', maxBytes: 12, extract: [] });
    expect(out).toEqual({ content: 'word word wo', contentTruncated: true });
    expect(pageContent('<p>x</p>', BASE, { format: 'text', maxBytes: 12, extract: [] })).toEqual({ content: 'x' });
  });
});

describe('extract rules', () => {
  const doc = () => parseDom('<h1> The  title </h1><a href="/a" class="n">A</a><a class="n">B</a><a href="/c" class="n">C</a><p class="price">5 €</p>');
  it('takes the first match (text, attribute, HTML) or all of them with name[]', () => {
    const rules = [
      'title=h1',
      'first=a.n::attr(href)',
      'hrefs[]=a.n::attr(href)',
      'names[]=a::text',
      'html=.price::html',
      'none=table',
      'nones[]=table',
      'attr=h1::attr(id)',
    ].map(parseExtractFlag);
    expect(runExtract(doc(), rules, (s) => s)).toEqual({
      title: 'The title',
      first: '/a',
      hrefs: ['/a', '/c'],
      names: ['A', 'B', 'C'],
      html: '<p class="price">5 €</p>',
      none: null,
      nones: [],
      attr: null,
    });
  });

  it.each([
    ['a[', /invalid CSS selector "a\[": /],
    ['p:nosuch', /Unknown pseudo-class :nosuch/],
    ['', /expected a CSS selector/],
    ['a::attr()', /only ::text, ::html and ::attr\(name\)/],
  ])('refuses the selector %j with a reason', (selector, reason) => {
    expect(() => parseExtractFlag(`x=${selector}`)).toThrow(reason);
  });

  it('refuses a flag without a name', () => {
    expect(() => parseExtractFlag('h1')).toThrow(/expected name=selector/);
    expect(() => parseExtractFlag('9x=h1')).toThrow(/expected a name like "title"/);
  });
});

describe('rel=canonical', () => {
  it('reads the first <link rel=canonical>, resolved against <base> and canonical', () => {
    const page = extractPage(
      '<base href="/b/"><link rel="alternate" href="/alt"><link rel="Canonical Other" href="page?x=1#top"><link rel=canonical href="/second">',
      BASE,
      { respectNofollow: true },
    );
    expect(page.canonical).toBe('https://example.com/b/page?x=1');
    expect(extractPage('<link rel="canonical" href="javascript:x">', BASE, { respectNofollow: true }).canonical).toBeNull();
  });

  it.each([
    ['<https://example.com/a>; rel="canonical"', 'https://example.com/a'],
    ['</a,b>; rel=preload, </c>; rel="alternate canonical"', 'https://example.com/c'],
    ['<../up>; title="x; y, z"; rel=canonical', 'https://example.com/up'],
    ['<https://example.com/a>; rel="next"', null],
    ['garbage', null],
  ])('Link: %s', (header, expected) => {
    expect(canonicalFromLinkHeader(header, BASE)).toBe(expected);
  });
});

describe('records of a real crawl', () => {
  const ARTICLE = `<html><head><title>Mug</title><link rel="canonical" href="/products/mug"></head><body>
    <nav><a href="/products/mug">Home</a></nav><main><h1>Enamel mug</h1><p>Holds <b>350 ml</b>. <a href="/products/mug?ref=x">Same</a></p>
    <span class="price">12.00</span><img src="/mug.png"></main><footer>© shop</footer></body></html>`;
  const site = () => ({
    'a.localhost': {
      pages: {
        '/': '<a href="/products/mug?utm=1">mug</a> <a href="/img.png">img</a> <a href="/doc.pdf">doc</a>',
        '/products/mug?utm=1': ARTICLE,
        '/products/mug': ARTICLE,
        '/img.png': { headers: { 'content-type': 'image/png' }, body: new Uint8Array(3000) },
        '/doc.pdf': { headers: { 'content-type': 'application/pdf', link: '</products/doc>; rel="canonical"' }, chunks: { parts: ['%PDF', '-1.4'] } },
      },
    },
  });

  it('carry content, extract and canonical; a body not read has bytes null and its declared contentLength', async () => {
    web = await startWeb({ sites: site() });
    const run = await crawl([web.url('a.localhost', '/')], {
      defaults: { rate: 'unlimited' },
      content: 'markdown',
      extract: { price: '.price', 'images[]': 'img::attr(src)', title: 'h1' },
    });
    const byPath = new Map(run.pages.map((p) => [pathOf(p.url), p]));
    const mug = byPath.get('/products/mug?utm=1')!;
    expect(mug.canonical).toBe(web.url('a.localhost', '/products/mug'));
    expect(mug.content).toBe(
      `# Enamel mug\n\nHolds **350 ml**. [Same](${web.url('a.localhost', '/products/mug?ref=x')})\n\n12.00![](${web.url('a.localhost', '/mug.png')})`,
    );
    expect(mug.extract).toEqual({ price: '12.00', images: ['/mug.png'], title: 'Enamel mug' });
    expect(mug.contentTruncated).toBeUndefined();
    // Without --follow-canonical both spellings are fetched.
    expect(byPath.has('/products/mug')).toBe(true);
    expect(byPath.get('/img.png')).toMatchObject({ status: 200, contentType: 'image/png', bytes: null, contentLength: 3000 });
    expect(byPath.get('/img.png')).not.toHaveProperty('content');
    // Chunked: no declared size. Its Link header still names a canonical.
    const pdf = byPath.get('/doc.pdf')!;
    expect(pdf).toMatchObject({ bytes: null, canonical: web.url('a.localhost', '/products/doc') });
    expect(pdf).not.toHaveProperty('contentLength');
    expect(byPath.get('/')!.bytes).toBeGreaterThan(0);
    expect(run.stats.bytes).toBe(run.pages.reduce((sum, p) => sum + (p.bytes ?? 0), 0));
  });

  it('without --content and --extract, records carry neither', async () => {
    web = await startWeb({ sites: site() });
    const run = await crawl([web.url('a.localhost', '/products/mug')], { defaults: { rate: 'unlimited' }, maxDepth: 0 });
    expect(run.pages[0]).not.toHaveProperty('content');
    expect(run.pages[0]).not.toHaveProperty('extract');
    expect(run.pages[0].canonical).toBe(web.url('a.localhost', '/products/mug'));
  });

  it('--follow-canonical: a page whose canonical differs marks it seen, so the canonical is not fetched', async () => {
    web = await startWeb({ sites: site() });
    const run = await crawl([web.url('a.localhost', '/')], { defaults: { rate: 'unlimited' }, followCanonical: true });
    const paths = run.pages.map((p) => pathOf(p.url)).sort();
    // The nav link to /products/mug came after its canonical was marked seen; ?ref=x was not seen and has its own fetch.
    expect(paths).toEqual(['/', '/doc.pdf', '/img.png', '/products/mug?ref=x', '/products/mug?utm=1']);
  });

  it('--follow-canonical ignores a canonical out of scope', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': { pages: { '/': '<link rel="canonical" href="{{origin:b.localhost}}/"><a href="/x">x</a>', '/x': 'x' } },
        'b.localhost': { pages: { '/': 'b' } },
      },
    });
    const run = await crawl([web.url('a.localhost', '/')], { defaults: { rate: 'unlimited' }, followCanonical: true, allowNetworks: ['127.0.0.0/8'] });
    expect(run.pages.map((p) => pathOf(p.url)).sort()).toEqual(['/', '/x']);
    expect(run.pages[0].canonical).toBe(web.url('b.localhost', '/'));
  });
});

describe('through the CLI and the library', () => {
  it('--content and --extract on the command line', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<body><nav>menu</nav><article><h2>Hi</h2><p>there</p></article></body>' } } } });
    const io = memoryIo(process.cwd());
    const code = await main(['-q', '--content', 'text', '--max-content', '4', '--extract', 'h[]=h2', web.url('a.localhost', '/')], io);
    expect(code).toBe(0);
    const record = JSON.parse(io.out().trim()) as PageRecord;
    expect(record).toMatchObject({ content: 'Hi\nt', contentTruncated: true, extract: { h: ['Hi'] } });
  });

  it.each([
    [['--extract', 'price=.price:nosuch'], /^crawl: --extract: "price": invalid CSS selector "\.price:nosuch": Unknown pseudo-class :nosuch$/],
    [['--extract', '.price'], /^crawl: --extract: expected name=selector/],
    [['--content', 'pdf'], /^crawl: option '--content <format>' argument 'pdf' is invalid/],
    [['--max-content', 'lots'], /^crawl: --max-content: /],
  ])('%j: one line, exit 2', async (flags, pattern) => {
    const io = memoryIo(process.cwd());
    expect(await main([...flags, 'http://a.invalid/'], io)).toBe(2);
    expect(io.out()).toBe('');
    const lines = io.err().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  });

  it('a bad selector in the config file names its key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-content-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ content: 'markdown', extract: { ok: 'h1', 'links[]': 'a[' } }));
    const io = memoryIo(dir);
    expect(await main(['--config', 'c.json', 'http://a.invalid/'], io)).toBe(2);
    expect(io.err().trim()).toMatch(/^crawl: .*c\.json: extract\["links\[\]"\]: invalid CSS selector "a\[": /);
  });

  it('crawl({ content, extract }) yields the same fields, and checks them like a config file', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<main><h1>Hi</h1><p>there <a href="/x">x</a></p></main>', '/x': 'x' } } } });
    const records: OutputRecord[] = [];
    for await (const r of crawlApi({ seeds: [web.url('a.localhost', '/')], maxDepth: 0, content: 'markdown', extract: { title: 'h1' } })) records.push(r);
    expect(records[0]).toMatchObject({ content: `# Hi\n\nthere [x](${web.url('a.localhost', '/x')})`, extract: { title: 'Hi' } });
    expect(() => crawlApi({ seeds: ['http://a.invalid/'], extract: { t: 'h1::attr(' } })).toThrow(ConfigError);
  });
});
