/**
 * A stop with a state file that outlives the process: a failure the crawl
 * would have retried (a reset connection, a 502) or a throttling answer
 * (a 503) met while stopping is handed back for the resumed crawl, as an
 * aborted fetch is. Recorded as
 * final and completed, the page would stay failed for good: the resumed
 * crawl never asks for it again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { Crawler } from '../../src/crawl/crawler.js';
import type { RecordSink } from '../../src/output/sink.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { OutputRecord, PageRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { createScriptedFetcher, type ScriptedSite } from '../support/scripted-fetcher.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-stop-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One run of the crawl on the state file, against the site `web` makes (given the crawler's stop). */
async function runOnce(file: string, web: (stop: () => void) => ScriptedSite) {
  const clock = new FakeClock(Date.UTC(2026, 10, 28), Date.UTC(2026, 10, 28));
  const settings = buildSettings(validateConfig({ defaults: { rate: '10/s' } }, 'test config'), {});
  // Assigned once, below: the site's handler stops the crawler it is part of.
  // eslint-disable-next-line prefer-const
  let crawler: Crawler | undefined;
  const fetcher = createScriptedFetcher({
    clock,
    sites: { 'a.test': web(() => crawler!.stop()) },
    timeouts: settings.timeouts,
    maxBodyBytes: settings.maxBodyBytes,
  });
  const store = new SqliteStore(file, { now: () => clock.now() });
  const records: OutputRecord[] = [];
  const sink: RecordSink = { write: (r) => Promise.resolve(void records.push(r)), close: () => Promise.resolve(), broken: false, written: 0 };
  crawler = new Crawler({ settings, seeds: ['http://a.test/'], clock, fetcher, sink, store });
  const stats = await clock.runUntilDone(crawler.run(), { maxMs: 60_000, maxSteps: 100_000 });
  store.close();
  const pages = records.filter((r): r is PageRecord => r.type === 'page');
  return {
    stats,
    pages,
    asked: fetcher
      .requests('a.test')
      .filter((r) => r.path !== '/robots.txt')
      .map((r) => r.path),
  };
}

describe('a stop with a state file', () => {
  for (const [what, failure] of [
    ['a reset connection', { fail: 'CONNECTION_RESET' as const }],
    ['a 502 (retryStatuses)', { status: 502 }],
    ['a 503 (throttleStatuses)', { status: 503 }],
  ] as const) {
    it(`hands ${what} met while stopping back to the resumed crawl, which fetches the page`, async () => {
      const file = join(dir, `${what.replace(/\W/g, '')}.db`);
      let failed = false;
      const web = (stop: () => void): ScriptedSite => ({
        pages: { '/': '<a href="/x">x</a>', '/x': '<title>x</title>' },
        handler: (req, next) => {
          if (req.path === '/x' && !failed) {
            failed = true;
            stop();
            return failure;
          }
          return next();
        },
      });
      const first = await runOnce(file, web);
      expect(first.stats.interrupted).toBe(true);
      expect(first.asked).toEqual(['/', '/x']);
      // No final record for the page that failed while stopping.
      expect(first.pages.map((p) => [new URL(p.url).pathname, p.status])).toEqual([['/', 200]]);

      const resumed = await runOnce(file, web);
      expect(resumed.asked).toEqual(['/x']);
      expect(resumed.pages.map((p) => [new URL(p.url).pathname, p.status])).toEqual([['/x', 200]]);
      expect(resumed.stats.interrupted).toBe(false);
    });
  }
});
