/**
 * Aggregates a stream of records into `ReportData`, the plain JSON-able
 * object the HTML is rendered from. One pass, constant memory per record:
 * counts in maps keyed by status, code and reason; time in bounded bucket
 * series; top lists in bounded heaps; per-host state for at most `maxHosts`
 * host keys (later ones are counted together under OTHER_HOSTS).
 *
 * Every list that reaches the HTML is capped (see REPORT_LIMITS), so the
 * report's size does not grow with the input: that is how it keeps its
 * size budget (docs/report.md).
 */
import { HostStats, type HostRow, type PolicyLookup } from './host-stats.js';
import { MAX_GAP, MIN_GAP, STARTS, type Configured } from './host-timeline.js';
import type { PageView, RecordView, RobotsView, SkipView } from './record-view.js';
import { FailureTable, type FailureSummary } from './failures.js';
import { RedirectTracker, type RedirectSummary } from './redirects.js';
import { Throughput, type ThroughputData } from './throughput.js';
import { TopN } from './top-n.js';
import { formatAmount, type Money } from '../politeness/crawl-price.js';

export const OTHER_HOSTS = '(other hosts)';

export const REPORT_LIMITS = {
  /** Host keys tracked one by one; later hosts share one row. */
  maxHosts: 10_000,
  /** Host rows in the table. */
  tableHosts: 200,
  /** Hosts with their own timeline chart. */
  chartHosts: 8,
  /** Entries in each top list (slowest, largest, redirect chains). */
  top: 20,
  /** Buckets in the crawl-wide charts. */
  seriesBuckets: 1000,
  /** Buckets in each host's timeline. */
  hostBuckets: 120,
  /**
   * Finest bucket widths, ms. A host's starts per second need buckets well
   * above its gap (at 100 ms, a 5/s host reads 0, 10, 0, 10 …); the crawl-wide
   * series sums many hosts and can be finer.
   */
  hostBucketMs: 1000,
  seriesBucketMs: 250,
  /** Failure rows in total, and per kind. */
  failureRows: 2500,
  failuresPerKind: 250,
};

export type ReportLimits = typeof REPORT_LIMITS;

export interface PageItem {
  url: string;
  host: string;
  status: number | null;
  elapsedMs: number;
  bytes: number;
}

export interface HostChart {
  host: string;
  configuredMs: number | null;
  /** Seconds from the crawl's start (bucket starts). */
  t: number[];
  starts: number[];
  minGapMs: Array<number | null>;
  maxGapMs: Array<number | null>;
  widthMs: number;
  /** Pauses after 429/503 answers, from the records' throttle events: [from s, to s, status, Retry-After ms or null]. */
  pauses: Array<[number, number, number, number | null]>;
  /** robots.txt requests: [start s, status or null]. */
  robots: Array<[number, number | null]>;
}

export interface ReportData {
  source: string;
  generatedAt: string;
  generator: string;
  records: { pages: number; skipped: number; robots: number; badLines: number; firstBadLine: number | null; untimed: number };
  /** Earliest request start and latest end (epoch ms); null without timed records. */
  startMs: number | null;
  endMs: number | null;
  totals: { bytes: number; errors: number; retried: number; hosts: number; exactStarts: number };
  /**
   * Where the configured rates come from: the records themselves, the
   * crawl's own settings (a report built during the crawl), a config given
   * to `crawl report` (which may differ from the crawl's), or nowhere.
   */
  policySource: 'records' | 'crawl' | 'config' | 'none';
  /** Page records by status, numeric order, "error" (no answer) last. */
  statuses: Counts;
  errorCodes: Counts;
  skipReasons: Counts;
  /** In a re-crawl: page records by change (new, changed, unchanged, removed); empty otherwise. */
  changes: Counts;
  /** With --purpose: pages the site denied a declared purpose, as "host: purpose, content withheld | not requested"; empty otherwise. */
  usageDenied: Counts;
  /** HTTP 402 pricing: what servers charged, per currency and host (host "" is the currency's total), most first; empty when nothing was. */
  spend: Array<{ currency: string; host: string; amount: string; pages: number }>;
  throughput: ThroughputData;
  hosts: HostRow[];
  hostsOmitted: number;
  charts: HostChart[];
  slowestHosts: HostRow[];
  slowestPages: PageItem[];
  largestPages: PageItem[];
  redirects: RedirectSummary;
  failures: FailureSummary;
  /**
   * What rendering browsers asked of each host, as the crawl counted it (the
   * summary's numbers), most requests first; only for a report built during
   * a crawl that rendered: page records carry their page's counts, not the
   * hosts the requests went to.
   */
  subrequests?: SubrequestRow[];
}

