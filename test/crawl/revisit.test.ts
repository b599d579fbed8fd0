/**
 * `--revisit` over simulated days: a real Crawler and a real SQLite state
 * file on a FakeClock, against a scripted web whose /hot page changes at
 * every request and whose /cold page never does (a strong ETag, answered
 * with 304). The crawl never ends by itself; it is stopped after the time
 * the test gives it. The schedule adapts: the changing page is asked far
 * more often than the static one, each interval stays within the bounds,
 * and the static page is asked conditionally and answers 304.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import { freshFor, revisitInterval } from '../../src/recrawl/recrawl-change.js';
import { FirstByDigest } from '../../src/crawl/recrawl.js';
import type { RecordSink } from '../../src/output/sink.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { PageRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { createScriptedFetcher, type ScriptedSite } from '../support/scripted-fetcher.js';
import { seededRandom } from '../support/seeded-random.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const bounds = { minMs: MIN, maxMs: HOUR };

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-revisit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function site(): ScriptedSite {
  return {
    pages: { '/': '<a href="/hot">hot</a> <a href="/cold">cold</a>' },
    handler: (req, next) => {
      if (req.path === '/hot') return `<title>hot</title><p>version ${req.nth}</p>`;
      if (req.path === '/cold') {
        if (req.entry.headers['if-none-match'] === '"c1"') return { status: 304, headers: { etag: '"c1"' } };
        return { headers: { etag: '"c1"' }, body: '<title>cold</title><p>the same every time</p>' };
      }
      return next();
    },
  };
}

async function revisitFor(file: string, runMs: number, start: number, web: ScriptedSite) {
  const clock = new FakeClock(start, start);
  const settings = buildSettings(validateConfig({ defaults: { rate: '10/s' } }, 'test config'), {});
  const fetcher = createScriptedFetcher({ clock, sites: { 'a.test': web }, timeouts: settings.timeouts, maxBodyBytes: settings.maxBodyBytes });
  const store = new SqliteStore(file, { now: () => clock.now() });
  const records: PageRecord[] = [];
  const sink: RecordSink = {
    write: (r) => {
      records.push(r as PageRecord);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
    broken: false,
    written: 0,
  };
  const crawler = new Crawler({ settings, seeds: ['http://a.test/'], clock, fetcher, sink, store, random: seededRandom(1), revisit: bounds });
  clock.setTimer(() => crawler.stop(), runMs);
  const stats = await clock.runUntilDone(crawler.run(), { maxMs: runMs + HOUR, maxSteps: 1_000_000 });
  store.close();
  return { stats, records: records.filter((r) => r.type === 'page'), requests: fetcher.requests('a.test').filter((r) => r.path !== '/robots.txt') };
}

describe('--revisit', () => {
  it('asks a page that changes far more often than one that does not, within the bounds, and never ends by itself', async () => {
    const t0 = Date.UTC(2026, 10, 27, 12);
    const { stats, records, requests } = await revisitFor(join(dir, 'state.db'), 6 * HOUR, t0, site());
    expect(stats.interrupted).toBe(true); // only the stop ended it
    const times = (path: string) => requests.filter((r) => r.path === path).map((r) => r.at);
    const hot = times('/hot');
    const cold = times('/cold');
    // The changing page settles at the shortest interval: one visit a minute, 6 hours long.
    expect(hot.length).toBeGreaterThan(300);
    // The static one backs off 1.5× per unchanged answer to the hour: 1, 1.5, 2.25, … then hourly.
    expect(cold.length).toBeGreaterThan(8);
    expect(cold.length).toBeLessThan(20);
    for (const list of [hot, cold]) {
      for (let i = 1; i < list.length; i++) {
        const gap = list[i] - list[i - 1];
        expect(gap).toBeGreaterThanOrEqual(MIN);
        expect(gap).toBeLessThan(HOUR + MIN); // the interval, plus the request's own time
      }
    }
    // Later cold visits are hours apart: the interval grew.
    expect(cold[cold.length - 1] - cold[cold.length - 2]).toBeGreaterThan(50 * MIN);
    // Every revisit of /cold is conditional and answered 304; its records say unchanged, /hot's say changed.
    const coldAsked = requests.filter((r) => r.path === '/cold').slice(1);
    expect(coldAsked.every((r) => r.headers['if-none-match'] === '"c1"' && r.status === 304)).toBe(true);
    const changes = (path: string) =>
      new Set(
        records
          .filter((r) => r.url.endsWith(path) && r.url !== 'http://a.test/')
          .slice(1)
          .map((r) => r.change),
      );
    expect(changes('/cold')).toEqual(new Set(['unchanged']));
    expect(changes('/hot')).toEqual(new Set(['changed']));
    expect(records.filter((r) => r.url === 'http://a.test/hot')[0].change).toBe('new');
  });

  it('keeps the schedule in the state file: a later run goes on with the intervals learnt, and revisits a finished crawl', async () => {
    const t0 = Date.UTC(2026, 10, 27, 12);
    const file = join(dir, 'state.db');
    const web = site();
    await revisitFor(file, 3 * HOUR, t0, web);
    // The next run starts where the first stopped: /cold's interval is an hour by now, so it waits, while /hot is asked within a minute.
    const second = await revisitFor(file, 10 * MIN, t0 + 3 * HOUR, web);
    const at = (path: string) => second.requests.filter((r) => r.path === path).map((r) => r.at - (t0 + 3 * HOUR));
    expect(at('/hot').length).toBeGreaterThanOrEqual(9);
    expect(at('/cold').length).toBeLessThanOrEqual(1);
  });
});

describe('revisitInterval', () => {
  const none = {};
  it.each([
    ['a new page waits the shortest interval', undefined, 'new', none, MIN],
    ['a change halves it', 20 * MIN, 'changed', none, 10 * MIN],
    ['a removal halves it', 20 * MIN, 'removed', none, 10 * MIN],
    ['no change makes it 1.5 times longer', 20 * MIN, 'unchanged', none, 30 * MIN],
    ['an answer that tells nothing keeps it', 20 * MIN, undefined, none, 20 * MIN],
    ['never shorter than the minimum', MIN, 'changed', none, MIN],
    ['never longer than the maximum', 50 * MIN, 'unchanged', none, HOUR],
    ['max-age is a floor', MIN, 'changed', { 'cache-control': 'public, max-age=1800' }, 30 * MIN],
    ['max-age past the maximum is cut to it', MIN, 'new', { 'cache-control': 'max-age=86400' }, HOUR],
    ['no-cache says nothing', 4 * MIN, 'changed', { 'cache-control': 'no-cache, max-age=1800' }, 2 * MIN],
  ] as const)('%s', (_name, prior, change, headers, expected) => {
    expect(revisitInterval(prior, change, headers, bounds)).toBe(expected);
  });

  it('reads Expires after Date when there is no max-age', () => {
    expect(freshFor({ date: 'Fri, 27 Nov 2026 12:00:00 GMT', expires: 'Fri, 27 Nov 2026 12:20:00 GMT' })).toBe(20 * MIN);
    expect(freshFor({ date: 'Fri, 27 Nov 2026 12:00:00 GMT', expires: '0' })).toBeUndefined();
    expect(freshFor({})).toBeUndefined();
  });
});

describe('FirstByDigest (duplicateOf)', () => {
  const digest = (n: number) => `sha256:${n.toString(32).toUpperCase().padStart(12, 'A')}${'Q'.repeat(40)}`;

  it('names the first URL with the same digest, never the page itself', () => {
    const first = new FirstByDigest(10);
    expect(first.duplicateOf(digest(1), 'http://a/1')).toBeUndefined();
    expect(first.duplicateOf(digest(1), 'http://a/1')).toBeUndefined();
    expect(first.duplicateOf(digest(1), 'http://a/mirror')).toBe('http://a/1');
    expect(first.duplicateOf(digest(2), 'http://a/2')).toBeUndefined();
  });

  // The map held every distinct body of a crawl: ~80 MB per 100,000 pages in the soak benchmark.
  it('remembers at most `max` digests, forgetting the oldest first', () => {
    const first = new FirstByDigest(1_000);
    for (let i = 0; i < 5_000; i++) first.duplicateOf(digest(i), `http://a/${i}`);
    expect(first.size).toBe(1_000);
    expect(first.duplicateOf(digest(4_999), 'http://b/')).toBe('http://a/4999');
    expect(first.duplicateOf(digest(0), 'http://b/')).toBeUndefined(); // forgotten: remembered anew
    expect(first.duplicateOf(digest(0), 'http://c/')).toBe('http://b/');
  });
});
