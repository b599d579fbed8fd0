/**
 * robots.txt's usage rules (Content-Usage, Content-Signal) in real crawls,
 * judged from the server's own log: records name the deciding line of the
 * robots.txt in force; with a declared purpose a denied page is never
 * requested and gets a `usage-denied` skip, unless --fetch-denied asks for
 * it (then its content is withheld); and the same holds when the crawl is
 * killed with kill -9 and resumed from --state, and across two Redis
 * workers.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawl, type OutputRecord, type PageRecord, type SkipRecord } from '../../src/index.js';
import { minGap, startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { newCrawlId, redisServerMissing, useRedisServer, useTempDir } from '../support/system-fixtures.js';
import { jsonLines, killAtRandom, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

const ROBOTS = [
  'User-agent: *',
  'Disallow: /private/',
  'Content-Usage: /train-no/ train-ai=n',
  'Content-Signal: /search-no/ search=no, ai-train=yes',
  'Content-Usage: / search=y',
  '',
  'User-agent: otherbot',
  'Content-Usage: / search=n',
].join('\n');

let web: Web;
beforeAll(async () => {
  const paths = ['/train-no/a', '/search-no/b', '/open', '/private/x'];
  web = await startWeb({
    sites: {
      'site.localhost': {
        robots: ROBOTS,
        pages: {
          '/': `<title>Home</title>${paths.map((p) => `<a href="${p}">${p}</a>`).join('')}`,
          '/train-no/a': '<title>A</title><p>Not for training.</p><a href="/train-no/deeper">deeper</a>',
          '/train-no/deeper': '<title>Deeper</title>',
          '/search-no/b': { body: '<title>B</title><p>Not for search.</p>', headers: { 'content-usage': 'train-ai=y' } },
          '/open': '<title>Open</title><p>Open.</p>',
          '/private/x': '<title>X</title>',
        },
      },
    },
  });
});
afterAll(() => web?.close());

const requested = (path: string) => web.requests('site.localhost').filter((e) => e.path === path).length;

describe('robots.txt usage rules, without a purpose', () => {
  it('put the deciding line, the file and when it was fetched on each page record, and change nothing that is fetched', async () => {
    const records: OutputRecord[] = [];
    for await (const r of crawl({ seeds: [web.url('site.localhost', '/')], allowNetworks: ['127.0.0.0/8'], defaults: { rate: '50/s' }, content: 'text' }))
      records.push(r);
    const byPath = new Map(records.filter((r): r is PageRecord => r.type === 'page').map((r) => [new URL(r.url).pathname, r]));
    expect([...byPath.keys()].sort()).toEqual(['/', '/open', '/search-no/b', '/train-no/a', '/train-no/deeper']);
    const robotsUrl = web.url('site.localhost', '/robots.txt');
    expect(byPath.get('/train-no/a')).toMatchObject({
      // The longest matching Content-Usage rule decides: "/ search=y" does not apply under /train-no/.
      usage: { 'train-ai': 'n' },
      usageSources: [{ source: 'robots', name: 'content-usage', value: '/train-no/ train-ai=n', line: 3, url: robotsUrl, states: { 'train-ai': 'n' } }],
      content: expect.stringContaining('Not for training.'),
    });
    const fetchedAt = Date.parse(byPath.get('/train-no/a')!.usageSources![0].fetchedAt as string);
    expect(Math.abs(fetchedAt - Date.now())).toBeLessThan(60_000);
    // Content-Signal's longest match for /search-no/, and the response's own header after it; Content-Usage's "/" rule still says search=y.
    expect(byPath.get('/search-no/b')).toMatchObject({
      usage: { search: 'n', 'train-ai': 'y' },
      usageSources: [
        { source: 'robots', name: 'content-usage', line: 5, states: { search: 'y' } },
        { source: 'robots', name: 'content-signal', line: 4, states: { search: 'n', 'train-ai': 'y' } },
        { source: 'header', name: 'content-usage', value: 'train-ai=y' },
      ],
    });
    expect(byPath.get('/open')).toMatchObject({ usage: { search: 'y' }, usageSources: [{ source: 'robots', line: 5 }] });
    const skipped = records.filter((r): r is SkipRecord => r.type === 'skipped');
    expect(skipped.filter((r) => r.reason === 'usage-denied')).toEqual([]);
  });
});

describe('robots.txt usage rules with a declared purpose (--purpose)', () => {
  const tmp = useTempDir('crawl-robots-usage-');
  beforeAll(requireBuilt);

  it('never requests a page robots.txt denies the purpose, and says why in a usage-denied skip naming the line', async () => {
    const before = { a: requested('/train-no/a'), deeper: requested('/train-no/deeper') };
    const run = await startCrawl(
      ['--purpose', 'ai-train', '--allow-private', '--rate', '50/s', '--emit-skipped', '--stats', 'stats.json', web.url('site.localhost', '/')],
      tmp.path,
    ).done;
    expect(run.code, run.stderr).toBe(0);
    expect(requested('/train-no/a')).toBe(before.a);
    expect(requested('/train-no/deeper')).toBe(before.deeper);
    const records = jsonLines<PageRecord | SkipRecord>(run.stdout);
    const denied = records.filter((r): r is SkipRecord => r.type === 'skipped' && r.reason === 'usage-denied');
    expect(denied).toEqual([
      {
        type: 'skipped',
        url: web.url('site.localhost', '/train-no/a'),
        reason: 'usage-denied',
        depth: 1,
        parent: web.url('site.localhost', '/'),
        detail: 'train-ai: robots.txt line 3: Content-Usage: /train-no/ train-ai=n',
        usageDenied: 'train-ai',
        usageSources: [expect.objectContaining({ source: 'robots', name: 'content-usage', line: 3, states: { 'train-ai': 'n' } })],
      },
    ]);
    // Usage never widens robots.txt: the disallowed path stays a robots skip; the others are fetched.
    expect(records.find((r) => r.url.endsWith('/private/x'))).toMatchObject({ type: 'skipped', reason: 'robots' });
    const pages = records.filter((r) => r.type === 'page').map((r) => new URL(r.url).pathname);
    expect(pages.sort()).toEqual(['/', '/open', '/search-no/b']);
    expect(JSON.parse(await readFile(join(tmp.path, 'stats.json'), 'utf8'))).toMatchObject({
      skippedByReason: { 'usage-denied': 1 },
      usageDenied: { 'train-ai': 1 },
      hosts: [{ usageDenied: { 'train-ai': 1 } }],
    });
  });

  it("takes a domains entry's purpose for its hosts over the crawl's, in both directions", async () => {
    const config = {
      allowNetworks: ['127.0.0.0/8'],
      defaults: { rate: '50/s' },
      purpose: ['search'],
      domains: { 'site.localhost': { purpose: ['train-ai'] } },
    };
    await writeFile(join(tmp.path, 'per-domain.json'), JSON.stringify(config));
    const before = requested('/train-no/a');
    const run = await startCrawl(['--config', 'per-domain.json', '--emit-skipped', web.url('site.localhost', '/')], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    expect(requested('/train-no/a')).toBe(before);
    const records = jsonLines<PageRecord | SkipRecord>(run.stdout);
    expect(records.find((r) => r.url.endsWith('/train-no/a'))).toMatchObject({ type: 'skipped', reason: 'usage-denied', usageDenied: 'train-ai' });
    // The crawl's own "search" does not apply to this host: /search-no/b, which says search=n, keeps its content.
    expect(records.find((r) => r.url.endsWith('/search-no/b'))).toMatchObject({ type: 'page', status: 200 });
    expect((records.find((r) => r.url.endsWith('/search-no/b')) as PageRecord).usageDenied).toBeUndefined();
  });

  it('with --fetch-denied requests it for its links and withholds its content', async () => {
    const before = requested('/train-no/a');
    const run = await startCrawl(
      ['--purpose', 'train-ai', '--fetch-denied', '--allow-private', '--rate', '50/s', '--content', 'text', web.url('site.localhost', '/')],
      tmp.path,
    ).done;
    expect(run.code, run.stderr).toBe(0);
    expect(requested('/train-no/a')).toBe(before + 1);
    const byPath = new Map(jsonLines<PageRecord>(run.stdout).map((r) => [new URL(r.url).pathname, r]));
    expect(byPath.get('/train-no/a')).toMatchObject({ status: 200, usageDenied: 'train-ai', usage: { 'train-ai': 'n' } });
    expect(byPath.get('/train-no/a')!.content).toBeUndefined();
    // Its links are the site's: followed.
    expect(byPath.has('/train-no/deeper')).toBe(true);
    expect(byPath.get('/open')!.content).toContain('Open.');
  });
});

describe('crawl check --purpose', () => {
  const tmp = useTempDir('crawl-robots-usage-check-');
  beforeAll(requireBuilt);

  it('says a page robots.txt denies the purpose would not be requested, naming the line, exit 1; --fetch-denied, exit 0', async () => {
    const url = web.url('site.localhost', '/train-no/a');
    const denied = await startCrawl(['check', '--allow-private', '--purpose', 'ai-train', url], tmp.path).done;
    expect(denied.code, denied.stderr).toBe(1);
    expect(denied.stdout).toMatch(/^usage: +stated before the request: train-ai=n; denied for train-ai: not requested/m);
    expect(denied.stdout).toContain(`line 3 of ${web.url('site.localhost', '/robots.txt')}: Content-Usage: /train-no/ train-ai=n`);
    expect(denied.stdout).toMatch(/^verdict: would be skipped$/m);
    const anyway = await startCrawl(['check', '--allow-private', '--purpose', 'train-ai', '--fetch-denied', url], tmp.path).done;
    expect(anyway.code, anyway.stderr).toBe(0);
    expect(anyway.stdout).toContain('fetched anyway (--fetch-denied)');
    // Another use, or none declared: fetched; the statement is still shown.
    const search = await startCrawl(['check', '--allow-private', '--purpose', 'search', web.url('site.localhost', '/open')], tmp.path).done;
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toMatch(/^usage: +stated before the request: search=y; may be used for search/m);
    const none = await startCrawl(['check', '--allow-private', url], tmp.path).done;
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^usage: +stated before the request: train-ai=n; no purpose declared/m);
  });
});

describe('tdmrep.json with a declared purpose', () => {
  const tmp = useTempDir('crawl-tdmrep-');
  beforeAll(requireBuilt);
  let tdm: Web | undefined;
  afterAll(() => tdm?.close());

  it('is fetched once per origin, through robots.txt, only for a purpose it speaks to; a reserved page is not requested', async () => {
    const links = ['/reserved/a', '/reserved/b', '/free', '/.well-known/private'].map((p) => `<a href="${p}">${p}</a>`).join('');
    const rules = JSON.stringify([
      { location: '/free', 'tdm-reservation': 0 },
      { location: '/reserved/*', 'tdm-reservation': 1, 'tdm-policy': 'https://example.test/policy' },
    ]);
    const page = (title: string) => `<title>${title}</title>`;
    tdm = await startWeb({
      sites: {
        // No robots.txt (404): everything is allowed, and tdmrep.json still speaks.
        'tdm.localhost': {
          robots: null,
          pages: {
            '/': `<title>Home</title>${links}`,
            '/reserved/a': page('A'),
            '/reserved/b': page('B'),
            '/free': page('Free'),
            '/.well-known/tdmrep.json': { body: rules, headers: { 'content-type': 'application/json' } },
          },
        },
        // robots.txt keeps crawlers out of /.well-known/: tdmrep.json is not requested there.
        'closed.localhost': { robots: 'User-agent: *\nDisallow: /.well-known/\n', pages: { '/': page('Closed'), '/.well-known/tdmrep.json': { body: rules } } },
      },
    });
    const seeds = [tdm.url('tdm.localhost', '/'), tdm.url('closed.localhost', '/')];
    const run = await startCrawl(['--purpose', 'tdm', '--allow-private', '--rate', '10/s', '--emit-skipped', ...seeds], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    // tdmrep.json is paced like every request of its host: the server saw robots.txt, it and the pages 100 ms apart.
    for (const host of ['tdm.localhost', 'closed.localhost']) expect(minGap(tdm.requests(host).map((e) => e.at)), host).toBeGreaterThanOrEqual(100);
    const log = tdm.requests('tdm.localhost').map((e) => e.path);
    expect(log.filter((p) => p === '/.well-known/tdmrep.json')).toHaveLength(1);
    expect(log.filter((p) => p.startsWith('/reserved/'))).toEqual([]);
    expect(tdm.requests('closed.localhost').map((e) => e.path)).not.toContain('/.well-known/tdmrep.json');
    const records = jsonLines<PageRecord | SkipRecord>(run.stdout);
    const skipped = records.filter((r): r is SkipRecord => r.type === 'skipped' && r.reason === 'usage-denied');
    expect(skipped.map((r) => new URL(r.url).pathname).sort()).toEqual(['/reserved/a', '/reserved/b']);
    expect(skipped[0]).toMatchObject({
      usageDenied: 'tdm',
      detail: expect.stringContaining(`${tdm.url('tdm.localhost', '/.well-known/tdmrep.json')} reserves it: {"location":"/reserved/*","tdm-reservation":1`),
      usageSources: [{ source: 'tdmrep', name: 'tdm-reservation', states: { tdm: 'n', 'train-ai': 'n', 'ai-input': 'n' } }],
    });
    // A page a rule does not reserve is fetched, and says which rule spoke.
    expect(records.find((r) => r.url.endsWith('/free'))).toMatchObject({ type: 'page', usageSources: [{ source: 'tdmrep', states: {} }] });

    // A purpose TDMRep does not speak to: the file is not asked for at all.
    const before = tdm.requests('tdm.localhost').length;
    const search = await startCrawl(['--purpose', 'search', '--allow-private', '--rate', '50/s', tdm.url('tdm.localhost', '/')], tmp.path).done;
    expect(search.code, search.stderr).toBe(0);
    expect(
      tdm
        .requests('tdm.localhost')
        .slice(before)
        .map((e) => e.path),
    ).not.toContain('/.well-known/tdmrep.json');
  });
});

describe('across crashes and workers', () => {
  const tmp = useTempDir('crawl-robots-usage-crash-');
  beforeAll(requireBuilt);
  const PAGES = 300;
  // Every path that starts /p/1 (p/1, p/10…p/19, p/100…p/199) is denied for training.
  const denied = (path: string) => path.startsWith('/p/1');
  let site: Web | undefined;
  afterAll(() => site?.close());

  const checkOutcome = (lines: (PageRecord | SkipRecord)[], log: readonly { path: string }[]) => {
    expect(log.filter((e) => denied(e.path))).toEqual([]);
    const pages = lines.filter((r) => r.type === 'page');
    expect(pages.length).toBeGreaterThan(20);
    const skips = lines.filter((r): r is SkipRecord => r.type === 'skipped' && r.reason === 'usage-denied');
    expect(skips.length).toBeGreaterThan(0);
    for (const s of skips) expect(s, s.url).toMatchObject({ usageDenied: 'train-ai', usageSources: [{ line: 2, name: 'content-usage' }] });
    expect(skips.every((s) => denied(new URL(s.url).pathname))).toBe(true);
    // Each URL once, whichever record it got.
    const urls = lines.map((r) => r.url);
    expect(urls.length).toBe(new Set(urls).size);
  };

  /** A fresh generated site whose robots.txt denies /p/1… for training, and the crawl flags both tests share. */
  const startSite = async (): Promise<string[]> => {
    await site?.close();
    site = await startWeb({
      sites: { 'gen.localhost': { delayMs: 3, robots: 'User-agent: *\nContent-Usage: /p/1 train-ai=n\n', generate: { pages: PAGES, linksPerPage: 3 } } },
    });
    return ['--purpose', 'train-ai', '--emit-skipped', '--max-depth', '1000', '--rate', 'unlimited', '-q', site.url('gen.localhost', '/')];
  };

  it('a crawl killed with kill -9 and resumed from --state requests no denied page and reports each URL once', async () => {
    const args = ['--state', 'crawl.db', '-o', 'out.jsonl', ...(await startSite())];
    const kills = await killAtRandom(args, tmp.path, site!, { runs: 4, after: 30, maxDelayMs: 100, random: seededRandom(43) });
    expect(kills).toBeGreaterThanOrEqual(2);
    const last = await startCrawl(args, tmp.path).done;
    expect(last.code, last.stderr).toBe(0);
    checkOutcome(jsonLines(await readFile(join(tmp.path, 'out.jsonl'), 'utf8')), site!.requests('gen.localhost'));
  }, 90_000);

  describe.skipIf(redisServerMissing !== undefined)('with two Redis workers', () => {
    const redis = useRedisServer();
    it('both obey the robots.txt one of them fetched', async () => {
      const shared = await startSite();
      const crawlId = newCrawlId('usage');
      const args = (w: string) => ['--redis', redis.url, '--crawl-id', crawlId, '--worker', w, '-o', `${w}.jsonl`, ...shared];
      const runs = await Promise.all(['w1', 'w2'].map((w) => startCrawl(args(w), tmp.path).done));
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
      const lines = (
        await Promise.all(['w1', 'w2'].map(async (w) => jsonLines<PageRecord | SkipRecord>(await readFile(join(tmp.path, `${w}.jsonl`), 'utf8'))))
      ).flat();
      checkOutcome(lines, site!.requests('gen.localhost'));
      expect(site!.requests('gen.localhost').filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    }, 60_000);
  });
});
