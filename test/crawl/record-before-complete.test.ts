/**
 * A URL that ends without a request of its own (its host's robots.txt could
 * not be reached, or forbids it) gets its record first; a durable store
 * completes the URL only once the sink confirms that record, as it does for
 * a fetched page. Completed first, a kill -9 between the two would lose the
 * record for good: the resumed crawl never asks for a completed URL again.
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
import { createScriptedFetcher } from '../support/scripted-fetcher.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-order-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a URL ended without a request, with a durable store', () => {
  it('is completed only after the sink confirmed its record', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 28), Date.UTC(2026, 10, 28));
    const settings = buildSettings(validateConfig({ defaults: { rate: '10/s' } }, 'test config'), {});
    const fetcher = createScriptedFetcher({
      clock,
      sites: {
        'down.test': { connectFail: 'CONNECTION_REFUSED' },
        'closed.test': { robots: 'User-agent: *\nDisallow: /' },
        'open.test': { pages: { '/': '<title>open</title>' } },
      },
      timeouts: settings.timeouts,
      maxBodyBytes: settings.maxBodyBytes,
    });
    // What happened, in order: a record written, the records so far confirmed, a URL completed.
    const events: string[] = [];
    let written: string[] = [];
    const sink: RecordSink = {
      write: (r) => {
        written.push(r.url);
        return Promise.resolve();
      },
      // Confirmed a turn later, as a file's write callbacks are.
      confirmed: () =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            for (const url of written) events.push(`confirmed ${url}`);
            written = [];
            resolve();
          }),
        ),
      close: () => Promise.resolve(),
      broken: false,
      written: 0,
    };
    const store = new SqliteStore(join(dir, 'state.db'), { now: () => clock.now() });
    const complete = store.complete.bind(store);
    store.complete = (lease, outcome) => {
      events.push(`completed ${lease.entry.url}`);
      return complete(lease, outcome);
    };
    const seeds = ['http://down.test/', 'http://closed.test/', 'http://open.test/'];
    const crawler = new Crawler({ settings, seeds, clock, fetcher, sink, store });
    await clock.runUntilDone(crawler.run(), { maxMs: 60_000, maxSteps: 100_000 });
    store.close();

    for (const url of seeds) {
      const confirmedAt = events.indexOf(`confirmed ${url}`);
      const completedAt = events.indexOf(`completed ${url}`);
      expect(confirmedAt, `${url}: ${events.join(', ')}`).toBeGreaterThanOrEqual(0);
      expect(completedAt, `${url}: ${events.join(', ')}`).toBeGreaterThan(confirmedAt);
    }
  });
});
