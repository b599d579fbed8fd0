/**
 * The crawl loop's façade: builds one crawl's parts, seeds it, and runs it
 * until its end (`run`, `stop`, `abort`, `progress`, `stats`). The loop
 * decides WHAT to fetch and turns responses into records and new store
 * entries; WHEN a request starts is the scheduler's business (scheduler.ts),
 * and every request, robots.txt and redirect hops included, goes through it.
 * The crawl's state lives in a CrawlStore (store/crawl-store.ts): URLs are
 * claimed from it as leases and completed once their record is written;
 * per-host politeness lives in one HostTable shared with the scheduler,
 * server feedback and the robots gate.
 *
 * The parts, each taking the shared CrawlContext (crawl-context.ts: also the
 * store calls, which may answer with a promise) and its own collaborators by
 * name:
 * - frontier-intake.ts: what joins the store (scope, admission.ts, dedupe);
 * - lease-source.ts: the scheduler's source, leases claimed and held;
 * - page-exchange.ts: one page's request and where its URL goes next;
 *   page-links.ts: its record and the URLs it leads to;
 * - robots-hop.ts: robots.txt requests, paced like pages;
 * - request-sender.ts: the one request, the SSRF guard, send times;
 * - crawl-records.ts: records written in order, and the counts;
 * - crawl-end.ts: the end as a predicate, skipping what is left, failure;
 *   shared-survey.ts: the whole crawl's state when the store is shared;
 * - progress-snapshot.ts: what the progress line shows;
 * - render/renderer.ts (only when some host renders): pages rendered in a
 *   browser, each browser request a job of its own host;
 * - handler/page-handlers.ts (only with a page handler): the user's code
 *   between a page's links and its record.
 *
 * How they are wired: the constructor builds each part from parts built
 * before it, never from a field set later. The links that go back are
 * signals (crawl-signals.ts): a host has work (`wake`, to the scheduler),
 * something settled (`settled`, the end re-checks), something failed
 * (`fail`), and the few sent by one part (the scheduler's `work` from the
 * lease source, `resolved`, `due`, `hostGivenUp`). The CrawlSignals object
 * is made first and shared on the context; the constructor's last step
 * connects every signal to its target, in one place (`signals.connect`).
 */
import type { Clock } from '../clock.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { PageArchive } from '../archive/page-archive.js';
import { HostFeedback } from '../politeness/server-feedback.js';
import { HostTable } from '../politeness/host-state.js';
import { redactCredentials } from '../fetch/redact.js';
import { SlowRequests } from '../schedule/slow-requests.js';
import { RobotsCache } from '../robots/cache.js';
import { RobotsGate } from '../robots/gate.js';
import { TDMREP_PURPOSES } from '../usage/tdmrep.js';
import { purposesFor } from '../usage/usage-denied.js';
import { productToken } from '../robots/rules.js';
import { Scheduler } from '../schedule/scheduler.js';
import { HostAddresses } from '../schedule/host-addresses.js';
import { IpLimits } from '../politeness/ip-limits.js';
import { DueTimer } from '../util/due-timer.js';
import type { CrawlSettings, HostPolicy } from '../config/settings-types.js';
import type { RecordSink } from '../output/sink.js';
import type { ProgressSnapshot } from '../output/progress.js';
import { addNote, countThrottle, createStats, finishStats, formatDuration, type CrawlStats } from '../output/summary.js';
import { MemoryStore } from '../store/memory-store.js';
import type { CrawlStore } from '../store/crawl-store.js';
import { settingsFingerprint } from '../config/fingerprint.js';
import { Admission } from './admission.js';
import { RedirectChains } from './redirect-chains.js';
import { SitemapSeeds } from './entries/sitemaps.js';
import { hostKey, StoreCalls, type CrawlContext, type CrawlLog } from './crawl-context.js';
import { CrawlSignals } from './crawl-signals.js';
import { CrawlRecords } from './crawl-records.js';
import { FrontierIntake } from './frontier-intake.js';
import { RequestSender } from './request-sender.js';
import { fetchRobotsHop, type RobotsHopParts } from './robots-hop.js';
import { PageLinks } from './page-links.js';
import { PageExchange } from './page-exchange.js';
import { LeaseSource } from './lease-source.js';
import { LeaseFate } from './lease-fate.js';
import { PagePrice } from './page-price.js';
import { SharedSurvey } from './shared-survey.js';
import { CrawlEnd } from './crawl-end.js';
import { hostCounts, progressSnapshot, type HostCounts, type ProgressParts } from './progress-snapshot.js';
import type { Renderer } from '../render/renderer.js';
import type { RenderTotals } from '../output/metrics.js';
import type { SubrequestEvent } from '../render/page-requests.js';
import { PageRevisits } from './recrawl.js';
import { PageHandlers, type HandlerSettings } from '../handler/page-handlers.js';
import type { HandlerError } from '../handler/handler-error.js';
import type { SinceEntry } from '../recrawl/recrawl-since.js';
import type { RevisitBounds } from '../recrawl/recrawl-change.js';

