/**
 * Page handlers through the public API, on a local web whose own request log
 * judges them: routing by label, userData from a listing to its details,
 * follow(false), items before their page's record, a throwing and a hanging
 * handler, and every rule of the crawl (scope, robots.txt, depth, dedupe)
 * still holding for the URLs a handler enqueues.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawl, HandlerError, type OutputRecord, type PageHandler } from '../../src/index.js';
import { startWeb, type Web } from '../../fixtures/web.js';
import { chromium } from '../support/system-fixtures.js';

const listing = (page: number, last: number) =>
  `<title>Listing ${page}</title><ul>${[1, 2].map((i) => `<li><a class="item" href="/item/${page}-${i}">Item ${page}-${i}</a></li>`).join('')}</ul>` +
  (page < last ? `<a rel="next" href="/list/${page + 1}">next</a>` : '') +
  '<a href="/about">about</a><a href="/private/x">private</a>';
const item = (id: string) => `<title>Item ${id}</title><h1>Item ${id}</h1><p class="price">${id.length}.50</p><a href="/about">about</a>`;

let web: Web;
beforeAll(async () => {
  const pages: Record<string, string> = { '/about': '<title>About</title>', '/private/x': '<title>Private</title>' };
  for (let p = 1; p <= 3; p++) {
    pages[`/list/${p}`] = listing(p, 3);
    for (const i of [1, 2]) pages[`/item/${p}-${i}`] = item(`${p}-${i}`);
  }
  web = await startWeb({
    sites: {
      'shop.localhost': { pages, robots: 'User-agent: *\nDisallow: /private/\n' },
      'other.localhost': { pages: { '/': '<title>Other</title>' } },
    },
  });
});
afterAll(() => web?.close());

const base = () => ({
  defaults: { rate: '100/s', concurrency: 2 },
  allowNetworks: ['127.0.0.0/8'],
  scope: 'host' as const,
});

async function run(options: Parameters<typeof crawl>[0]): Promise<OutputRecord[]> {
  const out: OutputRecord[] = [];
  for await (const r of crawl(options)) out.push(r);
  return out;
}

const path = (u: string) => new URL(u).pathname;

describe('a page handler', () => {
  it('routes by label, carries userData from a listing to its details, and emits items before their page', async () => {
    const seen: Array<{ path: string; label: string | undefined; depth: number }> = [];
    const records = await run({
      ...base(),
      seeds: [web.url('shop.localhost', '/list/1')],
      handle: {
        default: (page, ctx) => {
          seen.push({ path: path(page.url), label: page.label, depth: page.depth });
          const $ = page.$();
          $('a.item').each((_, a) => ctx.enqueue($(a).attr('href')!, { label: 'detail', userData: { listing: path(page.url) } }));
          const next = $('a[rel=next]').attr('href');
          if (next) ctx.enqueue(next);
          ctx.follow(false);
        },
        detail: async (page, ctx) => {
          seen.push({ path: path(page.url), label: page.label, depth: page.depth });
          await new Promise((resolve) => setTimeout(resolve, 5));
          const $ = page.$();
          ctx.push({ name: $('h1').text(), price: $('.price').text(), from: (page.userData as { listing: string }).listing });
          return { follow: false };
        },
      },
    });
    const pages = records.filter((r) => r.type === 'page');
    // follow(false): about and private were never enqueued; the listings and items were.
    expect(pages.map((r) => path(r.url)).sort()).toEqual([
      '/item/1-1',
      '/item/1-2',
      '/item/2-1',
      '/item/2-2',
      '/item/3-1',
      '/item/3-2',
      '/list/1',
      '/list/2',
      '/list/3',
    ]);
    expect(web.requests('shop.localhost').map((e) => e.path)).not.toContain('/about');
    const items = records.filter((r) => r.type === 'item');
    expect(items).toHaveLength(6);
    expect(items.find((i) => path(i.url) === '/item/2-1')).toMatchObject({ label: 'detail', data: { name: 'Item 2-1', price: '3.50', from: '/list/2' } });
    // Each item comes right before its page's record, and names the fetch it came from.
    for (const it of items) {
      const at = records.indexOf(it);
      const page = records.slice(at).find((r) => r.type === 'page')!;
      expect(page.url).toBe(it.url);
      expect(it.fetchedAt).toBe(page.type === 'page' && page.fetchedAt);
    }
    expect(seen.find((s) => s.path === '/item/3-2')).toEqual({ path: '/item/3-2', label: 'detail', depth: 3 });
    expect(seen.find((s) => s.path === '/list/1')).toEqual({ path: '/list/1', label: undefined, depth: 0 });
  });

  it('keeps every rule of the crawl for what it enqueues: robots.txt, scope, depth and dedupe', async () => {
    const before = web.requests('shop.localhost').length;
    const records = await run({
      ...base(),
      seeds: [web.url('shop.localhost', '/list/1')],
      maxDepth: 1,
      emitSkipped: true,
      handle: (page, ctx) => {
        ctx.enqueue(['/private/x', web.url('other.localhost', '/'), '/list/2', '/list/2', '/list/1']);
        return { follow: false };
      },
    });
    const log = web
      .requests('shop.localhost')
      .slice(before)
      .map((e) => e.path);
    expect(log).not.toContain('/private/x');
    expect(web.requests('other.localhost')).toEqual([]);
    const skipped = records.filter((r) => r.type === 'skipped').map((r) => (r.type === 'skipped' ? `${path(r.url)} ${r.reason}` : ''));
    expect(skipped).toEqual(expect.arrayContaining(['/private/x robots', '/ scope']));
    // /list/2 is at depth 1 (handled: its enqueues are depth 2, over maxDepth); /list/1 is not fetched twice.
    expect(records.filter((r) => r.type === 'page').map((r) => path(r.url))).toEqual(['/list/1', '/list/2']);
    expect(log.filter((p) => p === '/list/1')).toHaveLength(1);
  });

  it('gives a page whose handler throws HANDLER_ERROR, drops its half-done work, and goes on', async () => {
    const handle: PageHandler = (page, ctx) => {
      ctx.push({ from: page.url });
      if (path(page.url) === '/item/1-1') throw new Error('no price here');
    };
    const records = await run({ ...base(), seeds: [web.url('shop.localhost', '/item/1-1'), web.url('shop.localhost', '/item/1-2')], handle });
    const failed = records.find((r) => r.type === 'page' && path(r.url) === '/item/1-1');
    expect(failed).toMatchObject({ status: 200, error: { code: 'HANDLER_ERROR', message: 'no price here' } });
    // Nothing of the failed page's: its item went with its error. Its links were followed as without a handler.
    const items = records.filter((r) => r.type === 'item').map((r) => path(r.url));
    expect(items.sort()).toEqual(['/about', '/item/1-2']);
    expect(records.some((r) => r.type === 'page' && path(r.url) === '/about')).toBe(true);
  });

  it('gives a handler that never settles HANDLER_TIMEOUT, ignoring what it does afterwards, without holding its host', async () => {
    let late: (() => void) | undefined;
    const records = await run({
      ...base(),
      seeds: [web.url('shop.localhost', '/item/2-1'), web.url('shop.localhost', '/item/2-2')],
      defaults: { rate: '100/s', concurrency: 1 },
      // Long enough that the other seed (robots.txt, then the page) is done first even on a loaded machine.
      handlerTimeout: '2s',
      handle: (page, ctx) => {
        if (path(page.url) !== '/item/2-1') return;
        return new Promise(() => {
          late = () => ctx.push({ late: true });
        });
      },
    });
    expect(records.find((r) => r.type === 'page' && path(r.url) === '/item/2-1')).toMatchObject({ error: { code: 'HANDLER_TIMEOUT' } });
    late?.();
    expect(records.filter((r) => r.type === 'item')).toEqual([]);
    // The host (concurrency 1) served the other seed while the first handler hung.
    expect(records.findIndex((r) => r.type === 'page' && path(r.url) === '/item/2-2')).toBeLessThan(
      records.findIndex((r) => r.type === 'page' && path(r.url) === '/item/2-1'),
    );
  });

  it('with handlerErrors "stop", stops after the failing page and the iteration throws HandlerError', async () => {
    const got: OutputRecord[] = [];
    const failing = crawl({
      ...base(),
      seeds: [web.url('shop.localhost', '/list/1')],
      defaults: { rate: '100/s', concurrency: 1 },
      handlerErrors: 'stop',
      handle: (page) => {
        if (path(page.url) === '/list/1') throw new TypeError('selector changed');
      },
    });
    const err = await (async () => {
      for await (const r of failing) got.push(r);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandlerError);
    expect(err).toMatchObject({ code: 'HANDLER_ERROR', url: web.url('shop.localhost', '/list/1') });
    expect((err as Error).message).toBe(`the page handler failed at ${web.url('shop.localhost', '/list/1')}: selector changed`);
    expect(got.find((r) => r.type === 'page')).toMatchObject({ error: { code: 'HANDLER_ERROR' } });
  });

  it('refuses userData that is not JSON or too big, as the handler error of its page', async () => {
    const records = await run({
      ...base(),
      seeds: [web.url('shop.localhost', '/item/3-1'), web.url('shop.localhost', '/item/3-2')],
      handle: (page, ctx) => {
        ctx.follow(false);
        if (path(page.url) === '/item/3-1') ctx.enqueue('/about', { userData: { blob: 'x'.repeat(20_000) } });
        else ctx.enqueue('/about', { userData: { f: () => 1 } });
      },
    });
    const errors = records.filter((r) => r.type === 'page' && r.error).map((r) => (r.type === 'page' ? r.error!.message : ''));
    expect(errors).toHaveLength(2);
    expect(errors.some((m) => /userData is \d+ bytes as JSON, over the limit of 16384/.test(m))).toBe(true);
    expect(errors).toContain('ctx.enqueue: userData: not JSON: a function at .f');
    expect(records.some((r) => r.type === 'page' && path(r.url) === '/about')).toBe(false);
  });

  it('refuses a handle that is neither a function nor a router, in one line', () => {
    expect(() => crawl({ seeds: ['http://a.localhost/'], handle: { detail: 'nope' } as never })).toThrow(
      'options: handle: detail: expected a function (page, ctx), got "nope"',
    );
  });
});

describe.skipIf(chromium.missing !== undefined)('a page handler on a rendered page', () => {
  it('reads the rendered DOM, after rendering', async () => {
    const app = await startWeb({
      sites: {
        'app.localhost': {
          pages: {
            '/': '<title>App</title><div id="app"></div><script>document.getElementById("app").innerHTML = \'<a class="built" href="/built">built by script</a>\';</script>',
            '/built': '<title>Built</title>',
          },
        },
      },
    });
    try {
      const seen: Array<{ path: string; built: number; links: readonly string[] }> = [];
      const records = await run({
        seeds: [app.url('app.localhost', '/')],
        allowNetworks: ['127.0.0.0/8'],
        defaults: { rate: '20/s', render: true },
        renderOptions: { browser: chromium.path },
        handle: (page, ctx) => {
          seen.push({ path: path(page.url), built: page.$()('a.built').length, links: page.links.map(path) });
          ctx.push({ rendered: page.record.rendered });
        },
      });
      expect(seen.find((s) => s.path === '/')).toEqual({ path: '/', built: 1, links: ['/built'] });
      expect(records.filter((r) => r.type === 'item').map((r) => r.type === 'item' && r.data)).toEqual([{ rendered: true }, { rendered: true }]);
    } finally {
      await app.close();
    }
  }, 60_000);
});
