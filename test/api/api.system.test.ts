/**
 * The library API through its public entry (src/index.ts), against real
 * local webs: the records equal the CLI's, options fail like a config file,
 * the consumer's pace bounds the crawl, leaving early or aborting stops it and
 * releases its connections, and explain() returns the `crawl check` verdicts
 * as data.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { ConfigError, OutputError, UsageError, crawl, explain, type CrawlOptions, type OutputRecord, type PageRecord } from '../../src/index.js';
import { memoryIo } from '../support/memory-io.js';
import { readWarc } from '../support/warc-reader.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the CLI in-process; stdout lines parsed, stderr lines as printed. */
async function runCli(argv: string[], cwd = root) {
  const io = memoryIo(cwd);
  const code = await main(argv, io);
  const out = io.out();
  const err = io.err();
  return {
    code,
    records: out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as OutputRecord),
    errLines: err.trim().split('\n'),
  };
}

async function collect(options: CrawlOptions): Promise<OutputRecord[]> {
  const records: OutputRecord[] = [];
  for await (const record of crawl(options)) records.push(record);
  return records;
}

/** Records without their timings, in a stable order: what two runs of one crawl must agree on. */
const comparable = (records: OutputRecord[]) =>
  records.map((r) => JSON.stringify({ ...r, fetchedAt: undefined, startedAt: undefined, elapsedMs: undefined })).sort();

/** A site that never runs dry, to watch a crawl being held back or stopped. */
const endless = (sockets?: Set<Socket>) => ({
  generate: { pages: 300, linksPerPage: 3 },
  handler: sockets ? (req: { socket: Socket }) => (sockets.add(req.socket), false as const) : undefined,
});

describe('crawl(): records', () => {
  it('yields exactly the records the CLI writes for the same site', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': {
          robots: 'User-agent: *\nDisallow: /private\n',
          pages: {
            '/': '<title>Home</title> <a href="/x">x</a> <a href="/old">old</a> <a href="/private/p">p</a> <a href="/gone">gone</a> <a href="{{origin:b.localhost}}/">b</a>',
            '/x': '<a href="/">home</a> <a href="/x?page=2">next</a>',
            '/x?page=2': 'page two',
            '/old': { status: 301, headers: { location: '/x' } },
            '/gone': { status: 404, body: 'no' },
          },
        },
      },
    });
    const seed = web.url('a.localhost', '/');
    const cli = await runCli(['-q', '--rate', '200/s', '--emit-skipped', '--links', seed]);
    expect(cli.code).toBe(0);
    const lib = await collect({ seeds: [seed], defaults: { rate: '200/s' }, emitSkipped: true, links: true });

    expect(comparable(lib)).toEqual(comparable(cli.records));
    // The comparison must have had something to compare: pages, a redirect, a 404 and skips.
    expect(
      lib
        .filter((r) => r.type === 'page')
        .map((r) => r.status)
        .sort(),
    ).toEqual([200, 200, 200, 301, 404]);
    expect(lib).toContainEqual(expect.objectContaining({ type: 'skipped', reason: 'robots', detail: 'Disallow: /private' }));
    expect(lib).toContainEqual(expect.objectContaining({ type: 'skipped', reason: 'scope' }));
  });

  it('reports progress while running and the final stats once iteration ends', async () => {
    web = await startWeb({ sites: { 's.localhost': { generate: { pages: 6, linksPerPage: 2 } } } });
    const run = crawl({ seeds: [web.url('s.localhost')], defaults: { rate: 'unlimited' } });
    expect(run.progress()).toMatchObject({ fetched: 0, inFlight: 0 }); // nothing starts before the first pull
    expect(web.requests()).toEqual([]);
    let seen = 0;
    for await (const record of run) {
      seen++;
      expect(record.type).toBe('page');
      expect(run.progress().fetched).toBeGreaterThanOrEqual(seen);
    }
    const stats = await run.done;
    expect(seen).toBe(7);
    expect(stats.pagesByStatus['200']).toBe(7);
    expect(stats.interrupted).toBe(false);
    // Plain JSON, as --stats writes it: instants as ISO strings, durations in whole milliseconds.
    expect(JSON.parse(JSON.stringify(stats))).toEqual(stats);
    expect(stats).toMatchObject({ pages: 7, pagesByStatus: { '200': 7 }, hosts: [expect.objectContaining({ fetched: 7 })] });
    expect(stats.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(stats.endedAt) - Date.parse(stats.startedAt)).toBe(stats.elapsedMs);
    expect(Number.isInteger(stats.elapsedMs)).toBe(true);
  });
});