export { ROBOTS_TIMEOUT_MS } from './robots-hop.js';
export { isoTimeFormatter } from '../util/iso-time.js';

export interface CrawlerOptions {
  settings: CrawlSettings;
  /** Canonical seed URLs. */
  seeds: string[];
  clock: Clock;
  fetcher: Fetcher;
  sink: RecordSink;
  log?: CrawlLog;
  /** Where the crawl's state lives. @default a new MemoryStore */
  store?: CrawlStore;
  random?: () => number;
  /** A page request running this long gives its global slot back (slow-requests.ts). @default SLOW_AFTER_MS (10 s) */
  slowAfterMs?: number;
  /** Write a `type: "robots"` record per robots.txt request (robots-hop.ts). @default false */
  robotsRecords?: boolean;
  /** Where fetched pages are kept (--save-dir, --warc); pages are captured only when set. @default none */
  archive?: PageArchive;
  /** Told every seed a resumed crawl holds (its store's, not only this run's), as scope and the address guard are: credential headers go to their hosts. @default none */
  seedsKnown?(seeds: string[]): void;
  /**
   * `--recrawl`: a store whose crawl finished (or whose first pass stopped)
   * begins a new pass over every page it knows, with conditional requests
   * (crawl/recrawl.ts); an unfinished re-crawl pass is resumed. @default false
   */
  recrawl?: boolean;
  /** `--since`: what a previous run's records said of each page (recrawl-since.ts); compared with as a re-crawl, every page requested again. @default none */
  since?: SinceEntry[];
  /**
   * `--revisit`: the crawl never ends by itself; each page is asked again
   * (conditionally) after an interval that adapts to how often it changes,
   * within these bounds (recrawl-change.ts `revisitInterval`). Needs a store
   * with a revisit schedule (`--state`). @default none
   */
  revisit?: RevisitBounds;
  /**
   * Rendering, when some host renders (settings.render.enabled): the
   * Renderer class and the browser it starts. The caller loads the class
   * (api/crawl-session.ts, loadRendering), so a crawl that renders nothing never loads
   * render/. @default none: no page is rendered
   */
  render?: { Renderer: typeof Renderer; browserPath: string };
  /** Each request a rendering browser makes, and what became of it. @default none */
  onSubrequest?: (page: string, event: SubrequestEvent) => void;
  /** The user's page handler (handler/page-handlers.ts): called once per page answered 2xx. @default none */
  handler?: HandlerSettings;
  /** Where a handler's stack goes when it throws (`-v`). @default nowhere */
  debug?: (message: string) => void;
}

export class Crawler {
  readonly stats: CrawlStats;
  private readonly ctx: CrawlContext;
  private readonly scheduler: Scheduler<HostPolicy>;
  private readonly robots: RobotsGate;
  /** The sitemap files that seed the crawl (named ones, and the seeds' robots.txt Sitemap: lines). */
  private readonly sitemaps: SitemapSeeds;
  /** Wakes the crawl when the store's earliest delayed entry (a retry) is due. */
  private readonly dueTimer: DueTimer;
  private readonly records: CrawlRecords;
  private readonly intake: FrontierIntake;
  private readonly links: PageLinks;
  private readonly sender: RequestSender;
  private readonly survey: SharedSurvey;
  private readonly end: CrawlEnd;
  private readonly progressParts: ProgressParts;
  private readonly abortController = new AbortController();
  /** Renders pages in a browser (render/renderer.ts), when some host renders. */
  private readonly renderer: Renderer | undefined;
  /** Validators, digests, change and history of pages (recrawl.ts). */
  private readonly revisits: PageRevisits;
  /** The user's page handler, when there is one. */
  private readonly handlers: PageHandlers | undefined;
  /** What stopped the crawl when handler errors stop it: `run()` rejects with it once every record is written. */
  private handlerFailure: HandlerError | undefined;

