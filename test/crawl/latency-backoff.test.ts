/**
 * A server that slows down is given room: the latency signal in the crawl
 * loop, under fake time, against a scripted server whose response time grows
 * with its arrival rate (an M/M/1-like 1 / (1 − load)). Response times are
 * read on the server's side (its log: answer minus arrival).
 */
import { describe, expect, it } from 'vitest';
import { LATENCY } from '../../src/politeness/latency-signal.js';
import { minGap } from '../../fixtures/web.js';
import { fakeCrawl, type FakeCrawlRun } from '../support/fake-crawl.js';
import type { ScriptedSite, ServerRequest, ScriptedResponse } from '../support/scripted-fetcher.js';
import type { Crawler } from '../../src/crawl/crawler.js';
import type { FakeClock } from '../support/fake-clock.js';

const IDLE_MS = 50;
const HOST = 'slow.test';

/** Answers in IDLE_MS / (1 − load), load = arrivals in the last second / what the server can take a second at `at`. */
function loadedServer(capacity: (at: number) => number): ScriptedSite['handler'] {
  const arrivals: number[] = [];
  return (req: ServerRequest, next: () => ScriptedResponse) => {
    arrivals.push(req.at);
    while (arrivals[0] <= req.at - 1000) arrivals.shift();
    const load = Math.min(0.95, arrivals.length / capacity(req.at));
    return { ...next(), latencyMs: IDLE_MS / (1 - load) };
  };
}

/** Every 250 ms of the crawl: the host's factor in force (1 when it is not slowed). */
function watchFactor(factors: Array<{ at: number; factor: number; latency?: number }>) {
  return (crawler: Crawler, clock: FakeClock) => {
    const tick = () => {
      const slowed = crawler.progress().throttled?.find((t) => t.host === HOST);
      factors.push({ at: clock.now(), factor: slowed?.factor ?? 1, latency: slowed?.latency?.factor });
      clock.setTimer(tick, 250);
    };
    clock.setTimer(tick, 0);
  };
}

/** The server's response times (answer minus arrival) of requests that arrived in [from, to). */
function serverTimes(run: FakeCrawlRun, from: number, to: number): number[] {
  return run.fetcher
    .requests(HOST)
    .filter((e) => e.respondedAt !== null && e.at >= from && e.at < to)
    .map((e) => e.respondedAt! - e.at)
    .sort((a, b) => a - b);
}
const p50 = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)];

function crawlBusyServer(latencyBackoff: boolean, factors: Array<{ at: number; factor: number; latency?: number }> = []) {
  // Busy for the first 40 s (12 requests a second make it crawl); then whatever else loaded it is gone.
  let start: number | undefined;
  const capacity = (at: number) => ((start ??= at), at - start < 40_000 ? 12 : 1000);
  return fakeCrawl({
    sites: { [HOST]: { latencyMs: IDLE_MS, generate: { pages: 800, linksPerPage: 4 }, handler: loadedServer(capacity) } },
    seeds: [`http://${HOST}/`],
    config: { defaults: { rate: '10/s', concurrency: 4, latencyBackoff } },
    onCrawler: watchFactor(factors),
    limits: { maxMs: 600_000, maxSteps: 1_000_000 },
  });
}

