/**
 * A URL's earlier attempts and throttle events in its record
 * (crawl/attempt-history.ts), and robots.txt requests as records of their own
 * (crawl/robots-hop.ts): the pure parts as tables, then real crawls
 * under fake time, checked against what the scripted servers saw.
 */
import { describe, expect, it } from 'vitest';
import { historyFields, MAX_ATTEMPT_HISTORY, throttleEvent, withAttempt } from '../../src/crawl/attempt-history.js';
import type { RobotsFetchRecord } from '../../src/types.js';
import { fakeCrawl } from '../support/fake-crawl.js';

/** Margin HostFeedback adds to an announced pause. */
const PAUSE_MARGIN_MS = 10;
const T0 = 1_800_000_000_000;

/** Record instants are ISO 8601 UTC strings with milliseconds. */
const iso = (ms: number) => new Date(Math.round(ms)).toISOString();

const ev = (i: number) => ({ at: T0 + i, status: 429, pausedUntil: T0 + i + 1000 });

describe('attempt history (pure)', () => {
  it('adds each attempt start, rounded, and keeps other extra fields', () => {
    const once = withAttempt({ other: 'kept' }, T0 + 0.4);
    expect(once).toEqual({ other: 'kept', history: { starts: [T0] } });
    const twice = withAttempt(once, T0 + 500, ev(600));
    expect(twice).toEqual({ other: 'kept', history: { starts: [T0, T0 + 500], throttles: [ev(600)] } });
    expect(once).toEqual({ other: 'kept', history: { starts: [T0] } }); // not changed in place
  });

  it(`keeps only the latest ${MAX_ATTEMPT_HISTORY} starts and throttle events`, () => {
    let extra = withAttempt(undefined, T0, ev(0));
    for (let i = 1; i < 25; i++) extra = withAttempt(extra, T0 + i, ev(i));
    const fields = historyFields(extra, ev(25));
    expect(fields.attemptStarts).toEqual(Array.from({ length: MAX_ATTEMPT_HISTORY }, (_, i) => iso(T0 + 15 + i)));
    expect(fields.throttles!.map((t) => Date.parse(t.at) - T0)).toEqual(Array.from({ length: MAX_ATTEMPT_HISTORY }, (_, i) => 16 + i));
    expect(fields.throttles!.at(-1)).toEqual({ at: iso(T0 + 25), status: 429, pausedUntil: iso(T0 + 1025) });
  });

  it.each([
    ['no extra', undefined],
    ['extra without history', { other: 1 }],
    ['a malformed history', { history: 'junk' }],
  ])('gives a first attempt no fields (%s)', (_, extra) => {
    expect(historyFields(extra)).toEqual({});
  });

  it.each([
    ['seconds', { 'retry-after': '5' }, 5000],
    ['an HTTP date 7 s ahead', { 'retry-after': new Date(T0 + 7000).toUTCString(), date: new Date(T0).toUTCString() }, 7000],
    ['none', {}, undefined],
    ['garbage', { 'retry-after': 'soon' }, undefined],
  ])('reads Retry-After as %s', (_, headers, retryAfterMs) => {
    const e = throttleEvent({ status: 503, headers }, T0 + 0.6, T0, T0 + 9000);
    expect(e).toEqual({ at: T0 + 1, status: 503, pausedUntil: T0 + 9000, ...(retryAfterMs !== undefined && { retryAfterMs }) });
  });

  it('never says a pause ended before the answer came', () => {
    expect(throttleEvent({ status: 429, headers: {} }, T0, T0, -Infinity).pausedUntil).toBe(T0);
  });
});