  constructor(private readonly opts: CrawlerOptions) {
    const { settings, clock, random } = opts;
    const store: CrawlStore = opts.store ?? new MemoryStore();
    const stats = createStats(clock);
    this.stats = stats;
    if (settings.checkLinks) stats.linkCheck = { checked: 0, broken: 0, brokenPages: 0 };
    if (opts.handler) stats.handler = { items: 0, failed: 0 };
    // Made first, connected last (below): how a part reaches one built after it.
    const signals = new CrawlSignals();
    const calls = new StoreCalls(store, signals);
    const shared = store.shared;
    const hosts = new HostTable({
      policyFor: (key) => settings.policyFor(key),
      random,
      // Quiet hours are read on the wall clock; a shared crawl's on its store's, as its claims are.
      wallAt: shared ? (now) => shared.wallAt(now) : (now) => now + clock.wallNow() - clock.now(),
      persist: store.durable ? (key, saved) => calls.settle(store.saveHost(key, saved)) : undefined,
    });
    const ctx: CrawlContext = { settings, clock, store, hosts, stats, log: opts.log, calls, signals, stopping: false, finished: false };
    this.ctx = ctx;
    const redirects = new RedirectChains();
    const records = (this.records = new CrawlRecords(ctx, opts.sink, redirects));
    // Hosts are resolved before they are scheduled, so a slow lookup holds no slot and per-IP limits know the address.
    // A `domain` host key spans names that may resolve apart: those are resolved inside the connect, as before.
    const resolveHost = opts.fetcher.resolveHost?.bind(opts.fetcher);
    const addresses = resolveHost && settings.hostKey === 'host' ? new HostAddresses({ clock, lookup: resolveHost, onResolved: signals.resolved }) : undefined;
    const { perIp } = settings;
    if (perIp && !addresses)
      opts.log?.warn(
        `perIp limits not applied: ${settings.hostKey === 'host' ? 'this fetcher does not resolve hosts ahead' : 'a hostKey "domain" key spans names that may resolve apart'}`,
      );
    const scheduler = (this.scheduler = new Scheduler({
      clock,
      concurrency: settings.concurrency,
      hosts,
      source: signals.work,
      onSettle: signals.settled,
      random,
      addresses,
      ipLimits: perIp && addresses ? new IpLimits(perIp) : undefined,
      responded: (key, ttfbMs) => feedback.responded(key, ttfbMs),
    }));
    const intake = (this.intake = new FrontierIntake(ctx, { admission: new Admission(settings, () => store.queued()), records, redirects }, opts.seeds));
    const sitemaps = (this.sitemaps = new SitemapSeeds(
      settings,
      (sitemap) => intake.enqueue(sitemap.url, 0, sitemap.parent, 0, true, { kind: 'sitemap', level: 0 }),
      (message) => {
        addNote(stats, message);
        opts.log?.warn(redactCredentials(message));
      },
    ));
    const sender = (this.sender = new RequestSender(ctx, opts.fetcher, this.abortController.signal, opts.seeds));
    const feedback = new HostFeedback({
      clock,
      hosts,
      random,
      note: (key, message) => {
        addNote(stats, message, key);
        opts.log?.warn(`${key}: ${message}`);
      },
      throttled: (_key, announced) => countThrottle(stats, announced),
      latencyChanged: (key, message) => opts.log?.debug?.(`${key}: ${message}`),
    });
    const hops: RobotsHopParts = { scheduler, sender, feedback, records, recorded: opts.robotsRecords === true };
    const robots = (this.robots = new RobotsGate({
      cache: new RobotsCache({
        clock,
        userAgent: settings.userAgent,
        maxBytes: settings.robots.maxBytes,
        cacheTtlMs: settings.robots.cacheTtlMs,
        unavailableRetries: settings.robots.unavailableRetries,
        unavailableRetryDelayMs: settings.robots.unavailableRetryDelayMs,
        fetchOne: (url) => fetchRobotsHop(ctx, hops, url),
        // A shared store also lends its robots.txt lock: one worker fetches an origin's file, the others wait for its record.
        records: store.durable
          ? {
              getRobots: (o) => store.getRobots(o),
              putRobots: (o, r) => store.putRobots(o, r),
              ...(store.shared && { lockRobots: (o: string, ttlMs: number) => store.shared!.lockRobots(o, ttlMs) }),
            }
          : undefined,
        onRecordError: signals.fail,
        tdmrep: (origin) => purposesFor(settings, settings.policyFor(hostKey(ctx, origin))).some((p) => TDMREP_PURPOSES.includes(p)),
      }),
      clock,
      hosts,
      wake: signals.wake,
      settled: signals.settled,
      loaded: (origin, state) => sitemaps.robotsLoaded(origin, state),
      purposes: (key) => purposesFor(settings, hosts.get(key).policy),
      fetchDenied: settings.fetchDenied,
      note: (key, message) => addNote(stats, message, key),
      // Its messages may quote a robots.txt redirect target, credentials and all.
      warn: (message) => opts.log?.warn(redactCredentials(message)),
    }));
    const slow = new SlowRequests({
      clock,
      afterMs: opts.slowAfterMs,
      max: settings.concurrency,
      onEnd: (key) => {
        signals.wake(key);
        signals.settled();
      },
    });
    const dueTimer = (this.dueTimer = new DueTimer(clock, signals.due));
    const renderer = (this.renderer =
      settings.render?.enabled && opts.render !== undefined
        ? new opts.render.Renderer(
            ctx,
            { scheduler, sender, robots, feedback, archive: opts.archive },
            settings.render,
            opts.render.browserPath,
            opts.onSubrequest,
          )
        : undefined);
    const links = (this.links = new PageLinks(ctx, {
      intake,
      records,
      redirects,
      sitemaps,
      token: productToken(settings.userAgent),
      robotsUsage: (url) => robots.usage(url),
    }));
    const revisits = (this.revisits = new PageRevisits(ctx, intake, dueTimer));
    const log = opts.log;
    const handlers = (this.handlers =
      opts.handler === undefined
        ? undefined
        : new PageHandlers(opts.handler, {
            log: log && { info: (m) => log.info(m), warn: (m) => log.warn(m), debug: opts.debug },
            stop: (err) => {
              this.handlerFailure ??= err;
              this.stop();
            },
            settled: signals.settled,
          }));
    const fate = new LeaseFate(ctx, records);
    const exchange = new PageExchange(ctx, {
      fate,
      price: new PagePrice(ctx),
      records,
      sender,
      feedback,
      links,
      redirects,
      dueTimer,
      archive: opts.archive,
      random,
      renderer,
      revisits,
      handlers,
    });
    const leases = new LeaseSource(ctx, { records, fate, robots, slow, addresses, dueTimer, exchange, renderer, handlers });
    const survey = (this.survey = new SharedSurvey(ctx, { dueTimer, scheduler, robots, leases, slow }));
    const end = (this.end = new CrawlEnd(ctx, {
      records,
      fate,
      leases,
      scheduler,
      robots,
      slow,
      dueTimer,
      feedback,
      survey,
      abort: this.abortController,
      renderer,
      handlers,
    }));
    this.progressParts = { records, leases, scheduler, slow, feedback };
    // Every part exists: each signal reaches its one target from here on.
    signals.connect({
      wake: (key) => scheduler.wake(key),
      settled: () => end.check(),
      fail: (err) => end.fail(err),
      work: leases,
      resolved: (key) => scheduler.resolved(key),
      due: () => leases.promoteDue(),
      hostGivenUp: (key, policy) => end.giveUpHost(key, policy),
    });
  }

