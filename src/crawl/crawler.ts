/**
 * The crawl loop: decides WHAT to fetch (scope, depth, robots.txt, caps,
 * dedupe) and turns responses into records and new frontier entries. WHEN a
 * request starts is the scheduler's business; every request, robots.txt and
 * redirect hops included, goes through it.
 *
 * Termination is a predicate (`checkDone`): nothing running, no internal
 * job queued, no robots.txt being loaded, no retry waiting, and nothing left
 * that may still be fetched.
 */
import type { Clock } from '../clock.js';
import type { Fetcher, FetchRequest, FetchResult } from '../fetch/fetcher.js';
import { MemoryFrontier, type Frontier, type FrontierEntry } from '../store/memory-frontier.js';
import { backoffDelay } from '../politeness/backoff.js';
import { HostFeedback } from '../politeness/server-feedback.js';
import { FetchError } from '../fetch/fetch-error.js';
import { pageOutcome } from './page-outcome.js';
import { RetryQueue } from '../store/retry-queue.js';
import { RobotsCache, productToken } from '../robots/index.js';
import { RobotsGate } from '../robots/gate.js';
import { Scheduler, type JobContext, type TakeResult } from './scheduler.js';
import { createScope } from '../parse/scope.js';
import type { CrawlSettings, ErrorCode, HostPolicy, PageRecord, SkipReason, SkipRecord } from '../types.js';
import { hostKeyOf } from '../parse/url.js';
import type { RecordSink } from '../output/sink.js';
import type { ProgressSnapshot } from '../output/progress.js';
import { addNote, countPage, countRobotsRequest, countSkip, createStats, finishStats, type CrawlStats } from '../output/summary.js';

export interface CrawlerOptions {
  settings: CrawlSettings;
  /** Canonical seed URLs. */
  seeds: string[];
  clock: Clock;
  fetcher: Fetcher;
  sink: RecordSink;
  log?: { info(msg: string): void; warn(msg: string): void };
  frontier?: Frontier;
  random?: () => number;
}

/**
 * robots.txt is small: a server that cannot send it within this is treated as
 * unreachable (RFC 9309 §2.3.1.4) rather than holding up its host for a full
 * page timeout on every attempt.
 */
export const ROBOTS_TIMEOUT_MS = 10_000;
/** Transport failures worth another try: the host may be restarting or overloaded. */
const RETRYABLE_CODES = new Set<ErrorCode>(['CONNECTION_REFUSED', 'CONNECTION_RESET', 'CONNECT_TIMEOUT', 'HEADERS_TIMEOUT', 'BODY_TIMEOUT', 'DNS_FAILURE']);

export class Crawler {
  readonly stats: CrawlStats;
  private readonly settings: CrawlSettings;
  private readonly clock: Clock;
  private readonly frontier: Frontier;
  private readonly scheduler: Scheduler;
  private readonly robots: RobotsGate;
  private readonly inScope: ReturnType<typeof createScope>;
  private readonly feedback: HostFeedback;
  private readonly retries: RetryQueue<{ key: string; entry: FrontierEntry }>;
  private readonly givenUp = new Set<string>();
  private readonly abortController = new AbortController();
  private readonly token: string;
  private started = 0;
  private fetched = 0;
  private errors = 0;
  private skipped = 0;
  private stopping = false;
  private finished = false;
  private resolveDone!: () => void;
  private readonly done: Promise<void>;
  private writes: Promise<void> = Promise.resolve();
  private readonly isoTime = isoTimeFormatter();

