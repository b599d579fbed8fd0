/**
 * Sitemaps: the parser (parse/sitemap.ts) as units, robots.txt `Sitemap:`
 * lines, and crawls seeded from sitemaps on a real local web: every listed
 * page fetched once, through the host's limits, with its lastmod.
 */
import { gzipSync } from 'node:zlib';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { minGap, startWeb, type Web } from '../../fixtures/web.js';
import { parseSitemap, SitemapReader, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS } from '../../src/parse/sitemap.js';
import { parseRobots } from '../../src/robots/rules.js';
import { crawl, pathOf } from '../support/crawl-harness.js';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';
import type { PageRecord } from '../../src/types.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const enc = (text: string) => Buffer.from(text, 'utf8');
const urlset = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;

describe('parseSitemap', () => {
  it('reads a urlset: loc and lastmod as written, entities decoded, extension locs ignored, any prefix or case', async () => {
    const xml = `<?xml version="1.0"?>
      <sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <sm:url>
          <sm:loc>  https://a.example/p?x=1&amp;y=2  </sm:loc>
          <sm:lastmod>2024-05-01T10:00:00+00:00</sm:lastmod>
          <image:image><image:loc>https://a.example/img.png</image:loc></image:image>
        </sm:url>
        <sm:URL><sm:LOC><![CDATA[https://a.example/cdata]]></sm:LOC><sm:lastmod> </sm:lastmod></sm:URL>
        <sm:url><sm:lastmod>2024-01-01</sm:lastmod></sm:url>
      </sm:urlset>`;
    const parsed = await parseSitemap(enc(xml));
    expect(parsed.format).toBe('urlset');
    expect(parsed.urls).toEqual([{ loc: 'https://a.example/p?x=1&y=2', lastmod: '2024-05-01T10:00:00+00:00' }, { loc: 'https://a.example/cdata' }]);
    expect(parsed.cut).toBeNull();
    expect(parsed.problem).toBeNull();
  });

  it('reads a sitemap index', async () => {
    const xml = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://a.example/s1.xml.gz</loc><lastmod>2024-02-02</lastmod></sitemap>
      <sitemap><loc>https://a.example/s2.xml</loc></sitemap></sitemapindex>`;
    const parsed = await parseSitemap(enc(xml));
    expect(parsed.format).toBe('index');
    expect(parsed.urls.map((u) => u.loc)).toEqual(['https://a.example/s1.xml.gz', 'https://a.example/s2.xml']);
  });

  it('reads a text sitemap: one URL per line, any line ending, blank lines and a BOM ignored', async () => {
    const parsed = await parseSitemap(enc('\uFEFFhttps://a.example/1\r\n\r\n  https://a.example/2  \rnot a url\nhttps://a.example/3'));
    expect(parsed.format).toBe('text');
    expect(parsed.urls.map((u) => u.loc)).toEqual(['https://a.example/1', 'https://a.example/2', 'https://a.example/3']);
    const prose = await parseSitemap(enc('Just some text.\nNothing else.\n'));
    expect(prose.format).toBe('unknown');
    expect(prose.problem).toMatch(/not a sitemap/);
  });

  it('inflates gzip sitemaps, whatever they are called', async () => {
    const urls = Array.from({ length: 200 }, (_, i) => `https://a.example/p/${i}`);
    const parsed = await parseSitemap(gzipSync(enc(urlset(urls))));
    expect(parsed.format).toBe('urlset');
    expect(parsed.urls.map((u) => u.loc)).toEqual(urls);
  });

  it('stops at the protocol caps: 50,000 URLs and 50 MB per file, keeping what came before', async () => {
    expect(SITEMAP_MAX_URLS).toBe(50_000);
    expect(SITEMAP_MAX_BYTES).toBe(52_428_800);
    const many = Array.from({ length: SITEMAP_MAX_URLS + 5 }, (_, i) => `https://a.example/${i}`);
    const over = await parseSitemap(gzipSync(enc(urlset(many))));
    expect(over.urls).toHaveLength(SITEMAP_MAX_URLS);
    expect(over.urls.at(-1)!.loc).toBe(`https://a.example/${SITEMAP_MAX_URLS - 1}`);
    expect(over.cut).toBe('urls');
    // Exactly at the cap is not over it.
    const exact = await parseSitemap(enc(many.slice(0, SITEMAP_MAX_URLS).join('\n')));
    expect(exact.urls).toHaveLength(SITEMAP_MAX_URLS);
    expect(exact.cut).toBeNull();

    // The byte cap counts uncompressed bytes; an entry the cap cuts in two is dropped.
    const text = urlset(['https://a.example/first', 'https://a.example/second']);
    const cutAt = text.indexOf('second') + 3;
    const small = await parseSitemap(gzipSync(enc(text)), { maxBytes: cutAt });
    expect(small.urls.map((u) => u.loc)).toEqual(['https://a.example/first']);
    expect(small.cut).toBe('bytes');
    expect(small.bytes).toBe(cutAt);
  });

  it('a reader at its cap asks for no more input', () => {
    const reader = new SitemapReader({ maxUrls: 2 });
    expect(reader.write(enc('https://a.example/1\nhttps://a.example/2\n'))).toBe(true);
    expect(reader.write(enc('https://a.example/3\n'))).toBe(false);
    expect(reader.write(enc('https://a.example/4\n'))).toBe(false);
    const parsed = reader.end();
    expect(parsed.urls).toHaveLength(2);
    expect(parsed.cut).toBe('urls');
  });

  it('never throws on malformed files: a truncated one keeps its complete entries, others say what they are', async () => {
    const truncated = await parseSitemap(enc('<urlset><url><loc>https://a.example/ok</loc></url><url><loc>https://a.example/cu'));
    expect(truncated.urls.map((u) => u.loc)).toEqual(['https://a.example/ok']);
    const html = await parseSitemap(enc('<!doctype html><html><body><a href="/x">x</a></body></html>'));
    expect(html.format).toBe('unknown');
    expect(html.urls).toEqual([]);
    expect(html.problem).toMatch(/not a sitemap/);
    const broken = await parseSitemap(gzipSync(enc(urlset(['https://a.example/1']))).subarray(0, 30));
    expect(broken.problem).toMatch(/gzip/);
    expect((await parseSitemap(enc(''))).problem).toBe('empty file');
  });
});