export interface SubrequestRow {
  host: string;
  fetched: number;
  cached: number;
  blocked: number;
  disallowed: number;
}

export interface BuilderOptions {
  /** The configured rate per host key when the records do not carry it (from `crawl report --config`). */
  policyFor?: PolicyLookup;
  /** `crawl` when `policyFor` is the crawl's own settings (the report built during the crawl), not a config given afterwards. @default 'config' */
  policyOrigin?: 'crawl' | 'config';
  limits?: Partial<ReportLimits>;
}

/** Skips as the crawl counted them, by reason and by host key. */
export interface SkipCounts {
  byReason: Iterable<[string, number]>;
  byHost: Iterable<[string, number]>;
}

/** [key, count] pairs in display order (an object would put "404" before "error" whatever we sort). */
export type Counts = Array<[string, number]>;

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
/** Most frequent first. */
const byCount = (m: Map<string, number>): Counts => [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0], 'en', { numeric: true }));
/** Status codes in numeric order, "error" last. */
const byStatus = (m: Map<string, number>): Counts => [...m].sort((a, b) => (a[0] === 'error' ? 1 : b[0] === 'error' ? -1 : Number(a[0]) - Number(b[0])));

export class ReportBuilder {
  private readonly limits: ReportLimits;
  private readonly hosts = new Map<string, HostStats>();
  private readonly statuses = new Map<string, number>();
  private readonly errorCodes = new Map<string, number>();
  private readonly skipReasons = new Map<string, number>();
  private readonly changes = new Map<string, number>();
  private readonly usageDenied = new Map<string, number>();
  /** Charged micro-units and paid pages, by currency, then host. */
  private readonly spend = new Map<string, Map<string, { micros: number; pages: number }>>();
  private readonly throughput: Throughput;
  private readonly redirects: RedirectTracker;
  private readonly failures: FailureTable;
  private readonly slowest: TopN<PageItem>;
  private readonly largest: TopN<PageItem>;
  private pages = 0;
  private skipped = 0;
  private robots = 0;
  private badLines = 0;
  private firstBadLine: number | null = null;
  private untimed = 0;
  private bytes = 0;
  private errors = 0;
  private retried = 0;
  private exactStarts = 0;
  private policyFromRecords = false;
  private startMs = Infinity;
  private endMs = -Infinity;

  constructor(private readonly opts: BuilderOptions = {}) {
    this.limits = { ...REPORT_LIMITS, ...opts.limits };
    this.throughput = new Throughput({ maxBuckets: this.limits.seriesBuckets, baseWidthMs: this.limits.seriesBucketMs });
    this.redirects = new RedirectTracker({ keep: this.limits.top });
    this.failures = new FailureTable({ maxRows: this.limits.failureRows, maxPerKind: this.limits.failuresPerKind });
    this.slowest = new TopN(this.limits.top);
    this.largest = new TopN(this.limits.top);
  }

  private addCharge(host: string, charged: Money): void {
    let hosts = this.spend.get(charged.currency);
    if (hosts === undefined) this.spend.set(charged.currency, (hosts = new Map<string, { micros: number; pages: number }>()));
    const row = hosts.get(host) ?? { micros: 0, pages: 0 };
    row.micros += charged.micros;
    row.pages++;
    hosts.set(host, row);
  }