  /** Crawls until nothing is left (or `stop()`); resolves with the stats. */
  async run(): Promise<CrawlStats> {
    const { ctx, opts } = this;
    const { store } = ctx;
    const opened = { ...(await store.open({ seeds: opts.seeds, configFingerprint: settingsFingerprint(ctx.settings) })) };
    const history = store.history;
    // --recrawl: a finished crawl, or a first pass that stopped, begins a new pass; an unfinished re-crawl pass goes on.
    // A shared store's unfinished first pass may be other workers' live crawl: it is joined, never restarted.
    if (opts.recrawl && opened.resumed && history?.startPass && (opened.finished || (history.pass() === 1 && !store.shared))) {
      await history.startPass();
      opened.finished = false;
    }
    const schedule = opts.revisit === undefined ? undefined : history?.revisits;
    if (opts.revisit !== undefined && schedule === undefined) throw new Error('revisit needs a store that keeps a revisit schedule (--state or --redis)');
    // --revisit: every page done and waiting for nothing (a finished crawl's, a crawl's that ran without it) is due again.
    if (schedule && (await schedule.scheduleAll(opts.revisit!.minMs, ctx.clock.now() - ctx.clock.wallNow())) > 0) opened.finished = false;
    const pass = history?.pass() ?? 1;
    if (pass > 1) this.stats.pass = pass;
    this.revisits.configure({
      compare: pass > 1 || opts.since !== undefined || schedule !== undefined,
      keep: history !== undefined && (store.durable || opts.since !== undefined),
      revisit: opts.revisit,
    });
    if (opened.finished) {
      // Nothing to do: the store holds a crawl that already ended.
      this.stats.resumed = 'finished';
      ctx.finished = true;
      finishStats(this.stats, ctx.clock);
      return this.stats;
    }
    if (opened.resumed) {
      this.stats.resumed = 'resumed';
      // What the crawl had spent already (HTTP 402 pricing): the summary's ledger goes on from it.
      const spent = await store.spending();
      if (Object.keys(spent).length > 0) this.stats.spend = spent;
      // Scope follows every seed the crawl was ever given, not only this run's.
      this.intake.scopeTo([...new Set([...opened.meta.seeds, ...opts.seeds])]);
      this.sender.exemptSeedHosts([...opened.meta.seeds, ...opts.seeds]);
      opts.seedsKnown?.(opened.meta.seeds);
    }
    if (store.durable) {
      const unclean = opened.uncleanUntil === undefined ? undefined : { until: opened.uncleanUntil, spanMs: opened.uncleanSpanMs ?? 0 };
      const behind = opened.clockBehindMs ?? 0;
      if (behind > 0)
        ctx.log?.warn(
          `the clock reads ${formatDuration(behind)} earlier than when the crawl's state was last saved (set back since?): waits restored with the time they had left`,
        );
      for (const [key, saved] of await store.loadHosts()) ctx.hosts.restore(key, saved, unclean, behind);
    }
    // Before the first request: a browser that cannot start is one line, not a failed render on every page.
    await this.renderer?.start();
    // Before the first page: a page's record is built synchronously, with content/ already loaded if asked for.
    await this.links.loadContent();
    await this.handlers?.load();
    // On a resume, seeds seen before are dropped by dedupe; new ones join the crawl.
    for (const seed of opts.seeds) this.intake.enqueue(seed, 0, null, 0, true);
    // --since: every page the previous run recorded is compared with and requested again (scope and limits apply).
    if (opts.since !== undefined && history !== undefined) {
      for (const known of opts.since) await history.put(known.url, known.page, known.outlinks);
      for (const known of opts.since) this.intake.enqueue(known.url, known.depth, known.parent, 0);
    }
    // Sitemaps named by the user join now; a seed origin's robots.txt is loaded now for its Sitemap: lines (--sitemaps).
    for (const seed of this.sitemaps.start(opts.seeds)) this.robots.preload(seed, hostKey(ctx, seed));
    // Work the store held before this run (a resume) wakes its hosts.
    if (opened.resumed) for (const key of store.hostsWithWork()) this.scheduler.wake(key);
    this.end.markSeeded();
    this.dueTimer.armAt(store.nextDueAt());
    if (store.shared) this.survey.arm();
    this.end.check();
    try {
      await this.end.done;
    } finally {
      await this.renderer?.close();
    }
    await this.records.writes;
    // Stopped by a handler's error (handlerErrors: 'stop'): every record is out, and the run fails with it.
    if (this.handlerFailure) throw this.handlerFailure;
    return this.stats;
  }

  /**
   * Graceful stop: start nothing new; running requests finish (or are aborted
   * by `abort()`). May be called from anywhere, a store call included (the
   * state file's low-space warning comes from inside a commit): whether the
   * crawl has ended is asked once the current turn is over, when a page
   * claimed in it counts as running. Asked at once, inside that claim, it
   * ended the crawl before the page's job started; the job ran anyway, after
   * the sink had closed, and completed a URL whose record was dropped.
   */
  stop(): void {
    if (this.ctx.stopping) return;
    this.ctx.stopping = true;
    this.stats.interrupted = true;
    this.scheduler.stop();
    queueMicrotask(() => this.end.check());
  }

  /** Aborts requests still running after a stop. */
  abort(): void {
    this.abortController.abort();
  }

  progress(): ProgressSnapshot {
    return progressSnapshot(this.ctx, this.progressParts);
  }

  /** What rendering has done, for `--metrics`; undefined when no host renders. */
  renderTotals(): RenderTotals | undefined {
    return this.renderer?.totals();
  }

  /** Hosts by state, for metrics (a walk over every host: on a scrape, not per request). */
  hostCounts(): HostCounts {
    return hostCounts(this.ctx, this.progressParts);
  }
}