describe('robots.txt Sitemap: lines', () => {
  it('are collected whatever group they stand in, resolved, deduplicated, and never end a group', () => {
    const text = 'User-agent: *\nSitemap: https://a.example/s.xml\nDisallow: /private\nsitemap:/rel.xml # relative\nSITEMAP: https://a.example/s.xml\n';
    const state = parseRobots('https://a.example/robots.txt', text, 'crawl/1.0', 0, 1000);
    expect(state.sitemaps).toEqual(['https://a.example/s.xml', 'https://a.example/rel.xml']);
    expect(state.isAllowed('https://a.example/private/x')).toBe(false);
  });
});

describe('crawls seeded from sitemaps', () => {
  const RATE_GAP_MS = 50;

  it("--sitemaps: the seed robots.txt's sitemap index (with a gzip child) leads to every listed page once, at the host's pace", async () => {
    const pages = Array.from({ length: 8 }, (_, i) => `/only-in-sitemap/${i}`);
    web = await startWeb({
      sites: {
        's.localhost': {
          robots: 'User-agent: *\nDisallow: /private\n\nSitemap: {{origin:s.localhost}}/sitemap-index.xml\n',
          pages: {
            '/': '<title>home</title> no links here',
            '/sitemap-index.xml': {
              headers: { 'content-type': 'application/xml' },
              body: `<sitemapindex><sitemap><loc>{{origin:s.localhost}}/a.xml.gz</loc></sitemap><sitemap><loc>/b.txt</loc></sitemap></sitemapindex>`,
            },
            '/b.txt': {
              headers: { 'content-type': 'text/plain' },
              body: `${pages
                .slice(4)
                .map((p) => `{{origin:s.localhost}}${p}`)
                .join('\n')}\n{{origin:other.localhost}}/elsewhere\n`,
            },
            ...Object.fromEntries(pages.map((p) => [p, `<title>${p}</title>`])),
            '/private/x': 'never',
          },
          handler: (_req, res, ctx) => {
            if (ctx.path !== '/a.xml.gz') return false;
            const xml = `<urlset>${pages
              .slice(0, 4)
              .map((p, i) => `<url><loc>${ctx.origin('s.localhost')}${p}</loc><lastmod>2024-0${i + 1}-01</lastmod></url>`)
              .join('')}<url><loc>${ctx.origin('s.localhost')}/private/x</loc></url></urlset>`;
            res.writeHead(200, { 'content-type': 'application/x-gzip' });
            res.end(gzipSync(Buffer.from(xml)));
          },
        },
        'other.localhost': { pages: { '/elsewhere': 'out of scope' } },
      },
    });
    const run = await crawl([web.url('s.localhost', '/')], { defaults: { rate: `${1000 / RATE_GAP_MS}/s` }, robotsSitemaps: true, allowPrivate: true });
    const fetched = run.pages.map((p) => pathOf(p.url)).sort();
    expect(fetched).toEqual(['/', '/a.xml.gz', '/b.txt', '/sitemap-index.xml', ...pages].sort());
    // Each exactly once; robots.txt once; nothing disallowed or out of scope.
    const log = web.requests('s.localhost').map((r) => r.path);
    expect(log.filter((p) => p === '/robots.txt')).toHaveLength(1);
    expect(new Set(log).size).toBe(log.length);
    expect(web.count('other.localhost')).toBe(0);
    expect(run.skipped.find((s) => s.url.endsWith('/private/x'))?.reason).toBe('robots');
    expect(run.skipped.find((s) => s.url.endsWith('/elsewhere'))?.reason).toBe('scope');
    // The pace held for every request of the host, sitemaps and robots.txt included, as they were written.
    const written = run.written.filter((w) => new URL(w.origin).hostname === 's.localhost').map((w) => w.at);
    expect(written).toHaveLength(web.requests('s.localhost').length);
    expect(minGap(written)).toBeGreaterThanOrEqual(RATE_GAP_MS);

    const byPath = (p: string) => run.pages.find((r) => pathOf(r.url) === p)!;
    const index = byPath('/sitemap-index.xml');
    expect(index).toMatchObject({ kind: 'sitemap', status: 200, links: 2, depth: 0, parent: web.url('s.localhost', '/robots.txt') });
    expect(byPath('/a.xml.gz')).toMatchObject({ kind: 'sitemap', links: 5, depth: 0 });
    expect(byPath('/b.txt')).toMatchObject({ kind: 'sitemap', links: 5 });
    expect(byPath(pages[1])).toMatchObject({ lastmod: '2024-02-01', depth: 1, parent: web.url('s.localhost', '/a.xml.gz') });
    expect(byPath(pages[5]).lastmod).toBeUndefined();
    expect(byPath('/').kind).toBeUndefined();
  });

  it('without --sitemaps, robots.txt Sitemap: lines are not followed', async () => {
    web = await startWeb({
      sites: {
        's.localhost': {
          robots: 'Sitemap: {{origin:s.localhost}}/sitemap.xml\n',
          pages: { '/': 'home', '/sitemap.xml': urlset(['{{origin:s.localhost}}/listed']), '/listed': 'x' },
        },
      },
    });
    const run = await crawl([web.url('s.localhost', '/')], {});
    expect(run.pages.map((p) => pathOf(p.url))).toEqual(['/']);
  });

  it('a named sitemap needs no seed, counts against max-pages, and a sitemap that is not one says so once', async () => {
    web = await startWeb({
      sites: {
        'm.localhost': {
          pages: {
            '/sitemap.xml': { headers: { 'content-type': 'text/xml' }, body: urlset(['/1', '/2', '/3'].map((p) => `{{origin:m.localhost}}${p}`)) },
            '/1': '<!doctype html><title>one</title>',
            '/2': 'two',
            '/3': 'three',
          },
        },
      },
    });
    const run = await crawl([], { sitemaps: [web.url('m.localhost', '/sitemap.xml')], defaults: { rate: 'unlimited' } }, { maxPages: 3 });
    expect(run.pages.map((p) => pathOf(p.url))).toEqual(['/sitemap.xml', '/1', '/2']);

    const again = await crawl([], { sitemaps: [web.url('m.localhost', '/1')], defaults: { rate: 'unlimited' } });
    expect(again.pages).toHaveLength(1);
    expect(again.pages[0]).toMatchObject({ kind: 'sitemap', status: 200, links: 0 });
    expect(again.stats.notes.filter((n) => n.includes('not a sitemap'))).toHaveLength(1);
  });

  it('crawl --sitemap URL works from the command line without a seed', async () => {
    web = await startWeb({
      sites: { 'c.localhost': { pages: { '/s.txt': { headers: { 'content-type': 'text/plain' }, body: '{{origin:c.localhost}}/x\n' }, '/x': 'x' } } },
    });
    const io = memoryIo(await mkdtemp(`${tmpdir()}/crawl-sitemap-`));
    expect(await main(['--sitemap', web.url('c.localhost', '/s.txt'), '--quiet'], io)).toBe(0);
    const records = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PageRecord);
    expect(records.map((r) => [pathOf(r.url), r.kind ?? 'page'])).toEqual([
      ['/s.txt', 'sitemap'],
      ['/x', 'page'],
    ]);

    const bad = memoryIo(tmpdir());
    expect(await main(['--sitemap', 'not a url'], bad)).toBe(2);
    expect(bad.err().trim().split('\n')).toHaveLength(1);
  });
});
