/**
 * Per-IP limits and DNS resolved before scheduling, under fake time: the real
 * Crawler against a scripted web whose host names resolve to chosen
 * addresses (test/support/scripted-fetcher.ts `addresses`). Gaps and
 * in-flight counts are measured from the server side, exactly.
 */
import { describe, expect, it } from 'vitest';
import { minGap } from '../../fixtures/web.js';
import { EPS, fakeCrawl } from '../support/fake-crawl.js';
import type { ScriptedLogEntry } from '../support/scripted-fetcher.js';
import { gapWithMargin } from '../../src/politeness/host-limiter.js';

/** The gap a limiter with `intervalMs` keeps between starts: the interval plus its margin (host-limiter.ts). */
const gap = (intervalMs: number) => gapWithMargin(intervalMs);

/** Arrivals at any of `hosts`, in order. */
const arrivalsAt = (log: ScriptedLogEntry[], hosts: string[]) =>
  log
    .filter((e) => hosts.includes(e.host))
    .map((e) => e.at)
    .sort((a, b) => a - b);

/** Most requests to any of `hosts` in flight at once, from the server's log. */
function maxInFlightAcross(log: ScriptedLogEntry[], hosts: string[]): number {
  const events: Array<[number, number]> = [];
  for (const e of log) {
    if (!hosts.includes(e.host)) continue;
    events.push([e.at, 1], [e.endedAt!, -1]);
  }
  // Ends before starts at the same instant: a request that ended then is not in flight with one that starts then.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (now += d));
  return max;
}

const SHARED = ['a.test', 'b.test', 'c.test'];
const ADDRESSES = { 'a.test': '10.0.0.1', 'b.test': '10.0.0.1', 'c.test': '10.0.0.1', 'd.test': '10.0.0.2' };
const sites = (pages: number, latencyMs = 1) =>
  Object.fromEntries(Object.keys(ADDRESSES).map((h, i) => [h, { generate: { pages, linksPerPage: 3, seed: i + 1 }, latencyMs }]));
const seeds = Object.keys(ADDRESSES).map((h) => `http://${h}/`);

