/**
 * A page's request and record as a re-crawl sees them (the policy is
 * recrawl-change.ts; the history lives in the store, store/page-history.ts):
 *
 * - every page request asks the fetcher for the body's digest, and every
 *   page record carries the answer's `etag`, `lastModified` and `digest`,
 *   re-crawl or not (what a later `--since` reads);
 * - in a re-crawl (`compare`: a pass after the first, or `--since`), a page
 *   with history is requested with its validators, and its record says
 *   `change` and `previousFetchedAt`; a 304 costs no body and no parse, and
 *   the links kept from the last pass go to the frontier instead, so pages
 *   further down are still revisited;
 * - where history is kept (`keep`: a durable store, or `--since`), the
 *   page's new history is stored once its record is out, right before its
 *   lease is completed, in the same store transaction: a crash never leaves
 *   a page's history ahead of its record;
 * - `duplicateOf` names the first URL of this crawl (this process) whose
 *   body had the same digest;
 * - with `--revisit` (`revisit` bounds), every page record's page is due
 *   again after its adaptive interval (recrawl-change.ts): the interval is
 *   kept in its history, and once its lease is completed the page waits in
 *   the store as a delayed entry (`schedule`), so the crawl never runs out
 *   of work and a crash never loses a page's next visit.
 */
import type { FetchRequest, FetchResult } from '../fetch/fetcher.js';
import { resolveLink } from '../parse/url.js';
import type { FrontierEntry } from '../store/crawl-store.js';
import type { PageHistory, PageHistoryStore } from '../store/page-history.js';
import type { PageRecord } from '../types.js';
import type { CrawlContext } from './crawl-context.js';
import { entryKind } from './entries/entry-kind.js';
import type { DueTimer } from '../util/due-timer.js';
import type { FrontierIntake } from './frontier-intake.js';
import { changeOf, conditionalHeaders, nextHistory, revisitInterval, varyStar, type Answer, type RevisitBounds } from '../recrawl/recrawl-change.js';
import { withFields } from '../util/with-fields.js';

export interface RecrawlMode {
  /** Compare with the history: validators sent, `change` in records. */
  compare: boolean;
  /** Keep each page's history in the store. */
  keep: boolean;
  /** `--revisit`: pages are due again within these bounds. @default none */
  revisit?: RevisitBounds;
}

/** What `describe` hands to `keep` once the record is out. */
export interface PendingHistory {
  url: string;
  page: PageHistory;
  /** null: keep the last pass's (a 304). */
  outlinks: string[] | null;
}

/**
 * Digest characters that key the duplicate map: 60 bits, plenty to tell
 * pages apart. Under 13 on purpose: V8 keeps a slice of 13 characters or
 * more as a view that holds the whole digest string alive; 12 are copied.
 */
const DUPLICATE_KEY_CHARS = 12;

/**
 * Distinct bodies `duplicateOf` remembers. Without a bound the map grew with
 * every page (the soak benchmark: ~80 MB per 100,000 pages, most of a
 * long crawl's memory growth); at the bound, about 15 MB of live heap (a
 * 300,000-page crawl settled ~60 MB of RSS above one without the map: V8
 * keeps headroom). A duplicate of a body older than this many distinct ones
 * is not named.
 */
export const DUPLICATE_MEMORY = 100_000;

/**
 * The first URL seen with each body digest, for the most recent `max`
 * distinct digests (the oldest is forgotten first).
 */
export class FirstByDigest {
  private readonly first = new Map<string, string>();

  constructor(private readonly max = DUPLICATE_MEMORY) {}

  /** The first URL with this digest, if remembered and not `url` itself; remembers `url` as the first otherwise. */
  duplicateOf(digest: string, url: string): string | undefined {
    const key = digest.slice(7, 7 + DUPLICATE_KEY_CHARS);
    const first = this.first.get(key);
    if (first !== undefined) return first === url ? undefined : first;
    if (this.first.size >= this.max) this.first.delete(this.first.keys().next().value!);
    this.first.set(key, url);
    return undefined;
  }

