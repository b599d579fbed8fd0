/**
 * The crawl's numbers as Prometheus series (prom-client), for `--metrics`.
 *
 * Contract:
 * - Nothing is counted twice: every counter and gauge is read, on scrape,
 *   from what the crawl already keeps (its stats, the progress snapshot,
 *   hosts by state). The one series fed as events happen is the store's call
 *   latency histogram, because a duration cannot be read back later.
 * - Before a crawl is attached (the endpoint listens before the crawl
 *   starts) every series reads zero.
 * - Cardinality is bounded: labels take values from small fixed sets (status
 *   classes, error codes, skip reasons, store operations) except `host`,
 *   which only the top `topHosts` hosts by requests get.
 * - This module loads prom-client; it is imported only when metrics are
 *   asked for, so a plain crawl's start-up does not pay for it.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HostCounts } from '../crawl/progress-snapshot.js';
import type { StoreTimer } from '../store/crawl-store.js';
import { VERSION } from '../version.js';
import type { ProgressSnapshot } from './progress.js';
import type { CrawlStats } from './summary.js';

/** What a scrape reads: the crawl's own live numbers. */
export interface MetricsSource {
  stats: CrawlStats;
  progress(): ProgressSnapshot;
  hostCounts(): HostCounts;
  /**
   * Rendering (`--render`): undefined (or absent) when no host renders, and
   * then the render series are not exported at all.
   */
  rendered?(): RenderTotals | undefined;
}

/** What rendering has done so far, as running totals (render/renderer.ts keeps them). */
export interface RenderTotals {
  /** Pages rendered in a browser, their DOM read. */
  pages: number;
  /** Decisions on fetched pages of hosts that render, by `render` ("true": to be rendered) and reason (render-decision.ts: a small fixed set). */
  decisions: ReadonlyMap<string, { render: boolean; reason: string; count: number }>;
  /** The browsers' requests by what became of them (page-requests.ts); `failed`: our request for it failed. */
  subrequests: Readonly<Record<'fetched' | 'cached' | 'blocked' | 'disallowed' | 'failed', number>>;
  /** Browsers started again after the first: after a crash or a kill, or on the memory cap. */
  browserRestarts: number;
}

/** Hosts with series of their own, by default. */
export const DEFAULT_METRICS_HOSTS = 10;

export interface CrawlMetrics {
  readonly registry: Registry;
  /** The crawl whose numbers the series read; until then they read zero. */
  attach(source: MetricsSource): void;
  /** Hands store call durations (SQLite commits, Redis round trips) to the histogram, labelled by store kind. */
  storeTimer(store: string): StoreTimer;
}

/** "2xx" … "5xx"; "error" for a page that got no HTTP answer. */
export function statusClass(status: number | 'error'): string {
  return status === 'error' ? 'error' : `${Math.floor(status / 100)}xx`;
}

