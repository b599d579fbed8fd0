/**
 * Crawl statistics and the end-of-run summary printed on stderr.
 *
 * The crawler only calls the small `count*` / `addNote` helpers as records and
 * events happen; `formatSummary` turns the totals into a compact block that
 * answers "what happened, and was anything slowed or refused?" at a glance.
 */
import type { Clock } from '../clock.js';
import { isoInstant } from '../util/iso-time.js';
import type { OutputRecord, PageChange, PageRecord, SkipReason, SkipRecord, SubrequestCounts } from '../types.js';
import { groupDigits } from '../util/group-digits.js';
import type { Charge, Spending } from '../store/crawl-store.js';
import { formatAmount } from '../politeness/crawl-price.js';

export interface HostStats {
  /** Page records for this host (including transport errors). */
  fetched: number;
  /** Pages that failed with an error code (no HTTP status). */
  errors: number;
  skipped: number;
  /** robots.txt requests, redirect hops included; they count against the host's budget too. */
  robotsRequests: number;
  /** Every request sent to the host: pages, retries, throttled attempts, redirect hops and robots.txt. */
  requests: number;
  /** The rate as it should be reported, e.g. "2/s" or "2/s (throttled to 0.5/s)". */
  rate: string;
  /** Host-specific events worth a line: capped Crawl-delay, capped Retry-After, … */
  notes: string[];
  /** What rendering browsers asked of this host (render/subrequest-stats.ts); absent when they asked nothing. */
  subrequests?: SubrequestCounts;
  /** With --purpose: this host's pages denied a declared purpose, by purpose (as the crawl's `usageDenied`); absent when none. */
  usageDenied?: Record<string, number>;
}

export interface CrawlStats {
  /** clock.now() at creation. */
  startedAt: number;
  /** clock.now() when finished; equal to startedAt until then. */
  endedAt: number;
  /** Page records by HTTP status; 'error' for pages that got none. */
  pagesByStatus: Map<number | 'error', number>;
  errorsByCode: Map<string, number>;
  skippedByReason: Map<string, number>;
  perHost: Map<string, HostStats>;
  /** Body bytes read, summed over page records. */
  bytes: number;
  /** Requests the crawl aborted itself (records with error ABORTED): counted here, not as pages or errors. */
  aborted?: number;
  /** Requests sent (pages, retries, throttled attempts, redirect hops, robots.txt); by host in perHost. */
  requests?: number;
  /** Throttling answers (429, 503, …), robots.txt requests included; each one paused its host. */
  throttles?: number;
  /** Of those, the ones whose pause came from the server's Retry-After. */
  retryAfterPauses?: number;
  interrupted: boolean;
  /** The store already held this crawl: `resumed` it, or found it `finished` (nothing was fetched). */
  resumed?: 'resumed' | 'finished';
  /** Run-wide notes (host-specific ones live in perHost). */
  notes: string[];
  /**
   * --check-links only (set by the crawler): links checked out of scope
   * (records of kind "link-check"), how many of them are broken (status
   * >= 400 or an error), and broken pages in scope.
   */
  linkCheck?: { checked: number; broken: number; brokenPages: number };
  /** A re-crawl (crawl/recrawl.ts): page records by what changed since the last pass, and the pass (2 and up; 1 with --since). */
  changes?: Record<PageChange, number>;
  pass?: number;
  /** With a page handler: items pushed and written, and pages whose handler failed (HANDLER_ERROR or HANDLER_TIMEOUT). */
  handler?: { items: number; failed: number };
  /**
   * With --purpose: pages the site denied a declared purpose, by purpose:
   * not requested (robots.txt said so; also `usage-denied` skips) or
   * fetched with their content withheld (the response said so).
   */
  usageDenied?: Record<string, number>;
  /**
   * HTTP 402 pricing: what servers charged (crawler-charged), per currency,
   * in total and per host key, in micro-units: the store's ledger when the
   * crawl resumed (or joined a shared one), plus this process's charges.
   */
  spend?: Spending;
}

/** How many hosts the summary table lists before "+N more". */
export const SUMMARY_TOP_HOSTS = 20;

export function createStats(clock: Clock): CrawlStats {
  const now = clock.now();
  return {
    startedAt: now,
    endedAt: now,
    pagesByStatus: new Map(),
    errorsByCode: new Map(),
    skippedByReason: new Map(),
    perHost: new Map(),
    bytes: 0,
    aborted: 0,
    requests: 0,
    throttles: 0,
    retryAfterPauses: 0,
    interrupted: false,
    notes: [],
  };
}

