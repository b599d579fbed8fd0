/**
 * What a site states about the use of its pages, read from real responses:
 * each page record carries `usage`, `usageSources` and `robotsDirectives`,
 * and without a declared purpose nothing else changes (the content is
 * still there, every page is fetched).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawl, type OutputRecord, type PageRecord } from '../../src/index.js';
import { startWeb, type Web } from '../../fixtures/web.js';

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
