import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { duplicates, generatedLinks, maxInWindow, minGap, startWeb, substitute } from '../fixtures/web.js';
import type { RequestLogEntry, Web, WebOptions } from '../fixtures/web.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** Milliseconds between the first and last body chunk. */
  bodySpanMs: number;
}

interface GetOptions {
  method?: string;
  agent?: http.Agent;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

// fetch() cannot set Host, so talk to 127.0.0.1 and name the virtual host ourselves.
function get(web: Web, host: string, urlPath: string, opts: GetOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: web.port,
        path: urlPath,
        method: opts.method ?? 'GET',
        agent: opts.agent,
        headers: { host: `${host}:${web.port}`, ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let first = 0;
        let last = 0;
        res.on('data', (c: Buffer) => {
          last = performance.now();
          if (chunks.length === 0) first = last;
          chunks.push(c);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8'), bodySpanMs: last - first });
        });
        res.on('error', reject);
      },
    );
    if (opts.timeoutMs !== undefined) req.setTimeout(opts.timeoutMs, () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end();
  });
}

const webs: Web[] = [];
const dirs: string[] = [];
async function web(options: WebOptions): Promise<Web> {
  const w = await startWeb(options);
  webs.push(w);
  return w;
}
function tempSites(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'crawl-web-'));
  dirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}