  /** Per currency: its total (host ""), then its hosts, most spent first. */
  private spendRows(): ReportData['spend'] {
    const out: ReportData['spend'] = [];
    for (const [currency, hosts] of [...this.spend].sort((a, b) => a[0].localeCompare(b[0]))) {
      const rows = [...hosts].sort((a, b) => b[1].micros - a[1].micros || a[0].localeCompare(b[0]));
      let micros = 0;
      let pages = 0;
      for (const [, r] of rows) {
        micros += r.micros;
        pages += r.pages;
      }
      out.push({ currency, host: '', amount: formatAmount(micros), pages });
      for (const [host, r] of rows.slice(0, this.limits.tableHosts)) out.push({ currency, host, amount: formatAmount(r.micros), pages: r.pages });
    }
    return out;
  }

  add(r: RecordView): void {
    if (r.kind === 'item') return; // a page handler's data: a record, but not a visit
    if (r.kind === 'robots') return this.addRobots(r);
    this.redirects.add(r);
    if (r.kind === 'skipped') return this.addSkip(r);
    this.pages++;
    this.bytes += r.bytes;
    bump(this.statuses, r.status === null ? 'error' : String(r.status));
    if (r.change !== null) bump(this.changes, r.change);
    if (r.usageDenied !== null) bump(this.usageDenied, `${r.host}: ${r.usageDenied}, content withheld`);
    if (r.charged !== null) this.addCharge(r.host, r.charged);
    if (r.errorCode !== null) {
      this.errors++;
      bump(this.errorCodes, r.errorCode);
    }
    if (r.attempts > 1) this.retried++;
    if (r.exactStart) this.exactStarts++;
    if (r.intervalMs !== null) this.policyFromRecords = true;
    if (Number.isFinite(r.startMs)) {
      if (r.startMs < this.startMs) this.startMs = r.startMs;
      if (r.startMs + r.elapsedMs > this.endMs) this.endMs = r.startMs + r.elapsedMs;
    } else {
      this.untimed++;
    }
    this.host(r.host).addPage(r);
    this.throughput.add(r);
    this.failures.add(r);
    if (this.slowest.accepts(r.elapsedMs)) this.slowest.add(r.elapsedMs, item(r));
    if (this.largest.accepts(r.bytes)) this.largest.add(r.bytes, item(r));
  }

  /** A line that is not a record (torn by a crash, or not JSON). */
  addBadLine(lineNumber: number): void {
    this.badLines++;
    this.firstBadLine ??= lineNumber;
  }

  get recordCount(): number {
    return this.pages + this.skipped + this.robots;
  }

  finish(meta: { source: string; generator: string; now?: Date }): ReportData {
    const timed = Number.isFinite(this.startMs);
    const origin = timed ? this.startMs : 0;
    const finished = [...this.hosts.values()].map((h) => h.finish());
    const byRequests = [...finished].sort((a, b) => b.row.requests - a.row.requests || a.row.host.localeCompare(b.row.host));
    const charts: HostChart[] = byRequests
      .filter((h) => h.timeline !== null && h.row.gaps.starts > 1)
      .slice(0, this.limits.chartHosts)
      .map(({ row, timeline, marks }) => {
        const tl = timeline!;
        const s = (ms: number) => (ms - origin) / 1000;
        return {
          host: row.host,
          configuredMs: row.configured?.intervalMs ?? null,
          t: tl.columns[STARTS].map((_, i) => (tl.startMs + i * tl.widthMs - origin) / 1000),
          starts: tl.columns[STARTS] as number[],
          minGapMs: tl.columns[MIN_GAP],
          maxGapMs: tl.columns[MAX_GAP],
          widthMs: tl.widthMs,
          pauses: marks.pauses.map((p): [number, number, number, number | null] => [s(p.atMs), s(p.atMs + p.pauseMs), p.status, p.retryAfterMs]),
          robots: marks.robots.map((m): [number, number | null] => [s(m.atMs), m.status]),
        };
      });
    const slowestHosts = finished
      .map((h) => h.row)
      .filter((r) => r.meanElapsedMs !== null)
      .sort((a, b) => b.meanElapsedMs! - a.meanElapsedMs! || a.host.localeCompare(b.host))
      .slice(0, this.limits.top);
    return {
      source: meta.source,
      generatedAt: (meta.now ?? new Date()).toISOString(),
      generator: meta.generator,
      records: {
        pages: this.pages,
        skipped: this.skipped,
        robots: this.robots,
        badLines: this.badLines,
        firstBadLine: this.firstBadLine,
        untimed: this.untimed,
      },
      startMs: timed ? this.startMs : null,
      endMs: timed ? this.endMs : null,
      totals: { bytes: this.bytes, errors: this.errors, retried: this.retried, hosts: this.hosts.size, exactStarts: this.exactStarts },
      policySource: this.policyFromRecords ? 'records' : this.opts.policyFor ? (this.opts.policyOrigin ?? 'config') : 'none',
      statuses: byStatus(this.statuses),
      errorCodes: byCount(this.errorCodes),
      skipReasons: byCount(this.skipReasons),
      changes: byCount(this.changes),
      usageDenied: byCount(this.usageDenied),
      spend: this.spendRows(),
      throughput: this.throughput.finish(origin),
      hosts: byRequests.slice(0, this.limits.tableHosts).map((h) => h.row),
      hostsOmitted: Math.max(0, byRequests.length - this.limits.tableHosts),
      charts,
      slowestHosts,
      slowestPages: this.slowest.sorted(),
      largestPages: this.largest.sorted(),
      redirects: this.redirects.finish(),
      failures: this.failures.finish(),
      ...(this.subrequestRows && { subrequests: this.subrequestRows }),
    };
  }