describe('latency backoff in the crawl loop', () => {
  it('slows a server whose response time climbs, keeping it within 2× its idle time, then recovers', async () => {
    const factors: Array<{ at: number; factor: number; latency?: number }> = [];
    const run = await crawlBusyServer(true, factors);
    const t0 = run.startedAt;
    // Every page is crawled.
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(801);
    // Never faster than configured: 10/s is a 100 ms gap between arrivals.
    expect(minGap(run.fetcher.arrivals(HOST))).toBeGreaterThanOrEqual(100);
    // Never below the floor, and it did slow down.
    const lowest = Math.min(...factors.map((f) => f.latency ?? 1));
    expect(lowest).toBeGreaterThanOrEqual(LATENCY.floor);
    expect(lowest).toBeLessThan(0.5);
    // While busy, once the baseline is learnt (the first few seconds), the server stays within 2× its idle time.
    const busy = serverTimes(run, t0 + 5_000, t0 + 40_000);
    expect(busy.length).toBeGreaterThan(50);
    expect(p50(busy)).toBeLessThanOrEqual(2 * IDLE_MS);
    // Once the server is quick again, the rate comes back to the configured one.
    const last = factors.filter((f) => f.at < run.clock.now() - 1000).at(-1)!;
    expect(last.factor).toBe(1);
    const late = run.fetcher.arrivals(HOST).filter((at) => at >= run.clock.now() - 10_000);
    expect(late.length).toBeGreaterThan(80); // ~10/s over the last 10 s
    expect(run.stats.perHost.get(HOST)?.rate).toMatch(/^10\/s, slowed \d+× for latency$/);
    // Each page record fetched while the host was held back says how far, and why; the others say nothing.
    const slowed = run.pages.filter((p) => p.slowed !== undefined);
    expect(slowed.length).toBeGreaterThan(50);
    for (const p of slowed) expect(p.slowed!.why).toMatch(/^latency \d+ ms vs \d+ ms baseline$/);
    expect(Math.min(...slowed.map((p) => p.slowed!.factor))).toBeCloseTo(lowest, 2);
    expect(run.pages.length - slowed.length).toBeGreaterThan(50);
  });

  it('with latencyBackoff off, the same server is kept at more than 2× its idle time', async () => {
    const run = await crawlBusyServer(false);
    const t0 = run.startedAt;
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(801);
    expect(p50(serverTimes(run, t0 + 5_000, t0 + 40_000))).toBeGreaterThan(2 * IDLE_MS);
    expect(run.stats.perHost.get(HOST)?.rate).toBe('10/s');
  });

  it('one slow page alone does not move the rate', async () => {
    const factors: Array<{ at: number; factor: number; latency?: number }> = [];
    const run = await fakeCrawl({
      sites: {
        [HOST]: { latencyMs: IDLE_MS, generate: { pages: 60, linksPerPage: 3 }, pages: { '/p/20': { body: '<a href="/p/21">next</a>', latencyMs: 5_000 } } },
      },
      seeds: [`http://${HOST}/`],
      config: { defaults: { rate: '10/s', concurrency: 2 } },
      onCrawler: watchFactor(factors),
    });
    expect(run.fetcher.requests(HOST).some((e) => e.path === '/p/20' && e.respondedAt! - e.at === 5_000)).toBe(true);
    expect(factors.every((f) => f.factor === 1)).toBe(true);
    expect(run.stats.perHost.get(HOST)?.rate).toBe('10/s');
  });

  it("is not fooled by our own concurrency: waits for a connection or a slot are not the server's time", async () => {
    const factors: Array<{ at: number; factor: number; latency?: number }> = [];
    const run = await fakeCrawl({
      sites: {
        [HOST]: {
          latencyMs: 300,
          generate: { pages: 120, linksPerPage: 4 },
          // Every other request waits 600 ms for its connection before it is written: timed from its slot,
          // half the answers would take 3× the others, and the median would swing between them.
          connectMs: (path) => (/[13579]$/.test(path) ? 600 : 0),
        },
      },
      seeds: [`http://${HOST}/`],
      config: { defaults: { rate: '20/s', concurrency: 8 } },
      onCrawler: watchFactor(factors),
    });
    // Many requests were in flight together, each answered in 300 ms.
    expect(run.fetcher.maxInFlight(HOST)).toBeGreaterThanOrEqual(4);
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(121);
    expect(factors.every((f) => f.factor === 1)).toBe(true);
    expect(run.stats.perHost.get(HOST)?.rate).toBe('20/s');
  });
});
