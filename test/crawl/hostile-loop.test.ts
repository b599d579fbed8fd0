/**
 * Hostile web and hostile input (issue 10), the crawl loop's part, under fake
 * time: bounded memory (a queue cap), trap defences, stopping at a cost that
 * does not grow with the queue, link-handling errors, over-long seeds,
 * redirect loops and robots.txt redirects to other hosts. A real Crawler runs
 * against a scripted web (test/support/scripted-fetcher.ts) on a FakeClock.
 */
import { describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import type { RecordSink } from '../../src/output/sink.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { CrawlSettings } from '../../src/config/settings-types.js';
import type { OutputRecord, PageRecord, SkipRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeCrawl, pathOf } from '../support/fake-crawl.js';
import { createScriptedFetcher, type ScriptedSite } from '../support/scripted-fetcher.js';
import { seededRandom } from '../support/seeded-random.js';

const UNLIMITED = { rate: 'unlimited', concurrency: 4 };

/** A page linking to each of `paths`. */
const linksTo = (paths: string[]) => paths.map((p) => `<a href="${p}">${p}</a>`).join(' ');

/**
 * A crawl with a store and settings the test chooses (fakeCrawl builds its
 * own): for spying on the store, or for settings no config file can produce.
 */
async function crawlWith(opts: {
  sites: Record<string, ScriptedSite>;
  seeds: string[];
  settings: CrawlSettings;
  store?: MemoryStore;
  onCrawler?: (crawler: Crawler, clock: FakeClock) => void;
}) {
  const clock = new FakeClock();
  const { settings } = opts;
  const fetcher = createScriptedFetcher({ clock, sites: opts.sites, timeouts: settings.timeouts, maxBodyBytes: settings.maxBodyBytes });
  const records: OutputRecord[] = [];
  const sink: RecordSink = {
    write: async (r) => void records.push(JSON.parse(JSON.stringify(r)) as OutputRecord),
    close: async () => {},
    broken: false,
    written: 0,
  };
  const crawler = new Crawler({ settings, seeds: opts.seeds, clock, fetcher, sink, store: opts.store, random: seededRandom(1) });
  opts.onCrawler?.(crawler, clock);
  const stats = await clock.runUntilDone(crawler.run());
  return {
    stats,
    records,
    pages: records.filter((r): r is PageRecord => r.type === 'page'),
    skipped: records.filter((r): r is SkipRecord => r.type === 'skipped'),
    fetcher,
  };
}

const settingsOf = (config: Record<string, unknown>, flags: Parameters<typeof buildSettings>[1] = {}) =>
  buildSettings(validateConfig(config, 'test config'), flags);

describe('bounded memory: the queue cap', () => {
  it('never queues more than maxQueued: a site with 200 new links per page gets the rest skipped as queue-full, counted in the summary', async () => {
    let next = 0;
    let mostQueued = 0;
    let crawler: Crawler | undefined;
    const run = await fakeCrawl({
      sites: {
        'wide.test': {
          handler: () => {
            // Sampled at every arrival: the queue as the last page's links left it.
            mostQueued = Math.max(mostQueued, crawler!.progress().queued);
            return linksTo(Array.from({ length: 200 }, () => `/n/${next++}`));
          },
        },
      },
      seeds: ['http://wide.test/'],
      config: { maxQueued: 500, maxPages: 12, defaults: UNLIMITED },
      onCrawler: (c) => (crawler = c),
    });
    expect(run.pages).toHaveLength(12);
    expect(mostQueued).toBeGreaterThan(0);
    expect(mostQueued).toBeLessThanOrEqual(500);
    const full = run.stats.skippedByReason.get('queue-full') ?? 0;
    expect(full).toBeGreaterThan(1000);
    expect(run.skipped.filter((s) => s.reason === 'queue-full')).toHaveLength(full);
    expect(run.skipped.find((s) => s.reason === 'queue-full')!.detail).toMatch(/500 URLs queued \(maxQueued\)/);
  });

  it('has a default of 1,000,000 queued URLs', () => {
    expect(settingsOf({}).maxQueued).toBe(1_000_000);
  });
});

describe('trap defences', () => {
  /** A calendar: /cal?d=N links to the following days `steps` away, forever. */
  const calendar = (steps: number[]): ScriptedSite => ({
    handler: (req) => {
      const d = Number(new URL(`http://x${req.path}`).searchParams.get('d') ?? 0);
      return linksTo(steps.map((s) => `/cal?d=${d + s}`));
    },
  });

  it('ends a calendar trap /cal?d=N → N+1 by itself, at the default max depth (100)', async () => {
    const run = await fakeCrawl({ sites: { 'cal.test': calendar([1]) }, seeds: ['http://cal.test/cal?d=0'], config: { defaults: UNLIMITED } });
    expect(run.pages).toHaveLength(101);
    expect(Math.max(...run.pages.map((p) => p.depth))).toBe(100);
    expect(run.skipped).toEqual([expect.objectContaining({ url: 'http://cal.test/cal?d=101', reason: 'max-depth', depth: 101 })]);
  });

  it('ends a wide calendar at traps.maxQueryVariants distinct query strings of one path', async () => {
    const run = await fakeCrawl({
      sites: { 'cal.test': calendar([1, 7, 30, 365]) },
      seeds: ['http://cal.test/cal?d=0'],
      config: { defaults: UNLIMITED, traps: { maxQueryVariants: 40 } },
    });
    expect(run.pages).toHaveLength(40);
    const exploded = run.skipped.filter((s) => s.reason === 'query-explosion');
    expect(exploded.length).toBeGreaterThan(0);
    expect(exploded[0].detail).toBe('40 query strings of http://cal.test/cal accepted already (traps.maxQueryVariants)');
  });

  it('skips a URL with more query parameters than traps.maxQueryParams (default 32)', async () => {
    const params = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=${i}`).join('&');
    const run = await fakeCrawl({
      sites: {
        'q.test': {
          pages: { '/': linksTo([`/ok?${params(32)}`, `/many?${params(33)}`]) },
          handler: (req, next) => (req.path.startsWith('/ok') ? 'ok' : next()),
        },
      },
      seeds: ['http://q.test/'],
      config: { defaults: UNLIMITED },
    });
    expect(run.pages.map((p) => pathOf(p.url).split('?')[0])).toEqual(['/', '/ok']);
    expect(run.skipped).toEqual([expect.objectContaining({ reason: 'query-explosion', detail: '33 query parameters, over traps.maxQueryParams (32)' })]);
  });

  it('skips a path repeating one segment more than traps.maxPathRepeats (default 3): /a/b/a/b/a/b/a/b/ from a relative link', async () => {
    const run = await fakeCrawl({
      sites: { 'rel.test': { handler: () => linksTo(['a/b/']) } },
      seeds: ['http://rel.test/'],
      config: { defaults: UNLIMITED },
    });
    expect(run.pages.map((p) => pathOf(p.url))).toEqual(['/', '/a/b/', '/a/b/a/b/', '/a/b/a/b/a/b/']);
    expect(run.skipped).toEqual([
      expect.objectContaining({
        url: 'http://rel.test/a/b/a/b/a/b/a/b/',
        reason: 'repeated-path',
        detail: 'segment "a" 4 times in the path, over traps.maxPathRepeats (3)',
      }),
    ]);
  });

  it('keeps a per-host page budget (defaults.maxPagesPerHost), which a domains entry can raise', async () => {
    const run = await fakeCrawl({
      sites: { 'small.test': { generate: { pages: 40, linksPerPage: 3 } }, 'big.test': { generate: { pages: 40, linksPerPage: 3 } } },
      seeds: ['http://small.test/', 'http://big.test/'],
      config: { defaults: { ...UNLIMITED, maxPagesPerHost: 10 }, domains: { 'big.test': { maxPagesPerHost: 25 } } },
    });
    const fetched = (host: string) => run.pages.filter((p) => p.url.includes(host)).length;
    expect(fetched('small.test')).toBe(10);
    expect(fetched('big.test')).toBe(25);
    const over = run.skipped.filter((s) => s.reason === 'max-pages-per-host');
    expect(over.length).toBeGreaterThan(0);
    expect(over.find((s) => s.url.includes('small.test'))!.detail).toBe('10 URLs of small.test accepted already (maxPagesPerHost 10)');
    expect(run.stats.skippedByReason.get('max-pages-per-host')).toBe(over.length);
  });

  it('has defaults a real site does not hit: depth 100, 100,000 pages a host, 3 repeats of a segment, 32 query parameters, 10,000 query strings a path', () => {
    const s = settingsOf({});
    expect(s.maxDepth).toBe(100);
    expect(s.policyFor('any.test').maxPagesPerHost).toBe(100_000);
    expect(s.traps).toEqual({ maxPathRepeats: 3, maxQueryParams: 32, maxQueryVariants: 10_000 });
  });
});

describe('stopping costs the same whatever the queue size', () => {
  /** A memory store that says whether everything it held was handed back entry by entry. */
  class WatchedStore extends MemoryStore {
    drainedAll = 0;
    override drain(key?: string) {
      if (key === undefined) this.drainedAll++;
      return super.drain(key);
    }
  }

  const sites = (): Record<string, ScriptedSite> => ({
    'big.test': {
      pages: { '/': linksTo(Array.from({ length: 3000 }, (_, i) => `/p/${i}`)) },
      handler: (req, next) => (req.path.startsWith('/p/') ? { hang: true } : next()),
    },
    'slow.test': { pages: { '/a': 'a', '/b': 'b' } },
  });
  const seeds = ['http://big.test/', 'http://slow.test/a', 'http://slow.test/b'];
  const config = { defaults: { rate: 'unlimited', concurrency: 2 }, domains: { 'slow.test': { rate: '1/min' } } };
  const stopAt = (ms: number) => (crawler: Crawler, clock: FakeClock) =>
    clock.setTimer(() => {
      crawler.stop();
      crawler.abort();
    }, ms);

  it('on a stop without emitSkipped, counts what is left in bulk: records only for seeds, no entry-by-entry drain', async () => {
    const store = new WatchedStore();
    const run = await crawlWith({ sites: sites(), seeds, settings: settingsOf(config), store, onCrawler: stopAt(500) });
    expect(store.drainedAll).toBe(0);
    // Two /p/ requests were in flight (ABORTED), the other 2998 still queued; slow.test's seeds wait for its 1/min gap after robots.txt.
    expect(run.pages.filter((p) => p.error?.code === 'ABORTED')).toHaveLength(2);
    expect(run.skipped.map((s) => [s.url, s.reason, s.depth]).sort()).toEqual([
      ['http://slow.test/a', 'interrupted', 0],
      ['http://slow.test/b', 'interrupted', 0],
    ]);
    expect(run.stats.skippedByReason.get('interrupted')).toBe(2998 + 2);
    expect(run.stats.perHost.get('big.test')!.skipped).toBe(2998);
    expect(run.stats.perHost.get('slow.test')!.skipped).toBe(2);
    expect(run.stats.interrupted).toBe(true);
  });

  it('with emitSkipped, still writes a record for each URL left', async () => {
    const run = await crawlWith({ sites: sites(), seeds, settings: settingsOf(config, { emitSkipped: true }), onCrawler: stopAt(500) });
    expect(run.skipped.filter((s) => s.reason === 'interrupted')).toHaveLength(3000);
    expect(run.stats.skippedByReason.get('interrupted')).toBe(3000);
  });

  // Regression: drain() spread each host's whole queue into push(...entries), a call with one
  // argument per URL, which overflowed the stack once one host had a few hundred thousand queued.
  it('drains one host with 300,000 queued URLs (what a stop with emitSkipped does)', () => {
    const store = new MemoryStore();
    store.open({ seeds: [], configFingerprint: '' });
    for (let i = 0; i < 300_000; i++)
      store.add(`http://big.test/${i}`, 'big.test', { url: `http://big.test/${i}`, depth: 1, parent: null, hops: 0, attempt: 0 });
    expect(store.drain()).toHaveLength(300_000);
    expect(store.counts().queued).toBe(0);
  });

  it('at max-pages, counts what is left in bulk too', async () => {
    const store = new WatchedStore();
    const run = await crawlWith({
      sites: {
        'big.test': {
          pages: { '/': linksTo(Array.from({ length: 3000 }, (_, i) => `/p/${i}`)) },
          handler: (req, next) => (req.path.startsWith('/p/') ? 'p' : next()),
        },
      },
      seeds: ['http://big.test/'],
      settings: settingsOf({ maxPages: 5, defaults: UNLIMITED }),
      store,
    });
    expect(store.drainedAll).toBe(0);
    expect(run.pages).toHaveLength(5);
    expect(run.stats.skippedByReason.get('max-pages')).toBe(2996);
    expect(run.skipped).toEqual([]);
  });
});

describe('hostile input', () => {
  it("never reports an error in link handling as the page's fetch error", async () => {
    // An --include pattern that throws when run, bypassing config validation.
    const settings = settingsOf({ defaults: UNLIMITED });
    const throwing = {
      source: 'a',
      test: (): boolean => {
        throw new Error('Regular expression too large');
      },
    };
    settings.include = [throwing];
    const run = await crawlWith({ sites: { 'a.test': { pages: { '/': linksTo(['/x', '/y']) } } }, seeds: ['http://a.test/'], settings });
    expect(run.pages).toEqual([expect.objectContaining({ url: 'http://a.test/', status: 200, links: 2 })]);
    expect(run.pages[0].error).toBeUndefined();
    expect(run.stats.errorsByCode.size).toBe(0);
    expect(run.stats.notes.join('\n')).toMatch(/links not followed.*Regular expression too large/);
  });

  it('skips a seed longer than maxUrlLength with a url-too-long record, and never requests it', async () => {
    const long = `http://a.test/${'x'.repeat(5 * 1024 * 1024)}`;
    const run = await fakeCrawl({
      sites: { 'a.test': { pages: { '/': 'home' } } },
      seeds: [long, 'http://a.test/'],
      config: { defaults: UNLIMITED },
      flags: { emitSkipped: false },
    });
    expect(run.fetcher.attempts().map((a) => a.path)).toEqual(['/robots.txt', '/']);
    expect(run.skipped).toHaveLength(1);
    expect(run.skipped[0]).toMatchObject({ reason: 'url-too-long', depth: 0, detail: `${long.length} characters, over the limit of 2048` });
    expect(run.skipped[0].url).toBe(long);
  });

  it('ends a redirect loop with a REDIRECT_LOOP error record on the URL that redirects back into its own chain', async () => {
    const to = (location: string) => ({ status: 302, headers: { location } });
    const run = await fakeCrawl({
      sites: {
        'r.test': {
          pages: {
            '/a': to('/b'),
            '/b': to('/a'), // two-step loop
            '/self': to('/self'),
            '/x': to('/y'),
            '/y': to('/z'),
            '/z': to('/w'),
            '/w': to('/y'), // a loop that does not include the chain's start
            '/p': to('/a'), // into another chain: a plain repeat, not a loop
          },
        },
      },
      seeds: ['http://r.test/a', 'http://r.test/self', 'http://r.test/x', 'http://r.test/p'],
      config: { defaults: { rate: 'unlimited', concurrency: 1 } },
    });
    const byPath = new Map(run.pages.map((p) => [pathOf(p.url), p]));
    expect(byPath.get('/b')).toMatchObject({ status: 302, location: 'http://r.test/a', error: { code: 'REDIRECT_LOOP' } });
    expect(byPath.get('/b')!.error!.message).toBe('redirects back to http://r.test/a, already in its own redirect chain');
    expect(byPath.get('/self')).toMatchObject({ status: 302, error: { code: 'REDIRECT_LOOP' } });
    expect(byPath.get('/w')).toMatchObject({ status: 302, location: 'http://r.test/y', error: { code: 'REDIRECT_LOOP' } });
    for (const path of ['/a', '/x', '/y', '/z', '/p']) expect(byPath.get(path)!.error, path).toBeUndefined();
    expect(run.stats.errorsByCode.get('REDIRECT_LOOP')).toBe(3);
  });
});

describe('robots.txt redirects', () => {
  it('follows a robots.txt redirect to another host whatever the scope (RFC 9309 §2.3.1.2), paced by that host, and applies its rules to the first host', async () => {
    const run = await fakeCrawl({
      sites: {
        'a.test': {
          robots: { status: 301, headers: { location: 'http://cdn.test/a-robots.txt' } },
          pages: { '/': linksTo(['/private', '/open']), '/private': 'p', '/open': 'o' },
        },
        // cdn.test is crawled too: the hop for a.test is one more request to it, inside its own gap.
        'cdn.test': {
          robots: 'User-agent: *\nAllow: /\n',
          pages: {
            '/': linksTo(['/x', '/y']),
            '/x': 'x',
            '/y': 'y',
            '/a-robots.txt': { body: 'User-agent: *\nDisallow: /private\n', headers: { 'content-type': 'text/plain' } },
          },
        },
        'b.test': {
          robots: { status: 301, headers: { location: '/real-robots.txt' } },
          pages: { '/': linksTo(['/private']), '/real-robots.txt': { body: 'User-agent: *\nDisallow: /private\n', headers: { 'content-type': 'text/plain' } } },
        },
      },
      seeds: ['http://a.test/', 'http://b.test/', 'http://cdn.test/'],
      config: { defaults: UNLIMITED, domains: { 'cdn.test': { rate: '6/min', concurrency: 1 } } },
    });
    expect(run.fetcher.count('cdn.test', '/a-robots.txt')).toBe(1);
    expect(
      run.pages
        .filter((p) => p.url.startsWith('http://a.test/'))
        .map((p) => pathOf(p.url))
        .sort(),
    ).toEqual(['/', '/open']);
    expect(run.skipped).toContainEqual(expect.objectContaining({ url: 'http://a.test/private', reason: 'robots' }));
    // Every request cdn.test got, the hop for a.test included, kept its 10 s gap.
    const starts = run.fetcher.requests('cdn.test').map((r) => r.at);
    expect(starts.length).toBe(5);
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(10_000);
    // A redirect on the same host is followed too, and its rules obeyed.
    expect(run.skipped).toContainEqual(expect.objectContaining({ url: 'http://b.test/private', reason: 'robots' }));
  });
});
