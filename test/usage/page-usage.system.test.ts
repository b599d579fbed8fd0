/**
 * What a site states about the use of its pages, read from real responses:
 * each page record carries `usage`, `usageSources` and `robotsDirectives`,
 * and without a declared purpose nothing else changes (the content is
 * still there, every page is fetched).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawl, type OutputRecord, type PageRecord } from '../../src/index.js';
import { startWeb, type Web } from '../../fixtures/web.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { readWarc } from '../support/warc-reader.js';

let web: Web;
beforeAll(async () => {
  const links = ['/cu', '/tdm', '/xr', '/plain', '/doc.pdf', '/bad'].map((p) => `<a href="${p}">${p}</a>`).join('');
  web = await startWeb({
    sites: {
      'site.localhost': {
        pages: {
          '/': `<title>Home</title>${links}`,
          '/cu': { body: '<title>CU</title><p>Text.</p>', headers: { 'content-usage': 'train-ai=n, search=y' } },
          '/tdm': '<title>TDM</title><meta name="tdm-reservation" content="1"><meta name="robots" content="noarchive"><p>Reserved.</p>',
          '/xr': { body: '<title>XR</title><p>No AI.</p>', headers: { 'x-robots-tag': 'noindex, noai, otherbot: noarchive' } },
          '/plain': '<title>Plain</title><p>Nothing said.</p>',
          '/doc.pdf': { body: '%PDF-1.4', headers: { 'content-type': 'application/pdf', 'content-usage': 'train-ai=y' } },
          '/bad': { body: '<title>Bad</title>', headers: { 'content-usage': 'train-ai=n,,' } },
        },
      },
    },
  });
});
afterAll(() => web?.close());

describe('a crawl without a purpose', () => {
  it('says on each page record what the site stated, and where, and changes nothing else', async () => {
    const records: OutputRecord[] = [];
    for await (const r of crawl({ seeds: [web.url('site.localhost', '/')], allowNetworks: ['127.0.0.0/8'], defaults: { rate: '50/s' }, content: 'text' }))
      records.push(r);
    const byPath = new Map(records.filter((r): r is PageRecord => r.type === 'page').map((r) => [new URL(r.url).pathname, r]));
    expect([...byPath.keys()].sort()).toEqual(['/', '/bad', '/cu', '/doc.pdf', '/plain', '/tdm', '/xr']);
    expect(byPath.get('/cu')).toMatchObject({
      usage: { 'train-ai': 'n', search: 'y' },
      usageSources: [{ source: 'header', name: 'content-usage', value: 'train-ai=n, search=y', states: { 'train-ai': 'n', search: 'y' } }],
      content: expect.stringContaining('Text.'),
    });
    expect(byPath.get('/tdm')).toMatchObject({ usage: { 'train-ai': 'n', 'ai-input': 'n', tdm: 'n' }, robotsDirectives: ['noarchive'] });
    expect(byPath.get('/xr')).toMatchObject({
      usage: { 'train-ai': 'n', 'ai-input': 'n' },
      usageSources: [{ source: 'header', name: 'x-robots-tag', value: 'noai' }],
      robotsDirectives: ['noindex', 'noai'],
      content: expect.stringContaining('No AI.'),
    });
    // A body the crawl does not read still says what its headers state.
    expect(byPath.get('/doc.pdf')).toMatchObject({ usage: { 'train-ai': 'y' } });
    // A field that does not parse states nothing, and says so by its source.
    expect(byPath.get('/bad')).toMatchObject({ usage: {}, usageSources: [{ name: 'content-usage', value: 'train-ai=n,,', states: {} }] });
    for (const path of ['/', '/plain']) {
      const r = byPath.get(path)!;
      expect(r.usage, path).toBeUndefined();
      expect(r.usageSources, path).toBeUndefined();
      expect(r.robotsDirectives, path).toBeUndefined();
    }
  });
});

describe('a crawl declared for a purpose (--purpose)', () => {
  const tmp = useTempDir('crawl-purpose-');
  beforeAll(requireBuilt);

  it('keeps the record, status and links of a page that says "n" to it, withholds its content and archive, and fetches every page', async () => {
    const args = [
      '--purpose',
      'ai-train',
      '--allow-private',
      '--rate',
      '50/s',
      '--content',
      'text',
      '--links',
      '--save-dir',
      'saved',
      '--warc',
      'site.warc.gz',
      '--stats',
      'stats.json',
    ];
    const run = await startCrawl([...args, web.url('site.localhost', '/')], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    const pages = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PageRecord);
    const byPath = new Map(pages.map((r) => [new URL(r.url).pathname, r]));
    // ai-train is train-ai: /cu says train-ai=n, /tdm reserves TDM, /xr says noai.
    for (const path of ['/cu', '/tdm', '/xr']) {
      const r = byPath.get(path)!;
      expect(r, path).toMatchObject({ status: 200, usageDenied: 'train-ai' });
      expect(r.content, path).toBeUndefined();
      expect(r.savedPath, path).toBeUndefined();
    }
    // A page that allows it, or says nothing, keeps everything.
    for (const path of ['/plain', '/doc.pdf']) expect(byPath.get(path)!.usageDenied, path).toBeUndefined();
    expect(byPath.get('/plain')!.content).toContain('Nothing said.');
    expect(byPath.get('/')!.linkList).toHaveLength(6);
    const saved = (await readdir(join(tmp.path, 'saved'), { recursive: true })).map(String);
    expect(saved.some((f) => f.includes('plain'))).toBe(true);
    expect(saved.some((f) => /(^|\/)(cu|tdm|xr)(\.html)?$/.test(f))).toBe(false);
    // The WARC has no response of a withheld page; the others are in it.
    const responses = readWarc(await readFile(join(tmp.path, 'site.warc.gz')))
      .filter((r) => r.header('WARC-Type') === 'response')
      .map((r) => new URL(r.header('WARC-Target-URI')!).pathname);
    expect(responses).toContain('/plain');
    for (const path of ['/cu', '/tdm', '/xr']) expect(responses, path).not.toContain(path);
    expect(run.stderr).toMatch(/withheld +train-ai ×3/);
    expect(JSON.parse(await readFile(join(tmp.path, 'stats.json'), 'utf8'))).toMatchObject({ usageDenied: { 'train-ai': 3 } });
  });

  it('keeps a page that says noarchive out of --save-dir, and out of nothing else; --archive-noarchive keeps it too', async () => {
    const seed = web.url('site.localhost', '/');
    const run = await startCrawl(['--allow-private', '--rate', '50/s', '--content', 'text', '--save-dir', 'kept', seed], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    const byPath = new Map(jsonLines<PageRecord>(run.stdout).map((r) => [new URL(r.url).pathname, r]));
    // /tdm says noarchive to everyone; /xr says it to another bot only.
    expect(byPath.get('/tdm')).toMatchObject({ notArchived: 'noarchive', content: expect.stringContaining('Reserved.') });
    expect(byPath.get('/tdm')!.savedPath).toBeUndefined();
    expect(byPath.get('/xr')!.notArchived).toBeUndefined();
    expect(byPath.get('/xr')!.savedPath).toBeDefined();
    expect(run.stderr).toContain('--archive-noarchive keeps them');
    const again = await startCrawl(['--allow-private', '--rate', '50/s', '--save-dir', 'all', '--archive-noarchive', seed], tmp.path).done;
    expect(again.code, again.stderr).toBe(0);
    const tdm = jsonLines<PageRecord>(again.stdout).find((r) => r.url.endsWith('/tdm'))!;
    expect(tdm.notArchived).toBeUndefined();
    expect(await readFile(join(tmp.path, 'all', tdm.savedPath!), 'utf8')).toContain('Reserved.');
  });

  it('warns once per host about a Content-Usage field that does not parse, and reads it as stating nothing', async () => {
    const run = await startCrawl(['--allow-private', '--rate', '50/s', web.url('site.localhost', '/')], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    const warnings = run.stderr.split('\n').filter((l) => l.includes('does not parse'));
    expect(warnings).toHaveLength(2); // the warning, and the summary's note of it
    expect(warnings[0]).toContain(
      `Content-Usage "train-ai=n,," on ${web.url('site.localhost', '/bad')} does not parse (RFC 9651 Dictionary): read as stating nothing`,
    );
    expect(jsonLines<PageRecord>(run.stdout).find((r) => r.url.endsWith('/bad'))).toMatchObject({ status: 200, usage: {} });
  });

  it('refuses a use it does not know in one line naming the known ones, exit 2, before any request', async () => {
    const before = web.requests().length;
    const run = await startCrawl(['--purpose', 'search,training', web.url('site.localhost', '/')], tmp.path).done;
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(/^crawl: --purpose: unknown use "training"; known: search, train-ai \(or ai-train\), ai-input \(or ai-use\), tdm/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(web.requests().length).toBe(before);
  });
});