/**
 * Store latency buckets, in seconds: a memory-fast Redis round trip is well
 * under a millisecond, a SQLite commit on a slow disk can take a second.
 */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createCrawlMetrics(opts: { topHosts?: number } = {}): CrawlMetrics {
  const topHosts = opts.topHosts ?? DEFAULT_METRICS_HOSTS;
  const registry = new Registry();
  let source: MetricsSource | undefined;
  const registers = [registry];

  // A counter read from a running total: reset, then set to the total, on each scrape.
  const counter = (name: string, help: string, labelNames: string[], read: (s: MetricsSource) => Iterable<[Record<string, string>, number]>): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        if (!source) return;
        for (const [labels, value] of read(source)) this.inc(labels, value);
      },
    });
  };
  const gauge = (name: string, help: string, labelNames: string[], read: (s: MetricsSource) => Iterable<[Record<string, string>, number]>): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        if (!source) return;
        for (const [labels, value] of read(source)) this.set(labels, value);
      },
    });
  };
  const one = (value: number): Array<[Record<string, string>, number]> => [[{}, value]];

  new Gauge({ name: 'crawl_info', help: "Always 1; the crawler's version as a label", labelNames: ['version'], registers }).set({ version: VERSION }, 1);
  gauge('crawl_start_time_seconds', 'When this crawl process started crawling, Unix time in seconds', [], (s) =>
    one((Date.now() - s.progress().elapsedMs) / 1000),
  );

  counter('crawl_pages_total', 'Page records written (transport errors included), by HTTP status class ("error": no HTTP answer)', ['status_class'], (s) => {
    const byClass = new Map<string, number>();
    for (const [status, n] of s.stats.pagesByStatus) byClass.set(statusClass(status), (byClass.get(statusClass(status)) ?? 0) + n);
    return [...byClass].map(([c, n]) => [{ status_class: c }, n]);
  });
  counter('crawl_responses_total', 'Page responses by exact HTTP status ("error" for none)', ['status'], (s) =>
    [...s.stats.pagesByStatus].map(([status, n]) => [{ status: String(status) }, n]),
  );
  counter('crawl_errors_total', 'Page records with an error, by stable error code', ['code'], (s) =>
    [...s.stats.errorsByCode].map(([code, n]) => [{ code }, n]),
  );
  counter(
    'crawl_requests_total',
    'Requests sent, by kind: page (retries, throttled attempts and redirect hops each count) or robots (robots.txt)',
    ['kind'],
    (s) => {
      let robots = 0;
      for (const h of s.stats.perHost.values()) robots += h.robotsRequests;
      return [
        [{ kind: 'page' }, (s.stats.requests ?? 0) - robots],
        [{ kind: 'robots' }, robots],
      ];
    },
  );
  counter('crawl_body_bytes_total', 'Response body bytes read (after decompression), summed over page records', [], (s) => one(s.stats.bytes));
  counter('crawl_skipped_total', 'URLs skipped, by reason (robots, scope, depth, caps, …)', ['reason'], (s) =>
    [...s.stats.skippedByReason].map(([reason, n]) => [{ reason }, n]),
  );
  counter('crawl_usage_denied_total', 'Pages the site denied a declared --purpose (not requested, or their content withheld), by purpose', ['purpose'], (s) =>
    Object.entries(s.stats.usageDenied ?? {}).map(([purpose, n]) => [{ purpose }, n]),
  );
  counter(
    'crawl_spent_micros_total',
    'What servers charged (crawler-charged, HTTP 402 pricing), in millionths of the currency; host="" is the total, then the top hosts by spend',
    ['currency', 'host'],
    (s) =>
      Object.entries(s.stats.spend ?? {}).flatMap(([currency, row]) => [
        [{ currency, host: '' }, row.micros] as [Record<string, string>, number],
        ...Object.entries(row.hosts)
          .sort((a, b) => b[1] - a[1])
          .slice(0, topHosts)
          .map(([host, micros]) => [{ currency, host }, micros] as [Record<string, string>, number]),
      ]),
  );
  counter('crawl_aborted_total', "Requests the crawl aborted itself (a stop's grace period ran out)", [], (s) => one(s.stats.aborted ?? 0));
  counter('crawl_throttles_total', 'Throttling answers (429, 503, …); each pauses its host and may lower its rate', [], (s) => one(s.stats.throttles ?? 0));
  counter('crawl_retry_after_pauses_total', "Throttling answers whose pause came from the server's Retry-After header", [], (s) =>
    one(s.stats.retryAfterPauses ?? 0),
  );

  gauge('crawl_requests_in_flight', 'Requests running now (slow ones that gave their slot back included)', [], (s) => one(s.progress().inFlight));
  gauge('crawl_urls_queued', 'URLs waiting in the frontier (retries and throttled URLs included)', [], (s) => one(s.progress().queued));
  gauge(
    'crawl_hosts',
    'Hosts by state: active (a request in flight), waiting (work, but not ready), paused (Retry-After or backoff), given_up',
    ['state'],
    (s) => {
      const c = s.hostCounts();
      return [
        [{ state: 'active' }, c.active],
        [{ state: 'waiting' }, c.waiting],
        [{ state: 'paused' }, c.paused],
        [{ state: 'given_up' }, c.givenUp],
      ];
    },
  );
  gauge('crawl_hosts_slowed', 'Hosts running below their configured rate (throttling, or response times above their baseline)', [], (s) =>
    one(s.progress().throttled?.length ?? 0),
  );
  // Slowed hosts only, the slowest first, as many as --metrics-hosts: a host at its configured rate has no series.
  const slowest = (s: MetricsSource) => [...(s.progress().throttled ?? [])].sort((a, b) => (a.factor ?? 1) - (b.factor ?? 1)).slice(0, topHosts);
  gauge(
    'crawl_host_rate_factor',
    'Fraction of its configured rate a slowed host runs at (both signals together), for the slowest hosts only (--metrics-hosts)',
    ['host'],
    (s) => slowest(s).map((t) => [{ host: t.host }, t.factor ?? 1]),
  );
  gauge(
    'crawl_host_latency_factor',
    "The latency signal's part of a slowed host's rate factor, while its response time is above its baseline (same hosts)",
    ['host'],
    (s) => slowest(s).flatMap((t) => (t.latency ? [[{ host: t.host }, t.latency.factor] as [Record<string, string>, number]] : [])),
  );
  gauge(
    'crawl_host_ttfb_seconds',
    'Why: the recent median time to first byte (stat="median") and the idle baseline (stat="baseline") of a host slowed for latency',
    ['host', 'stat'],
    (s) =>
      slowest(s).flatMap((t): Array<[Record<string, string>, number]> =>
        t.latency
          ? [
              [{ host: t.host, stat: 'median' }, t.latency.medianMs / 1000],
              [{ host: t.host, stat: 'baseline' }, t.latency.baselineMs / 1000],
            ]
          : [],
      ),
  );

  // Per-host series: the top hosts by requests only, so a broad crawl's 100,000 hosts cost ten series each.
  const top = (s: MetricsSource) =>
    [...s.stats.perHost]
      .map(([host, h]) => ({ host, h, requests: h.requests }))
      .sort((a, b) => b.requests - a.requests || (a.host < b.host ? -1 : 1))
      .slice(0, topHosts);
  counter(
    'crawl_host_requests_total',
    `Requests (pages and robots.txt) per host, for the top hosts by requests only (--metrics-hosts, default ${DEFAULT_METRICS_HOSTS})`,
    ['host'],
    (s) => top(s).map(({ host, requests }) => [{ host }, requests]),
  );
  counter('crawl_host_errors_total', 'Page records with an error per host, for the same top hosts', ['host'], (s) =>
    top(s).map(({ host, h }) => [{ host }, h.errors]),
  );

  const storeLatency = new Histogram({
    name: 'crawl_store_call_duration_seconds',
    help: 'Store call latency: SQLite commits (op="commit") and Redis script round trips (op = the script), retries through an outage included',
    labelNames: ['store', 'op'],
    buckets: STORE_BUCKETS,
    registers,
  });

  return {
    registry,
    attach(next) {
      source = next;
      // Rendering (--render): its series exist only for a crawl that can render.
      if (next.rendered?.() !== undefined && !registry.getSingleMetric('crawl_rendered_pages_total')) {
        const totals = (s: MetricsSource): RenderTotals | undefined => s.rendered?.();
        counter('crawl_rendered_pages_total', 'Pages rendered in a browser (--render), their DOM read', [], (s) => one(totals(s)?.pages ?? 0));
        counter(
          'crawl_render_decisions_total',
          'Fetched pages of hosts that render, by whether they were to be rendered (render) and why (reason: configured, empty-mount, noscript, script-shell, static, not-html)',
          ['render', 'reason'],
          (s) => [...(totals(s)?.decisions.values() ?? [])].map((d) => [{ render: String(d.render), reason: d.reason }, d.count]),
        );
        counter(
          'crawl_render_subrequests_total',
          "Requests rendering browsers made, by outcome: fetched (through their host's robots.txt and limits), cached, blocked, disallowed (robots.txt), failed",
          ['outcome'],
          (s) => Object.entries(totals(s)?.subrequests ?? {}).map(([outcome, n]) => [{ outcome }, n]),
        );
        counter('crawl_browser_restarts_total', 'Browsers started again after the first (a crash or kill, or the memory cap)', [], (s) =>
          one(totals(s)?.browserRestarts ?? 0),
        );
      }
    },
    storeTimer(store) {
      return (op, seconds) => storeLatency.observe({ store, op }, seconds);
    },
  };
}
