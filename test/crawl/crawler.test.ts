import { describe, expect, it } from 'vitest';
import { Crawler, isoTimeFormatter } from '../../src/crawl/crawler.js';
import { buildSettings } from '../../src/config/settings.js';
import type { Fetcher } from '../../src/fetch/fetcher.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { OutputRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { MemoryStore } from '../../src/store/memory-store.js';

describe('isoTimeFormatter', () => {
  const reference = (ms: number) => new Date(ms).toISOString();

  it('matches toISOString on the edges of seconds, signs, fractions and the Date range', () => {
    const format = isoTimeFormatter();
    const cases = [
      0,
      1,
      9,
      10,
      99,
      100,
      999,
      1000,
      1001,
      -1,
      -999,
      -1000,
      -1001,
      1.7,
      -1.7,
      999.9,
      Date.UTC(2026, 10, 21, 3, 29, 6, 928),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
      -62198755200000,
      253402300799999,
      253402300800000,
      8.64e15,
      -8.64e15,
    ];
    for (const ms of cases) {
      // Twice: the first call fills the cache, the second reads it.
      expect(format(ms), String(ms)).toBe(reference(ms));
      expect(format(ms), String(ms)).toBe(reference(ms));
    }
  });

  it('matches toISOString over a stream of times moving back and forth', () => {
    const format = isoTimeFormatter();
    let t = Date.UTC(2026, 0, 1) - 5_000;
    for (let i = 0; i < 20_000; i++) {
      t += ((i * 7919) % 211) - 97; // mostly small steps either way, crossing many second boundaries
      expect(format(t)).toBe(reference(t));
    }
  });

  it('still throws for a time Date cannot represent, even right after a valid one in the same second', () => {
    const format = isoTimeFormatter();
    expect(format(8.64e15)).toBe(reference(8.64e15));
    expect(() => format(8.64e15 + 1)).toThrow(RangeError);
    expect(() => format(NaN)).toThrow(RangeError);
    expect(() => format(Infinity)).toThrow(RangeError);
  });
});

describe('Crawler', () => {
  // Regression: run() awaits the store's open() before queueing the seeds; a stop() in
  // that gap ended the crawl with no record at all, though every seed gets one.
  it('gives each seed a record when stopped before the store has opened', async () => {
    const settings = buildSettings(undefined, {});
    const records: OutputRecord[] = [];
    const sink: RecordSink = { write: async (r) => void records.push(r), close: async () => {}, broken: false, written: 0 };
    const fetcher: Fetcher = {
      fetch: async () => {
        throw new Error('nothing may be fetched');
      },
      close: async () => {},
    };
    const seeds = ['http://a.localhost/', 'http://b.localhost/'];
    const crawler = new Crawler({ settings, seeds, clock: new FakeClock(), fetcher, sink });
    const running = crawler.run();
    crawler.stop();
    const stats = await running;
    expect(records).toEqual(seeds.map((url) => ({ type: 'skipped', url, reason: 'interrupted', depth: 0, parent: null })));
    expect(stats.interrupted).toBe(true);
  });

  // Regression: a store call that failed while the crawl was finishing (drain, finish)
  // was dropped because the crawl had already begun to end: run() never settled.
  it('rejects with the store error when the store fails while the crawl finishes', async () => {
    class FailingStore extends MemoryStore {
      // Any store call may answer with a promise (CrawlStore): this one answers with a rejected one.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises
      override finish(): Promise<void> {
        return Promise.reject(new Error('disk gone'));
      }
    }
    const settings = buildSettings(undefined, {});
    const sink: RecordSink = { write: async () => {}, close: async () => {}, broken: false, written: 0 };
    const fetcher: Fetcher = { fetch: async () => Promise.reject(new Error('unused')), close: async () => {} };
    const crawler = new Crawler({ settings, seeds: [], clock: new FakeClock(), fetcher, sink, store: new FailingStore() });
    await expect(crawler.run()).rejects.toThrow('disk gone');
  });
});
