/**
 * The crawl loop: decides WHAT to fetch (scope, robots.txt, dedupe, and the
 * trap defences and caps of admission.ts) and turns responses into records
 * and new store entries. WHEN a
 * request starts is the scheduler's business; every request, robots.txt and
 * redirect hops included, goes through it. The crawl's state lives in a
 * CrawlStore (store/crawl-store.ts): URLs are claimed from it as leases and
 * completed once their record is written; per-host politeness lives in one
 * HostTable shared with the scheduler, server feedback and the robots gate.
 *
 * Termination is a predicate (`checkDone`): nothing running, no internal
 * job queued, no robots.txt being loaded, no store call or claim pending,
 * and nothing queued, delayed or held that may still be fetched.
 */
import type { Clock, Timer } from '../clock.js';
import type { Fetcher, FetchRequest, FetchResult } from '../fetch/fetcher.js';
import type { PageArchive } from '../archive/page-archive.js';
import { backoffDelay, HostFeedback, HostTable, type JobContext } from '../politeness/index.js';
import { FetchError } from '../fetch/fetch-error.js';
import { AddressRefusedError, createAddressGuard, type AddressGuard } from '../fetch/address-guard.js';
import { redactCredentials } from '../fetch/redact.js';
import { pageOutcome, redactRecord } from './page-outcome.js';
import { SlowRequests } from './slow-requests.js';
import { RobotsCache, RobotsGate, productToken } from '../robots/index.js';
import { Scheduler, type TakeResult } from './scheduler.js';
import { HostAddresses } from './host-addresses.js';
import { IpLimits } from '../politeness/ip-limits.js';
import { DueTimer } from './due-timer.js';
import { createScope } from '../parse/scope.js';
import type { CrawlSettings, ErrorCode, HostPolicy, OutputRecord, PageRecord, SkipReason, SkipRecord } from '../types.js';
import { hostKeyOf } from '../parse/url.js';
import type { RecordSink } from '../output/sink.js';
import type { ProgressSnapshot } from '../output/progress.js';
import { addNote, countPage, countRobotsRequest, countSkip, createStats, finishStats, hostStats, type CrawlStats } from '../output/summary.js';
import { MemoryStore, type ClaimWait, type Cleared, type CrawlStore, type EntryExtra, type FrontierEntry, type Lease, type MaybePromise } from '../store/index.js';
import type { HostState } from '../politeness/host-state.js';
import { settingsFingerprint } from './fingerprint.js';
import { Admission } from './admission.js';
import { RedirectChains } from './redirect-chains.js';
import { decorateRecord, entryKind, requestFor } from './entry-kind.js';
import { SitemapSeeds, sitemapOutcome, type SitemapOutcome } from './sitemaps.js';
import { asGet, linkCheckExtra, wantsGet } from './link-check.js';
import { historyFields, throttleEvent, withAttempt } from './attempt-history.js';
import { robotsFetchRecord } from './robots-fetch-record.js';

export interface CrawlerOptions {
  settings: CrawlSettings;
  /** Canonical seed URLs. */
  seeds: string[];
  clock: Clock;
  fetcher: Fetcher;
  sink: RecordSink;
  log?: { info(msg: string): void; warn(msg: string): void };
  /** Where the crawl's state lives. @default a new MemoryStore */
  store?: CrawlStore;
  random?: () => number;
  /** A page request running this long gives its global slot back (slow-requests.ts). @default SLOW_AFTER_MS (10 s) */
  slowAfterMs?: number;
  /** Write a `type: "robots"` record per robots.txt request (robots-fetch-record.ts). @default false */
  robotsRecords?: boolean;
  /** Where fetched pages are kept (--save-dir, --warc); pages are captured only when set. @default none */
  archive?: PageArchive;
}

/**
 * robots.txt is small: a server that cannot send it within this (in all, not
 * per silence: a file sent a byte a second is cut off too) is treated as
 * unreachable (RFC 9309 §2.3.1.4) rather than holding up its host for a full
 * page timeout on every attempt.
 */
export const ROBOTS_TIMEOUT_MS = 10_000;
/**
 * With a shared store, how often a worker surveys the whole crawl: to take up
 * hosts other workers queued, and, once its own part is done, to see whether
 * the others' leases (which may still add links) have ended.
 */
export const SURVEY_INTERVAL_MS = 1_000;
/**
 * A worker with nothing of its own left surveys this often, so it sees the
 * crawl end (or new work) soon after the last other worker's lease: the
 * whole crawl ends when its slowest worker notices.
 */
export const SURVEY_IDLE_INTERVAL_MS = 200;
/** Paused hosts listed on the progress line, at most. */
const PROGRESS_PAUSED_HOSTS = 5;

/** What a robots.txt hop answers with when it would leave the crawl's scope (robots/cache.ts reads it as unavailable). */
export const OUT_OF_SCOPE_CODE = 'OUT_OF_SCOPE';

