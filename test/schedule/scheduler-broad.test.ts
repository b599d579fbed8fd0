import { describe, expect, it } from 'vitest';
import { RingQueue } from '../../src/util/ring-queue.js';
import { Scheduler, type TakeResult } from '../../src/schedule/scheduler.js';
import { FakeClock } from '../support/fake-clock.js';

describe('RingQueue', () => {
  it('is a FIFO through growth and wrap-around', () => {
    const q = new RingQueue<string>();
    const expected: string[] = [];
    let n = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 37; i++) {
        q.push(`k${n}`);
        expected.push(`k${n++}`);
      }
      for (let i = 0; i < 20; i++) expect(q.shift()).toBe(expected.shift());
    }
    expect(q.length).toBe(expected.length);
    while (q.length > 0) expect(q.shift()).toBe(expected.shift());
    q.push('again');
    expect(q.shift()).toBe('again');
  });
});

describe('Scheduler, broad start-up', () => {
  it('starts the first robots.txt job, submitted a few microtasks after take, long before every seeded host was visited', async () => {
    const clock = new FakeClock(0);
    const hosts = 20_000;
    let takes = 0;
    let takesAtFirstStart = -1;
    const loaded = new Set<string>();
    // eslint-disable-next-line prefer-const
    let scheduler: Scheduler;
    const asked = new Set<string>();
    const source = {
      hasWork: (key: string) => !loaded.has(key),
      take: (key: string): TakeResult => {
        takes++;
        if (!asked.has(key)) {
          asked.add(key);
          // Like RobotsCache.load: the fetch is submitted after a few awaits.
          void Promise.resolve()
            .then(() => Promise.resolve())
            .then(() =>
              scheduler.submit(key, async () => {
                if (takesAtFirstStart === -1) takesAtFirstStart = takes;
                loaded.add(key);
              }),
            );
        }
        return loaded.has(key) ? null : { notBefore: Infinity };
      },
    };
    scheduler = new Scheduler({ clock, concurrency: 16, policyFor: () => ({ intervalMs: 100, windows: [], concurrency: 1, jitterMs: 0 }), source });
    for (let i = 0; i < hosts; i++) scheduler.wake(`h${i}`);
    for (let t = 0; t < 200 && loaded.size < hosts; t++) await clock.advanceAsync(1, 1);
    expect(takesAtFirstStart).toBeGreaterThan(0);
    expect(takesAtFirstStart).toBeLessThanOrEqual(2_048);
    expect(loaded.size).toBe(hosts);
    expect(scheduler.pendingJobs).toBe(0);
  });

  it('starts the first request (a robots.txt job submitted by take) before visiting every seeded host', async () => {
    const clock = new FakeClock(0);
    const hosts = 20_000;
    let takes = 0;
    let takesAtFirstStart = -1;
    const robotsLoaded = new Set<string>();
    // eslint-disable-next-line prefer-const
    let scheduler: Scheduler;
    const source = {
      hasWork: (key: string) => !robotsLoaded.has(key),
      take: (key: string): TakeResult => {
        takes++;
        // Like the crawl loop: the page waits for robots.txt, which is submitted as the host's next job.
        scheduler.submit(key, async () => {
          if (takesAtFirstStart === -1) takesAtFirstStart = takes;
          robotsLoaded.add(key);
        });
        return { notBefore: Infinity };
      },
    };
    scheduler = new Scheduler({ clock, concurrency: 16, policyFor: () => ({ intervalMs: 100, windows: [], concurrency: 1, jitterMs: 0 }), source });
    for (let i = 0; i < hosts; i++) scheduler.wake(`h${i}`);
    await clock.advanceAsync(1, 1);
    expect(takesAtFirstStart).toBe(1);
    expect(scheduler.pendingJobs).toBe(0);
    for (let t = 0; t < 100 && robotsLoaded.size < hosts; t++) await clock.advanceAsync(1, 1);
    expect(robotsLoaded.size).toBe(hosts);
    expect(scheduler.pendingJobs).toBe(0);
  });
});
