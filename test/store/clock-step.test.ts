/**
 * A wall-clock step back between two runs of one `--state` crawl. The crawl
 * clock starts at the wall clock, so every instant the state file holds (a
 * host's last start and Retry-After pause, a delayed retry) would lie in the
 * future by the size of the step: set back a day, the crawl would sit a day
 * before its next request. The store notices that the clock reads earlier
 * than its last save, and the restored waits keep what they had left —
 * neither shorter (politeness) nor a day longer (a crawl that seems stuck).
 * Real SQLite file, real Crawler, scripted web on a fake clock.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import type { RecordSink } from '../../src/output/sink.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { FakeClock } from '../support/fake-clock.js';
import { createScriptedFetcher, type ScriptedSite } from '../support/scripted-fetcher.js';
import { seededRandom } from '../support/seeded-random.js';

const DAY = 86_400_000;
const RETRY_AFTER_S = 120;

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-clock-step-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The web, whose server remembers across runs that it refused once. */
function webSite(): ScriptedSite {
  let refused = false;
  return {
    generate: { pages: 8, linksPerPage: 1 },
    // The third page is refused once with a Retry-After: the host is paused when the first run stops.
    handler: (req, next) => {
      if (req.path !== '/p/2' || refused) return next();
      refused = true;
      return { status: 429, headers: { 'retry-after': String(RETRY_AFTER_S) } };
    },
  };
}

/** One run of the crawl in `file`, starting at `start` on both clocks' scales, stopped after `stopAfterMs` if given. */
async function runOnce(site: ScriptedSite, file: string, start: number, stopAfterMs?: number) {
  const clock = new FakeClock(start, start);
  const settings = buildSettings(validateConfig({ defaults: { rate: '1/s' } }, 'test config'), {});
  const fetcher = createScriptedFetcher({ clock, sites: { 'a.test': site }, timeouts: settings.timeouts, maxBodyBytes: settings.maxBodyBytes });
  const store = new SqliteStore(file, { now: () => clock.now() });
  const warnings: string[] = [];
  const sink: RecordSink = { write: () => Promise.resolve(), close: () => Promise.resolve(), broken: false, written: 0 };
  const crawler = new Crawler({
    settings,
    seeds: ['http://a.test/'],
    clock,
    fetcher,
    sink,
    store,
    random: seededRandom(1),
    log: { info: () => {}, warn: (m) => warnings.push(m) },
  });
  if (stopAfterMs !== undefined) clock.setTimer(() => crawler.stop(), stopAfterMs);
  const stats = await clock.runUntilDone(crawler.run(), { maxMs: 2 * DAY });
  store.close();
  return { stats, requests: fetcher.requests('a.test'), clock, warnings };
}

describe('a wall-clock step back between runs of a --state crawl', () => {
  it('keeps the Retry-After pause what it had left, not a day more', async () => {
    const file = join(dir, 'state.db');
    const t0 = Date.UTC(2026, 10, 25, 12);
    const site = webSite();
    const first = await runOnce(site, file, t0, 10_000);
    expect(first.stats.interrupted).toBe(true);
    const refused = first.requests.find((r) => r.status === 429)!;
    expect(refused).toBeDefined();
    const pauseLeft = refused.at + RETRY_AFTER_S * 1000 - (t0 + 10_000);
    expect(pauseLeft).toBeGreaterThan(100_000);

    // The machine's clock was set back a day before the resume.
    const start = t0 + 10_000 - DAY;
    const second = await runOnce(site, file, start);
    expect(second.stats.interrupted).toBe(false);
    const pages = second.requests.filter((r) => r.path !== '/robots.txt');
    // Nothing before the pause is over (it keeps what it had left when the first run saved it) …
    expect(pages[0].at - start).toBeGreaterThanOrEqual(pauseLeft - 1);
    // … and the crawl ends minutes later, not a day later.
    expect(second.clock.now() - start).toBeLessThan(pauseLeft + 60_000);
    expect(pages.map((r) => r.path)).toEqual(['/p/2', '/p/3', '/p/4', '/p/5', '/p/6', '/p/7']);
    expect(second.warnings.filter((w) => w.includes('earlier than when'))).toHaveLength(1);
  });

  it('says nothing and shifts nothing when the clock moved forward', async () => {
    const file = join(dir, 'state.db');
    const t0 = Date.UTC(2026, 10, 25, 12);
    const site = webSite();
    await runOnce(site, file, t0, 10_000);
    const second = await runOnce(site, file, t0 + 10_000 + 1_000);
    expect(second.warnings.filter((w) => w.includes('earlier than when'))).toEqual([]);
    expect(second.stats.interrupted).toBe(false);
  });
});