describe('crawl(): bad options fail like a config file, before any request', () => {
  it('words every config problem as the CLI does for the same file, all at once', async () => {
    const bad = { concurrency: 0, defaults: { rate: 'x' }, typo: 1, timeout: { connect: 'soon' } };
    const dir = await mkdtemp(join(tmpdir(), 'crawl-api-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify(bad));
    const cli = await runCli(['--config', 'c.json', 'http://a.localhost/'], dir);
    expect(cli.code).toBe(2);

    let error: unknown;
    try {
      crawl({ seeds: ['http://a.localhost/'], ...bad });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect((error as ConfigError).message).toBe(problems.join('\n'));
    expect(problems.every((p) => p.startsWith('options: '))).toBe(true);
    const what = (line: string) => line.replace(/^(crawl: )?(options|\S*c\.json): /, '');
    expect(problems.map(what)).toEqual(cli.errLines.map(what));
  });

  it('checks the code-only options in the same pass and the same words', () => {
    const options = { seeds: ['http://a.localhost/'], highWaterMark: 0, emitSkipped: 'yes', signal: {}, log: 'loud', maxPages: -1 };
    expect(() => crawl(options as unknown as CrawlOptions)).toThrow(ConfigError);
    try {
      crawl(options as unknown as CrawlOptions);
    } catch (e) {
      expect((e as ConfigError).problems).toEqual([
        'options: highWaterMark: expected an integer >= 1, got 0',
        'options: emitSkipped: expected true or false, got "yes"',
        'options: signal: expected an AbortSignal, got an object',
        'options: log: expected an object with info() and warn() methods (console will do), got "loud"',
        'options: maxPages: expected an integer >= 1, got -1',
      ]);
    }
  });

  it('rejects bad seeds with the CLI message and missing ones with a one-line UsageError', async () => {
    const cli = await runCli(['not a url']);
    expect(() => crawl({ seeds: ['not a url'] })).toThrow(new UsageError(cli.errLines[0].replace(/^crawl: /, '')));
    expect(() => crawl({} as CrawlOptions)).toThrow(/^options: seeds: expected a list of http\(s\) URLs, got nothing$/);
    expect(() => crawl({ seeds: [] })).toThrow(/^options: seeds: no seed URL given$/);
    expect(() => crawl(undefined as unknown as CrawlOptions)).toThrow(ConfigError);
    try {
      crawl({ seeds: 'http://a/' } as unknown as CrawlOptions);
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      expect((e as UsageError).code).toBe('USAGE');
    }
  });
});

describe('crawl(): the consumer sets the pace', () => {
  it('holds the crawl back while the consumer does not pull, and resumes when it does', async () => {
    web = await startWeb({ sites: { 'bp.localhost': endless() } });
    const highWaterMark = 4;
    const run = crawl({ seeds: [web.url('bp.localhost')], defaults: { rate: 'unlimited', concurrency: 2 }, highWaterMark });
    const iterator = run[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);

    // Wait for the crawl to come to rest (unthrottled, the whole site takes well under a second).
    let held = -1;
    for (let i = 0; i < 10 && web.count('bp.localhost') !== held; i++) {
      held = web.count('bp.localhost');
      await sleep(250);
    }
    expect(web.count('bp.localhost')).toBe(held);
    // robots.txt + the page pulled + the buffer + a record waiting to be written + the requests in flight.
    expect(held).toBeLessThanOrEqual(1 + 1 + highWaterMark + 1 + 2);
    expect(run.progress().fetched).toBeLessThanOrEqual(held);

    let pulled = 1;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) pulled++;
    expect(pulled).toBe(301);
    expect((await run.done).interrupted).toBe(false);
  });
});

describe('crawl(): stopping', () => {
  it('break stops the crawl and closes its connections before the loop statement completes', async () => {
    const sockets = new Set<Socket>();
    web = await startWeb({ sites: { 'brk.localhost': endless(sockets) } });
    const run = crawl({ seeds: [web.url('brk.localhost')], defaults: { rate: '50/s', concurrency: 2 } });
    let n = 0;
    for await (const record of run) {
      expect(record.type).toBe('page');
      if (++n === 3) break;
    }
    const stats = await run.done;
    expect(stats.interrupted).toBe(true);
    const after = web.count('brk.localhost');
    expect(after).toBeLessThan(20);
    expect(sockets.size).toBeGreaterThan(0);
    // Keep-alive sockets would stay open for seconds; a closed fetcher ends them at once.
    for (let i = 0; i < 50 && [...sockets].some((s) => !s.destroyed); i++) await sleep(20);
    expect([...sockets].filter((s) => !s.destroyed)).toHaveLength(0);
    await sleep(200);
    expect(web.count('brk.localhost')).toBe(after);
  });

  it('an AbortSignal ends the iteration normally with what was in flight, and nothing starts after', async () => {
    web = await startWeb({ sites: { 'ab.localhost': { ...endless(), delayMs: 30 } } });
    const controller = new AbortController();
    const run = crawl({ seeds: [web.url('ab.localhost')], defaults: { rate: '50/s', concurrency: 2 }, signal: controller.signal });
    const records: OutputRecord[] = [];
    for await (const record of run) {
      records.push(record);
      if (records.length === 3) controller.abort();
    }
    expect((await run.done).interrupted).toBe(true);
    expect(records.length).toBeLessThan(10);
    const after = web.count('ab.localhost');
    await sleep(200);
    expect(web.count('ab.localhost')).toBe(after);
  });

  it('an already aborted signal fetches nothing and yields nothing', async () => {
    web = await startWeb({ sites: { 'pre.localhost': endless() } });
    const run = crawl({ seeds: [web.url('pre.localhost')], signal: AbortSignal.abort() });
    const records: OutputRecord[] = [];
    for await (const record of run) records.push(record);
    expect(records).toEqual([]);
    expect((await run.done).interrupted).toBe(true);
    await sleep(50);
    expect(web.requests()).toEqual([]);
  });

  it('stop() lets requests in flight finish and ends the iteration', async () => {
    web = await startWeb({ sites: { 'st.localhost': endless() } });
    const run = crawl({ seeds: [web.url('st.localhost')], defaults: { rate: '50/s', concurrency: 2 }, highWaterMark: 1 });
    let n = 0;
    for await (const record of run) {
      if (record.type === 'page') expect(record.error).toBeUndefined(); // finished, not cancelled
      if (++n === 2) run.stop();
    }
    expect((await run.done).interrupted).toBe(true);
    expect(n).toBeLessThanOrEqual(2 + 1 + 1 + 2); // + the buffer, a write waiting, the requests in flight
  });
});

describe("crawl(): the CLI's options for content, discovery, requests and archives", () => {
  /** One site that exercises each: main content, a canonical, a sitemap named by robots.txt, a broken external link. */
  const site = () => ({
    'a.localhost': {
      robots: 'User-agent: *\nAllow: /\nSitemap: {{origin:a.localhost}}/sitemap.xml\n',
      pages: {
        '/': '<title>Home</title><nav>menu</nav><main><h1>Home</h1><p>Hello <b>world</b></p></main><a href="/dup">dup</a> <a href="{{origin:b.localhost}}/gone">gone</a>',
        '/dup': '<link rel="canonical" href="/canon"><main><h1>Dup</h1></main><a href="/canon">canon</a>',
        '/canon': '<main><h1>Canon</h1></main>',
        '/listed': '<main><h1>Listed</h1></main>',
        '/logo.png': { headers: { 'content-type': 'image/png' }, body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) },
        '/sitemap.xml': {
          headers: { 'content-type': 'application/xml' },
          body: '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{origin:a.localhost}}/listed</loc><lastmod>2024-01-02</lastmod></url><url><loc>{{origin:a.localhost}}/logo.png</loc></url></urlset>',
        },
      },
    },
    'b.localhost': { pages: { '/gone': { status: 404, body: 'no' } } },
  });

  it('yields the records the CLI writes with the same flags (content, extract, canonical, sitemaps, link check, headers, cookies, robots records)', async () => {
    web = await startWeb({ sites: site() });
    const seed = web.url('a.localhost', '/');
    const cli = await runCli([
      '-q',
      '--rate',
      '200/s',
      '--allow-private',
      '--content',
      'markdown',
      '--extract',
      'title=h1',
      '--follow-canonical',
      '--sitemaps',
      '--check-links',
      '--header',
      'X-Team: web',
      '--cookie',
      'sid=abc',
      '--emit-robots',
      seed,
    ]);
    expect(cli.code).toBe(0);
    const fromCli = web
      .requests('a.localhost')
      .map((r) => r.path)
      .sort();
    web.reset();
    const lib = await collect({
      seeds: [seed],
      allowPrivate: true, // b.localhost is on loopback too
      defaults: { rate: '200/s', headers: { 'X-Team': 'web' } },
      content: 'markdown',
      extract: { title: 'h1' },
      followCanonical: true,
      robotsSitemaps: true,
      checkLinks: true,
      cookies: { send: ['sid=abc'] },
      emitRobots: true,
    });
    expect(comparable(lib)).toEqual(comparable(cli.records));
    expect(
      web
        .requests('a.localhost')
        .map((r) => r.path)
        .sort(),
    ).toEqual(fromCli);

    // What was compared has each feature in it.
    const pages = new Map(lib.filter((r) => r.type === 'page').map((r) => [new URL(r.url).pathname, r]));
    expect(pages.get('/')).toMatchObject({ content: '# Home\n\nHello **world**', extract: { title: 'Home' } });
    expect(pages.has('/canon')).toBe(false); // /dup's canonical: marked seen, not fetched
    expect(pages.get('/listed')).toMatchObject({ lastmod: '2024-01-02' });
    expect(pages.get('/gone')).toMatchObject({ kind: 'link-check', status: 404 });
    expect(
      lib
        .filter((r) => r.type === 'robots')
        .map((r) => r.url)
        .sort(),
    ).toEqual([web.url('a.localhost', '/robots.txt'), web.url('b.localhost', '/robots.txt')]);
    for (const r of web.requests('a.localhost')) expect(r.headers).toMatchObject({ 'x-team': 'web', cookie: 'sid=abc' });
  });

  it('emitRobots adds a robots record per robots.txt request; without it there is none', async () => {
    web = await startWeb({ sites: { 'a.localhost': { robots: 'User-agent: *\nDisallow: /private\n', pages: { '/': 'home' } } } });
    const seed = web.url('a.localhost', '/');
    const without = await collect({ seeds: [seed], defaults: { rate: 'unlimited' } });
    expect(without.map((r) => r.type)).toEqual(['page']);
    const records = await collect({ seeds: [seed], defaults: { rate: 'unlimited' }, emitRobots: true });
    expect(records.map((r) => r.type).sort()).toEqual(['page', 'robots']);
    expect(records.find((r) => r.type === 'robots')).toMatchObject({ url: web.url('a.localhost', '/robots.txt'), status: 200 });
  });

  it('saveDir and warc write the bodies and a WARC, finished when the loop ends, with the paths and offsets in the records', async () => {
    web = await startWeb({ sites: site() });
    const dir = await mkdtemp(join(tmpdir(), 'api-archive-'));
    const records = await collect({
      seeds: [web.url('a.localhost', '/')],
      defaults: { rate: 'unlimited' },
      robotsSitemaps: true,
      saveDir: join(dir, 'mirror'),
      warc: join(dir, 'site.warc.gz'),
    });
    expect((await readdir(dir)).sort()).toEqual(['mirror', 'site.warc.gz']); // no .partial left
    const pages = records.filter((r): r is PageRecord => r.type === 'page' && r.status === 200);
    expect(pages.map((p) => new URL(p.url).pathname).sort()).toEqual(['/', '/canon', '/dup', '/listed', '/logo.png', '/sitemap.xml']);
    const logo = pages.find((p) => p.url.endsWith('/logo.png'))!;
    expect(await readFile(join(dir, 'mirror', logo.savedPath!))).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    const home = pages.find((p) => new URL(p.url).pathname === '/')!;
    expect(await readFile(join(dir, 'mirror', home.savedPath!), 'utf8')).toMatch(/<h1>Home<\/h1>/);
    const warc = readWarc(await readFile(join(dir, 'site.warc.gz')));
    expect(warc[0].header('WARC-Type')).toBe('warcinfo');
    // Sitemap files are read for their URLs, not archived.
    for (const page of pages.filter((p) => p.kind !== 'sitemap')) {
      const response = warc.find((r) => r.offset === page.warcOffset);
      expect(response?.header('WARC-Type'), page.url).toBe('response');
      expect(response?.header('WARC-Target-URI')).toBe(page.url);
    }
  });

  it('a bad warc name fails at once; a saveDir that cannot be written fails the first pull, before any request', async () => {
    const seeds = ['http://a.localhost:1/'];
    expect(() => crawl({ seeds, warc: 'site.warc', saveDir: '' })).toThrow(
      new ConfigError([
        'options: warc: expected a file name ending in .warc.gz (each record is gzip-compressed), got "site.warc"',
        'options: saveDir: expected a path, got ""',
      ]),
    );
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'home' } } } });
    const dir = await mkdtemp(join(tmpdir(), 'api-archive-'));
    await writeFile(join(dir, 'file'), 'not a directory');
    const run = crawl({ seeds: [web.url('a.localhost', '/')], saveDir: join(dir, 'file') });
    const failure = await run.next().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OutputError);
    expect((failure as OutputError).message).toBe(`cannot write saveDir ${join(dir, 'file')}: not a directory`);
    await expect(run.done).rejects.toBe(failure);
    expect(web.requests()).toEqual([]);
  });

  it('takes a proxy (defaults.proxy) as --proxy: requests go through it, the politeness key stays the target host', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'home' } } } });
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const target = new URL(req.url!);
      const upstream = request({ host: '127.0.0.1', port: target.port, path: target.pathname, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const seed = web.url('a.localhost', '/');
      const records = await collect({ seeds: [seed], defaults: { rate: 'unlimited', proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } });
      expect(records).toEqual([expect.objectContaining({ url: seed, status: 200, host: new URL(seed).host })]);
      expect(seen).toEqual([`GET ${web.url('a.localhost', '/robots.txt')}`, `GET ${seed}`]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('explain()', () => {
  it('returns the scope, the policy with its config entry, and the deciding robots rule, fetching only robots.txt', async () => {
    web = await startWeb({ sites: { 'shop.localhost': { robots: 'User-agent: *\nCrawl-delay: 2\nDisallow: /cart\n', pages: { '/': 'home' } } } });
    const result = await explain(web.url('shop.localhost', '/cart/1'), { domains: { 'shop.localhost': { rate: '3/s' } } });
    expect(result).toMatchObject({
      url: web.url('shop.localhost', '/cart/1'),
      scope: { inScope: true },
      hostKey: `shop.localhost:${web.port}`,
      policy: { matched: 'shop.localhost', rateLabel: '3/s' },
      robots: {
        checked: true,
        kind: 'rules',
        allowed: false,
        rule: 'Disallow: /cart',
        line: 3,
        group: 'User-agent: *',
        source: web.url('shop.localhost', '/robots.txt'),
      },
      crawlDelayMs: 2000,
      wouldFetch: false,
    });
    expect(web.requests().map((r) => r.path)).toEqual(['/robots.txt']);
  });

  it('judges scope against the given seeds and uses given robots.txt text without any request', async () => {
    web = await startWeb({ sites: { 'b.localhost': {} } });
    const url = web.url('b.localhost', '/page');
    const out = await explain(url, { seeds: ['http://a.localhost/'], robotsTxt: 'User-agent: crawl\nAllow: /\n\nUser-agent: *\nDisallow: /\n' });
    expect(out.scope).toMatchObject({ inScope: false, reason: 'scope' });
    expect(out.scope.explanation).toMatch(/^out of scope: host b\.localhost/);
    expect(out.robots).toMatchObject({ kind: 'rules', allowed: true, rule: 'Allow: /', line: 2, group: 'User-agent: crawl' });
    expect(out.policy.matched).toBe('defaults');
    expect(out.wouldFetch).toBe(false);

    const unchecked = await explain(url, { robots: { enabled: false } });
    expect(unchecked).toMatchObject({ robots: { checked: false, allowed: true }, crawlDelayMs: null, wouldFetch: true });
    expect(web.requests()).toEqual([]);
  });

  it('rejects bad options with the config messages', async () => {
    await expect(explain('http://a.localhost/', { scope: 'planet' } as never)).rejects.toThrow(
      new ConfigError(['options: scope: expected one of "host", "domain", "any", got "planet"']),
    );
    await expect(explain('nope')).rejects.toBeInstanceOf(UsageError);
    await expect(explain('http://a.localhost/', { signal: AbortSignal.abort() } as never)).rejects.toThrow(/^options: signal: unknown key/);
  });
});
