/**
 * The rendering browser never goes onto the network by itself, tried as an
 * attacker would: every page of `escape.localhost` (fixtures/escape-web.js)
 * aims one way out — popups, speculation rules, WebRTC, navigations, frames,
 * workers, beacons, preconnects — at a canary (fixtures/canary.js) on a
 * loopback address no crawl here may reach (not a seed's host, no
 * --allow-private). The canary's own log judges: it must stay empty,
 * connections without a byte included.
 *
 * A page that navigates by itself (during load, after it, by form or meta
 * refresh) keeps its own DOM and title, and the target is a link queued
 * through the usual admission, obeying robots.txt and the host's rate as
 * every link does, judged from the seed host's own log. A popup gets
 * nothing: its requests are refused and it is closed. A script that every
 * page loads and that answers 404 is asked for once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { startCanary, type Canary } from '../../fixtures/canary.js';
import { ESCAPE_VECTORS, escapeSite } from '../../fixtures/escape-web.js';
import type { PageRecord, SkipRecord } from '../../src/types.js';
import { jsonLines, requireBuilt, startCrawl, type CrawlRun } from '../support/spawn-crawl.js';
import { chromium } from '../support/system-fixtures.js';

const available = chromium.missing === undefined;
if (!available) console.warn(`render escape: skipped, ${chromium.missing}`);

const path = (url: string) => new URL(url).pathname;
/** Popups opened to a disallowed path at once (the issue's report had 20 reach the server within 1.3 s). */
const POPUPS = 8;
const pages = (run: CrawlRun) => jsonLines<PageRecord>(run.stdout).filter((r) => r.type === 'page');

