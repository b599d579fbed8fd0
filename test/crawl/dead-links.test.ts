/**
 * A dead link is a page record with its error code: a host that cannot be
 * connected to for robots.txt gives its URLs page records carrying that error
 * (status null), given up within seconds; a robots.txt answering 5xx keeps
 * RFC 9309's reading (disallow, retry, then `robots-unavailable`).
 */
import { describe, expect, it } from 'vitest';
import { fakeCrawl } from '../support/fake-crawl.js';

describe('dead links', () => {
  it('a refused host gets page records with CONNECTION_REFUSED, given up after ~3 s (was a robots-unavailable skip after 15 s)', async () => {
    const run = await fakeCrawl({
      sites: {
        'dead.test': { connectFail: 'CONNECTION_REFUSED' },
        'ok.test': { pages: { '/': { body: '<a href="http://dead.test/a">a</a> <a href="http://dead.test/b">b</a>' } } },
      },
      seeds: ['http://ok.test/'],
      config: { scope: 'any' }, // default robots retries: 2, 5 s apart for a 5xx
    });
    const dead = run.pages.filter((p) => p.url.startsWith('http://dead.test/'));
    expect(dead.map((p) => p.url).sort()).toEqual(['http://dead.test/a', 'http://dead.test/b']);
    for (const page of dead) {
      expect(page).toMatchObject({ status: null, host: 'dead.test', depth: 1, parent: 'http://ok.test/', error: { code: 'CONNECTION_REFUSED' } });
      expect(page.error!.message).toMatch(/robots\.txt, 3 attempts; this URL was not requested/);
    }
    expect(run.skipped.filter((s) => s.url.startsWith('http://dead.test/'))).toEqual([]);
    // Only robots.txt was ever tried, three times, 1 s then 2 s apart: given up 3 s after the first try.
    const attempts = run.fetcher.attempts('dead.test');
    expect(attempts.map((a) => a.path)).toEqual(['/robots.txt', '/robots.txt', '/robots.txt']);
    expect(attempts[2].startedAt - attempts[0].startedAt).toBeLessThan(3_500);
    expect(run.stats.errorsByCode.get('CONNECTION_REFUSED')).toBe(2);
  });

  it('a DNS failure is a page record too', async () => {
    const run = await fakeCrawl({ sites: { 'gone.test': { connectFail: 'DNS_FAILURE' } }, seeds: ['http://gone.test/'] });
    expect(run.pages).toEqual([expect.objectContaining({ url: 'http://gone.test/', status: null, error: expect.objectContaining({ code: 'DNS_FAILURE' }) })]);
  });

  it('a robots.txt answering 5xx keeps the RFC 9309 reading: retried, then a robots-unavailable skip', async () => {
    const run = await fakeCrawl({
      sites: { 'busy.test': { robots: { status: 500 }, generate: { pages: 3, linksPerPage: 1 } } },
      seeds: ['http://busy.test/'],
      config: { robots: { unavailableRetries: 1, unavailableRetryDelay: '1s' } },
    });
    expect(run.pages).toEqual([]);
    expect(run.skipped).toEqual([expect.objectContaining({ url: 'http://busy.test/', reason: 'robots-unavailable' })]);
  });
});