describe('per-IP limits (perIp)', () => {
  it('keeps the per-IP gap across every host on one address, and a host on another address is not slowed', async () => {
    const run = await fakeCrawl({
      sites: sites(8),
      seeds,
      addresses: ADDRESSES,
      // One global slot: a host waiting for its address must not hold it, or d.test would wait too.
      config: { concurrency: 1, defaults: { rate: '20/s', concurrency: 1 }, perIp: { rate: '5/s' } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(4 * 9);
    const shared = arrivalsAt(run.fetcher.requests(), SHARED);
    expect(shared).toHaveLength(3 * 10); // 9 pages and robots.txt per host: robots.txt pays the address's gap too
    // Exact: no two starts to the address closer than its gap, whichever hosts they were for.
    expect(minGap(shared)).toBeGreaterThanOrEqual(gap(200) - EPS);
    // And no slower than it: the address was kept busy (each start within a few ms of the gap).
    const gaps = shared.slice(1).map((t, i) => t - shared[i]);
    expect(Math.max(...gaps)).toBeLessThan(gap(200) + 5);
    // d.test is alone on its address: that address's 5/s is all its own (not a quarter of it), so it is done
    // after 10 starts' worth of gaps while the shared address is a third of the way through its 30.
    const other = run.fetcher.arrivals('d.test');
    expect(other).toHaveLength(10);
    expect(minGap(other)).toBeGreaterThanOrEqual(gap(200) - EPS);
    expect(other.at(-1)! - other[0]).toBeLessThan(9 * (gap(200) + 5));
    expect(other.at(-1)!).toBeLessThan(shared[11]);
  });

  it('caps requests in flight to one address across its hosts', async () => {
    const run = await fakeCrawl({
      sites: sites(10, 100),
      seeds,
      addresses: ADDRESSES,
      config: { concurrency: 16, defaults: { rate: 'unlimited', concurrency: 2 }, perIp: { concurrency: 2 } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(4 * 11);
    const log = run.fetcher.requests();
    expect(maxInFlightAcross(log, SHARED)).toBe(2);
    // The other address has its own budget: its host runs at its own concurrency meanwhile.
    expect(run.fetcher.maxInFlight('d.test')).toBe(2);
    expect(maxInFlightAcross(log, Object.keys(ADDRESSES))).toBe(4);
  });

  it('keeps counting a slow request against its address after it gives its global slot back', async () => {
    // a.test's page drips its body for 15 s: after 10 s its global slot is released (slow-requests.ts), not its address's share.
    const run = await fakeCrawl({
      sites: {
        'a.test': { pages: { '/': { body: '<p>slow</p>', bodyMs: 15_000 } } },
        'b.test': { generate: { pages: 3, linksPerPage: 2 } },
      },
      seeds: ['http://a.test/', 'http://b.test/'],
      addresses: { 'a.test': '10.0.0.1', 'b.test': '10.0.0.1' },
      config: { concurrency: 1, defaults: { rate: 'unlimited' }, domains: { 'b.test': { rate: '1/s' } }, perIp: { concurrency: 1 } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(1 + 4);
    const slow = run.fetcher.requests('a.test').find((r) => r.path === '/')!;
    // b.test's next request waited for the slow one's end, not for its slot's release at 10 s.
    expect(run.fetcher.arrivals('b.test').find((t) => t > slow.at)).toBeGreaterThanOrEqual(slow.endedAt!);
    expect(maxInFlightAcross(run.fetcher.requests(), ['a.test', 'b.test'])).toBe(1);
  });

  it('sets flags over the file: --ip-rate and --ip-concurrency turn the limits on', async () => {
    const run = await fakeCrawl({
      sites: sites(4),
      seeds,
      addresses: ADDRESSES,
      config: { defaults: { rate: '50/s', concurrency: 4 } },
      flags: { ipRate: '10/s', ipConcurrency: '1' },
    });
    expect(minGap(arrivalsAt(run.fetcher.requests(), SHARED))).toBeGreaterThanOrEqual(gap(100) - EPS);
    expect(maxInFlightAcross(run.fetcher.requests(), SHARED)).toBe(1);
  });

  it('is off by default: hosts on one address keep only their own limits', async () => {
    const run = await fakeCrawl({ sites: sites(4), seeds, addresses: ADDRESSES, config: { defaults: { rate: '5/s' } } });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(4 * 5);
    expect(minGap(arrivalsAt(run.fetcher.requests(), SHARED))).toBeLessThan(gap(200) / 2);
  });
});

describe('DNS resolved before scheduling', () => {
  it('fails a host that does not resolve at once, with DNS_FAILURE records and no request', async () => {
    const run = await fakeCrawl({
      sites: { 'ok.test': { generate: { pages: 3, linksPerPage: 2 } }, 'gone.test': { pages: { '/': '<a href="/x">x</a>' } } },
      seeds: ['http://ok.test/', 'http://gone.test/', 'http://gone.test/other'],
      addresses: { 'ok.test': '192.0.2.1' },
      dnsMs: 20,
    });
    const failed = run.pages.filter((p) => p.host === 'gone.test');
    expect(failed.map((p) => p.url).sort()).toEqual(['http://gone.test/', 'http://gone.test/other']);
    for (const p of failed) {
      expect(p.error).toMatchObject({ code: 'DNS_FAILURE' });
      expect(p.error!.message).toMatch(/^GET http:\/\/gone\.test\/\S* failed: gone\.test could not be resolved/);
    }
    // No request at all, robots.txt included: the fetcher was never asked (no slot was taken).
    expect(run.fetcher.attempts('gone.test')).toEqual([]);
    expect(run.fetcher.lookups.filter((h) => h === 'gone.test')).toHaveLength(1);
    expect(run.pages.filter((p) => p.host === 'ok.test' && p.status === 200)).toHaveLength(4);
  });

  it('never holds a slot while a lookup is slow: other hosts go on meanwhile', async () => {
    const run = await fakeCrawl({
      sites: { 'fast.test': { generate: { pages: 5, linksPerPage: 2 } }, 'slow.test': { generate: { pages: 2, linksPerPage: 1 } } },
      seeds: ['http://slow.test/', 'http://fast.test/'],
      addresses: { 'fast.test': '192.0.2.1', 'slow.test': '192.0.2.2' },
      dnsMs: (host) => (host === 'slow.test' ? 5_000 : 0),
      config: { concurrency: 1, defaults: { rate: '10/s' } },
    });
    const fast = run.fetcher.arrivals('fast.test');
    const slow = run.fetcher.arrivals('slow.test');
    expect(fast).toHaveLength(7);
    // fast.test was done before slow.test's name was even resolved.
    expect(fast.at(-1)! - run.startedAt).toBeLessThan(2_000);
    expect(slow[0] - run.startedAt).toBeGreaterThanOrEqual(5_000);
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(6 + 3);
  });
});