let dir: string;
beforeAll(async () => {
  await requireBuilt();
  dir = await mkdtemp(join(tmpdir(), 'crawl-escape-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!available)('a rendering browser aimed at a refused address', () => {
  let web: Web;
  let canary: Canary;
  let run: CrawlRun;

  beforeAll(async () => {
    canary = await startCanary();
    web = await startWeb({ sites: { 'escape.localhost': escapeSite(canary) } });
    run = await startCrawl(
      ['--render', '--browser', chromium.path, '--rate', '20/s', '--render-timeout', '10s', '--links', '--emit-skipped', web.url('escape.localhost', '/')],
      dir,
    ).done;
    // What a closing page sends last (a keepalive fetch, a beacon on pagehide) has a moment to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }, 120_000);
  afterAll(async () => {
    await web?.close();
    await canary?.close();
  });

  it('renders every page and reaches nothing of the canary: no request, no connection, no datagram', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(
      pages(run)
        .filter((r) => r.host.startsWith('escape.'))
        .map((r) => path(r.url))
        .sort(),
    ).toEqual(['/', ...ESCAPE_VECTORS].sort());
    expect(canary.log().map((e) => `${e.listener} ${e.kind} ${e.detail}`)).toEqual([]);
  });

  it('keeps the DOM of a page that navigates by itself, and follows the target as a link (refused here, as any link to that address)', () => {
    const byPath = new Map(pages(run).map((r) => [path(r.url), r]));
    const navigating = {
      '/location': '/location',
      '/location-later': '/location-later',
      '/meta-refresh': '/meta-refresh',
      '/form-get': '/form-get',
      '/link-click': '/link-click',
    };
    for (const [page, target] of Object.entries(navigating)) {
      const r = byPath.get(page)!;
      expect(r, page).toMatchObject({ status: 200, rendered: true });
      expect(r.error, page).toBeUndefined();
      // Its own title: not the host name of Chromium's error page ("… is blocked").
      expect(r.title, page).not.toMatch(/127\.0\.0\.2|blocked/);
      expect(r.navigations?.map(path), page).toEqual([target]);
      expect(r.linkList, page).toContain(r.navigations![0]);
    }
    // A POST is no link, and a popup gets nothing: the page stays, nothing is followed.
    for (const [page, title] of [
      ['/form-post', 'form POST'],
      ['/popup-open', 'window.open'],
      ['/popup-link', 'target=_blank link clicked'],
      ['/popup-form', 'target=_blank form submitted'],
    ]) {
      expect(byPath.get(page), page).toMatchObject({ status: 200, rendered: true, title });
      expect(byPath.get(page)!.navigations, page).toBeUndefined();
    }
    // The targets were admitted as links are: out of scope (another host) here.
    const skipped = jsonLines<SkipRecord>(run.stdout).filter((r) => r.type === 'skipped' && r.url.startsWith(canary.origin));
    expect(skipped.map((r) => path(r.url))).toEqual(expect.arrayContaining(['/location', '/meta-refresh', '/form-get']));
  });
});

describe.skipIf(!available)('popups get nothing; navigations are links, held to robots.txt and the rate', () => {
  it('requests no popup, keeps the gap, and fetches an allowed navigation once', async () => {
    const opens = Array.from({ length: POPUPS }, (_, i) => `window.open('/private/popup${i}');`).join(' ');
    const web = await startWeb({
      sites: {
        'popups.localhost': {
          robots: 'User-agent: *\nDisallow: /private/\n',
          pages: {
            '/': `<title>Popups</title><script>${opens} window.open('/public/a'); location.href = '/public/b';</script>`,
            '/public/a': '<title>A</title>',
            '/public/b': '<title>B</title>',
          },
        },
      },
    });
    try {
      const run = await startCrawl(['--render', '--browser', chromium.path, '--rate', '2/s', '--emit-skipped', web.url('popups.localhost', '/')], dir).done;
      expect(run.code, run.stderr).toBe(0);
      const log = web.requests('popups.localhost');
      expect(log.map((e) => e.path)).toEqual(['/robots.txt', '/', '/public/b']);
      // 2/s: 500 ms between starts, as the server saw them (a little allowed for a busy machine's stamps).
      for (let i = 1; i < log.length; i++) expect(log[i].at - log[i - 1].at, log[i].path).toBeGreaterThanOrEqual(450);
      const home = pages(run).find((r) => path(r.url) === '/')!;
      expect(home.navigations!.map(path)).toEqual(['/public/b']);
    } finally {
      await web.close();
    }
  }, 60_000);
});

describe.skipIf(!available)('a page that moves itself with history.pushState', () => {
  // Issue 42, item 7: a relative link added after pushState resolved against the fetched URL (/child).
  it('resolves the links it adds afterwards against its new URL', async () => {
    const web = await startWeb({
      sites: {
        'push.localhost': {
          robots: 'User-agent: *\nDisallow:\n',
          pages: {
            '/': `<title>Push</title><body><script>history.pushState({}, '', '/deep/path/'); document.body.insertAdjacentHTML('beforeend', '<a href="child">child</a>');</script>`,
            '/deep/path/child': '<title>Child</title>',
          },
        },
      },
    });
    try {
      const run = await startCrawl(['--render', '--browser', chromium.path, '--rate', '20/s', '--links', web.url('push.localhost', '/')], dir).done;
      expect(run.code, run.stderr).toBe(0);
      const home = pages(run).find((r) => path(r.url) === '/')!;
      expect(home.linkList!.map(path)).toEqual(['/deep/path/child']);
      expect(web.requests('push.localhost').map((e) => e.path)).toEqual(['/robots.txt', '/', '/deep/path/child']);
    } finally {
      await web.close();
    }
  }, 60_000);
});

describe.skipIf(!available)('a failing script that every page loads', () => {
  it('is asked for once: its 404 is remembered crawl-wide', async () => {
    const shell = (n: number) =>
      `<title>Page ${n}</title><div id="app"></div><script src="{{origin:third.localhost}}/widget.js"></script>` +
      `<script>document.getElementById('app').innerHTML = '${n < 5 ? `<a href="/p/${n + 1}">next</a>` : 'the end'}';</script>`;
    const sitePages: Record<string, string> = {};
    for (let n = 0; n < 6; n++) sitePages[`/p/${n}`] = shell(n);
    const web = await startWeb({
      sites: {
        'shells.localhost': { robots: 'User-agent: *\nDisallow:\n', pages: sitePages },
        'third.localhost': { robots: 'User-agent: *\nDisallow:\n', pages: {} },
      },
    });
    try {
      const run = await startCrawl(['--render', '--browser', chromium.path, '--allow-private', '--rate', '20/s', web.url('shells.localhost', '/p/0')], dir)
        .done;
      expect(run.code, run.stderr).toBe(0);
      expect(pages(run).map((r) => path(r.url))).toEqual(['/p/0', '/p/1', '/p/2', '/p/3', '/p/4', '/p/5']);
      expect(web.requests('third.localhost').map((e) => `${e.path} ${e.status}`)).toEqual(['/robots.txt 200', '/widget.js 404']);
      // Every later page was answered from what the crawl remembers.
      const later = pages(run).slice(1);
      for (const r of later) expect(r.subrequests, r.url).toMatchObject({ fetched: 0, cached: 1 });
    } finally {
      await web.close();
    }
  }, 60_000);
});