const bump = <K>(map: Map<K, number>, key: K, by = 1): void => {
  map.set(key, (map.get(key) ?? 0) + by);
};

/** The host shown in the summary when the crawler does not pass its own host key. */
export function summaryHost(url: string): string {
  try {
    return new URL(url).host || '(no host)';
  } catch {
    return '(invalid url)';
  }
}

/** The host's row, created on first use. */
export function hostStats(stats: CrawlStats, host: string): HostStats {
  let row = stats.perHost.get(host);
  if (!row) {
    row = { fetched: 0, errors: 0, skipped: 0, robotsRequests: 0, requests: 0, rate: '', notes: [] };
    stats.perHost.set(host, row);
  }
  return row;
}

export function countPage(stats: CrawlStats, record: PageRecord, host = summaryHost(record.url)): void {
  // Cut off by the crawl's own abort (a second Ctrl-C, the stop's grace period): not a page fetched, nor the server's error.
  if (record.error?.code === 'ABORTED') {
    stats.aborted = (stats.aborted ?? 0) + 1;
    return;
  }
  const row = hostStats(stats, host);
  row.fetched++;
  bump(stats.pagesByStatus, record.status ?? 'error');
  stats.bytes += record.bytes ?? 0; // null: a body not read
  if (record.error) {
    row.errors++;
    bump(stats.errorsByCode, record.error.code);
  }
  if (record.change !== undefined) (stats.changes ??= { new: 0, changed: 0, unchanged: 0, removed: 0 })[record.change]++;
  const links = stats.linkCheck;
  if (links && record.kind !== 'sitemap') {
    const broken = record.error !== undefined || (record.status !== null && record.status >= 400);
    if (record.kind === 'link-check') {
      links.checked++;
      if (broken) links.broken++;
    } else if (broken) links.brokenPages++;
  }
}

/**
 * Counts a skipped URL. Pass the record (host taken from its URL unless given)
 * or just the reason plus the crawler's host key; a bare reason without a host
 * counts only in the by-reason totals.
 */
export function countSkip(stats: CrawlStats, what: SkipReason | Pick<SkipRecord, 'url' | 'reason'>, host?: string): void {
  const reason = typeof what === 'string' ? what : what.reason;
  const key = host ?? (typeof what === 'string' ? undefined : summaryHost(what.url));
  if (key !== undefined) hostStats(stats, key).skipped++;
  bump(stats.skippedByReason, reason);
}

/** Counts any output record (convenient at the sink boundary). */
export function countRecord(stats: CrawlStats, record: OutputRecord, host?: string): void {
  if (record.type === 'page') countPage(stats, record, host);
  else if (record.type === 'skipped') countSkip(stats, record, host);
}

/** A request about to be sent to `host` (a page, a retry, a redirect hop or robots.txt). */
export function countRequest(stats: CrawlStats, host: string): void {
  stats.requests = (stats.requests ?? 0) + 1;
  hostStats(stats, host).requests++;
}

/** A throttling answer; `announced` when its pause came from Retry-After. */
export function countThrottle(stats: CrawlStats, announced: boolean): void {
  stats.throttles = (stats.throttles ?? 0) + 1;
  if (announced) stats.retryAfterPauses = (stats.retryAfterPauses ?? 0) + 1;
}

/** A completed page's charge, booked to `host` (the store booked it with the completion). */
export function countCharge(stats: CrawlStats, host: string, charge: Charge): void {
  const row = ((stats.spend ??= {})[charge.currency] ??= { micros: 0, hosts: {} });
  row.micros += charge.micros;
  row.hosts[host] = (row.hosts[host] ?? 0) + charge.micros;
}

/** "USD 0.03 (example.com 0.02, shop.example 0.01)" per currency, hosts most spent first (the top few). */
function spendLines(spend: Spending): string[] {
  return Object.entries(spend)
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([currency, row]) => {
      const hosts = Object.entries(row.hosts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      const shown = hosts.slice(0, 5).map(([h, m]) => `${h} ${formatAmount(m)}`);
      if (hosts.length > 5) shown.push(`+${int(hosts.length - 5)} more`);
      return `  spent    ${currency} ${formatAmount(row.micros)}${shown.length > 0 ? ` (${shown.join(', ')})` : ''}`;
    });
}

