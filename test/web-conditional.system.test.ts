/**
 * The test web's conditional requests and generations (fixtures/web.js):
 * what the re-crawl tests rely on, checked from a plain HTTP client.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../fixtures/web.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

interface Got {
  status: number;
  headers: { get(name: string): string | undefined };
  text(): Promise<string>;
}

/** A GET to the web's one address, with the URL's host in the Host header (as the crawler sends it). */
function get(url: string, headers: Record<string, string> = {}): Promise<Got> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: u.port, path: u.pathname, headers: { host: u.host, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: { get: (name) => res.headers[name] as string | undefined }, text: async () => body });
      });
    });
    req.on('error', reject);
  });
}

describe('the test web: validators, 304s and generations', () => {
  it('answers If-None-Match (weak comparison) and If-Modified-Since with 304 and no body; a changed validator gets the page', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': {
          pages: {
            '/strong': { body: 'strong', etag: '"s1"' },
            '/weak': { body: 'weak', etag: 'W/"w1"' },
            '/dated': { body: 'dated', lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT' },
            '/plain': 'plain',
          },
        },
      },
    });
    const u = (p: string) => web!.url('a.localhost', p);
    const first = await get(u('/strong'));
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe('"s1"');
    expect(await first.text()).toBe('strong');
    const again = await get(u('/strong'), { 'if-none-match': '"s1"' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe('"s1"');
    expect((await get(u('/strong'), { 'if-none-match': 'W/"s1"' })).status).toBe(304); // weak comparison
    expect((await get(u('/weak'), { 'if-none-match': 'W/"w1"' })).status).toBe(304);
    expect((await get(u('/weak'), { 'if-none-match': '"other", "w1"' })).status).toBe(304);
    expect((await get(u('/strong'), { 'if-none-match': '"s0"' })).status).toBe(200);
    expect((await get(u('/dated'), { 'if-modified-since': 'Tue, 14 Nov 2023 22:13:20 GMT' })).status).toBe(304);
    expect((await get(u('/dated'), { 'if-modified-since': 'Tue, 14 Nov 2023 22:13:19 GMT' })).status).toBe(200);
    // If-None-Match decides alone when both come (RFC 9110 §13.2.2).
    expect((await get(u('/dated'), { 'if-none-match': '"x"', 'if-modified-since': 'Tue, 14 Nov 2023 22:13:20 GMT' })).status).toBe(200);
    expect((await get(u('/plain'), { 'if-none-match': '*' })).status).toBe(200); // no validators: never 304
    const log = web.requests('a.localhost');
    expect(log.map((e) => e.bytes)).toEqual([6, 0, 0, 0, 0, 6, 0, 5, 5, 5]);
  });

  it('switches a site to another generation of pages', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'one', '/gone': 'here' } } } });
    expect(await (await get(web.url('a.localhost', '/'))).text()).toBe('one');
    web.setPages('a.localhost', { '/': 'two', '/new': 'new' });
    expect(await (await get(web.url('a.localhost', '/'))).text()).toBe('two');
    expect((await get(web.url('a.localhost', '/gone'))).status).toBe(404);
    expect((await get(web.url('a.localhost', '/new'))).status).toBe(200);
    expect(() => web!.setPages('nope.localhost', {})).toThrow(/no site/);
  });
});
