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
import { settingsFingerprint } from '../../src/config/fingerprint.js';
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

// Regression (the full-disk test lost one record in ~10 runs): the state file's low-space warning comes from
// inside a commit, and so from inside whatever store call committed. Met inside the claim of a page, the stop
// ended the crawl before that page's job started; the job then ran anyway, its record was dropped by the
// closed sink, and its URL was completed: done in the state file, never in -o, never fetched again.
describe('a stop called from inside a store call', () => {
  it('ends the crawl only once the page being claimed has run: no record after the end, no URL completed after it', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 28), Date.UTC(2026, 10, 28));
    const settings = buildSettings(validateConfig({ defaults: { rate: 'unlimited', concurrency: 1 } }, 'test config'), {});
    const pages = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`/p/${i}`, `<title>${i}</title><a href="/p/${i + 1}">next</a>`]));
    const fetcher = createScriptedFetcher({
      clock,
      sites: { 'a.test': { robots: null, pages: { '/': '<a href="/p/0">first</a>', ...pages } } },
      timeouts: settings.timeouts,
      maxBodyBytes: settings.maxBodyBytes,
    });
    let ended = false;
    const late: string[] = [];
    const recorded = new Set<string>();
    const sink: RecordSink = {
      write: (r) => {
        if (ended) late.push(`record ${r.url}`);
        else recorded.add(r.url);
        return Promise.resolve();
      },
      confirmed: () => Promise.resolve(),
      close: () => Promise.resolve(),
      broken: false,
      written: 0,
    };
    const store = new SqliteStore(join(dir, 'state.db'), { now: () => clock.now() });
    const seeds = ['http://a.test/'];
    const crawler = new Crawler({ settings, seeds, clock, fetcher, sink, store });
    // The fourth page's start is counted inside its claim: the store says "stop" right there, as a commit does.
    let starts = 0;
    const addToCounter = store.addToCounter.bind(store);
    store.addToCounter = (name, by) => {
      const n = addToCounter(name, by);
      if (by > 0 && ++starts === 4) crawler.stop();
      return n;
    };
    const complete = store.complete.bind(store);
    const completed: string[] = [];
    store.complete = (lease, outcome) => {
      if (ended) late.push(`completed ${lease.entry.url}`);
      else completed.push(lease.entry.url);
      return complete(lease, outcome);
    };
    await clock.runUntilDone(crawler.run(), { maxMs: 60_000, maxSteps: 100_000 });
    ended = true;
    await clock.advanceAsync(5_000);
    store.close();
    expect(starts).toBe(4);
    expect(late).toEqual([]);
    for (const url of completed) expect(recorded.has(url), url).toBe(true);
  });
});

// `crawl --state s.db URL | head -3`: the reader goes away while pages are in flight. Their records then
// reach nobody; completed anyway, they were done in the state file and in no output, never asked again.
describe('a reader that goes away, with a durable store', () => {
  it('completes only the URLs whose records it took; the others are asked again on resume', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 28), Date.UTC(2026, 10, 28));
    const settings = buildSettings(validateConfig({ defaults: { rate: 'unlimited', concurrency: 4 } }, 'test config'), {});
    const links = Array.from({ length: 12 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(' ');
    const pages = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`/p/${i}`, `<title>${i}</title>`]));
    const fetcher = createScriptedFetcher({
      clock,
      sites: { 'a.test': { robots: null, pages: { '/': links, ...pages } } },
      timeouts: settings.timeouts,
      maxBodyBytes: settings.maxBodyBytes,
    });
    let broken = false;
    const taken = new Set<string>();
    const sink: RecordSink = {
      // The fourth record meets a closed pipe: it and every later one reach nobody, as a real sink's batch does.
      write: (r) => {
        if (!broken && taken.size === 3) {
          broken = true;
          crawler.stop(); // as the CLI's onBrokenPipe does
        }
        if (!broken) taken.add(r.url);
        return Promise.resolve();
      },
      confirmed: () => Promise.resolve(),
      close: () => Promise.resolve(),
      get broken() {
        return broken;
      },
      written: 0,
    };
    const store = new SqliteStore(join(dir, 'state.db'), { now: () => clock.now() });
    const completed: string[] = [];
    const complete = store.complete.bind(store);
    store.complete = (lease, outcome) => {
      completed.push(lease.entry.url);
      return complete(lease, outcome);
    };
    const crawler = new Crawler({ settings, seeds: ['http://a.test/'], clock, fetcher, sink, store });
    await clock.runUntilDone(crawler.run(), { maxMs: 60_000, maxSteps: 100_000 });
    store.close();
    expect(broken).toBe(true);
    expect(completed.length).toBeGreaterThan(0);
    for (const url of completed) expect(taken.has(url), url).toBe(true);
    // Every page the crawl knows and did not complete is still there for the resumed crawl.
    const resumed = new SqliteStore(join(dir, 'state.db'), { now: () => clock.now() });
    await resumed.open({ seeds: ['http://a.test/'], configFingerprint: settingsFingerprint(settings) });
    expect(resumed.counts().queued).toBe(13 - completed.length);
    resumed.close();
  });
});
