/**
 * --check-links on a real local web: a site whose pages link to a second
 * host (200s, 404s, a HEAD-shy server, a redirect) and to a port nobody
 * listens on. Every external link gets exactly one check (HEAD, or HEAD then
 * GET where HEAD is refused), nothing on the external host is parsed or
 * followed, and the summary counts what is broken.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { crawl, pathOf } from '../support/crawl-harness.js';
import { formatSummary } from '../../src/output/summary.js';
import { linkCheckExtra, wantsGet } from '../../src/crawl/entries/link-check.js';
import type { FrontierEntry } from '../../src/store/crawl-store.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('--check-links on a local web', () => {
  it('checks each external link with one request (HEAD, GET after a refused HEAD), parses nothing there, and counts the broken ones', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/gone`;
    const ext = (path: string) => `{{origin:ext.localhost}}${path}`;
    web = await startWeb({
      sites: {
        'site.localhost': {
          pages: {
            '/': `<a href="/about">about</a> <a href="${ext('/ok')}">ok</a> <a href="${ext('/missing')}">missing</a>
                  <a href="${ext('/no-head')}">no head</a> <a href="${ext('/reset-head')}">reset head</a>
                  <a href="${ext('/moved')}">moved</a> <a href="${dead}">dead</a> <a href="/broken">broken</a>`,
            // The same external links again: still one check each.
            '/about': `<a href="${ext('/ok')}">ok</a> <a href="${ext('/missing')}">missing</a>`,
          },
        },
        'ext.localhost': {
          robots: 'User-agent: *\nDisallow:\n',
          pages: {
            '/ok': '<title>ok</title> <a href="/deeper">never followed</a>',
            '/moved': { status: 301, headers: { location: '/gone-too' } },
          },
          handler: (req, res, ctx) => {
            if (ctx.path === '/no-head') {
              res.writeHead(req.method === 'HEAD' ? 405 : 200, { 'content-type': 'text/html' });
              res.end(req.method === 'HEAD' ? undefined : '<a href="/from-no-head">never followed</a>');
              return;
            }
            if (ctx.path === '/reset-head') {
              if (req.method === 'HEAD') req.socket.destroy();
              else res.end('fine with GET');
              return;
            }
            return false;
          },
        },
      },
    });
    const run = await crawl(
      [web.url('site.localhost', '/')],
      { defaults: { rate: 'unlimited', retries: 0 }, robots: { unavailableRetries: 0 }, allowPrivate: true },
      { checkLinks: true },
    );

    // Exactly one request per external link (two where HEAD was refused), robots.txt once.
    const extLog = web.requests('ext.localhost').map((r) => `${r.method} ${r.path}`);
    expect(extLog.sort()).toEqual(
      [
        'GET /robots.txt',
        'HEAD /ok',
        'HEAD /missing',
        'HEAD /no-head',
        'GET /no-head',
        'HEAD /reset-head',
        'GET /reset-head',
        'HEAD /moved',
        'HEAD /gone-too',
      ].sort(),
    );
    const checks = run.pages.filter((p) => p.kind === 'link-check');
    const byPath = (p: string) => checks.find((r) => pathOf(r.url) === p)!;
    expect(byPath('/ok')).toMatchObject({ status: 200, method: 'HEAD', links: 0, title: null, bytes: null, depth: 1 });
    expect(byPath('/missing')).toMatchObject({ status: 404, method: 'HEAD' });
    expect(byPath('/no-head')).toMatchObject({ status: 200, method: 'GET', links: 0 });
    expect(byPath('/reset-head')).toMatchObject({ status: 200, method: 'GET' });
    expect(byPath('/moved')).toMatchObject({ status: 301, location: web.url('ext.localhost', '/gone-too') });
    expect(byPath('/gone-too')).toMatchObject({ status: 404 });
    // The refused port: a broken link with its error, not a skip.
    const refused = checks.find((r) => r.url === dead)!;
    expect(refused.status).toBeNull();
    expect(refused.error?.code).toBe('CONNECTION_REFUSED');
    expect(run.skipped.filter((s) => s.reason === 'scope')).toEqual([]);

    // In-scope pages are crawled as usual.
    const own = run.pages
      .filter((p) => p.kind === undefined)
      .map((p) => pathOf(p.url))
      .sort();
    expect(own).toEqual(['/', '/about', '/broken']);

    // broken: /missing, /gone-too, the dead port; in scope: /broken (404).
    expect(run.stats.linkCheck).toEqual({ checked: 7, broken: 3, brokenPages: 1 });
    expect(formatSummary(run.stats)).toContain('links    7 checked out of scope, 3 broken; 1 broken page in scope');
  });

  it('without --check-links, out-of-scope links are skipped and never requested', async () => {
    web = await startWeb({
      sites: { 'site.localhost': { pages: { '/': '<a href="{{origin:ext.localhost}}/ok">ok</a>' } }, 'ext.localhost': { pages: { '/ok': 'ok' } } },
    });
    const run = await crawl([web.url('site.localhost', '/')], { defaults: { rate: 'unlimited' }, allowPrivate: true });
    expect(web.count('ext.localhost')).toBe(0);
    expect(run.skipped.map((s) => s.reason)).toEqual(['scope']);
    expect(run.stats.linkCheck).toBeUndefined();
  });
});

describe('link-check decisions', () => {
  const entry = (extra?: FrontierEntry['extra']): FrontierEntry => ({ url: 'http://x/', depth: 1, parent: null, hops: 0, attempt: 0, ...(extra && { extra }) });

  it('only a scope refusal becomes a check, and never for a sitemap file', () => {
    const scope = { ok: false, reason: 'scope', detail: '' } as const;
    expect(linkCheckExtra(scope, true, undefined)).toEqual({ kind: 'link-check' });
    expect(linkCheckExtra(scope, true, { lastmod: '2024' })).toEqual({ kind: 'link-check', lastmod: '2024' });
    expect(linkCheckExtra(scope, false, undefined)).toBeNull();
    expect(linkCheckExtra({ ok: false, reason: 'filtered', detail: '' }, true, undefined)).toBeNull();
    expect(linkCheckExtra(scope, true, { kind: 'sitemap', level: 0 })).toBeNull();
  });

  it.each([
    [{ status: 405 }, true],
    [{ status: 501 }, true],
    [{ status: 404 }, false],
    [{ status: 200 }, false],
    [{ code: 'CONNECTION_RESET' as const }, true],
    [{ code: 'INVALID_RESPONSE' as const }, true],
    [{ code: 'CONNECTION_REFUSED' as const }, false],
    [{ code: 'DNS_FAILURE' as const }, false],
  ])('HEAD answer %o wants GET: %s', (answer, expected) => {
    expect(wantsGet(entry({ kind: 'link-check' }), answer)).toBe(expected);
    // Never twice, and never for a page.
    expect(wantsGet(entry({ kind: 'link-check', method: 'GET' }), answer)).toBe(false);
    expect(wantsGet(entry(), answer)).toBe(false);
  });
});