afterEach(async () => {
  await Promise.all(webs.splice(0).map((w) => w.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('routing', () => {
  it('routes by Host, ignoring case and port, and 404s unknown hosts (still logged)', async () => {
    const w = await web({ sites: { 'news.localhost': { pages: { '/': 'news home' } }, 'Shop.Localhost': { pages: { '/': 'shop home' } } } });
    expect((await get(w, 'news.localhost', '/')).text).toBe('news home');
    expect((await get(w, 'SHOP.localhost', '/')).text).toBe('shop home');
    expect((await get(w, 'nowhere.localhost', '/')).status).toBe(404);
    expect((await get(w, 'news.localhost', '/missing')).status).toBe(404);
    expect(w.hosts.sort()).toEqual(['news.localhost', 'shop.localhost']);
    expect(w.requests().map((e) => [e.host, e.path, e.status])).toEqual([
      ['news.localhost', '/', 200],
      ['shop.localhost', '/', 200],
      ['nowhere.localhost', '/', 404],
      ['news.localhost', '/missing', 404],
    ]);
  });

  it('matches a page by path with query first, then by path alone', async () => {
    const w = await web({ sites: { a: { pages: { '/s?q=1': 'exact', '/s': 'any query' } } } });
    expect((await get(w, 'a', '/s?q=1')).text).toBe('exact');
    expect((await get(w, 'a', '/s?q=2')).text).toBe('any query');
  });

  it('serves RouteSpec status, headers and an honest content-length; HEAD gets no body', async () => {
    const w = await web({ sites: { a: { pages: { '/x': { status: 410, headers: { 'X-Test': 'yes' }, body: 'héllo' } } } } });
    const r = await get(w, 'a', '/x');
    expect([r.status, r.headers['x-test'], r.headers['content-type'], r.headers['content-length'], r.text]).toEqual([
      410,
      'yes',
      'text/html; charset=utf-8',
      '6',
      'héllo',
    ]);
    const head = await get(w, 'a', '/x', { method: 'HEAD' });
    expect([head.status, head.body.length, w.requests('a')[1].method]).toEqual([410, 0, 'HEAD']);
  });
});

describe('substitution', () => {
  it('replaces {{port}} and {{origin:HOST}}', () => {
    expect(substitute('{{port}} {{origin:news.localhost}}/x {{origin:A-b.localhost}}', 8080)).toBe(
      '8080 http://news.localhost:8080/x http://A-b.localhost:8080',
    );
  });

  it('substitutes served pages, static HTML, robots.txt and redirect targets but not binaries', async () => {
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0xff, 0x00, ...Buffer.from('{{port}}')]);
    const dir = tempSites({
      'docs.localhost/index.html': '<a href="{{origin:news.localhost}}/">news</a>',
      'docs.localhost/robots.txt': 'Sitemap: {{origin:docs.localhost}}/sitemap.xml',
      'docs.localhost/kit.pdf': pdf,
    });
    const w = await web({ dir, sites: { 'news.localhost': { pages: { '/': 'port {{port}}' } } } });
    expect((await get(w, 'news.localhost', '/')).text).toBe(`port ${w.port}`);
    expect((await get(w, 'docs.localhost', '/')).text).toBe(`<a href="http://news.localhost:${w.port}/">news</a>`);
    expect((await get(w, 'docs.localhost', '/robots.txt')).text).toBe(`Sitemap: ${w.origin('docs.localhost')}/sitemap.xml`);
    const bin = await get(w, 'docs.localhost', '/kit.pdf');
    expect([bin.headers['content-type'], bin.body.equals(pdf)]).toEqual(['application/pdf', true]);
  });
});

describe('robots.txt variants', () => {
  const dir = () => tempSites({ 'a/robots.txt': 'User-agent: *\nDisallow: /from-file' });

  it.each([
    { name: 'a string', robots: 'User-agent: *\nDisallow: /x', status: 200, body: 'User-agent: *\nDisallow: /x', type: 'text/plain' },
    { name: 'a 503 route', robots: { status: 503, body: 'down' }, status: 503, body: 'down', type: 'text/plain' },
    { name: 'a 401 route', robots: { status: 401 }, status: 401, body: '', type: 'text/plain' },
    { name: 'null, overriding the file', robots: null, status: 404, body: undefined, type: 'text/html; charset=utf-8' },
    { name: 'absent, so the file', robots: undefined, status: 200, body: 'User-agent: *\nDisallow: /from-file', type: 'text/plain; charset=utf-8' },
  ])('robots as $name', async ({ robots, status, body, type }) => {
    const w = await web({ dir: dir(), sites: { a: { robots } } });
    const r = await get(w, 'a', '/robots.txt');
    expect([r.status, r.headers['content-type']]).toEqual([status, type]);
    if (body !== undefined) expect(r.text).toBe(body);
  });

  it('404s when there is no robots.txt at all', async () => {
    const w = await web({ sites: { a: { pages: { '/': 'home' } } } });
    expect((await get(w, 'a', '/robots.txt')).status).toBe(404);
  });

  it('delays robots.txt by its own delayMs', async () => {
    const w = await web({ sites: { a: { robots: { status: 200, body: '', delayMs: 150 } } } });
    const t0 = performance.now();
    await get(w, 'a', '/robots.txt');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });
});

describe('static sites', () => {
  const files = {
    'news.localhost/index.html': 'home',
    'news.localhost/section/index.html': 'section',
    'news.localhost/_redirects.json': JSON.stringify({ '/old': '/new.html', '/away': '{{origin:docs.localhost}}/' }),
    'news.localhost/_private.html': 'secret',
    'news.localhost/new.html': 'new',
    'news.localhost/notes.txt': 'plain',
    'news.localhost.evil/stolen.html': 'stolen',
  };

  it('serves index.html for directories and 301s a directory without its slash, keeping the query', async () => {
    const w = await web({ dir: tempSites(files) });
    expect((await get(w, 'news.localhost', '/')).text).toBe('home');
    expect((await get(w, 'news.localhost', '/section/')).text).toBe('section');
    const r = await get(w, 'news.localhost', '/section?a=1');
    expect([r.status, r.headers.location]).toEqual([301, '/section/?a=1']);
    expect((await get(w, 'news.localhost', '/notes.txt')).headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('answers _redirects.json entries with 301, substituting the target', async () => {
    const w = await web({ dir: tempSites(files) });
    const old = await get(w, 'news.localhost', '/old');
    expect([old.status, old.headers.location]).toEqual([301, '/new.html']);
    expect((await get(w, 'news.localhost', '/away')).headers.location).toBe(`${w.origin('docs.localhost')}/`);
  });

  it.each([
    '/missing.html',
    '/_redirects.json',
    '/_private.html',
    '/../news.localhost.evil/stolen.html',
    '/%2e%2e/news.localhost.evil/stolen.html',
    '/index.html/x',
    '/%E0%A4%A',
  ])('404s (or 400s) %s', async (p) => {
    const w = await web({ dir: tempSites(files) });
    expect([400, 404]).toContain((await get(w, 'news.localhost', p)).status);
  });
});

describe('generated sites', () => {
  const gen = { pages: 50_000, linksPerPage: 8, crossHosts: ['b.localhost'], seed: 7 };

  it('links deterministically: next page first, no self-links, in range, some cross-host', () => {
    expect(generatedLinks(gen, 123)).toEqual(generatedLinks({ ...gen }, 123));
    expect(generatedLinks(gen, 123)).not.toEqual(generatedLinks({ ...gen, seed: 8 }, 123));
    let cross = 0;
    for (let i = 0; i < 1000; i++) {
      const links = generatedLinks(gen, i);
      expect(links).toHaveLength(8);
      expect(links[0]).toEqual({ host: null, page: i + 1 });
      for (const l of links) expect(l.page !== i && l.page >= 0 && l.page < gen.pages).toBe(true);
      cross += links.filter((l) => l.host === 'b.localhost').length;
    }
    expect(cross).toBeGreaterThan(300); // ~10% of 7000 random links
    expect(cross).toBeLessThan(1100);
    expect(generatedLinks({ pages: 10, linksPerPage: 3 }, 9)).toHaveLength(3); // last page: no "next", still full
    expect(generatedLinks({ pages: 1, linksPerPage: 3 }, 0)).toEqual([]);
    // a tiny site makes self-link collisions certain, so the no-self-link rule is really exercised
    for (let i = 0; i < 3; i++) expect(generatedLinks({ pages: 3, linksPerPage: 20 }, i).filter((l) => l.page === i)).toEqual([]);
  });

  it('serves the links it computes and 404s pages out of range', async () => {
    const w = await web({ sites: { 'a.localhost': { generate: gen } } });
    const html = (await get(w, 'a.localhost', '/p/123')).text;
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    expect(hrefs).toEqual(generatedLinks(gen, 123).map((l) => (l.host ? `http://${l.host}:${w.port}` : '') + `/p/${l.page}`));
    expect((await get(w, 'a.localhost', '/')).text).toContain('href="/p/0"');
    for (const p of ['/p/50000', '/p/01', '/p/-1', '/p/x']) expect((await get(w, 'a.localhost', p)).status).toBe(404);
  });

  it('serves 2,000 pages quickly over keep-alive', async () => {
    const w = await web({ sites: { 'a.localhost': { generate: gen } } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const t0 = performance.now();
    const replies = await Promise.all(Array.from({ length: 2000 }, (_, i) => get(w, 'a.localhost', `/p/${i * 17}`, { agent })));
    const elapsed = performance.now() - t0;
    agent.destroy();
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(w.count('a.localhost')).toBe(2000);
    expect(elapsed).toBeLessThan(3000);
  });

  it('rejects nonsense generate specs at start', async () => {
    await expect(startWeb({ sites: { a: { generate: { pages: 0, linksPerPage: 1 } } } })).rejects.toThrow(/generate/);
  });
});

describe('request log', () => {
  it('records arrival time, user agent, status, and in-flight count per host', async () => {
    const w = await web({ sites: { slow: { delayMs: 150, pages: { '/': 'ok' } }, fast: { pages: { '/': 'ok' } } } });
    const before = performance.timeOrigin + performance.now();
    await Promise.all([1, 2, 3].map(() => get(w, 'slow', '/', { headers: { 'user-agent': 'crawl/test' } })));
    await get(w, 'fast', '/');
    await get(w, 'slow', '/');
    const after = performance.timeOrigin + performance.now();
    const slow = w.requests('slow');
    expect(slow.map((e) => e.inFlight)).toEqual([1, 2, 3, 1]);
    expect(w.maxInFlight('slow')).toBe(3);
    expect(w.maxInFlight('fast')).toBe(1);
    expect(slow.map((e) => e.userAgent)).toEqual(['crawl/test', 'crawl/test', 'crawl/test', null]);
    expect(slow.every((e) => e.status === 200 && e.at >= before && e.at <= after)).toBe(true);
    // the 4th arrival came after the 150 ms delay of the first three
    expect(slow[3].at - slow[0].at).toBeGreaterThanOrEqual(140);
    expect(w.count('slow', '/')).toBe(4);
    w.reset();
    expect([w.requests().length, w.count('slow')]).toEqual([0, 0]);
  });

  it('records a status of null for an unanswered request and its real status once a handler answers', async () => {
    const w = await web({
      sites: {
        a: {
          pages: { '/hang': { hang: true } },
          handler: (_req, res) => {
            res.statusCode = 418;
            res.end('teapot');
          },
        },
      },
    });
    await expect(get(w, 'a', '/hang', { timeoutMs: 100 })).rejects.toThrow(/client timeout/);
    expect((await get(w, 'a', '/implicit')).status).toBe(418);
    expect(w.requests('a').map((e) => e.status)).toEqual([null, 418]);
  });

  it('drops a hanging request from in-flight when the client gives up', async () => {
    const w = await web({ sites: { a: { pages: { '/hang': { hang: true }, '/': 'ok' } } } });
    await expect(get(w, 'a', '/hang', { timeoutMs: 100 })).rejects.toThrow();
    await sleep(50);
    await get(w, 'a', '/');
    expect(w.requests('a').map((e) => e.inFlight)).toEqual([1, 1]);
  });
});

describe('minGap / maxInWindow / duplicates', () => {
  it.each([
    { times: [], gap: Infinity },
    { times: [5], gap: Infinity },
    { times: [0, 500, 1000], gap: 500 },
    { times: [1000, 0, 499.5], gap: 499.5 },
    { times: [0, 0], gap: 0 },
  ])('minGap($times) = $gap', ({ times, gap }) => {
    expect(minGap(times)).toBe(gap);
  });

  it.each([
    { times: [], windowMs: 1000, max: 0 },
    { times: [0], windowMs: 1000, max: 1 },
    { times: [0, 1000, 2000], windowMs: 1000, max: 1 }, // exactly one window apart: different windows
    { times: [0, 999, 1998], windowMs: 1000, max: 2 },
    { times: [0, 100, 200, 1150, 1199, 1250], windowMs: 1000, max: 3 },
    { times: [0, 600, 900, 1100, 1500], windowMs: 1000, max: 4 }, // 600..1500, not aligned to a boundary
    { times: [1500, 0, 900, 600, 1100], windowMs: 1000, max: 4 }, // order does not matter
    { times: [5, 5, 5], windowMs: 1, max: 3 },
  ])('maxInWindow($times, $windowMs) = $max', ({ times, windowMs, max }) => {
    expect(maxInWindow(times, windowMs)).toBe(max);
  });

  it('lists paths requested more than once per host', () => {
    const e = (host: string, p: string) => ({ host, path: p }) as RequestLogEntry;
    expect(duplicates([e('a', '/'), e('b', '/'), e('a', '/x'), e('a', '/'), e('a', '/'), e('b', '/y')])).toEqual([{ host: 'a', path: '/', count: 3 }]);
    expect(duplicates([])).toEqual([]);
  });
});

describe('server-side limit', () => {
  it('answers 429 with Retry-After past perSecond in any 1 s window, and recovers after it', async () => {
    let calls = 0;
    const w = await web({ sites: { a: { pages: { '/': 'ok' }, limit: { perSecond: 3, status: 429, retryAfter: () => String(++calls) } } } });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await get(w, 'a', '/'));
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(statuses.slice(3).map((r) => r.headers['retry-after'])).toEqual(['1', '2']);
    expect(w.requests('a').map((e) => e.status)).toEqual([200, 200, 200, 429, 429]);
    await sleep(1000 - (performance.timeOrigin + performance.now() - w.requests('a')[0].at) + 20);
    expect((await get(w, 'a', '/')).status).toBe(200);
  });

  it('applies to robots.txt too, and answers 503 without Retry-After when none is set', async () => {
    const w = await web({ sites: { a: { robots: '', limit: { perSecond: 1, status: 503 } } } });
    expect((await get(w, 'a', '/robots.txt')).status).toBe(200);
    const r = await get(w, 'a', '/robots.txt');
    expect([r.status, r.headers['retry-after']]).toEqual([503, undefined]);
  });

  it('in gap mode refuses an arrival closer than 1/perSecond to the last accepted one', async () => {
    const w = await web({ sites: { a: { pages: { '/': 'ok' }, limit: { perSecond: 10, status: 429, mode: 'gap' } } } });
    expect((await get(w, 'a', '/')).status).toBe(200);
    expect((await get(w, 'a', '/')).status).toBe(429);
    await sleep(120);
    expect((await get(w, 'a', '/')).status).toBe(200);
  });

  it('reset() clears the limiter', async () => {
    const w = await web({ sites: { a: { pages: { '/': 'ok' }, limit: { perSecond: 1, status: 429 } } } });
    await get(w, 'a', '/');
    expect((await get(w, 'a', '/')).status).toBe(429);
    w.reset();
    expect((await get(w, 'a', '/')).status).toBe(200);
  });
});

describe('slow, stalled and custom routes', () => {
  it('streams chunks with the configured interval', async () => {
    const w = await web({ sites: { a: { pages: { '/c': { chunks: { parts: ['<p>one', '<p>two {{port}}'], intervalMs: 150 } } } } } });
    const r = await get(w, 'a', '/c');
    expect(r.text).toBe(`<p>one<p>two ${w.port}`);
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.bodySpanMs).toBeGreaterThanOrEqual(130);
  });

  it('close() ends hanging and keep-alive connections promptly and cancels pending delays', async () => {
    const w = await startWeb({ sites: { a: { pages: { '/hang': { hang: true }, '/slow': { delayMs: 60_000 }, '/': 'ok' } } } });
    const agent = new http.Agent({ keepAlive: true });
    await get(w, 'a', '/', { agent });
    const hanging = get(w, 'a', '/hang').catch((e: Error) => e);
    const slow = get(w, 'a', '/slow').catch((e: Error) => e);
    await sleep(50);
    const t0 = performance.now();
    await w.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await hanging).toBeInstanceOf(Error);
    expect(await slow).toBeInstanceOf(Error);
    agent.destroy();
  });

  it('lets a handler answer through ctx.send, fall through with false, and turns a throw into 500', async () => {
    const w = await web({
      sites: {
        a: {
          dir: tempSites({ 'x/file.html': 'from dir' }) + '/x',
          handler: async (_req, _res, ctx) => {
            if (ctx.path === '/boom') throw new Error('boom');
            if (ctx.path !== '/dyn') return false;
            await ctx.send({ status: 202, body: ctx.url('other', '/') });
          },
        },
      },
    });
    const dyn = await get(w, 'a', '/dyn');
    expect([dyn.status, dyn.text]).toEqual([202, `http://other:${w.port}/`]);
    expect((await get(w, 'a', '/file.html')).text).toBe('from dir');
    const boom = await get(w, 'a', '/boom');
    expect([boom.status, boom.text.includes('boom')]).toEqual([500, true]);
    expect(w.requests('a').map((e) => e.status)).toEqual([202, 200, 500]);
  });
});

describe('the demo web', () => {
  it('serves its four hosts with working cross-links, robots, a redirect and a PDF', async () => {
    const w = await web({ dir: fileURLToPath(new URL('../fixtures/demo/', import.meta.url)) });
    expect(w.hosts.sort()).toEqual(['blog.localhost', 'docs.localhost', 'news.localhost', 'shop.localhost']);
    expect((await get(w, 'news.localhost', '/')).text).toContain(`href="${w.origin('shop.localhost')}/`);
    expect((await get(w, 'shop.localhost', '/robots.txt')).text).toMatch(/Disallow: \/cart\n/);
    expect((await get(w, 'docs.localhost', '/robots.txt')).text).toMatch(/User-agent: crawl\nAllow: \/internal\/public\//);
    expect((await get(w, 'blog.localhost', '/robots.txt')).status).toBe(404);
    expect((await get(w, 'news.localhost', '/2023/election-night.html')).headers.location).toBe('/articles/election-night-recap.html');
    expect((await get(w, 'news.localhost', '/press/media-kit.pdf')).headers['content-type']).toBe('application/pdf');
  });
});
