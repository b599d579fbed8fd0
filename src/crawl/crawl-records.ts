/**
 * What the crawl writes and counts: page and skip records, in order, through
 * one write chain to the sink (awaited by jobs, which is how a slow reader
 * slows the crawl), with credentials redacted, and the counts the progress
 * line shows. A record the sink refuses (disk full) fails the crawl at
 * once. A URL the user named (a seed, or where it redirects) always gets its
 * record; other skips only with `emitSkipped`.
 */
import type { DeniedUse } from '../robots/gate.js';
import { countDenied } from '../usage/usage-denied.js';
import type { RecordSink } from '../output/sink.js';
import { countPage, countSkip, hostStats } from '../output/summary.js';
import type { Cleared, FrontierEntry } from '../store/crawl-store.js';
import type { ErrorCode, ItemRecord, OutputRecord, PageRecord, SkipReason, SkipRecord } from '../types.js';
import { hostKey, type CrawlContext } from './crawl-context.js';
import { decorateRecord } from './entries/entry-kind.js';
import { isoTimeFormatter } from '../util/iso-time.js';
import { redactRecord } from './page-outcome.js';
import type { RedirectChains } from './redirect-chains.js';

export class CrawlRecords {
  /** Pages fetched (with or without an error), as the summary counts them. */
  fetched = 0;
  errors = 0;
  skipped = 0;
  /** Requests the crawl aborted itself (ABORTED records): counted apart, as the summary does. */
  aborted = 0;
  /** Every record handed to the sink so far has been written. */
  writes: Promise<void> = Promise.resolve();
  readonly isoTime = isoTimeFormatter();

  private failed = false;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly sink: RecordSink,
    private readonly redirects: RedirectChains,
  ) {}

  page(record: PageRecord, key: string): void {
    // As the summary counts it (countPage): a request the crawl aborted itself is neither a page fetched nor an error.
    if (record.error?.code === 'ABORTED') this.aborted++;
    else {
      this.fetched++;
      if (record.error) this.errors++;
    }
    countPage(this.ctx.stats, record, key);
    this.write(record);
  }

  /** A page handler's items, written just before their page's record. */
  items(items: readonly ItemRecord[]): void {
    const counts = this.ctx.stats.handler;
    if (counts) counts.items += items.length;
    for (const item of items) this.write(item);
  }

  /** A page record for a URL whose host could not be reached before any request of its own: an error, not a skip. */
  unreached(entry: FrontierEntry, key: string, code: ErrorCode, message: string): void {
    const record: PageRecord = {
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
      fetchedAt: this.isoTime(this.ctx.clock.wallNow()),
      elapsedMs: 0,
      error: { code, message },
    };
    decorateRecord(record, entry);
    this.page(record, key);
  }

  /** Counts a skip, and writes its record when one is wanted: true if it did. */
  skip(
    url: string,
    reason: SkipReason,
    depth: number,
    parent: string | null,
    detail?: string,
    named = false,
    usage?: DeniedUse,
    price?: SkipRecord['price'],
  ): boolean {
    this.skipped++;
    if (this.redirects.size > 0) this.redirects.done(url);
    countSkip(this.ctx.stats, reason, hostKey(this.ctx, url));
    // A URL the user named (a seed, or where it redirects) is never dropped silently.
    if (usage) countDenied(this.ctx.stats, usage.purpose, hostKey(this.ctx, url));
    if (!this.ctx.settings.emitSkipped && depth > 0 && !named) return false;
    const record: SkipRecord = { type: 'skipped', url, reason, depth, parent };
    if (detail) record.detail = detail;
    if (usage) {
      record.usageDenied = usage.purpose;
      record.usageSources = usage.sources;
    }
    if (price) record.price = price;
    this.write(record);
    return true;
  }

  /** URLs skipped in bulk, per host key, without a record each (crawl-end.ts `skipLeft`). */
  skippedInBulk(reason: SkipReason, counts: Cleared['counts']): number {
    const { stats } = this.ctx;
    let left = 0;
    for (const [host, n] of counts) {
      this.skipped += n;
      left += n;
      hostStats(stats, host).skipped += n;
      stats.skippedByReason.set(reason, (stats.skippedByReason.get(reason) ?? 0) + n);
    }
    return left;
  }

  /**
   * Resolves once every record written so far is confirmed by the sink (on
   * disk, for a file), not only accepted: a store that outlives the process
   * completes a URL only then, so a record lost to a full disk is fetched
   * again on resume instead of being lost.
   */
  confirmed(): Promise<void> {
    const sink = this.sink;
    return this.writes.then(() => sink.confirmed?.());
  }

  /**
   * The reader went away (`crawl --state … | head`): a record written since
   * may have reached nobody, so a durable store gets its URL back instead
   * of completing it, and the resumed crawl writes it again. Completed, it
   * was done in the state file and in no output.
   */
  get readerGone(): boolean {
    return this.sink.broken;
  }

  /** Writes in order; the chain is awaited by jobs, which is how a slow reader slows the crawl. */
  write(record: OutputRecord): void {
    const sink = this.sink;
    // Credentials in URLs (http://user:secret@host/) never leave the crawler.
    const out = redactRecord(record);
    const next = this.writes.then(() => (sink.broken ? undefined : sink.write(out)));
    this.writes = next;
    // Once rejected the chain stays rejected: every later record is dropped and every job awaiting it stops.
    next.catch((err: unknown) => {
      if (this.failed) return;
      this.failed = true;
      // The sink refused a record (disk full): the crawl stops now, instead of fetching pages nobody can keep.
      this.ctx.signals.fail(err);
    });
  }
}