describe('records of retried and throttled URLs', () => {
  it('lists the starts of earlier attempts and each 429 with its Retry-After and pause', async () => {
    const run = await fakeCrawl({
      sites: {
        'busy.test': {
          latencyMs: 20,
          handler: (req, next) => (req.path === '/' && req.nth <= 2 ? { status: 429, headers: { 'retry-after': '2' } } : next()),
          pages: { '/': 'ok' },
        },
      },
      seeds: ['http://busy.test/'],
      config: { domains: { 'busy.test': { rate: '10/s', adaptive: false } } },
    });
    const tries = run.fetcher.requests('busy.test').filter((r) => r.path === '/');
    expect(tries.map((r) => r.status)).toEqual([429, 429, 200]);
    const page = run.pages[0];
    expect(page).toMatchObject({ status: 200, attempts: 3, startedAt: iso(tries[2].at) });
    expect(page.attemptStarts).toEqual([iso(tries[0].at), iso(tries[1].at)]);
    expect(page.throttles).toEqual(
      tries.slice(0, 2).map((t) => ({ at: iso(t.endedAt!), status: 429, retryAfterMs: 2000, pausedUntil: iso(t.endedAt! + 2000 + PAUSE_MARGIN_MS) })),
    );
    // The pause the record states is the one the crawler kept.
    expect(tries[1].at).toBeGreaterThanOrEqual(Date.parse(page.throttles![0].pausedUntil) - 1);
  });

  it('lists a failed attempt without a throttle event', async () => {
    const run = await fakeCrawl({
      sites: { 'flaky.test': { handler: (req, next) => (req.nth === 1 ? { fail: 'CONNECTION_RESET' } : next()), pages: { '/': 'ok' } } },
      seeds: ['http://flaky.test/'],
    });
    const tries = run.fetcher.requests('flaky.test').filter((r) => r.path === '/');
    expect(run.pages[0]).toMatchObject({ status: 200, attempts: 2, attemptStarts: [iso(tries[0].at)] });
    expect(run.pages[0]).not.toHaveProperty('throttles');
  });

  it('keeps the latest events of a URL throttled past its budget, the last answer included', async () => {
    const run = await fakeCrawl({
      sites: { 'wall.test': { pages: { '/': { status: 503, headers: { 'retry-after': '0' } } } } },
      seeds: ['http://wall.test/'],
      config: { domains: { 'wall.test': { rate: '50/s', throttleRetries: 14, adaptive: false } } },
    });
    const tries = run.fetcher.requests('wall.test').filter((r) => r.path === '/');
    expect(tries).toHaveLength(15);
    const page = run.pages[0];
    expect(page).toMatchObject({ status: 503, attempts: 15, error: { code: 'THROTTLED' } });
    expect(page.attemptStarts).toEqual(tries.slice(4, 14).map((t) => iso(t.at)));
    expect(page.throttles!.map((t) => t.at)).toEqual(tries.slice(5).map((t) => iso(t.endedAt!)));
    expect(page.throttles!.every((t) => t.status === 503 && t.retryAfterMs === 0)).toBe(true);
  });

  it('adds nothing to a record fetched at the first attempt', async () => {
    const run = await fakeCrawl({ sites: { 'a.test': { pages: { '/': 'ok' } } }, seeds: ['http://a.test/'] });
    expect(Object.keys(run.pages[0])).not.toContain('attemptStarts');
    expect(Object.keys(run.pages[0])).not.toContain('throttles');
  });
});

describe('robots.txt records', () => {
  const robotsOf = (run: { records: Array<{ type: string }> }) => run.records.filter((r): r is RobotsFetchRecord => r.type === 'robots');

  it('writes one per robots.txt request when asked, timed as the server saw it', async () => {
    const robots = 'User-agent: *\nDisallow: /private\n';
    const run = await fakeCrawl({
      sites: { 'a.test': { robots, pages: { '/': 'ok' } } },
      seeds: ['http://a.test/'],
      robotsRecords: true,
    });
    const [seen] = run.fetcher.requests('a.test').filter((r) => r.path === '/robots.txt');
    expect(robotsOf(run)).toEqual([
      {
        type: 'robots',
        url: 'http://a.test/robots.txt',
        host: 'a.test',
        status: 200,
        startedAt: iso(seen.at),
        elapsedMs: expect.any(Number),
        bytes: robots.length,
      },
    ]);
    // Before the page it allowed.
    expect(run.records.map((r) => r.type)).toEqual(['robots', 'page']);
  });

  it('says when a 429 on robots.txt paused the host, and records an unreachable one with its error', async () => {
    const run = await fakeCrawl({
      sites: {
        'slow.test': { robots: (req) => (req.nth === 1 ? { status: 429, headers: { 'retry-after': '3' } } : { status: 200, body: '' }), pages: { '/': 'ok' } },
        'down.test': { connectFail: 'CONNECTION_REFUSED' },
      },
      seeds: ['http://slow.test/', 'http://down.test/'],
      robotsRecords: true,
    });
    const slow = robotsOf(run).filter((r) => r.host === 'slow.test');
    expect(slow[0]).toMatchObject({ status: 429, retryAfterMs: 3000 });
    expect(Date.parse(slow[0].pausedUntil!) - (Date.parse(slow[0].startedAt) + slow[0].elapsedMs)).toBeGreaterThanOrEqual(3000);
    expect(slow.at(-1)).toMatchObject({ status: 200 });
    const down = robotsOf(run).filter((r) => r.host === 'down.test');
    expect(down.length).toBeGreaterThan(0);
    expect(down[0]).toMatchObject({ status: null, bytes: 0, error: { code: 'CONNECTION_REFUSED' } });
    expect(down[0].startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('writes none unless asked', async () => {
    const run = await fakeCrawl({ sites: { 'a.test': { robots: 'User-agent: *\nAllow: /\n', pages: { '/': 'ok' } } }, seeds: ['http://a.test/'] });
    expect(robotsOf(run)).toEqual([]);
    expect(run.fetcher.requests('a.test').some((r) => r.path === '/robots.txt')).toBe(true);
  });
});
