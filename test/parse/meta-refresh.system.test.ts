/**
 * `<meta http-equiv="refresh" content="5; url=/next">` is a link of its page
 * (it was neither followed nor documented): followed as any link is, subject
 * to scope, robots.txt and limits, with the spellings browsers accept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { crawl, type OutputRecord, type PageRecord } from '../../src/index.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const refresh = (content: string) => `<html><head><meta http-equiv="Refresh" content="${content}"><title>moved</title></head><body></body></html>`;

async function records(seed: string, options: Record<string, unknown> = {}): Promise<OutputRecord[]> {
  const out: OutputRecord[] = [];
  for await (const r of crawl({ seeds: [seed], defaults: { rate: 'unlimited' }, emitSkipped: true, allowNetworks: ['127.0.0.0/8'], ...options })) out.push(r);
  return out;
}

describe('meta refresh targets are links of the page', () => {
  it('follows the forms browsers read, resolved against the page', async () => {
    web = await startWeb({
      sites: {
        'r.localhost': {
          pages: {
            '/': '<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/d">d</a><a href="/e">e</a>',
            '/a': refresh('5; url=/next-a'),
            '/b': refresh("0;URL='next-b?x=1'"),
            '/c': refresh('3, /next-c'),
            '/d': refresh('1.5 ; Url = &quot;/next-d&quot; trailing'),
            '/e': refresh('10'), // a reload of itself: nothing new
            '/next-a': 'ok',
            '/next-b': 'ok',
            '/next-c': 'ok',
            '/next-d': 'ok',
          },
        },
      },
    });
    const recs = await records(web.url('r.localhost', '/'));
    for (const path of ['/next-a', '/next-b?x=1', '/next-c', '/next-d']) expect(web.count('r.localhost', path), path).toBe(1);
    const pages = recs.filter((r): r is PageRecord => r.type === 'page');
    expect(pages.find((p) => p.url.endsWith('/next-a'))?.parent).toBe(web.url('r.localhost', '/a'));
    expect(pages.find((p) => p.url.endsWith('/a'))?.links).toBe(1);
    expect(pages.find((p) => p.url.endsWith('/e'))?.links).toBe(0);
  });

  it('obeys scope and robots.txt like any link', async () => {
    web = await startWeb({
      sites: {
        'r.localhost': { robots: 'User-agent: *\nDisallow: /private', pages: { '/': refresh('0; url=/private/x'), '/private/x': 'secret' } },
        's.localhost': { pages: { '/': refresh('0; url={{origin:t.localhost}}/') } },
        't.localhost': { pages: { '/': 'elsewhere' } },
      },
    });
    const a = await records(web.url('r.localhost', '/'));
    expect(web.count('r.localhost', '/private/x')).toBe(0);
    expect(a).toContainEqual(expect.objectContaining({ type: 'skipped', reason: 'robots', url: web.url('r.localhost', '/private/x') }));
    const b = await records(web.url('s.localhost', '/'));
    expect(web.requests('t.localhost')).toEqual([]);
    expect(b).toContainEqual(expect.objectContaining({ type: 'skipped', reason: 'scope', url: web.url('t.localhost', '/') }));
  });
});