export class Crawler {
  readonly stats: CrawlStats;
  private readonly settings: CrawlSettings;
  private readonly clock: Clock;
  private readonly store: CrawlStore;
  private readonly hosts: HostTable;
  private readonly scheduler: Scheduler<HostPolicy>;
  /** Each host's address, resolved before its first request (absent: resolved inside the connect). */
  private readonly addresses: HostAddresses | undefined;
  private readonly robots: RobotsGate;
  private inScope: ReturnType<typeof createScope>;
  /** Scope without the include/exclude filters (they are about pages): where a robots.txt redirect may go. */
  private robotsScope: ReturnType<typeof createScope>;
  /** Trap defences and caps on what joins the queue. */
  private readonly admission: Admission;
  private readonly redirects = new RedirectChains();
  /** The sitemap files that seed the crawl (named ones, and the seeds' robots.txt Sitemap: lines). */
  private readonly sitemaps: SitemapSeeds;
  /** When each host record's latest request left: how quiet the host was before the next one (a refusal after a long quiet is not about the pace). */
  private readonly lastSent = new WeakMap<HostState, number>();
  /** The SSRF guard every request carries: special-purpose addresses are refused except on the seeds' hosts. */
  private guard: AddressGuard;
  private readonly slow: SlowRequests;
  private readonly feedback: HostFeedback;
  /** Wakes the crawl when the store's earliest delayed entry (a retry) is due. */
  private readonly dueTimer: DueTimer;
  /**
   * The local prefetch buffer: a lease per host claimed from the store but not
   * started yet (its host waits on robots.txt, or it came back from an
   * asynchronous claim). Taken before the store is asked again.
   */
  private readonly held = new Map<string, Lease>();
  /** Hosts with an asynchronous claim under way. */
  private readonly claiming = new Set<string>();
  /** Hosts whose last asynchronous claim answered "not before": the store's (shared) politeness says wait until then. */
  private readonly claimWaits = new Map<string, number>();
  /** Asynchronous store calls not settled yet (a sync store never has any). */
  private pendingOps = 0;
  /** A shared store's survey is under way. */
  private surveying = false;
  /** A shared store said nothing is left anywhere and marked the crawl finished. */
  private sharedEnd = false;
  private surveyTimer: Timer | null = null;
  private readonly abortController = new AbortController();
  private readonly token: string;
  private fetched = 0;
  private errors = 0;
  private skipped = 0;
  /** Requests the crawl aborted itself (ABORTED records): counted apart, as the summary does. */
  private aborted = 0;
  private stopping = false;
  /** Seeds are in the store: until then the crawl cannot end, even when stopped (every seed gets a record). */
  private seeded = false;
  private finished = false;
  /** run()'s promise has resolved or rejected. */
  private doneSettled = false;
  private resolveDone!: () => void;
  private rejectDone!: (err: unknown) => void;
  private readonly done: Promise<void>;
  private writes: Promise<void> = Promise.resolve();
  private readonly isoTime = isoTimeFormatter();