  private subrequestRows: SubrequestRow[] | undefined;

  /** The crawl's per-host browser request counts (a report built during the crawl); the most requests first, ties by host. */
  useSubrequestCounts(rows: Iterable<SubrequestRow>): void {
    const total = (r: SubrequestRow) => r.fetched + r.cached + r.blocked + r.disallowed;
    const sorted = [...rows].sort((a, b) => total(b) - total(a) || a.host.localeCompare(b.host));
    this.subrequestRows = sorted.length > 0 ? sorted : undefined;
  }

  private addRobots(r: RobotsView): void {
    this.robots++;
    if (r.startMs < this.startMs) this.startMs = r.startMs;
    if (r.startMs + r.elapsedMs > this.endMs) this.endMs = r.startMs + r.elapsedMs;
    this.host(r.host).addRobots(r);
  }

  /**
   * Replaces the skips counted from records with the crawl's own counts: a
   * crawl writes a skip record only for a URL the user named unless asked
   * (--emit-skipped), and skips in bulk at its end without any, so a report
   * built during the crawl would otherwise undercount.
   */
  useSkipCounts(counts: SkipCounts): void {
    this.skipReasons.clear();
    for (const h of this.hosts.values()) h.skipped = 0;
    this.skipped = 0;
    for (const [reason, n] of counts.byReason) {
      this.skipped += n;
      this.skipReasons.set(reason, (this.skipReasons.get(reason) ?? 0) + n);
    }
    for (const [host, n] of counts.byHost) if (n > 0) this.host(host).skipped += n;
  }

  private addSkip(r: SkipView): void {
    this.skipped++;
    bump(this.skipReasons, r.reason);
    if (r.usageDenied !== null) bump(this.usageDenied, `${r.host}: ${r.usageDenied}, not requested`);
    this.host(r.host).skipped++;
  }

  private host(key: string): HostStats {
    let h = this.hosts.get(key);
    if (h) return h;
    if (this.hosts.size >= this.limits.maxHosts) {
      h = this.hosts.get(OTHER_HOSTS);
      if (!h) this.hosts.set(OTHER_HOSTS, (h = new HostStats(OTHER_HOSTS, null, { merged: true })));
      return h;
    }
    h = new HostStats(key, this.configuredFor(key), { maxBuckets: this.limits.hostBuckets, baseWidthMs: this.limits.hostBucketMs });
    this.hosts.set(key, h);
    return h;
  }

  private configuredFor(host: string): Configured | null {
    const p = this.opts.policyFor?.(host);
    return p ? { ...p, source: 'config' } : null;
  }
}

function item(p: PageView): PageItem {
  return { url: p.url, host: p.host, status: p.status, elapsedMs: p.elapsedMs, bytes: p.bytes };
}
