/**
 * One page's exchange with its server: the request for a leased URL, what
 * the answer means as server feedback classifies it (politeness/), and where
 * the URL goes next — its record written and the lease completed; back to
 * the head of its host's queue (throttled, or a link check's HEAD refused);
 * back to the store due after a backoff (a transient failure); or skipped
 * (the SSRF guard refused its address). The lease is completed only after
 * its record is written, so a store that outlives the process never loses a
 * URL whose record is not out.
 */
import type { PageArchive } from '../archive/page-archive.js';
import { AddressRefusedError } from '../fetch/address-guard.js';
import { errorCode } from '../fetch/fetch-error.js';
import type { FetchRequest, FetchResult } from '../fetch/fetcher.js';
import { backoffDelay } from '../politeness/backoff.js';
import { RETRYABLE_CODES, type HostFeedback } from '../politeness/server-feedback.js';
import type { JobContext } from '../politeness/host-state.js';
import type { EntryExtra, FrontierEntry, Lease } from '../store/crawl-store.js';
import type { PageHistory } from '../store/page-history.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { PageRecord } from '../types.js';
import { historyFields, throttleEvent, withAttempt } from './attempt-history.js';
import type { CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { DueTimer } from '../util/due-timer.js';
import { decorateRecord, entryKind, requestFor } from './entries/entry-kind.js';
import { asGet, wantsGet } from './entries/link-check.js';
import type { PageLinks } from './page-links.js';
import type { PageOutcome, RenderedDocument } from './page-outcome.js';
import type { LeaseFate } from './lease-fate.js';
import { loadUsageParser, needsUsageParser } from '../usage/page-usage.js';
import { countDenied, deniedPurpose, malformedUsageHeader, purposesFor, withhold } from '../usage/usage-denied.js';
import type { RedirectChains } from './redirect-chains.js';
import type { RequestSender } from './request-sender.js';
import { sitemapOutcome } from './entries/sitemaps.js';
import type { Renderer } from '../render/renderer.js';
import type { PageRevisits, PendingHistory } from './recrawl.js';
import { withFields } from '../util/with-fields.js';
import { priceField, type Money } from '../politeness/crawl-price.js';
import type { HandlerOutcome, PageHandlers } from '../handler/page-handlers.js';
import type { ItemRecord } from '../types.js';
import { addNote, countCharge } from '../output/summary.js';
import type { PagePrice, PriceAnswer } from './page-price.js';

export interface PageExchangeParts {
  records: CrawlRecords;
  sender: RequestSender;
  feedback: HostFeedback;
  links: PageLinks;
  redirects: RedirectChains;
  /** Wakes the crawl when the store's earliest delayed entry (a retry) is due. */
  dueTimer: DueTimer;
  /** Where fetched pages are kept (--save-dir, --warc); pages are captured only when set. */
  archive: PageArchive | undefined;
  random: (() => number) | undefined;
  /** Renders pages on hosts that render (render/renderer.ts). @default none */
  renderer?: Pick<Renderer, 'page'>;
  /** Validators, digests, change and history of pages (recrawl.ts). */
  revisits: PageRevisits;
  /** The user's page handler (handler/page-handlers.ts). @default none */
  handlers?: PageHandlers;
  /** Where the lease ends: completed, handed back (lease-fate.ts). */
  fate: LeaseFate;
  /** HTTP 402 pricing: offers, quotes, charges and the budget (page-price.ts). */
  price: PagePrice;
}

export class PageExchange {
  /** Host keys already warned about for a Content-Usage field that does not parse. */
  private readonly warnedUsage = new Set<string>();

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: PageExchangeParts,
  ) {}

  /**
   * Fetches a leased URL and acts on the outcome as server feedback classifies
   * it. The lease is completed only after its record is written, so a store
   * that outlives the process never loses a URL whose record is not out.
   */
  async fetchPage(lease: Lease, job: JobContext): Promise<void> {
    const { ctx, parts } = this;
    const { clock, settings, store } = ctx;
    const { entry, key } = lease;
    const { policy } = ctx.hosts.get(key);
    const fetchedAt = parts.records.isoTime(clock.wallNow());
    const t0 = clock.now();
    const base: PageRecord = {
      type: 'page',
      url: entry.url,
      host: key,
      status: null,
      depth: entry.depth,
      parent: entry.parent,
      contentType: null,
      bytes: 0,
      title: null,
      links: 0,
      fetchedAt,
      elapsedMs: 0,
    };
    decorateRecord(base, entry);
    const slowed = parts.feedback.slowedNow(key);
    if (slowed) base.slowed = slowed;
    if (entry.attempt > 0 || (entry.throttles ?? 0) > 0) {
      base.attempts = entry.attempt + (entry.throttles ?? 0) + 1;
      Object.assign(base, historyFields(entry.extra));
    }
    let record: PageRecord;
    let items: ItemRecord[] | undefined;
    let captured: FetchResult | undefined;
    let history: PendingHistory | undefined;
    let prior: PageHistory | undefined;
    let priced: PriceAnswer | undefined;
    try {
      // What the request offers to pay, reserved against the budget first (page-price.ts); a quote it cannot pay: skipped.
      const offered = parts.price.offer(lease);
      const offer = offered instanceof Promise ? await offered : offered;
      if (offer.skip) return this.unpaid(lease, offer.skip);
      const asked = parts.revisits.prior(entry);
      prior = asked instanceof Promise ? await asked : asked;
      const req = parts.revisits.request(this.requestWithCapture(requestFor(entry)), prior);
      const { res, startedAt, sinceLastMs } = await parts.sender.send(
        entry.url,
        key,
        job,
        offer.headers === undefined ? req : withFields(req, { headers: { ...req.headers, ...offer.headers } }),
        lease,
      );
      if (res.capture) captured = res;
      const action = parts.feedback.answered(key, res, startedAt, !ctx.stopping, sinceLastMs);
      priced = parts.price.answered(lease, res);
      // A 402 quoting a price within --max-price: asked again, paying it (never retried blindly otherwise).
      if (priced?.payAgain && action === 'final' && !ctx.stopping) return this.payAgain(lease, priced);
      if (action === 'final' && this.leftForResume(lease, policy, policy.retryStatuses.includes(res.status))) return;
      if (wantsGet(entry, res) && this.checkWithGet(lease)) return;
      // The pause HostFeedback just set, for the record (attempt-history.ts).
      const throttle = action === 'throttle' ? throttleEvent(res, clock.now(), clock.wallNow(), ctx.hosts.get(key).limiter.pausedUntil) : undefined;
      if (action === 'throttle' && this.requeueThrottled(lease, policy, withAttempt(entry.extra, startedAt, throttle))) return;
      if (action === 'retry' && this.retryLater(lease, policy, withAttempt(entry.extra, startedAt))) return;
      if (action === 'give-up') ctx.signals.hostGivenUp(key, policy);
      base.startedAt = parts.records.isoTime(Math.round(startedAt));
      const sitemap =
        entryKind(entry) !== 'sitemap'
          ? undefined
          : await sitemapOutcome(entry, res, base, {
              maxRedirects: settings.maxRedirects,
              emitLinks: settings.emitLinks,
              chain: parts.redirects.before(entry),
            }).catch(asError);
      // Handing the job's slot back is done once, whichever step (rendering, the handler) does it first.
      const handing = this.handingOffShared(job, lease);
      // On a host that renders: the rendered DOM stands in for the body (the job hands its slot back first).
      const rendered =
        parts.renderer && action !== 'throttle' && res.status !== 304 && entryKind(entry) === 'page'
          ? await parts.renderer.page(entry, res, key, handing)
          : null;
      if (rendered) Object.assign(base, rendered.fields);
      const body = rendered?.res ?? res;
      // A long page is parsed in slices first, so one big page never holds up progress or Ctrl-C.
      const parsed = sitemap === undefined && parts.links.parsesLong(body) ? await parts.links.parseAhead(entry, body) : undefined;
      // What the page states it may be used for is read with an RFC 9651 parser, loaded at the first page that needs it.
      if (needsUsageParser(body.headers)) await loadUsageParser();
      let next: string[] | undefined;
      const out = parts.links.outcome(entry, body, base, sitemap, parsed, (urls) => (next = urls));
      record = out.record;
      parts.price.decorate(record, priced);
      if (record.usageSources !== undefined) this.warnMalformedUsage(key, record);
      // A use the crawl is declared for that the page denies: its content goes to no output (usage/usage-denied.ts).
      const denied = deniedPurpose(purposesFor(settings, policy), record.usage);
      if (denied !== undefined) {
        withhold(record, denied);
        captured = undefined;
        countDenied(ctx.stats, denied, key);
      }
      // A page that asks not to be archived stays out of --save-dir and --warc, unless --archive-noarchive.
      if (captured !== undefined && !settings.archiveNoarchive && record.robotsDirectives?.includes('noarchive')) {
        captured = undefined;
        record.notArchived = 'noarchive';
        addNote(ctx.stats, 'pages that say noarchive (X-Robots-Tag, <meta name="robots">) were kept out of the archive; --archive-noarchive keeps them');
      }
      // The user's handler, between the links and the record; its items are written just before the record.
      let handled =
        parts.handlers && action !== 'throttle' && denied === undefined && handles(entry, body) ? this.handle(entry, body, out, handing) : undefined;
      if (handled instanceof Promise) handled = await handled;
      parts.links.enqueueNext(entry, out, handled?.follow ?? true);
      if (handled) {
        parts.links.enqueueFrom(entry, handled.enqueued);
        items = this.itemRecords(entry, record, handled);
      }
      if (res.status === 304) await parts.revisits.notModified(entry, record);
      if (action !== 'throttle') {
        const described = parts.revisits.describe(entry, record, res, prior, next);
        history = described instanceof Promise ? await described : described;
      }
      if (rendered?.error) record.error = rendered.error;
      if (handled?.error) {
        record.error = { code: handled.error.code, message: handled.error.message };
        ctx.stats.handler!.failed++;
      }
      if (action === 'throttle') {
        record.throttles = historyFields(entry.extra, throttle).throttles;
        record.error = { code: 'THROTTLED', message: `still answered ${res.status} after ${policy.throttleRetries} throttle retries` };
      }
    } catch (err) {
      if (err instanceof AddressRefusedError) return this.refused(lease, err);
      const code = errorCode(err);
      if (wantsGet(entry, { code }) && this.checkWithGet(lease)) return;
      // Our own shortage (EMFILE, …): try again later, without counting it against the host.
      if (code === 'LOCAL_RESOURCE' && !ctx.stopping && this.retryLater(lease, policy, withAttempt(entry.extra, t0))) return;
      if (code === 'ABORTED' && ctx.stopping && store.durable) return parts.fate.handBack(lease); // cut short by the stop
      if (this.leftForResume(lease, policy, RETRYABLE_CODES.has(code))) return;
      const action = parts.feedback.errored(key, code, !ctx.stopping);
      if (action === 'retry' && this.retryLater(lease, policy, withAttempt(entry.extra, t0))) return;
      if (action === 'give-up') ctx.signals.hostGivenUp(key, policy);
      record = withFields(base, { elapsedMs: Math.round(clock.now() - t0), error: { code, message: errorMessage(err) } });
    }
    if (captured !== undefined && !(await this.archive(record, captured))) return;
    if (items) parts.records.items(items);
    parts.records.page(record, key);
    if (entry.hops > 0) parts.redirects.done(entry.url);
    // A durable store completes the URL only once its record is confirmed: a record lost to a full disk is fetched again on resume.
    if (!(await parts.fate.recordOut(lease))) return;
    parts.revisits.keep(history);
    parts.fate.complete(lease, record.error?.code ?? String(record.status), priced?.charged);
    if (priced?.charged) countCharge(ctx.stats, key, priced.charged);
    parts.revisits.schedule(entry, history, prior);
  }

  /**
   * Runs the page's handler (handler/page-handlers.ts `run`): a handler
   * that returns a promise gets the job's slot handed back while it waits,
   * so other pages of the host go on while user code runs.
   */
  private handle(entry: FrontierEntry, res: FetchResult & RenderedDocument, out: PageOutcome, job: JobContext): HandlerOutcome | Promise<HandlerOutcome> {
    const { links } = this.parts;
    return this.parts.handlers!.run(
      {
        url: entry.url,
        finalUrl: res.documentUrl ?? entry.url,
        status: res.status,
        headers: res.headers,
        body: res.body,
        links: () => links.inScope(out),
        record: out.record,
        depth: entry.depth,
        extra: entry.extra,
      },
      () => job.handOff?.(),
    );
  }

  /** A handler's items as records: each names its page and the fetch it came from. */
  private itemRecords(entry: FrontierEntry, record: PageRecord, handled: HandlerOutcome): ItemRecord[] {
    const label = typeof entry.extra?.label === 'string' ? entry.extra.label : null;
    return handled.items.map((data) => ({ type: 'item', url: entry.url, label, fetchedAt: record.fetchedAt, data }));
  }

  /**
   * The job as the renderer gets it: with a shared store, handing the job's
   * slot back also gives the lease's in-flight count back to every worker,
   * since the browser's requests to that host take starts of their own.
   */
  private handingOffShared(job: JobContext, lease: Lease): JobContext {
    const { shared } = this.ctx.store;
    if (!shared || !job.handOff) return job;
    let handed = false;
    return {
      ...job,
      handOff: () => {
        if (handed) return;
        handed = true;
        job.handOff!();
        this.ctx.calls.settle(shared.handOff(lease));
      },
    };
  }

  /**
   * Stopping, with a store that outlives the process: a failure the crawl
   * would have retried (a reset connection, a 503) is handed back for the
   * resumed crawl, as an aborted fetch is, instead of being recorded as final
   * and completed, which would leave the page failed for good.
   */
  private leftForResume(lease: Lease, policy: HostPolicy, retryable: boolean): boolean {
    if (!this.ctx.stopping || !this.ctx.store.durable || !retryable || lease.entry.attempt >= policy.retries) return false;
    this.parts.fate.handBack(lease);
    return true;
  }

  /** A page read as usual also hands its bytes to the archive, when there is one (no cost otherwise). */
  private requestWithCapture(req: ReturnType<typeof requestFor>): ReturnType<typeof requestFor> & Pick<FetchRequest, 'capture'> {
    return this.parts.archive !== undefined && req.read === 'html' ? withFields(req, { capture: true }) : req;
  }

  /** Hands a fetched page to --save-dir / --warc before its record is written; false when that failed and the crawl stops. */
  /** A Content-Usage field that does not parse states nothing: said once per host, never the page's error. */
  private warnMalformedUsage(key: string, record: PageRecord): void {
    if (this.warnedUsage.has(key)) return;
    const value = malformedUsageHeader(record);
    if (value === undefined) return;
    this.warnedUsage.add(key);
    const message = `Content-Usage ${JSON.stringify(value)} on ${record.url} does not parse (RFC 9651 Dictionary): read as stating nothing`;
    addNote(this.ctx.stats, message, key);
    this.ctx.log?.warn(`${key}: ${message}`);
  }

  private async archive(record: PageRecord, res: FetchResult): Promise<boolean> {
    try {
      Object.assign(record, await this.parts.archive!.keep(record, res));
      return true;
    } catch (err) {
      // Something of ours failed: the crawl stops with it.
      this.ctx.signals.fail(err);
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
    const wrote = this.parts.records.skip(entry.url, 'private-address', entry.depth, entry.parent, err.detail, entry.hops > 0);
    this.parts.fate.completeAfterRecord(lease, 'private-address', wrote, { started: true });
  }

  /** A quoted page the budget cannot pay: a `price` skip, its start given back (the 402 that quoted it was counted). */
  private unpaid(lease: Lease, skip: { price: Money; detail: string }): void {
    const { entry } = lease;
    const wrote = this.parts.records.skip(entry.url, 'price', entry.depth, entry.parent, skip.detail, entry.hops > 0, undefined, priceField(skip.price));
    this.parts.fate.completeAfterRecord(lease, 'price', wrote, { started: true });
  }

  /** Back to the head of its host's queue, to be asked again paying the quoted price (crawler-exact-price). */
  private payAgain(lease: Lease, priced: PriceAnswer): void {
    const entry = this.parts.price.payingEntry(lease.entry, priced.price!);
    this.parts.fate.handBack(lease, { entry, then: () => this.ctx.signals.wake(lease.key) });
  }

  /** A link check's HEAD was refused: back to the head of its host's queue, to be checked with GET (paying the host's gap again). */
  private checkWithGet(lease: Lease): boolean {
    if (this.ctx.stopping) return false;
    this.parts.fate.handBack(lease, { entry: asGet(lease.entry), then: () => this.ctx.signals.wake(lease.key) }); // one link, one count
    return true;
  }

  /** Puts a throttled URL back at the head of its host's queue, unless its throttle budget is spent. */
  private requeueThrottled(lease: Lease, policy: HostPolicy, extra: EntryExtra): boolean {
    const throttles = (lease.entry.throttles ?? 0) + 1;
    // Stopping: recorded as throttled, unless a store outlives the process (the resumed crawl asks again, after the pause it keeps).
    if (throttles > policy.throttleRetries || (this.ctx.stopping && !this.ctx.store.durable)) return false;
    this.parts.fate.handBack(lease, { entry: { ...lease.entry, throttles, extra }, then: () => this.ctx.signals.wake(lease.key) }); // it will be taken again
    return true;
  }

  /** A transient failure: the URL goes back to the store (with `extra`, its attempt history), due after a backoff. False when its retries are spent. */
  private retryLater(lease: Lease, policy: HostPolicy, extra: EntryExtra): boolean {
    const { ctx, parts } = this;
    const { entry } = lease;
    if (entry.attempt >= policy.retries) return false;
    const attempt = entry.attempt + 1;
    const dueAt = ctx.clock.now() + backoffDelay(attempt, { baseMs: policy.backoffBaseMs, capMs: policy.backoffCapMs, random: parts.random ?? Math.random });
    parts.fate.handBack(lease, { entry: { ...entry, attempt, extra }, dueAt, then: () => parts.dueTimer.armAt(ctx.store.nextDueAt()) });
    return true;
  }
}

/** Whether a page goes to the handler: a page (not a sitemap or a link check) answered 2xx. */
function handles(entry: FrontierEntry, res: FetchResult): boolean {
  return entryKind(entry) === 'page' && res.status >= 200 && res.status < 300;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