  constructor(private readonly opts: CrawlerOptions) {
    this.settings = opts.settings;
    this.clock = opts.clock;
    this.store = opts.store ?? new MemoryStore();
    this.stats = createStats(opts.clock);
    if (this.settings.checkLinks) this.stats.linkCheck = { checked: 0, broken: 0, brokenPages: 0 };
    this.token = productToken(this.settings.userAgent);
    this.inScope = this.scopeFor(opts.seeds);
    this.robotsScope = this.scopeFor(opts.seeds, false);
    this.guard = this.guardFor(opts.seeds);
    this.admission = new Admission(this.settings, () => this.store.queued());
    this.hosts = new HostTable({
      policyFor: (key) => this.settings.policyFor(key),
      random: opts.random,
      persist: this.store.durable ? (key, saved) => this.settle(this.store.saveHost(key, saved)) : undefined,
    });
    // Hosts are resolved before they are scheduled, so a slow lookup holds no slot and per-IP limits know the address.
    // A `domain` host key spans names that may resolve apart: those are resolved inside the connect, as before.
    const resolveHost = opts.fetcher.resolveHost?.bind(opts.fetcher);
    this.addresses = resolveHost && this.settings.hostKey === 'host' ? new HostAddresses({ clock: opts.clock, lookup: resolveHost, onResolved: (key) => this.scheduler.resolved(key) }) : undefined;
    const { perIp } = this.settings;
    if (perIp && !this.addresses) opts.log?.warn(`perIp limits not applied: ${this.settings.hostKey === 'host' ? 'this fetcher does not resolve hosts ahead' : 'a hostKey "domain" key spans names that may resolve apart'}`);
    this.scheduler = new Scheduler({
      clock: opts.clock,
      concurrency: this.settings.concurrency,
      hosts: this.hosts,
      source: { hasWork: (key) => this.hasWork(key), take: (key, now) => this.take(key, now) },
      onSettle: () => this.checkDone(),
      random: opts.random,
      addresses: this.addresses,
      ipLimits: perIp && this.addresses ? new IpLimits(perIp) : undefined,
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
        fetchOne: (url, origin) => this.fetchRobotsHop(url, origin),
        records: this.store.durable ? this.store : undefined,
        onRecordError: (err) => this.fail(err),
      }),
      clock: opts.clock,
      hosts: this.hosts,
      wake: (key) => this.scheduler.wake(key),
      settled: () => this.checkDone(),
      loaded: (origin, state) => this.sitemaps.robotsLoaded(origin, state),
      note: (key, message) => addNote(this.stats, message, key),
      // Its messages may quote a robots.txt redirect target, credentials and all.
      warn: (message) => this.opts.log?.warn(redactCredentials(message)),
    });
    this.feedback = new HostFeedback({ clock: opts.clock, hosts: this.hosts, random: opts.random, note });
    this.sitemaps = new SitemapSeeds(
      this.settings,
      (sitemap) => this.enqueue(sitemap.url, 0, sitemap.parent, 0, true, { kind: 'sitemap', level: 0 }),
      (message) => {
        addNote(this.stats, message);
        this.opts.log?.warn(redactCredentials(message));
      },
    );
    this.slow = new SlowRequests({
      clock: opts.clock,
      afterMs: opts.slowAfterMs,
      max: this.settings.concurrency,
      onEnd: (key) => {
        this.scheduler.wake(key);
        this.checkDone();
      },
    });
    this.dueTimer = new DueTimer(opts.clock, () => this.promoteDue());
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = () => {
        this.doneSettled = true;
        resolve();
      };
      this.rejectDone = (err) => {
        this.doneSettled = true;
        reject(err);
      };
    });
  }

  /** Crawls until nothing is left (or `stop()`); resolves with the stats. */
  async run(): Promise<CrawlStats> {
    const { store } = this;
    const opened = await store.open({ seeds: this.opts.seeds, configFingerprint: settingsFingerprint(this.settings) });
    if (opened.finished) {
      // Nothing to do: the store holds a crawl that already ended.
      this.stats.resumed = 'finished';
      this.finished = true;
      finishStats(this.stats, this.clock);
      return this.stats;
    }
    if (opened.resumed) {
      this.stats.resumed = 'resumed';
      // Scope follows every seed the crawl was ever given, not only this run's.
      const seeds = [...new Set([...opened.meta.seeds, ...this.opts.seeds])];
      this.inScope = this.scopeFor(seeds);
      this.robotsScope = this.scopeFor(seeds, false);
      this.guard = this.guardFor([...opened.meta.seeds, ...this.opts.seeds]);
    }
    if (store.durable) {
      const unclean = opened.uncleanUntil === undefined ? undefined : { until: opened.uncleanUntil, spanMs: opened.uncleanSpanMs ?? 0 };
      for (const [key, saved] of await store.loadHosts()) this.hosts.restore(key, saved, unclean);
    }
    // On a resume, seeds seen before are dropped by dedupe; new ones join the crawl.
    for (const seed of this.opts.seeds) this.enqueue(seed, 0, null, 0, true);
    // Sitemaps named by the user join now; a seed origin's robots.txt is loaded now for its Sitemap: lines (--sitemaps).
    for (const seed of this.sitemaps.start(this.opts.seeds)) this.robots.preload(seed, this.hostKey(seed));
    // Work the store held before this run (a resume) wakes its hosts.
    if (opened.resumed) for (const key of store.hostsWithWork()) this.scheduler.wake(key);
    this.seeded = true;
    this.dueTimer.armAt(store.nextDueAt());
    if (store.survey) this.armSurvey();
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
    const now = this.clock.now();
    const paused: Array<{ host: string; leftMs: number }> = [];
    for (const h of this.scheduler.hostsSnapshot()) {
      if (h.inFlight > 0) active++;
      else if (h.waiting) waiting++;
      if (h.pausedUntil > now && paused.length < PROGRESS_PAUSED_HOSTS) paused.push({ host: h.key, leftMs: h.pausedUntil - now });
    }
    const { maxPages } = this.settings;
    return {
      fetched: this.fetched,
      queued: this.store.queued() + this.held.size,
      inFlight: this.scheduler.inFlight + this.slow.count,
      errors: this.errors,
      skipped: this.skipped,
      ...(this.aborted > 0 && { aborted: this.aborted }),
      hostsWaiting: waiting,
      hostsActive: active,
      elapsedMs: this.clock.now() - this.stats.startedAt,
      throttled: this.feedback.slowed(),
      paused,
      ...(Number.isFinite(maxPages) && { limit: maxPages }),
    };
  }

  private scopeFor(seeds: string[], filters = true): ReturnType<typeof createScope> {
    const { scope, include, exclude, maxUrlLength } = this.settings;
    // A sitemap the user named puts its host in scope, as a seed does (`crawl --sitemap URL` needs no seed).
    seeds = [...seeds, ...this.settings.sitemaps.urls];
    return filters ? createScope({ scope, seeds, include, exclude, maxUrlLength }) : createScope({ scope, seeds });
  }

  /** A user who typed a seed meant it: the seeds' own hosts are exempt from the SSRF guard. */
  private guardFor(seeds: string[]): AddressGuard {
    return createAddressGuard({ ...this.settings.network, allowUrls: [...seeds, ...this.settings.sitemaps.urls] });
  }

  private capReached(): boolean {
    return this.store.counter('started') >= this.settings.maxPages;
  }

  private hostKey(url: string): string {
    return hostKeyOf(url, this.settings.hostKey);
  }

  private hasWork(key: string): boolean {
    return (this.held.has(key) || this.store.queued(key) > 0) && !this.capReached();
  }

  /**
   * Waits for a store call only if it is asynchronous: a sync store's answer
   * is used at once, a promise is counted until it settles so the crawl
   * cannot end under it, and a failure ends the crawl with that error.
   */
  private settle<T>(value: MaybePromise<T>, then?: (v: T) => void): void {
    if (!(value instanceof Promise)) {
      then?.(value);
      return;
    }
    this.pendingOps++;
    value.then(
      (v) => {
        this.pendingOps--;
        then?.(v);
        this.checkDone();
      },
      (err: unknown) => {
        this.pendingOps--;
        this.fail(err);
      },
    );
  }

  /**
   * Accepts a canonical URL into the store, or records why not; true when it
   * went to the store (which may still find it a repeat).
   */
  private enqueue(url: string, depth: number, parent: string | null, hops: number, isSeed = false, extra?: EntryExtra): boolean {
    // Most links are repeats: drop them before any URL parsing (every branch below ignores a seen URL).
    if (this.store.isSeen(url)) return false;
    if (!isSeed) {
      const verdict = this.inScope(url);
      if (!verdict.ok) {
        // --check-links: a link out of scope is checked (link-check.ts), not skipped.
        const check = linkCheckExtra(verdict, this.settings.checkLinks, extra);
        if (check === null) return this.skipOnce(url, verdict.reason, depth, parent, verdict.detail);
        extra = check;
      }
      const trap = this.admission.check(url, depth);
      if (trap) return this.skipOnce(url, trap.reason, depth, parent, trap.detail);
    } else if (url.length > this.settings.maxUrlLength) {
      // Links meet this in the scope check; a seed meets it here (a 5 MB seed is not requested).
      return this.skipOnce(url, 'url-too-long', depth, parent, `${url.length} characters, over the limit of ${this.settings.maxUrlLength}`);
    }
    const key = this.hostKey(url);
    if (this.hosts.isGivenUp(key)) return this.skipOnce(url, 'host-failed', depth, parent);
    const full = this.admission.reserve(url, key, isSeed);
    if (full) {
      // Not remembered (admission.ts): counted, and recorded with emitSkipped, each time it is found.
      this.skip(url, full.reason, depth, parent, full.detail);
      return false;
    }
    this.settle(this.add(url, key, { url, depth, parent, hops, attempt: 0, ...(extra && { extra }) }), (isNew) => {
      if (isNew) return this.scheduler.wake(key);
      this.admission.release(url, key);
      if (hops > 0) this.redirects.done(url); // a store that answers later found it a repeat after all
    });
    return true;
  }

  /** Marks a URL seen and writes its skip record, the first time only. */
  private skipOnce(url: string, reason: SkipReason, depth: number, parent: string | null, detail?: string): false {
    this.settle(this.add(url, '', null), (isNew) => {
      if (isNew) this.skip(url, reason, depth, parent, detail);
    });
    return false;
  }

  /** The store's add; a synchronous failure ends the crawl as an asynchronous one does (never a page's error). */
  private add(url: string, key: string, entry: FrontierEntry | null): MaybePromise<boolean> {
    try {
      return this.store.add(url, key, entry);
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  /** Picks the host's next request, skipping what robots.txt forbids. Never waits. */
  private take(key: string, now: number): TakeResult {
    if (this.stopping) return null;
    // Slow requests gave their global slot back, not their host's: woken when one ends.
    const slow = this.slow.holds(key);
    if (slow > 0) {
      const { limiter, policy } = this.hosts.get(key);
      if (limiter.inFlight + slow >= policy.concurrency) return { notBefore: Infinity };
    }
    for (;;) {
      if (this.capReached()) return null;
      let lease = this.held.get(key);
      if (lease) {
        this.held.delete(key);
      } else {
        if (this.claiming.has(key)) return { notBefore: Infinity };
        const wait = this.claimWaits.get(key);
        if (wait !== undefined) {
          if (wait > now) return { notBefore: wait };
          this.claimWaits.delete(key);
        }
        const claimed = this.store.claim(key, now);
        if (claimed instanceof Promise) {
          this.claimLater(key, claimed);
          return { notBefore: Infinity }; // woken when the lease arrives
        }
        if (!claimed) return null;
        // A shared store's politeness (other workers' starts, a pause one of them saw) says not yet.
        if (!('entry' in claimed)) return { notBefore: claimed.notBefore };
        lease = claimed;
      }
      const { entry } = lease;
      const unresolved = this.addresses?.failure(key);
      if (unresolved !== undefined) {
        // Its name does not resolve: a DNS_FAILURE record at once, no request, no slot (host-addresses.ts).
        this.settle(this.store.complete(lease, errorCode(unresolved)));
        this.unreached(entry, key, errorCode(unresolved), `GET ${entry.url} failed: ${unresolved.message.replace(/^\S+ \S+ failed: /, '')}`);
        continue;
      }
      if (this.settings.robots.enabled) {
        const verdict = this.robots.check(entry.url, key);
        if (verdict.kind === 'wait') {
          // A shared store's claim holds every worker's next start to the host until this one is written:
          // give it back rather than hold it while robots.txt loads.
          if (this.store.dispatched) this.settle(this.store.release(lease, entry));
          else this.held.set(key, lease);
          return { notBefore: verdict.until };
        }
        if (verdict.kind === 'fail') {
          // Its host could not be connected to for robots.txt: a page record with that error (a dead link), not a skip.
          this.settle(this.store.complete(lease, verdict.code));
          this.unreached(entry, key, verdict.code as ErrorCode, verdict.message);
          continue;
        }
        if (verdict.kind === 'skip') {
          this.settle(this.store.complete(lease, verdict.reason));
          this.skip(entry.url, verdict.reason, entry.depth, entry.parent, verdict.detail);
          continue;
        }
      }
      this.settle(this.store.addToCounter('started', 1));
      const taken = lease;
      return this.slow.wrap(key, (ctx) => this.fetchPage(taken, ctx));
    }
  }

  /** A page record for a URL whose host could not be reached before any request of its own: an error, not a skip. */
  private unreached(entry: FrontierEntry, key: string, code: ErrorCode, message: string): void {
    const record: PageRecord = {
      type: 'page', url: entry.url, host: key, status: null, depth: entry.depth, parent: entry.parent, contentType: null, bytes: 0,
      title: null, links: 0, fetchedAt: this.isoTime(this.clock.wallNow()), elapsedMs: 0, error: { code, message },
    };
    decorateRecord(record, entry);
    this.emitPage(record, key);
  }

  private claimLater(key: string, claim: Promise<Lease | ClaimWait | undefined>): void {
    this.claiming.add(key);
    this.settle(claim, (answer) => {
      this.claiming.delete(key);
      if (!answer) return;
      // A wait is kept until its time: the next take hands it to the scheduler, which sleeps the host until then.
      if ('entry' in answer) this.held.set(key, answer);
      else this.claimWaits.set(key, answer.notBefore);
      this.scheduler.wake(key);
    });
  }

  /** Delayed entries (retries) came due: they are at the head of their hosts' queues now. */
  private promoteDue(): void {
    this.settle(this.store.promoteDue(this.clock.now()), (keys) => {
      for (const key of keys) this.scheduler.wake(key);
      this.dueTimer.armAt(this.store.nextDueAt());
    });
  }

  /**
   * One robots.txt request for `origin`'s file, run as the next request of
   * that URL's host. A redirect hop out of the crawl's scope is not made: it
   * rejects with OUT_OF_SCOPE, which the cache reads as "unavailable" (allow
   * all, RFC 9309 §2.3.1.2–3, as for a redirect chain too long to follow).
   */
  private fetchRobotsHop(url: string, origin?: string): Promise<FetchResult> {
    const key = this.hostKey(url);
    // A host's own robots.txt may always be read (a checked link's or a sitemap's host may be out of scope); its redirects may not.
    if (url !== `${origin}/robots.txt` && !this.robotsScope(url).ok) {
      const message = `robots.txt redirects out of scope to ${url}: not followed; read as unavailable (all allowed, RFC 9309 §2.3.1.2)`;
      const from = origin === undefined ? key : this.hostKey(origin);
      addNote(this.stats, message, from);
      this.opts.log?.warn(redactCredentials(`${from}: ${message}`));
      return Promise.reject(Object.assign(new Error(message), { code: OUT_OF_SCOPE_CODE }));
    }
    return new Promise((resolve, reject) => {
      this.scheduler.submit(key, async (ctx) => {
        countRobotsRequest(this.stats, key);
        const beganAt = this.clock.now();
        const recorded = this.opts.robotsRecords === true;
        try {
          const { res, startedAt, sinceLastMs } = await this.send(url, key, ctx, {
            read: 'text',
            maxBodyBytes: this.settings.robots.maxBytes,
            timeoutMs: Math.min(ROBOTS_TIMEOUT_MS, this.settings.timeouts.headersMs),
            totalMs: Math.min(ROBOTS_TIMEOUT_MS, this.settings.timeouts.totalMs),
          });
          // A 429/503 on robots.txt pauses the host like any other (RobotsCache
          // treats it as unavailable and retries after its own delay too).
          const throttled = this.hosts.get(key).policy.throttleStatuses.includes(res.status);
          if (throttled) this.feedback.throttled(key, res, startedAt, sinceLastMs);
          const now = this.clock.now();
          const throttle = throttled && recorded ? throttleEvent(res, now, this.clock.wallNow(), this.hosts.get(key).limiter.pausedUntil) : undefined;
          if (recorded) this.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: now, res, startedAt, throttle }));
          resolve(res);
        } catch (err) {
          if (recorded) this.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: this.clock.now(), err }));
          reject(err);
        }
      });
    });
  }

  /**
   * Performs the job's one request, reporting its real send and response times
   * to the limiter; `startedAt` is when it left, which tells a throttling
   * answer from one to a request already in flight, and `sinceLastMs` how
   * long after the host's previous request (Infinity: none), which tells a
   * refusal of our pace from one that comes whatever the pace.
   */
  private async send(
    url: string,
    key: string,
    ctx: JobContext,
    req: Pick<FetchRequest, 'read' | 'method' | 'maxBodyBytes' | 'timeoutMs' | 'totalMs' | 'capture'>,
    lease?: Lease,
  ): Promise<{ res: FetchResult; startedAt: number; sinceLastMs: number }> {
    let startedAt = this.clock.now();
    let sinceLastMs = Infinity;
    const res = await this.opts.fetcher.fetch(url, {
      ...req,
      guard: this.guard,
      signal: this.abortController.signal,
      onDispatched: (at) => {
        startedAt = at;
        // Keyed by the record: a host swept for being idle comes back as a new one, rightly quiet.
        const host = this.hosts.get(key);
        const last = this.lastSent.get(host);
        if (last !== undefined) sinceLastMs = at - last;
        if (last === undefined || at > last) this.lastSent.set(host, at);
        ctx.onDispatched(at);
        // A shared store holds other workers' next start to this host until it hears of this write.
        if (lease && this.store.dispatched) this.settle(this.store.dispatched(lease, at));
      },
      onResponse: ctx.onResponse,
    });
    return { res, startedAt, sinceLastMs };
  }

  /**
   * Fetches a leased URL and acts on the outcome as server feedback classifies
   * it. The lease is completed only after its record is written, so a store
   * that outlives the process never loses a URL whose record is not out.
   */
  private async fetchPage(lease: Lease, ctx: JobContext): Promise<void> {
    const { entry, key } = lease;
    const { policy } = this.hosts.get(key);
    const fetchedAt = this.isoTime(this.clock.wallNow());
    const t0 = this.clock.now();
    const base: PageRecord = {
      type: 'page', url: entry.url, host: key, status: null, depth: entry.depth, parent: entry.parent,
      contentType: null, bytes: 0, title: null, links: 0, fetchedAt, elapsedMs: 0,
    };
    decorateRecord(base, entry);
    if (entry.attempt > 0 || (entry.throttles ?? 0) > 0) {
      base.attempts = entry.attempt + (entry.throttles ?? 0) + 1;
      Object.assign(base, historyFields(entry.extra));
    }
    let record: PageRecord;
    let captured: FetchResult | undefined;
    try {
      const { res, startedAt, sinceLastMs } = await this.send(entry.url, key, ctx, this.requestWithCapture(requestFor(entry)), lease);
      if (res.capture) captured = res;
      const action = this.feedback.answered(key, res, startedAt, !this.stopping, sinceLastMs);
      if (wantsGet(entry, res) && this.checkWithGet(lease)) return;
      // The pause HostFeedback just set, for the record (attempt-history.ts).
      const throttle = action === 'throttle' ? throttleEvent(res, this.clock.now(), this.clock.wallNow(), this.hosts.get(key).limiter.pausedUntil) : undefined;
      if (action === 'throttle' && this.requeueThrottled(lease, policy, withAttempt(entry.extra, startedAt, throttle))) return;
      if (action === 'retry' && this.retryLater(lease, policy, withAttempt(entry.extra, startedAt))) return;
      if (action === 'give-up') this.giveUpHost(key, policy);
      base.startedAt = Math.round(startedAt);
      const sitemap = entryKind(entry) !== 'sitemap' ? undefined : await sitemapOutcome(entry, res, base, { maxRedirects: this.settings.maxRedirects, emitLinks: this.settings.emitLinks, chain: this.redirects.before(entry) }).catch(asError);
      record = this.follow(entry, res, base, sitemap);
      if (action === 'throttle') {
        record.throttles = historyFields(entry.extra, throttle).throttles;
        record.error = { code: 'THROTTLED', message: `still answered ${res.status} after ${policy.throttleRetries} throttle retries` };
      }
    } catch (err) {
      if (err instanceof AddressRefusedError) return this.refused(lease, err);
      const code = errorCode(err);
      if (wantsGet(entry, { code }) && this.checkWithGet(lease)) return;
      // Our own shortage (EMFILE, …): try again later, without counting it against the host.
      if (code === 'LOCAL_RESOURCE' && !this.stopping && this.retryLater(lease, policy, withAttempt(entry.extra, t0))) return;
      if (code === 'ABORTED' && this.stopping && this.store.durable) {
        // Cut short by the stop: the resumed crawl fetches it again.
        this.settle(this.store.addToCounter('started', -1));
        this.settle(this.store.release(lease, entry));
        return;
      }
      const action = this.feedback.errored(key, code, !this.stopping);
      if (action === 'retry' && this.retryLater(lease, policy, withAttempt(entry.extra, t0))) return;
      if (action === 'give-up') this.giveUpHost(key, policy);
      record = { ...base, elapsedMs: Math.round(this.clock.now() - t0), error: { code, message: errorMessage(err) } };
    }
    if (captured !== undefined && !(await this.archive(record, captured))) return;
    this.emitPage(record, key);
    if (entry.hops > 0) this.redirects.done(entry.url);
    await this.writes;
    this.settle(this.store.complete(lease, record.error?.code ?? String(record.status)));
  }

  /** A page read as usual also hands its bytes to the archive, when there is one (no cost otherwise). */
  private requestWithCapture(req: ReturnType<typeof requestFor>): ReturnType<typeof requestFor> & Pick<FetchRequest, 'capture'> {
    return this.opts.archive !== undefined && req.read === 'html' ? { ...req, capture: true } : req;
  }

  /** Hands a fetched page to --save-dir / --warc before its record is written; false when that failed and the crawl stops. */
  private async archive(record: PageRecord, res: FetchResult): Promise<boolean> {
    try {
      Object.assign(record, await this.opts.archive!.keep(record, res));
      return true;
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  /**
   * The SSRF guard refused the URL's address: a skip, not a fetch (it does not
   * count towards maxPages) and not the host's failure. A seed's redirect
   * target or any redirect target gets its record even without emitSkipped.
   */
  private refused(lease: Lease, err: AddressRefusedError): void {
    const { entry } = lease;
    this.settle(this.store.addToCounter('started', -1));
    this.settle(this.store.complete(lease, 'private-address'));
    this.skip(entry.url, 'private-address', entry.depth, entry.parent, err.detail, entry.hops > 0);
  }

  /** A link check's HEAD was refused: back to the head of its host's queue, to be checked with GET (paying the host's gap again). */
  private checkWithGet(lease: Lease): boolean {
    if (this.stopping) return false;
    this.settle(this.store.addToCounter('started', -1)); // one link, one count
    this.settle(this.store.release(lease, asGet(lease.entry)), () => this.scheduler.wake(lease.key));
    return true;
  }

  /** Puts a throttled URL back at the head of its host's queue, unless its throttle budget is spent. */
  private requeueThrottled(lease: Lease, policy: HostPolicy, extra: EntryExtra): boolean {
    const throttles = (lease.entry.throttles ?? 0) + 1;
    if (this.stopping || throttles > policy.throttleRetries) return false;
    this.settle(this.store.addToCounter('started', -1)); // it will be taken again
    this.settle(this.store.release(lease, { ...lease.entry, throttles, extra }), () => this.scheduler.wake(lease.key));
    return true;
  }

  /** A transient failure: the URL goes back to the store (with `extra`, its attempt history), due after a backoff. False when its retries are spent. */
  private retryLater(lease: Lease, policy: HostPolicy, extra: EntryExtra): boolean {
    const { entry } = lease;
    if (entry.attempt >= policy.retries) return false;
    const attempt = entry.attempt + 1;
    const dueAt = this.clock.now() + backoffDelay(attempt, { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: this.opts.random ?? Math.random });
    this.settle(this.store.addToCounter('started', -1));
    this.settle(this.store.release(lease, { ...entry, attempt, extra }, dueAt), () => this.dueTimer.armAt(this.store.nextDueAt()));
    return true;
  }

  /** The host was just given up: skip everything queued or waiting for it. */
  private giveUpHost(key: string, policy: HostPolicy): void {
    const held = this.held.get(key);
    if (held) {
      this.held.delete(key);
      this.settle(this.store.complete(held, 'host-failed'));
      this.skip(held.entry.url, 'host-failed', held.entry.depth, held.entry.parent);
    }
    this.skipLeft('host-failed', key, (left) => {
      const count = left + (held ? 1 : 0);
      const message = `gave up after ${policy.hostFailureGiveUp} failures in a row; ${count} queued URL(s) skipped`;
      addNote(this.stats, message, key);
      this.opts.log?.warn(`${key}: ${message}`);
    });
  }

  /**
   * Empties the store (or one host key's part of it), each URL left counting
   * as skipped for `reason`. Per-URL records are built only when they will be
   * written (emitSkipped, or depth 0); the rest is counted in bulk, so this
   * costs the same whatever the size of the queue. `then` gets the number skipped.
   */
  private skipLeft(reason: SkipReason, key: string | undefined, then: (left: number) => void): void {
    if (this.settings.emitSkipped) {
      this.settle(this.store.drain(key), (left) => {
        for (const e of left) this.skip(e.url, reason, e.depth, e.parent);
        then(left.length);
      });
      return;
    }
    this.settle(this.store.clear(key), (cleared: Cleared) => {
      let left = cleared.depthZero.length;
      for (const e of cleared.depthZero) this.skip(e.url, reason, e.depth, e.parent);
      for (const [host, n] of cleared.counts) {
        this.skipped += n;
        left += n;
        hostStats(this.stats, host).skipped += n;
        this.stats.skippedByReason.set(reason, (this.stats.skippedByReason.get(reason) ?? 0) + n);
      }
      then(left);
    });
  }

  /**
   * Builds the record and feeds the URLs it leads to back into the store.
   * Never throws: a failure in link handling is ours, not the page's, so the
   * record stays what was fetched and the failure is reported as a note.
   */
  private follow(entry: FrontierEntry, res: FetchResult, base: PageRecord, sitemap?: SitemapOutcome | Error): PageRecord {
    const chain = this.redirects.before(entry);
    let out: ReturnType<typeof pageOutcome>;
    try {
      if (sitemap instanceof Error) throw sitemap;
      for (const message of sitemap?.notes ?? []) this.sitemaps.note(message);
      out = sitemap ?? pageOutcome(entry, res, base, {
        maxRedirects: this.settings.maxRedirects,
        respectNofollow: this.settings.respectNofollow,
        emitLinks: this.settings.emitLinks,
        userAgentToken: this.token,
        chain,
        content: this.settings.content,
      });
    } catch (err) {
      this.linksFailed(entry.url, err);
      return { ...base, status: res.status, contentType: res.contentType, bytes: res.bytes, elapsedMs: Math.round(res.elapsedMs) };
    }
    if (!this.stopping) {
      try {
        // Before the links: one of them is often the canonical itself.
        if (this.settings.followCanonical) this.claimCanonical(entry.url, out.record.canonical);
        for (const next of out.next) {
          if (this.enqueue(next.url, next.depth, entry.url, next.hops, next.named, next.extra) && next.hops > 0) this.redirects.queued(next.url, chain, entry.url);
        }
        // Not marked seen: a followed link to the same URL elsewhere still counts.
        for (const link of out.nofollow) {
          if (!this.store.isSeen(link)) this.skip(link, 'nofollow', entry.depth + 1, entry.url);
        }
      } catch (err) {
        this.linksFailed(entry.url, err);
      }
    }
    return out.record;
  }

  /**
   * `--follow-canonical`: the page's content stands for its canonical URL,
   * so that URL is marked seen and never queued (one already queued or
   * fetched stays as it is). Only a canonical the crawl's scope (and
   * filters) would follow counts.
   */
  private claimCanonical(url: string, canonical: string | undefined): void {
    if (canonical === undefined || canonical === url || this.store.isSeen(canonical) || !this.inScope(canonical).ok) return;
    this.settle(this.add(canonical, '', null));
  }

  /** Link handling threw (a bug, or a filter V8 cannot run): said once per kind of failure, never a fetch error. */
  private linksFailed(url: string, err: unknown): void {
    let why = errorMessage(err).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, 'invalid regular expression: ');
    if (why.length > 200) why = `${why.slice(0, 200)}…`;
    const note = `links not followed (our failure, not the site's): ${why}`;
    if (this.stats.notes.includes(note)) return;
    addNote(this.stats, note);
    this.opts.log?.warn(redactCredentials(`${note}; first at ${url}`));
  }

  private emitPage(record: PageRecord, key: string): void {
    // As the summary counts it (countPage): a request the crawl aborted itself is neither a page fetched nor an error.
    if (record.error?.code === 'ABORTED') this.aborted++;
    else {
      this.fetched++;
      if (record.error) this.errors++;
    }
    countPage(this.stats, record, key);
    this.write(record);
  }

  private skip(url: string, reason: SkipReason, depth: number, parent: string | null, detail?: string, named = false): void {
    this.skipped++;
    if (this.redirects.size > 0) this.redirects.done(url);
    countSkip(this.stats, reason, this.hostKey(url));
    // A URL the user named (a seed, or where it redirects) is never dropped silently.
    if (!this.settings.emitSkipped && depth > 0 && !named) return;
    const record: SkipRecord = { type: 'skipped', url, reason, depth, parent };
    if (detail) record.detail = detail;
    this.write(record);
  }

  /** Writes in order; the chain is awaited by jobs, which is how a slow reader slows the crawl. */
  private write(record: OutputRecord): void {
    const sink = this.opts.sink;
    // Credentials in URLs (http://user:secret@host/) never leave the crawler.
    const out = redactRecord(record);
    this.writes = this.writes.then(() => (sink.broken ? undefined : sink.write(out)));
  }

  /** Termination is a predicate: nothing running, waiting, loading or still to fetch. */
  private checkDone(): void {
    if (this.finished || !this.seeded) return;
    if (this.scheduler.inFlight > 0 || this.scheduler.pendingJobs > 0 || this.robots.pending > 0) return;
    if (this.pendingOps > 0 || this.claiming.size > 0 || this.slow.count > 0) return;
    if (!this.stopping && !this.capReached()) {
      if (this.held.size > 0) return;
      if (this.store.survey) {
        // Shared: this worker's view is not the crawl's. Done only when the store says so for everyone.
        if (!this.sharedEnd) return this.survey();
      } else {
        const c = this.store.counts();
        if (c.queued > 0 || c.delayed > 0) return;
      }
    }
    this.finished = true;
    this.scheduler.stop();
    this.dueTimer.cancel();
    this.slow.cancel();
    this.cancelSurvey();
    if (this.store.durable && (this.stopping || this.capReached())) {
      // A durable crawl goes on later (after a stop, or with a higher --max-pages):
      // what is left stays in the store, held leases go back.
      for (const lease of this.held.values()) this.settle(this.store.release(lease, lease.entry));
      this.held.clear();
      for (const [key, row] of this.stats.perHost) row.rate = this.feedback.describe(key, this.settings.policyFor(key));
      finishStats(this.stats, this.clock, { interrupted: this.stopping });
      this.resolveDone();
      return;
    }
    if (this.sharedEnd) {
      // Nothing left anywhere, and the store marked the crawl finished: no queue to clear (another worker's would be lost).
      for (const [key, row] of this.stats.perHost) row.rate = this.feedback.describe(key, this.settings.policyFor(key));
      finishStats(this.stats, this.clock, { interrupted: false });
      this.resolveDone();
      return;
    }
    const reason: SkipReason = this.stopping ? 'interrupted' : 'max-pages';
    for (const lease of this.held.values()) {
      this.settle(this.store.complete(lease, reason));
      this.skip(lease.entry.url, reason, lease.entry.depth, lease.entry.parent);
    }
    this.held.clear();
    this.skipLeft(reason, undefined, () => {
      for (const [key, row] of this.stats.perHost) row.rate = this.feedback.describe(key, this.settings.policyFor(key));
      finishStats(this.stats, this.clock, { interrupted: this.stopping });
      if (this.stopping) this.resolveDone();
      else this.settle(this.store.finish(), () => this.resolveDone());
    });
  }

  /**
   * Surveys a shared store: wakes the hosts with work (other workers' too),
   * re-arms the due timer on the crawl's earliest retry, and when nothing is
   * queued, delayed or leased anywhere, asks the store to finish the crawl
   * (it refuses if another worker added work meanwhile: then the survey goes on).
   */
  private survey(): void {
    if (this.surveying || this.finished || !this.store.survey) return;
    this.surveying = true;
    this.settle(this.store.survey(), (s) => {
      this.surveying = false;
      for (const [key] of s.hosts) this.scheduler.wake(key);
      this.dueTimer.armAt(this.store.nextDueAt());
      if (this.stopping || this.capReached() || s.queued + s.delayed + s.leased > 0 || !this.locallyIdle()) return;
      this.pendingOps++; // the crawl cannot end under the finish call
      Promise.resolve(this.store.finish()).then(
        (done) => {
          this.pendingOps--;
          if (done !== false) this.sharedEnd = true;
          this.checkDone();
        },
        (err: unknown) => {
          this.pendingOps--;
          this.fail(err);
        },
      );
    });
  }

  /** Nothing of this worker's own is running, waiting or held. */
  private locallyIdle(): boolean {
    return this.scheduler.inFlight === 0 && this.scheduler.pendingJobs === 0 && this.robots.pending === 0 && this.claiming.size === 0 && this.slow.count === 0 && this.held.size === 0;
  }

  private armSurvey(sinceLastMs = 0): void {
    this.surveyTimer = this.clock.setTimer(() => {
      this.surveyTimer = null;
      if (this.finished) return;
      const elapsed = sinceLastMs + SURVEY_IDLE_INTERVAL_MS;
      if (elapsed < SURVEY_INTERVAL_MS && !this.locallyIdle()) return this.armSurvey(elapsed);
      this.survey();
      this.armSurvey();
    }, SURVEY_IDLE_INTERVAL_MS);
  }

  private cancelSurvey(): void {
    if (this.surveyTimer) this.clock.clearTimer(this.surveyTimer);
    this.surveyTimer = null;
  }

  /** A store call failed: nothing can be trusted any more; stop and report it (also when it failed while finishing). */
  private fail(err: unknown): void {
    if (this.doneSettled) return;
    this.finished = true;
    this.scheduler.stop();
    this.dueTimer.cancel();
    this.slow.cancel();
    this.cancelSurvey();
    this.abortController.abort();
    this.rejectDone(err);
  }
}

function errorCode(err: unknown): ErrorCode {
  return err instanceof FetchError ? err.code : 'FETCH_FAILED';
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
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
