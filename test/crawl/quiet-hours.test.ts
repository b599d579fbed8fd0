/**
 * Quiet hours in the crawl loop, under fake time: a host with `hours` gets
 * no request (robots.txt included) outside its window, waits for the next
 * one with its URLs kept (not dropped, not "done"), sleeps instead of
 * spinning, and says so in the progress line; a host without hours is not
 * held back by it. Run on the memory store and on a real SQLite state file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatProgressLine, type ProgressSnapshot } from '../../src/output/progress.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { CrawlStore } from '../../src/store/crawl-store.js';
import type { FakeClock } from '../support/fake-clock.js';
import { fakeCrawl } from '../support/fake-crawl.js';

const MIN = 60_000;
const DAY = 86_400_000;
// The fake clock's wall starts at 2026-01-01T00:00Z, 01:00 in Berlin (CET, UTC+1).
const WALL_START = Date.UTC(2026, 0, 1);
// "01:30-01:31" in Berlin: 00:30-00:31 UTC, one minute a night.
const OPENS = WALL_START + 30 * MIN;
const CLOSES = OPENS + MIN;
const PAGES = 120;

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-quiet-hours-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function crawlAtNight(store?: (clock: FakeClock) => CrawlStore) {
  const seen: ProgressSnapshot[] = [];
  const closed: Array<() => void> = [];
  const run = await fakeCrawl({
    sites: {
      'night.test': { generate: { pages: PAGES, linksPerPage: 3 }, latencyMs: 3_000 },
      'day.test': { generate: { pages: 5, linksPerPage: 1 } },
    },
    seeds: ['http://night.test/', 'http://day.test/'],
    config: {
      defaults: { rate: '5/s', concurrency: 4 },
      domains: { 'night.test': { hours: '01:30-01:31', timezone: 'Europe/Berlin' } },
    },
    store:
      store &&
      ((clock) => {
        const s = store(clock);
        closed.push(() => (s as { close?: () => void }).close?.());
        return s;
      }),
    limits: { maxMs: 3 * DAY, maxSteps: 1_000_000 },
    onCrawler: (crawler, clock) => {
      // Ten minutes in, and again inside the day between the two nights.
      clock.setTimer(() => seen.push(crawler.progress()), 10 * MIN);
      clock.setTimer(() => seen.push(crawler.progress()), 12 * 3_600_000);
    },
  });
  for (const close of closed) close();
  const toWall = (at: number) => at + run.clock.wallNow() - run.clock.now();
  return { ...run, seen, toWall };
}

function checkNight(run: Awaited<ReturnType<typeof crawlAtNight>>) {
  const night = run.fetcher.requests('night.test');
  const walls = night.map((r) => run.toWall(r.at));
  // Not one request outside the window, robots.txt included; it is the first, at the opening.
  expect(night[0].path).toBe('/robots.txt');
  expect(walls[0]).toBe(OPENS);
  const outside = walls.filter((w) => !((w >= OPENS && w < CLOSES) || (w >= OPENS + DAY && w < CLOSES + DAY)));
  expect(outside.map((w) => new Date(w).toISOString())).toEqual([]);
  // Both nights were used: paused at the close, not dropped.
  expect(walls.filter((w) => w < CLOSES).length).toBeGreaterThan(40);
  expect(walls.filter((w) => w >= OPENS + DAY).length).toBeGreaterThan(10);
  // Every page was crawled, and the crawl ended on its own once it was.
  expect(run.pages.filter((p) => p.url.startsWith('http://night.test/')).length).toBe(PAGES + 1);
  expect(run.stats.interrupted).toBe(false);
  // A request started just before the close was answered after it.
  expect(night.some((r) => run.toWall(r.at) < CLOSES && run.toWall(r.respondedAt!) >= CLOSES)).toBe(true);
  // The host without hours was crawled at once.
  const day = run.fetcher.requests('day.test').map((r) => run.toWall(r.at));
  expect(Math.max(...day)).toBeLessThan(OPENS);
  // It slept through the day: no busy loop of timers while waiting.
  expect(run.clock.now() - run.startedAt).toBeLessThan(DAY + CLOSES - WALL_START);
  // The progress line says when the window opens, before the first night and between the two.
  for (const snapshot of run.seen) {
    expect(snapshot.paused).toEqual([expect.objectContaining({ host: 'night.test', quietUntil: '01:30' })]);
    expect(formatProgressLine(snapshot, 0)).toContain('paused night.test until 01:30 (quiet hours)');
  }
  expect(run.seen).toHaveLength(2);
}

describe('quiet hours', () => {
  it('memory store: no request outside the window', async () => {
    const run = await crawlAtNight();
    checkNight(run);
  });

  it('SQLite state file: no request outside the window', async () => {
    const run = await crawlAtNight((clock) => new SqliteStore(join(dir, 'state.db'), { now: () => clock.now() }));
    checkNight(run);
  });
});
