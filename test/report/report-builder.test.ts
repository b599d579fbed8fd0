/** The whole aggregation on a hand-made crawl, every figure computed by hand. */
import { describe, expect, it } from 'vitest';
import { OTHER_HOSTS, ReportBuilder } from '../../src/report/report-builder.js';
import { viewRecord } from '../../src/report/record-view.js';

const T = Date.parse('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T + ms).toISOString();
const page = (url: string, startMs: number, elapsedMs: number, status: number | null, bytes: number, extra: Record<string, unknown> = {}) => ({
  type: 'page',
  url,
  status,
  depth: 0,
  parent: null,
  contentType: 'text/html',
  bytes,
  title: null,
  links: 0,
  fetchedAt: at(startMs),
  elapsedMs,
  ...extra,
});

const RECORDS = [
  page('http://a.test/1', 0, 100, 200, 1000),
  page('http://b.test/', 500, 50, null, 0, { error: { code: 'CONNECTION_REFUSED', message: 'refused' } }),
  page('http://a.test/2', 1000, 300, 404, 0),
  { type: 'skipped', url: 'http://c.test/private', reason: 'robots', depth: 1, parent: 'http://a.test/1' },
  page('http://a.test/3', 2000, 200, 200, 3000, { attempts: 2 }),
  { type: 'skipped', url: 'http://a.test/deep', reason: 'max-depth', depth: 9, parent: 'http://a.test/3' },
  // A page handler's item: a record (not a bad line), about no visit of its own.
  { type: 'item', url: 'http://a.test/3', label: null, fetchedAt: at(2000), data: { price: 12 } },
];

function build(limits = {}) {
  const b = new ReportBuilder({ policyFor: (host) => (host === 'a.test' ? { intervalMs: 1000, rateLabel: '1/s' } : null), limits });
  for (const r of RECORDS) b.add(viewRecord(r)!);
  return b.finish({ source: 'pages.jsonl', generator: 'crawl test', now: new Date(T) });
}

describe('ReportBuilder', () => {
  it('counts statuses, error codes and skip reasons', () => {
    const d = build();
    expect(d.records).toEqual({ pages: 4, skipped: 2, robots: 0, badLines: 0, firstBadLine: null, untimed: 0 });
    expect(d.statuses).toEqual([
      ['200', 2],
      ['404', 1],
      ['error', 1],
    ]); // numeric order, no answer last
    expect(d.errorCodes).toEqual([['CONNECTION_REFUSED', 1]]);
    expect(d.skipReasons).toEqual([
      ['max-depth', 1],
      ['robots', 1],
    ]); // equal counts: by name
    expect(d.totals).toEqual({ bytes: 4000, errors: 1, retried: 1, hosts: 3, exactStarts: 0 });
    expect(d.startMs).toBe(T);
    expect(d.endMs).toBe(T + 2200); // a.test/3 ends last
    expect(d.policySource).toBe('config');
  });

  it('puts each host next to its configured rate', () => {
    const d = build();
    expect(d.hosts.map((h) => h.host)).toEqual(['a.test', 'b.test', 'c.test']);
    const a = d.hosts[0];
    expect(a).toMatchObject({
      requests: 3,
      errors: 0,
      http4xx: 1,
      http5xx: 0,
      throttled: 0,
      retried: 1,
      skipped: 1,
      bytes: 4000,
      meanElapsedMs: 200,
      maxElapsedMs: 300,
      configured: { intervalMs: 1000, rateLabel: '1/s', source: 'config' },
    });
    expect(a.gaps).toMatchObject({ starts: 3, gaps: 2, minGapMs: 1000, belowConfigured: 0, achievedPerSecond: 1 });
    expect(d.hosts[1]).toMatchObject({ host: 'b.test', requests: 1, errors: 1, configured: null });
    expect(d.hosts[2]).toMatchObject({ host: 'c.test', requests: 0, skipped: 1, meanElapsedMs: null });
    expect(d.charts.map((c) => c.host)).toEqual(['a.test']); // b.test has a single start
    expect(d.charts[0]).toMatchObject({ configuredMs: 1000, widthMs: 1000, t: [0, 1, 2], starts: [1, 1, 1], minGapMs: [null, 1000, 1000] });
  });

  it('coarsens a host timeline to its bucket budget', () => {
    // Starts at 0, 1000, 2000 ms: 3 buckets of 1 s, 2 of 2 s (the first that fits in 2).
    const d = build({ hostBuckets: 2 });
    expect(d.charts[0]).toMatchObject({ widthMs: 2000, t: [0, 2], starts: [2, 1], minGapMs: [1000, 1000], maxGapMs: [1000, 1000] });
  });

  it('lists the slowest hosts and pages and the largest pages', () => {
    const d = build();
    expect(d.slowestHosts.map((h) => [h.host, h.meanElapsedMs])).toEqual([
      ['a.test', 200],
      ['b.test', 50],
    ]);
    expect(d.slowestPages.map((p) => [p.url, p.elapsedMs])).toEqual([
      ['http://a.test/2', 300],
      ['http://a.test/3', 200],
      ['http://a.test/1', 100],
      ['http://b.test/', 50],
    ]);
    expect(d.largestPages.map((p) => p.bytes)).toEqual([3000, 1000, 0, 0]);
    expect(d.largestPages[2].url).toBe('http://b.test/'); // equal sizes: the earlier record first
    expect(d.failures.byKind).toEqual([
      ['CONNECTION_REFUSED', 1],
      ['HTTP 404', 1],
    ]);
  });

  it('past maxHosts, later hosts share one row and get no gaps', () => {
    const d = build({ maxHosts: 1 });
    expect(d.hosts.map((h) => [h.host, h.requests, h.skipped])).toEqual([
      ['a.test', 3, 1],
      [OTHER_HOSTS, 1, 1],
    ]);
    expect(d.hosts[1].gaps.starts).toBe(0);
  });

  it('caps every list that reaches the HTML', () => {
    const d = build({ tableHosts: 1, top: 2, chartHosts: 0 });
    expect(d.hosts).toHaveLength(1);
    expect(d.hostsOmitted).toBe(2);
    expect(d.slowestPages).toHaveLength(2);
    expect(d.charts).toHaveLength(0);
  });

  it("puts robots.txt requests among a host's starts and draws them, and pauses as the throttle events say", () => {
    const b = new ReportBuilder({ policyFor: () => ({ intervalMs: 1000, rateLabel: '1/s' }) });
    const t = (ms: number) => T + ms;
    const records = [
      { type: 'robots', url: 'http://a.test/robots.txt', host: 'a.test', status: 200, startedAt: t(0), elapsedMs: 20, bytes: 50 },
      { ...page('http://a.test/1', 1000, 100, 200, 10), startedAt: t(1000) },
      // Answered 429 at 2030 ms with Retry-After: 5, paused until 7040 ms, then fetched.
      {
        ...page('http://a.test/2', 7041, 100, 200, 10),
        startedAt: t(7041),
        attempts: 2,
        attemptStarts: [t(2000)],
        throttles: [{ at: t(2030), status: 429, retryAfterMs: 5000, pausedUntil: t(7040) }],
      },
      // robots.txt refetched, answered 503 without Retry-After: a 2 s backoff.
      { type: 'robots', url: 'http://a.test/robots.txt', host: 'a.test', status: 503, startedAt: t(9000), elapsedMs: 10, bytes: 0, pausedUntil: t(11_010) },
      { ...page('http://a.test/3', 11_011, 100, 200, 10), startedAt: t(11_011) },
    ];
    for (const r of records) b.add(viewRecord(r)!);
    const d = b.finish({ source: 'x', generator: 'crawl test', now: new Date(T) });
    expect(d.records).toMatchObject({ pages: 3, robots: 2 });
    expect(d.startMs).toBe(T); // the first robots.txt request
    const a = d.hosts[0];
    expect(a).toMatchObject({ requests: 3, robots: 2, throttled: 2 });
    expect(a.gaps).toMatchObject({ starts: 6, minGapMs: 1000, belowConfigured: 0 }); // 0, 1000, 2000, 7041, 9000, 11011
    expect(a.throttleEvents).toEqual([
      { atMs: t(2030), status: 429, retryAfterMs: 5000, pauseMs: 5010 },
      { atMs: t(9010), status: 503, retryAfterMs: null, pauseMs: 2000 },
    ]);
    expect(d.charts[0].pauses).toEqual([
      [2.03, 7.04, 429, 5000],
      [9.01, 11.01, 503, null],
    ]);
    expect(d.charts[0].robots).toEqual([
      [0, 200],
      [9, 503],
    ]);
  });
});
