import { describe, expect, it } from 'vitest';
import { MAX_OPENING_PER_SLOT, Scheduler, type Job, type TakeResult } from '../../src/schedule/scheduler.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeCrawl } from '../support/fake-crawl.js';
import type { ScriptedSite } from '../support/scripted-fetcher.js';

const policy = () => ({ intervalMs: 100, windows: [], concurrency: 1, jitterMs: 0 });

describe('Scheduler, hosts never visited (broad crawls)', () => {
  it('takes up at most MAX_OPENING_PER_SLOT × concurrency new hosts while their first loads are out, and the next as one ends', async () => {
    const clock = new FakeClock(0);
    const concurrency = 32;
    const window = MAX_OPENING_PER_SLOT * concurrency;
    const hosts = 5_000;
    const loading: string[] = [];
    const loaded = new Set<string>();
    const done = new Set<string>();
    let mostLoading = 0;
    const source = {
      hasWork: (key: string) => !done.has(key),
      take: (key: string): TakeResult => {
        if (done.has(key)) return null;
        if (!loaded.has(key)) {
          // Like a robots.txt load under way: the host waits, woken when it arrives.
          if (!loading.includes(key)) loading.push(key);
          mostLoading = Math.max(mostLoading, loading.length);
          return { notBefore: Infinity };
        }
        return async () => void done.add(key);
      },
    };
    const scheduler = new Scheduler({ clock, concurrency, policyFor: policy, source });
    for (let i = 0; i < hosts; i++) scheduler.wake(`h${i}`);
    await clock.advanceAsync(10, 1);
    expect(loading).toHaveLength(window);
    expect(scheduler.openingHosts).toBe(window);
    expect(scheduler.hostsSnapshot().length).toBeLessThanOrEqual(window); // no record for a host not taken up
    expect(scheduler.freshHosts).toBe(hosts - window);
    // Loads end one at a time: each ending lets exactly one more host in.
    for (let n = 0; n < hosts; n++) {
      const key = loading.shift()!;
      loaded.add(key);
      scheduler.wake(key);
      await clock.advanceAsync(1, 1);
    }
    for (let t = 0; t < 100 && done.size < hosts; t++) await clock.advanceAsync(10, 10);
    expect(done.size).toBe(hosts);
    expect(mostLoading).toBe(window);
    expect(scheduler.openingHosts).toBe(0);
  });

  it("starts a host's first page (robots.txt in) before opening more hosts when slots are short", async () => {
    const clock = new FakeClock(0);
    const hosts = 1_000;
    const serviceMs = 10;
    const robotsDone = new Set<string>();
    const asked = new Set<string>();
    const pageStarts = new Map<string, number>();
    let robotsStarted = 0;
    let robotsAtFirstPage = -1;
    // eslint-disable-next-line prefer-const
    let scheduler: Scheduler;
    const slow =
      (fn: () => void): Job =>
      () =>
        new Promise<void>((resolve) => {
          fn();
          clock.setTimer(resolve, serviceMs);
        });
    const source = {
      hasWork: (key: string) => !pageStarts.has(key),
      take: (key: string): TakeResult => {
        if (pageStarts.has(key)) return null;
        if (robotsDone.has(key)) {
          return slow(() => {
            if (robotsAtFirstPage === -1) robotsAtFirstPage = robotsStarted;
            pageStarts.set(key, clock.now());
          });
        }
        if (!asked.has(key)) {
          asked.add(key);
          scheduler.submit(key, async (ctx) => {
            robotsStarted++;
            ctx.onDispatched(clock.now());
            await new Promise<void>((resolve) => clock.setTimer(resolve, serviceMs));
            robotsDone.add(key);
            scheduler.wake(key);
          });
        }
        return { notBefore: Infinity };
      },
    };
    scheduler = new Scheduler({ clock, concurrency: 2, policyFor: policy, source });
    for (let i = 0; i < hosts; i++) scheduler.wake(`h${i}`);
    for (let t = 0; t < 20_000 && pageStarts.size < hosts; t += 5) await clock.advanceAsync(5, 5);
    expect(pageStarts.size).toBe(hosts);
    // h0's robots.txt ends at 10 ms and its gap at ~100 ms: its page starts then, not after 1,000 robots.txt requests (5 s).
    expect(pageStarts.get('h0')!).toBeLessThan(150);
    expect(robotsAtFirstPage).toBeLessThan(30);
  });
});

describe('Crawler, a broad crawl stopped by --max-pages', () => {
  it('fetches robots.txt only for the hosts it nearly reaches, not for every seeded host, and still gives every seed one record', async () => {
    const hosts = 2_000;
    const sites: Record<string, ScriptedSite> = {};
    const seeds: string[] = [];
    for (let i = 0; i < hosts; i++) {
      sites[`h${i}.test`] = { pages: { '/': '<title>x</title><p>no links</p>' } };
      seeds.push(`http://h${i}.test/`);
    }
    const run = await fakeCrawl({ sites, seeds, flags: { maxPages: 20, rate: '5/s', concurrency: 8 }, latencyMs: 5 });
    const robots = run.fetcher.requests().filter((r) => r.path === '/robots.txt').length;
    const pages = run.fetcher.requests().filter((r) => r.path === '/').length;
    expect(pages).toBe(20);
    // Before: all 2,000 robots.txt files came first, every host's page waiting behind them. Now new hosts
    // are opened only with slots the opened ones leave idle: what 8 slots fetch while the first pages wait
    // out their 200 ms gap (8 × 200 / 5 = 320), and no more once those pages are due.
    expect(robots).toBeLessThanOrEqual(20 + (8 * 200) / 5 + MAX_OPENING_PER_SLOT * 8);
    const perSeed = new Map<string, number>();
    for (const r of run.records) if ((r.type === 'page' || r.type === 'skipped') && r.depth === 0) perSeed.set(r.url, (perSeed.get(r.url) ?? 0) + 1);
    expect(seeds.every((s) => perSeed.get(s) === 1)).toBe(true);
    // Each page still after its own host's robots.txt, a gap later.
    for (const page of run.pages.filter((p) => p.status === 200)) {
      const host = new URL(page.url).hostname;
      const [first, second] = run.fetcher.requests(host);
      expect(first.path).toBe('/robots.txt');
      expect(second.at - first.at).toBeGreaterThanOrEqual(200);
    }
  });
});