  get size(): number {
    return this.first.size;
  }
}

export class PageRevisits {
  private readonly history: PageHistoryStore | undefined;
  /** The first URL seen with each recent body digest (`duplicateOf`). */
  private readonly firstWithDigest = new FirstByDigest();
  private mode: RecrawlMode = { compare: false, keep: false };

  constructor(
    private readonly ctx: CrawlContext,
    private readonly intake: FrontierIntake,
    /** Re-armed when a page's next visit is in the store. */
    private readonly dueTimer: Pick<DueTimer, 'armAt'>,
  ) {
    this.history = ctx.store.history;
  }

  /** Set once the store is open (the crawler knows then which pass it is in). */
  configure(mode: RecrawlMode): void {
    this.mode = { ...mode };
  }

  /**
   * The page's history to compare with; undefined when not comparing, or
   * for entries that are not pages. A plain value when there is nothing to
   * ask the store (the first pass: no promise, no await a page).
   */
  prior(entry: FrontierEntry): PageHistory | undefined | Promise<PageHistory | undefined> {
    if (!this.mode.compare || this.history === undefined || entryKind(entry) !== 'page') return undefined;
    return this.history.get(entry.url);
  }

  /** The request with what a page request asks for: the digest, and validators from `prior`. */
  request<R extends Pick<FetchRequest, 'read'>>(req: R, prior: PageHistory | undefined): R & Pick<FetchRequest, 'digest' | 'headers'> {
    if (req.read !== 'html') return req;
    const headers = conditionalHeaders(prior);
    return headers === undefined ? withFields(req, { digest: true }) : withFields(req, { digest: true, headers });
  }

  /**
   * A 304: the links kept from the last pass join the frontier (as the
   * page's parse would have added them). Call before the record is written.
   */
  async notModified(entry: FrontierEntry, record: PageRecord): Promise<void> {
    const { ctx } = this;
    record.bytes = 0;
    delete record.contentLength;
    if (this.history === undefined || !this.mode.compare || (ctx.stopping && !ctx.store.durable)) return;
    const links = await this.history.outlinks(entry.url);
    record.links = links.length;
    for (const link of links) this.intake.enqueue(link, entry.depth + 1, entry.url, 0);
  }

  /**
   * Fills the record's validator, digest, change and duplicate fields, and
   * answers the history to keep once the record is out (undefined: keep none).
   * `links`: the URLs the page led to (its links, or a redirect's target).
   * Neither comparing nor keeping (a first pass in memory), a 200 costs only
   * its record's fields, and no promise.
   */
  describe(
    entry: FrontierEntry,
    record: PageRecord,
    res: FetchResult,
    prior: PageHistory | undefined,
    links: readonly string[] | undefined,
  ): PendingHistory | undefined | Promise<PendingHistory | undefined> {
    if (entryKind(entry) !== 'page' || record.status === null) return undefined;
    if (!this.mode.compare && !this.mode.keep && res.status !== 304) {
      showValidators(record, res.headers.etag, res.headers['last-modified'], res.digest, res);
      if (record.status >= 200 && record.status < 300) this.markDuplicate(record);
      return undefined;
    }
    return this.describeAgainst(entry, record, res, prior, links);
  }

