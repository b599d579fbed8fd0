/**
 * CrawlSignals (crawl/crawl-signals.ts), the seam through which the crawl's
 * parts reach parts built after them: before `connect` every signal throws,
 * naming itself; after it, each reaches its one target, also through a
 * member handed on as a callback before the connect; and it connects once.
 */
import { describe, expect, it } from 'vitest';
import { CrawlSignals, type SignalTargets } from '../../src/crawl/crawl-signals.js';
import type { HostPolicy } from '../../src/config/settings-types.js';

const policy = { hostFailureGiveUp: 3 } as HostPolicy;

/** Targets that note each signal they receive. */
function recording(): { targets: SignalTargets; got: unknown[][] } {
  const got: unknown[][] = [];
  const targets: SignalTargets = {
    wake: (key) => got.push(['wake', key]),
    settled: () => got.push(['settled']),
    fail: (err) => got.push(['fail', err]),
    work: {
      hasWork: (key) => (got.push(['hasWork', key]), true),
      take: (key, now) => (got.push(['take', key, now]), { notBefore: now + 1 }),
    },
    resolved: (key) => got.push(['resolved', key]),
    due: () => got.push(['due']),
    hostGivenUp: (key, p) => got.push(['hostGivenUp', key, p]),
  };
  return { targets, got };
}

describe('CrawlSignals', () => {
  it.each([
    ['wake', (s: CrawlSignals) => s.wake('a.localhost')],
    ['settled', (s: CrawlSignals) => s.settled()],
    ['fail', (s: CrawlSignals) => s.fail(new Error('x'))],
    ['work', (s: CrawlSignals) => s.work.hasWork('a.localhost')],
    ['work', (s: CrawlSignals) => s.work.take('a.localhost', 0)],
    ['resolved', (s: CrawlSignals) => s.resolved('a.localhost')],
    ['due', (s: CrawlSignals) => s.due()],
    ['hostGivenUp', (s: CrawlSignals) => s.hostGivenUp('a.localhost', policy)],
  ])('"%s" sent before the connect throws, naming the signal', (name, send) => {
    expect(() => send(new CrawlSignals())).toThrow(`crawl signal "${name}" sent before the crawl's parts were connected`);
  });

  it('once connected, each signal reaches its target, also through members handed on before the connect', () => {
    const signals = new CrawlSignals();
    const { wake, settled, fail, work, resolved, due, hostGivenUp } = signals;
    const { targets, got } = recording();
    signals.connect(targets);
    const err = new Error('disk full');
    wake('a.localhost');
    settled();
    fail(err);
    expect(work.hasWork('b.localhost')).toBe(true);
    expect(work.take('b.localhost', 5)).toEqual({ notBefore: 6 });
    resolved('c.localhost');
    due();
    hostGivenUp('d.localhost', policy);
    expect(got).toEqual([
      ['wake', 'a.localhost'],
      ['settled'],
      ['fail', err],
      ['hasWork', 'b.localhost'],
      ['take', 'b.localhost', 5],
      ['resolved', 'c.localhost'],
      ['due'],
      ['hostGivenUp', 'd.localhost', policy],
    ]);
  });

  it('connects once', () => {
    const signals = new CrawlSignals();
    signals.connect(recording().targets);
    expect(() => signals.connect(recording().targets)).toThrow('crawl signals are connected already');
  });
});