  constructor(private readonly opts: CrawlerOptions) {
    this.settings = opts.settings;
    this.clock = opts.clock;
    this.frontier = opts.frontier ?? new MemoryFrontier();
    this.stats = createStats(opts.clock);
    this.token = productToken(this.settings.userAgent);
    this.inScope = createScope({
      scope: this.settings.scope,
      seeds: opts.seeds,
      include: this.settings.include,
      exclude: this.settings.exclude,
      maxUrlLength: this.settings.maxUrlLength,
    });
    this.scheduler = new Scheduler({
      clock: opts.clock,
      concurrency: this.settings.concurrency,
      policyFor: (key) => this.policyForKey(key),
      source: { hasWork: (key) => this.frontier.size(key) > 0 && !this.capReached(), take: (key, now) => this.take(key, now) },
      onSettle: () => this.checkDone(),
      random: opts.random,
    });
    const note = (key: string, message: string) => {
      addNote(this.stats, message, key);
      this.opts.log?.warn(`${key}: ${message}`);
    };
    this.robots = new RobotsGate({
      cache: new RobotsCache({
        clock: opts.clock,
        userAgent: this.settings.userAgent,
        maxBytes: this.settings.robots.maxBytes,
        cacheTtlMs: this.settings.robots.cacheTtlMs,
        unavailableRetries: this.settings.robots.unavailableRetries,
        unavailableRetryDelayMs: this.settings.robots.unavailableRetryDelayMs,
        fetchOne: (url) => this.fetchRobotsHop(url),
      }),
      clock: opts.clock,
      limiter: (key) => this.scheduler.limiter(key),
      policyFor: (key) => this.policyForKey(key),
      wake: (key) => this.scheduler.wake(key),
      settled: () => this.checkDone(),
      note: (key, message) => addNote(this.stats, message, key),
      warn: (message) => this.opts.log?.warn(message),
    });
    this.feedback = new HostFeedback({ clock: opts.clock, limiter: (key) => this.scheduler.limiter(key), random: opts.random, note });
    this.retries = new RetryQueue(opts.clock, ({ key, entry }) => {
      if (this.givenUp.has(key)) {
        this.skip(entry.url, 'host-failed', entry.depth, entry.parent);
        this.checkDone();
        return;
      }
      this.frontier.unshift(key, entry);
      this.scheduler.wake(key);
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /** Crawls until nothing is left (or `stop()`); resolves with the stats. */
  async run(): Promise<CrawlStats> {
    for (const seed of this.opts.seeds) this.enqueue(seed, 0, null, 0, true);
    this.checkDone();
    await this.done;
    await this.writes;
    return this.stats;
  }

  /** Graceful stop: start nothing new; running requests finish (or are aborted by `abort()`). */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stats.interrupted = true;
    this.scheduler.stop();
    this.checkDone();
  }

  /** Aborts requests still running after a stop. */
  abort(): void {
    this.abortController.abort();
  }

  progress(): ProgressSnapshot {
    let waiting = 0;
    let active = 0;
    for (const h of this.scheduler.hostsSnapshot()) {
      if (h.inFlight > 0) active++;
      else if (h.waiting) waiting++;
    }
    return {
      fetched: this.fetched,
      queued: this.frontier.size(),
      inFlight: this.scheduler.inFlight,
      errors: this.errors,
      skipped: this.skipped,
      hostsWaiting: waiting,
      hostsActive: active,
      elapsedMs: this.clock.now() - this.stats.startedAt,
      throttled: this.feedback.slowed((key) => this.policyForKey(key)),
    };
  }

  private policyForKey(key: string): HostPolicy {
    return this.settings.policyFor(key);
  }

  private capReached(): boolean {
    return this.started >= this.settings.maxPages;
  }

  private hostKey(url: string): string {
    return hostKeyOf(url, this.settings.hostKey);
  }

  /** Accepts a canonical URL into the frontier, or records why not. */
  private enqueue(url: string, depth: number, parent: string | null, hops: number, isSeed = false): void {
    // Most links are repeats: drop them before any URL parsing (every branch below ignores a seen URL).
    if (this.frontier.isSeen(url)) return;
    if (!isSeed) {
      const verdict = this.inScope(url);
      if (!verdict.ok) {
        if (this.frontier.markSeen(url)) this.skip(url, verdict.reason, depth, parent, verdict.detail);
        return;
      }
      if (depth > this.settings.maxDepth) {
        if (this.frontier.markSeen(url)) this.skip(url, 'max-depth', depth, parent);
        return;
      }
    }
    if (!this.frontier.markSeen(url)) return;
    const key = this.hostKey(url);
    if (this.givenUp.has(key)) {
      this.skip(url, 'host-failed', depth, parent);
      return;
    }
    this.frontier.push(key, { url, depth, parent, hops, attempt: 0 });
    this.scheduler.wake(key);
  }

  /** Picks the host's next request, skipping what robots.txt forbids. Never waits. */
  private take(key: string, _now: number): TakeResult {
    if (this.stopping) return null;
    for (;;) {
      if (this.capReached()) return null;
      const entry = this.frontier.peek(key);
      if (!entry) return null;
      if (this.settings.robots.enabled) {
        const verdict = this.robots.check(entry.url, key);
        if (verdict.kind === 'wait') return { notBefore: verdict.until };
        if (verdict.kind === 'skip') {
          this.frontier.shift(key);
          this.skip(entry.url, verdict.reason, entry.depth, entry.parent, verdict.detail);
          continue;
        }
      }
      this.frontier.shift(key);
      this.started++;
      return (ctx) => this.fetchPage(entry, key, ctx);
    }
  }

  /** One robots.txt request, run as the next request of that URL's host. */
  private fetchRobotsHop(url: string): Promise<FetchResult> {
    const key = this.hostKey(url);
    return new Promise((resolve, reject) => {
      this.scheduler.submit(key, async (ctx) => {
        countRobotsRequest(this.stats, key);
        try {
          const { res, startedAt } = await this.send(url, ctx, {
            read: 'text',
            maxBodyBytes: this.settings.robots.maxBytes,
            timeoutMs: Math.min(ROBOTS_TIMEOUT_MS, this.settings.timeouts.headersMs),
          });
          // A 429/503 on robots.txt pauses the host like any other (RobotsCache
          // treats it as unavailable and retries after its own delay too).
          const policy = this.policyForKey(key);
          if (policy.throttleStatuses.includes(res.status)) this.feedback.throttled(key, policy, res, startedAt);
          resolve(res);
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  /**
   * Performs the job's one request, reporting its real send and response times
   * to the limiter; `startedAt` is when it left, which tells a throttling
   * answer from one to a request already in flight.
   */
  private async send(url: string, ctx: JobContext, req: Pick<FetchRequest, 'read' | 'maxBodyBytes' | 'timeoutMs'>): Promise<{ res: FetchResult; startedAt: number }> {
    let startedAt = this.clock.now();
    const res = await this.opts.fetcher.fetch(url, {
      ...req,
      signal: this.abortController.signal,
      onDispatched: (at) => {
        startedAt = at;
        ctx.onDispatched(at);
      },
      onResponse: ctx.onResponse,
    });
    return { res, startedAt };
  }

  /** `key` is the host key the entry was queued under, i.e. `hostKey(entry.url)`. */
  private async fetchPage(entry: FrontierEntry, key: string, ctx: JobContext): Promise<void> {
    const policy = this.policyForKey(key);
    const fetchedAt = this.isoTime(this.clock.wallNow());
    const t0 = this.clock.now();
    const base: PageRecord = {
      type: 'page', url: entry.url, status: null, depth: entry.depth, parent: entry.parent,
      contentType: null, bytes: 0, title: null, links: 0, fetchedAt, elapsedMs: 0,
    };
    if (entry.attempt > 0 || (entry.throttles ?? 0) > 0) base.attempts = entry.attempt + (entry.throttles ?? 0) + 1;
    let record: PageRecord;
    try {
      const { res, startedAt } = await this.send(entry.url, ctx, { read: 'html' });
      if (policy.throttleStatuses.includes(res.status)) {
        this.feedback.throttled(key, policy, res, startedAt);
        if (this.requeueThrottled(key, entry, policy)) return;
        record = this.follow(entry, res, base);
        record.error = { code: 'THROTTLED', message: `still answered ${res.status} after ${policy.throttleRetries} throttle retries` };
      } else if (policy.retryStatuses.includes(res.status)) {
        if (this.onFailure(key, entry, policy)) return;
        record = this.follow(entry, res, base);
      } else {
        this.feedback.succeeded(key, policy, res);
        record = this.follow(entry, res, base);
      }
    } catch (err) {
      const code = errorCode(err);
      if (RETRYABLE_CODES.has(code) && this.onFailure(key, entry, policy)) return;
      record = { ...base, elapsedMs: Math.round(this.clock.now() - t0), error: { code, message: errorMessage(err) } };
    }
    this.emitPage(record, key);
    await this.writes;
  }

  /** Puts a throttled URL back at the head of its host's queue, unless its throttle budget is spent. */
  private requeueThrottled(key: string, entry: FrontierEntry, policy: HostPolicy): boolean {
    const throttles = (entry.throttles ?? 0) + 1;
    if (this.stopping || throttles > policy.throttleRetries) return false;
    this.started--; // it will be taken again
    this.frontier.unshift(key, { ...entry, throttles });
    this.scheduler.wake(key);
    return true;
  }

  /**
   * A transport failure or retry status: counts against the host (pause or
   * give up) and schedules the URL's retry after a backoff. False when the
   * caller should write the final record.
   */
  private onFailure(key: string, entry: FrontierEntry, policy: HostPolicy): boolean {
    if (this.stopping) return false;
    const verdict = this.feedback.failed(key, policy);
    if (verdict === 'give-up') {
      this.giveUpHost(key, policy);
      return false;
    }
    if (entry.attempt >= policy.retries) return false;
    const attempt = entry.attempt + 1;
    const delay = backoffDelay(attempt, { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: this.opts.random ?? Math.random });
    this.started--;
    this.retries.add({ key, entry: { ...entry, attempt } }, this.clock.now() + delay);
    return true;
  }

  /** The host kept failing: skip everything queued for it, now and later. */
  private giveUpHost(key: string, policy: HostPolicy): void {
    if (this.givenUp.has(key)) return;
    this.givenUp.add(key);
    const queued = this.frontier.drain(key);
    for (const e of queued) this.skip(e.url, 'host-failed', e.depth, e.parent);
    const message = `gave up after ${policy.hostFailureGiveUp} failures in a row; ${queued.length} queued URL(s) skipped`;
    addNote(this.stats, message, key);
    this.opts.log?.warn(`${key}: ${message}`);
  }

  /** Builds the record and feeds the URLs it leads to back into the frontier. */
  private follow(entry: FrontierEntry, res: FetchResult, base: PageRecord): PageRecord {
    const out = pageOutcome(entry, res, base, {
      maxRedirects: this.settings.maxRedirects,
      respectNofollow: this.settings.respectNofollow,
      emitLinks: this.settings.emitLinks,
      userAgentToken: this.token,
    });
    if (!this.stopping) {
      for (const next of out.next) this.enqueue(next.url, next.depth, entry.url, next.hops);
      // Not marked seen: a followed link to the same URL elsewhere still counts.
      for (const link of out.nofollow) {
        if (!this.frontier.isSeen(link)) this.skip(link, 'nofollow', entry.depth + 1, entry.url);
      }
    }
    return out.record;
  }

  private emitPage(record: PageRecord, key: string): void {
    this.fetched++;
    if (record.error) this.errors++;
    countPage(this.stats, record, key);
    this.write(record);
  }

  private skip(url: string, reason: SkipReason, depth: number, parent: string | null, detail?: string): void {
    this.skipped++;
    countSkip(this.stats, reason, this.hostKey(url));
    // A URL the user named (a seed, or where it redirects) is never dropped silently.
    if (!this.settings.emitSkipped && depth > 0) return;
    const record: SkipRecord = { type: 'skipped', url, reason, depth, parent };
    if (detail) record.detail = detail;
    this.write(record);
  }

  /** Writes in order; the chain is awaited by jobs, which is how a slow reader slows the crawl. */
  private write(record: PageRecord | SkipRecord): void {
    const sink = this.opts.sink;
    this.writes = this.writes.then(() => (sink.broken ? undefined : sink.write(record)));
  }

  private checkDone(): void {
    if (this.finished) return;
    if (this.scheduler.inFlight > 0 || this.scheduler.pendingJobs > 0 || this.robots.pending > 0) return;
    if (!this.stopping && !this.capReached() && (this.frontier.size() > 0 || this.retries.size > 0)) return;
    this.finished = true;
    this.scheduler.stop();
    const reason: SkipReason = this.stopping ? 'interrupted' : 'max-pages';
    for (const key of [...this.frontier.hosts()]) {
      for (const e of this.frontier.drain(key)) this.skip(e.url, reason, e.depth, e.parent);
    }
    for (const { entry: e } of this.retries.drain()) this.skip(e.url, reason, e.depth, e.parent);
    for (const [key, row] of this.stats.perHost) row.rate = this.feedback.describe(key, this.policyForKey(key));
    finishStats(this.stats, this.clock, { interrupted: this.stopping });
    this.resolveDone();
  }
}

function errorCode(err: unknown): ErrorCode {
  return err instanceof FetchError ? err.code : 'FETCH_FAILED';
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const MAX_TIME_MS = 8.64e15; // the Date range

/**
 * `(ms) => new Date(ms).toISOString()`, reusing the date and seconds while
 * they do not change: at one record per page and thousands of pages a
 * second, `toISOString` (~0.45 µs a call) was 1–2% of the crawler's CPU time.
 */
export function isoTimeFormatter(): (ms: number) => string {
  let second = NaN;
  let prefix = ''; // "YYYY-MM-DDTHH:mm:ss."
  return (ms) => {
    const t = Math.trunc(ms); // as Date does
    const s = Math.floor(t / 1000);
    if (s !== second || !(Math.abs(t) <= MAX_TIME_MS)) {
      const iso = new Date(t).toISOString(); // throws RangeError for an invalid time, as before
      second = s;
      prefix = iso.slice(0, -4);
      return iso;
    }
    const milli = t - s * 1000;
    return `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
}