export function countRobotsRequest(stats: CrawlStats, host: string): void {
  hostStats(stats, host).robotsRequests++;
}

/** Adds a note once (repeats of the same text are dropped); with `host`, to that host's row. */
export function addNote(stats: CrawlStats, note: string, host?: string): void {
  const list = host === undefined ? stats.notes : hostStats(stats, host).notes;
  if (!list.includes(note)) list.push(note);
}

export function finishStats(stats: CrawlStats, clock: Clock, opts: { interrupted?: boolean } = {}): void {
  stats.endedAt = clock.now();
  if (opts.interrupted) stats.interrupted = true;
}

const int = groupDigits;
const sum = (map: Map<unknown, number>): number => [...map.values()].reduce((a, b) => a + b, 0);

export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m ${sec}s` : `${m}m ${sec}s`;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** "200 ×812, 404 ×3": most frequent first, ties in key order. */
function histogram<K extends string | number>(map: Map<K, number>): string {
  return [...map]
    .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0]), 'en', { numeric: true }))
    .map(([k, n]) => `${k} ×${int(n)}`)
    .join(', ');
}

/**
 * Hosts that answered, most fetched first, top SUMMARY_TOP_HOSTS as rows.
 * Hosts where nothing was fetched (every request failed before an HTTP
 * answer, or every URL was skipped) are one count, not rows: a link check
 * with 30 dead hosts filled the table with them.
 */
function hostTable(perHost: Map<string, HostStats>): string[] {
  const all = [...perHost];
  const rows = all.filter(([, r]) => r.fetched > r.errors).sort((a, b) => b[1].fetched - a[1].fetched || a[0].localeCompare(b[0]));
  const nothing = all.filter(([, r]) => r.fetched <= r.errors);
  const shown = rows.slice(0, SUMMARY_TOP_HOSTS);
  const cut = (s: string, w: number): string => (s.length <= w ? s : s.slice(0, w - 1) + '…');
  const hostWidth = Math.min(40, Math.max(4, ...shown.map(([h]) => h.length)));
  const num = (n: number | string, w: number): string => String(typeof n === 'number' ? int(n) : n).padStart(w);
  const line = (host: string, cells: Array<number | string>, rate: string): string =>
    `  ${cut(host, hostWidth).padEnd(hostWidth)}  ${num(cells[0], 7)}  ${num(cells[1], 6)}  ${num(cells[2], 7)}  ${num(cells[3], 6)}  ${rate}`.trimEnd();
  const out = shown.length > 0 ? [line('host', ['fetched', 'errors', 'skipped', 'robots'], 'rate')] : [];
  for (const [host, r] of shown) out.push(line(host, [r.fetched, r.errors, r.skipped, r.robotsRequests], r.rate));
  const rest = rows.slice(SUMMARY_TOP_HOSTS);
  if (rest.length > 0) {
    const fetched = rest.reduce((a, [, r]) => a + r.fetched, 0);
    out.push(`  +${int(rest.length)} more host${rest.length === 1 ? '' : 's'} (${int(fetched)} fetched)`);
  }
  if (nothing.length > 0) {
    const errors = nothing.reduce((a, [, r]) => a + r.errors, 0);
    const skipped = nothing.reduce((a, [, r]) => a + r.skipped, 0);
    const parts = [...(errors ? [`${int(errors)} error${errors === 1 ? '' : 's'}`] : []), ...(skipped ? [`${int(skipped)} skipped`] : [])];
    const what = `${int(nothing.length)} host${nothing.length === 1 ? '' : 's'} with nothing fetched${parts.length ? ` (${parts.join(', ')})` : ''}`;
    out.push(shown.length > 0 ? `  +${what}` : `  ${what}`);
  }
  return out;
}

/**
 * A hint under the skip counts for a reason whose fix is a setting: the
 * SSRF guard's refusals read as a bug otherwise.
 */
const SKIP_HINTS: Partial<Record<string, string>> = {
  'private-address':
    'private-address: hosts on loopback, private or link-local addresses were not contacted; --allow-private or the config\'s "allowNetworks" lets the crawl reach them',
};

/** Per host, what rendering browsers asked of it: one line each, busiest first (none when nothing rendered). */
function subrequestLines(perHost: Map<string, HostStats>): string[] {
  const rows = [...perHost].filter(([, h]) => h.subrequests !== undefined) as Array<[string, HostStats & { subrequests: SubrequestCounts }]>;
  if (rows.length === 0) return [];
  const total = (c: SubrequestCounts) => c.fetched + c.cached + c.blocked + c.disallowed;
  rows.sort((a, b) => total(b[1].subrequests) - total(a[1].subrequests) || a[0].localeCompare(b[0]));
  const shown = rows
    .slice(0, SUMMARY_TOP_HOSTS)
    .map(
      ([host, { subrequests: c }]) =>
        `    ${host}: ${int(c.fetched)} fetched, ${int(c.cached)} cached, ${int(c.blocked)} blocked, ${int(c.disallowed)} disallowed by robots.txt`,
    );
  if (rows.length > SUMMARY_TOP_HOSTS) shown.push(`    +${int(rows.length - SUMMARY_TOP_HOSTS)} more hosts`);
  return ['  browser requests (rendered pages)', ...shown];
}

/** The end summary: several lines, the first prefixed "crawl: ", ending in a newline. */
export function formatSummary(stats: CrawlStats): string {
  const elapsed = Math.max(0, stats.endedAt - stats.startedAt);
  const pages = sum(stats.pagesByStatus);
  const errors = sum(stats.errorsByCode);
  const skipped = sum(stats.skippedByReason);
  const perSecond = elapsed > 0 ? (pages * 1000) / elapsed : 0;
  const out = [
    `crawl: ${stats.interrupted ? 'interrupted after' : 'finished in'} ${formatDuration(elapsed)}: ` +
      `${int(pages)} page${pages === 1 ? '' : 's'} (${perSecond.toFixed(1)} pages/s), ` +
      `${int(errors)} error${errors === 1 ? '' : 's'}, ${int(skipped)} skipped, ${stats.aborted ? `${int(stats.aborted)} aborted, ` : ''}${formatBytes(stats.bytes)}`,
  ];
  if (stats.pagesByStatus.size) out.push(`  status   ${histogram(stats.pagesByStatus)}`);
  if (stats.errorsByCode.size) out.push(`  errors   ${histogram(stats.errorsByCode)}`);
  if (stats.skippedByReason.size) out.push(`  skipped  ${histogram(stats.skippedByReason)}`);
  for (const reason of stats.skippedByReason.keys()) {
    const hint = SKIP_HINTS[reason];
    if (hint) out.push(`           ${hint}`);
  }
  const links = stats.linkCheck;
  if (links) {
    out.push(
      `  links    ${int(links.checked)} checked out of scope, ${int(links.broken)} broken; ${int(links.brokenPages)} broken page${links.brokenPages === 1 ? '' : 's'} in scope`,
    );
  }
  const denied = stats.usageDenied;
  if (denied)
    out.push(
      `  withheld ${Object.entries(denied)
        .map(([purpose, n]) => `${purpose} ×${int(n)}`)
        .join(', ')} (the site stated "n" for a declared --purpose: content withheld, or not requested when robots.txt said so)`,
    );
  if (stats.spend) out.push(...spendLines(stats.spend));
  const handler = stats.handler;
  if (handler)
    out.push(`  items    ${int(handler.items)} pushed by the page handler; ${int(handler.failed)} page${handler.failed === 1 ? '' : 's'} where it failed`);
  const changes = stats.changes;
  if (changes) {
    out.push(
      `  changes  ${int(changes.new)} new, ${int(changes.changed)} changed, ${int(changes.unchanged)} unchanged, ${int(changes.removed)} removed${stats.pass !== undefined && stats.pass > 1 ? ` (pass ${stats.pass})` : ''}`,
    );
  }
  if (stats.perHost.size) out.push(...hostTable(stats.perHost));
  out.push(...subrequestLines(stats.perHost));
  const notes = [...stats.notes];
  for (const [host, r] of stats.perHost) for (const n of r.notes) notes.push(`${host}: ${n}`);
  if (notes.length) out.push('  notes', ...notes.map((n) => `    ${n}`));
  return out.join('\n') + '\n';
}

/**
 * The end-of-crawl summary as plain JSON, for scripts: what `--stats FILE`
 * writes and what the library's `run.done` resolves to (no Maps, so
 * `JSON.stringify` shows everything). Instants are ISO 8601 UTC strings with
 * milliseconds, durations whole milliseconds named `…Ms`, as in records.
 */
export interface CrawlSummary {
  /** When the crawl started, ISO 8601. */
  startedAt: string;
  /** When it ended, ISO 8601. */
  endedAt: string;
  /** endedAt − startedAt, whole ms. */
  elapsedMs: number;
  interrupted: boolean;
  resumed: 'resumed' | 'finished' | null;
  pages: number;
  /** Requests the crawl aborted itself (not counted in `pages`). */
  aborted: number;
  /** Requests sent: pages, retries, throttled attempts, redirect hops and robots.txt. */
  requests: number;
  /** Throttling answers (429, 503, …); each paused its host. */
  throttles: number;
  /** Of those, pauses announced by a Retry-After header. */
  retryAfterPauses: number;
  pagesPerSecond: number;
  bytes: number;
  pagesByStatus: Record<string, number>;
  errorsByCode: Record<string, number>;
  skippedByReason: Record<string, number>;
  hosts: Array<{ host: string } & HostStats>;
  notes: string[];
  /** With --check-links: links checked out of scope, broken ones, broken pages in scope. */
  linkCheck?: { checked: number; broken: number; brokenPages: number };
  /** In a re-crawl: page records by what changed since the last pass. */
  changes?: Record<PageChange, number>;
  /** In a re-crawl with --state or --redis: the pass (2 and up). */
  pass?: number;
  /** With a page handler: items written, and pages whose handler failed. */
  handler?: { items: number; failed: number };
  /** With --purpose: pages denied a declared purpose (not requested, or their content withheld), by purpose. */
  usageDenied?: Record<string, number>;
  /** HTTP 402 pricing: what servers charged, per currency: the total and per host, as decimal strings ("0.03"). */
  spend?: Record<string, { amount: string; hosts: Record<string, string> }>;
}

export function statsToJson(stats: CrawlStats): CrawlSummary {
  let pages = 0;
  for (const n of stats.pagesByStatus.values()) pages += n;
  // Both ends rounded to the ms first, so elapsedMs is exactly endedAt − startedAt as written.
  const started = Math.round(stats.startedAt);
  const elapsedMs = Math.max(0, Math.round(stats.endedAt) - started);
  return {
    startedAt: isoInstant(started),
    endedAt: isoInstant(started + elapsedMs),
    elapsedMs,
    interrupted: stats.interrupted,
    resumed: stats.resumed ?? null,
    pages,
    aborted: stats.aborted ?? 0,
    requests: stats.requests ?? 0,
    throttles: stats.throttles ?? 0,
    retryAfterPauses: stats.retryAfterPauses ?? 0,
    pagesPerSecond: elapsedMs > 0 ? Math.round((pages / elapsedMs) * 1000 * 100) / 100 : 0,
    bytes: stats.bytes,
    pagesByStatus: Object.fromEntries([...stats.pagesByStatus].map(([k, v]) => [String(k), v])),
    errorsByCode: Object.fromEntries(stats.errorsByCode),
    skippedByReason: Object.fromEntries(stats.skippedByReason),
    hosts: [...stats.perHost]
      .map(([host, h]) => ({ host, ...h, notes: [...h.notes], ...(h.usageDenied && { usageDenied: { ...h.usageDenied } }) }))
      .sort((a, b) => b.fetched - a.fetched || a.host.localeCompare(b.host)),
    notes: [...stats.notes],
    ...(stats.linkCheck && { linkCheck: { ...stats.linkCheck } }),
    ...(stats.changes && { changes: { ...stats.changes } }),
    ...(stats.pass !== undefined && { pass: stats.pass }),
    ...(stats.handler && { handler: { ...stats.handler } }),
    ...(stats.usageDenied && { usageDenied: { ...stats.usageDenied } }),
    ...(stats.spend && { spend: spendJson(stats.spend) }),
  };
}

function spendJson(spend: Spending): NonNullable<CrawlSummary['spend']> {
  return Object.fromEntries(
    Object.entries(spend).map(([currency, row]) => [
      currency,
      { amount: formatAmount(row.micros), hosts: Object.fromEntries(Object.entries(row.hosts).map(([h, m]) => [h, formatAmount(m)])) },
    ]),
  );
}
