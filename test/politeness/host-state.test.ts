import { describe, expect, it } from 'vitest';
import { buildSettings } from '../../src/config/settings.js';
import { HostTable } from '../../src/politeness/host-state.js';
import { initialFeedback } from '../../src/politeness/adaptive-rate.js';
import { HostFeedback } from '../../src/politeness/server-feedback.js';
import { RobotsCache } from '../../src/robots/cache.js';
import { RobotsGate } from '../../src/robots/gate.js';
import { FakeClock } from '../support/fake-clock.js';

const settings = buildSettings(undefined, { rate: '10/s' });
const table = () => new HostTable({ policyFor: (key) => settings.policyFor(key) });
const LATER = 10 * 60_000;

describe('HostTable', () => {
  it('creates one record per key lazily, with the key policy resolved once', () => {
    const hosts = table();
    expect(hosts.peek('a')).toBeUndefined();
    const a = hosts.get('a');
    expect(hosts.get('a')).toBe(a);
    expect(a.policy.intervalMs).toBe(100);
    expect(hosts.size).toBe(1);
  });

  it('sweeps only records whose forgetting changes nothing', () => {
    const hosts = table();
    hosts.get('idle').limiter.acquire(0);
    hosts.get('idle').limiter.release();
    hosts.get('busy-caller');
    hosts.get('in-flight').limiter.acquire(0);
    hosts.get('paused').limiter.pauseUntil(LATER + 1);
    hosts.get('throttled').feedback = { ...initialFeedback(), events: 1 };
    hosts.get('given-up').givenUp = true;
    hosts.get('job').jobs.push({ run: async () => {} });
    hosts.get('filed').wakeAt = 5;
    hosts.sweep(LATER, (key) => key === 'busy-caller');
    expect([...hosts.values()].map((h) => h.key).sort()).toEqual(['busy-caller', 'filed', 'given-up', 'in-flight', 'job', 'paused', 'throttled']);
  });

  it('restores a saved record into a fresh table that paces exactly like the original', () => {
    const hosts = table();
    const a = hosts.get('a');
    a.limiter.markDispatched(a.limiter.acquire(1_000), 1_002);
    a.limiter.release();
    a.limiter.setCrawlDelay(1_500);
    a.givenUp = true;
    const copy = table().restore('a', JSON.parse(JSON.stringify(hosts.save('a'))));
    expect(copy.givenUp).toBe(true);
    for (const now of [1_000, 2_000, 2_600, 3_000]) expect(copy.limiter.readyAt(now)).toBe(a.limiter.readyAt(now));
    expect(copy.limiter.inFlight).toBe(0);
  });
});

describe('robots.txt Crawl-delay and the host record', () => {
  // Regression: the gate remembered "Crawl-delay applied" per robots file, outside the
  // host record; a host swept while idle came back without its Crawl-delay floor.
  it('applies Crawl-delay again to a host record recreated after a sweep', async () => {
    const clock = new FakeClock(0);
    const hosts = table();
    let fetches = 0;
    const cache = new RobotsCache({
      clock,
      userAgent: 'crawl/1',
      maxBytes: 512 * 1024,
      cacheTtlMs: 3_600_000,
      unavailableRetries: 0,
      unavailableRetryDelayMs: 1_000,
      fetchOne: async (url) => {
        fetches++;
        return { url, status: 200, location: null, body: 'User-agent: *\nCrawl-delay: 2\n', truncated: false };
      },
    });
    const gate = new RobotsGate({ cache, clock, hosts, wake: () => {}, settled: () => {}, note: () => {}, warn: () => {} });
    expect(gate.check('http://a.example/x', 'a.example').kind).toBe('wait');
    await FakeClock.settle();
    expect(gate.check('http://a.example/x', 'a.example')).toEqual({ kind: 'go' });
    expect(hosts.get('a.example').limiter.effectiveIntervalMs()).toBe(2_000);
    hosts.sweep(LATER, () => false);
    expect(hosts.peek('a.example')).toBeUndefined();
    expect(gate.check('http://a.example/y', 'a.example')).toEqual({ kind: 'go' });
    expect(hosts.get('a.example').limiter.effectiveIntervalMs()).toBe(2_000);
    expect(fetches).toBe(1); // the robots.txt cache outlives the host record
  });

  it('keeps a host slowed for latency across a save and restore: its factor, baseline and window', () => {
    const hosts = table();
    const feedback = new HostFeedback({ clock: new FakeClock(0), hosts, note: () => {} });
    for (let i = 0; i < 9; i++) feedback.responded('a', 100);
    for (let i = 0; i < 5; i++) feedback.responded('a', 400);
    expect(hosts.get('a').limiter.rateFactor).toBe(0.75);
    const saved = JSON.parse(JSON.stringify(hosts.save('a'))) as ReturnType<typeof hosts.save> & object;
    const again = table();
    const restored = again.restore('a', saved);
    expect(restored.latency).toEqual(hosts.get('a').latency);
    expect(restored.limiter.rateFactor).toBe(0.75);
    // A record saved before the latency signal existed restores with none: the host learns its baseline again.
    const { latency: _dropped, ...older } = saved;
    expect(table().restore('a', older).latency).toBeNull();
  });
});