  /**
   * `describe` when comparing or keeping. A plain value unless the store
   * must be asked something (a redirect's earlier target, from a store that
   * answers with a promise): a first pass that only keeps history costs no
   * promise a page.
   */
  private describeAgainst(
    entry: FrontierEntry,
    record: PageRecord,
    res: FetchResult,
    prior: PageHistory | undefined,
    links: readonly string[] | undefined,
  ): PendingHistory | undefined | Promise<PendingHistory | undefined> {
    const location = record.location ?? (res.location === null ? undefined : (resolveLink(res.location, entry.url) ?? undefined));
    const answer: Answer = { status: res.status, headers: res.headers, digest: res.digest, location };
    // The record's own time: what the WARC-Date of this capture says, so a later revisit can refer to it.
    const page = nextHistory(prior, answer, Date.parse(record.fetchedAt));
    // A 304 names what it confirmed: the kept validators (or the ones it sent) and the kept digest.
    const shown: Partial<PageHistory> =
      res.status === 304 && page !== undefined ? page : { etag: res.headers.etag, lastModified: res.headers['last-modified'], digest: answer.digest };
    showValidators(record, shown.etag, shown.lastModified, shown.digest, res);
    const described = (priorTarget: string | undefined) => this.compared(entry, record, res, prior, answer, page, priorTarget, links);
    if (!this.mode.compare) return described(undefined);
    const targets =
      prior !== undefined && answer.location !== undefined && prior.status >= 300 && prior.status < 400 ? this.history?.outlinks(entry.url) : undefined;
    return targets instanceof Promise ? targets.then((t) => described(t[0])) : described(targets?.[0]);
  }

  /** The rest of `describeAgainst`, once the redirect's earlier target (`priorTarget`) is known. */
  private compared(
    entry: FrontierEntry,
    record: PageRecord,
    res: FetchResult,
    prior: PageHistory | undefined,
    answer: Answer,
    page: PageHistory | undefined,
    priorTarget: string | undefined,
    links: readonly string[] | undefined,
  ): PendingHistory | undefined {
    if (this.mode.compare) {
      const change = changeOf(prior, answer, priorTarget);
      if (change !== undefined) record.change = change;
      if (prior !== undefined) record.previousFetchedAt = new Date(prior.fetchedAt).toISOString();
      if (this.mode.revisit !== undefined && page !== undefined) page.intervalMs = revisitInterval(prior?.intervalMs, change, res.headers, this.mode.revisit);
    }
    const status = record.status ?? 0;
    if ((status >= 200 && status < 300) || status === 304) this.markDuplicate(record);
    if (!this.mode.keep || this.history === undefined || page === undefined) return undefined;
    const location = answer.location;
    const outlinks = res.status === 304 ? null : location !== undefined && res.status >= 300 && res.status < 400 ? [location] : [...(links ?? [])];
    return { url: entry.url, page, outlinks };
  }

  /** Stores what `describe` answered: right before the lease's completion, after the record is out. */
  keep(pending: PendingHistory | undefined): void {
    if (pending === undefined || this.history === undefined) return;
    this.ctx.calls.settle(this.history.put(pending.url, pending.page, pending.outlinks));
  }

  /**
   * `--revisit`: the page whose lease was just completed is due again after
   * its interval (the one `describe` kept; the last one, or the shortest,
   * when the answer told nothing). Other entries (sitemaps, link checks) are not.
   */
  schedule(entry: FrontierEntry, pending: PendingHistory | undefined, prior: PageHistory | undefined): void {
    const { ctx } = this;
    const bounds = this.mode.revisit;
    const schedule = this.history?.revisits;
    if (bounds === undefined || schedule === undefined || ctx.stopping || entryKind(entry) !== 'page') return;
    const interval = pending?.page.intervalMs ?? prior?.intervalMs ?? bounds.minMs;
    ctx.calls.settle(schedule.at(entry.url, ctx.clock.now() + interval), () => this.dueTimer.armAt(ctx.store.nextDueAt()));
  }

  private markDuplicate(record: PageRecord): void {
    if (record.digest === undefined) return;
    const first = this.firstWithDigest.duplicateOf(record.digest, record.url);
    if (first !== undefined) record.duplicateOf = first;
  }
}

/**
 * The validators and digest a record shows, each when there is one; and
 * `varyAll` when the answer said `Vary: *`: its validators are good for this
 * answer only, said in the record so that a `--since` pass sends none either.
 */
function showValidators(record: PageRecord, etag: string | undefined, lastModified: string | undefined, digest: string | undefined, res: FetchResult): void {
  if (etag !== undefined) record.etag = etag;
  if (lastModified !== undefined) record.lastModified = lastModified;
  if (digest !== undefined) record.digest = digest;
  if (res.status !== 304 && varyStar(res.headers)) record.varyAll = true;
}
