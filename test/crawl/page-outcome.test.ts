import { describe, expect, it } from 'vitest';
import type { FetchResult } from '../../src/fetch/fetcher.js';
import { pageOutcome } from '../../src/crawl/page-outcome.js';
import type { PageRecord } from '../../src/types.js';

const entry = { url: 'http://a.test/dir/page', depth: 2, parent: 'http://a.test/', hops: 0, attempt: 0 };
const base: PageRecord = {
  type: 'page',
  url: entry.url,
  host: 'a.test',
  status: null,
  depth: 2,
  parent: entry.parent,
  contentType: null,
  bytes: 0,
  title: null,
  links: 0,
  fetchedAt: '2026-01-01T00:00:00.000Z',
  elapsedMs: 0,
};
const opts = { maxRedirects: 3, respectNofollow: true, emitLinks: false, userAgentToken: 'crawl' };
const res = (r: Partial<FetchResult>): FetchResult => ({
  url: entry.url,
  status: 200,
  headers: {},
  contentType: 'text/html',
  charset: 'utf-8',
  body: null,
  bytes: 0,
  truncated: false,
  location: null,
  elapsedMs: 12.4,
  ...r,
});

describe('pageOutcome', () => {
  it('follows a redirect at the same depth with one more hop, resolved against the page', () => {
    const out = pageOutcome(entry, res({ status: 301, location: '../new?x=1#f' }), base, opts);
    expect(out.record).toMatchObject({ status: 301, location: 'http://a.test/new?x=1', elapsedMs: 12 });
    expect(out.next).toEqual([{ url: 'http://a.test/new?x=1', depth: 2, hops: 1 }]);
  });

  it('stops a chain past maxRedirects and rejects unusable targets, following nothing', () => {
    const long = pageOutcome({ ...entry, hops: 3 }, res({ status: 302, location: '/next' }), base, opts);
    expect(long.record.error?.code).toBe('REDIRECT_LIMIT');
    expect(long.next).toEqual([]);
    const bad = pageOutcome(entry, res({ status: 307, location: 'mailto:x@y.z' }), base, opts);
    expect(bad.record).toMatchObject({ location: 'mailto:x@y.z', error: { code: 'REDIRECT_INVALID' } });
    expect(bad.next).toEqual([]);
  });

  it('extracts title and links from 2xx HTML, one level deeper, and reports held-back links', () => {
    const html = '<title>T</title><a href="/a">a</a><a href="b">b</a><a rel="nofollow" href="/c">c</a>';
    const out = pageOutcome(entry, res({ body: html, bytes: html.length }), base, { ...opts, emitLinks: true });
    expect(out.record).toMatchObject({ status: 200, title: 'T', links: 2, bytes: html.length, linkList: ['http://a.test/a', 'http://a.test/dir/b'] });
    expect(out.next.map((n) => [n.url, n.depth])).toEqual([
      ['http://a.test/a', 3],
      ['http://a.test/dir/b', 3],
    ]);
    expect(out.nofollow).toEqual(['http://a.test/c']);
  });

  it('does not follow links of error pages, and marks truncated bodies', () => {
    const out = pageOutcome(entry, res({ status: 404, body: '<a href="/x">x</a>', truncated: true }), base, opts);
    expect(out.next).toEqual([]);
    expect(out.record).toMatchObject({ status: 404, truncated: true, links: 0 });
  });
});
