/**
 * Where a claimed lease ends: the one module that completes leases, gives
 * them back to the store, and keeps the `started` count (what --max-pages
 * reads) true as it does: counted when a lease starts (`countStart`), given
 * back when it ends without a request. Every part that ends a lease — a fetched page, a
 * skip when claimed, a retry, a throttled URL, the crawl's end — says which
 * end, and this module carries it out, reading the store's modes here:
 *
 * - complete: the URL is done. One whose record was just written is
 *   completed only once that record is confirmed by the sink when the store
 *   outlives the process (`durable`), so a crash between the two asks for
 *   the URL again instead of losing its record; and if the reader went away
 *   meanwhile (`crawl --state … | head`), it goes back instead (its record
 *   may have reached nobody).
 * - hand back: the URL returns to the store, as it was or as a new entry
 *   (a retry's attempt, a throttled URL's count), now or due later; one
 *   that counted as started no longer does.
 * - put back: returned untouched, never started (held leases at the crawl's
 *   end, a shared store's lease given back while robots.txt loads).
 */
import type { Charge, FrontierEntry, Lease } from '../store/crawl-store.js';
import type { CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';

export interface HandBack {
  /** The entry to store instead of the lease's own (a retry's attempt). @default lease.entry */
  entry?: FrontierEntry;
  /** Due then (a retry's backoff), or at the head of its host's queue now. */
  dueAt?: number;
  /** Runs once the store has it. */
  then?: () => void;
}

export class LeaseFate {
  constructor(
    private readonly ctx: CrawlContext,
    private readonly records: CrawlRecords,
  ) {}

  /**
   * Done, with no record of its own to wait for (`outcome`: its status,
   * error code or skip reason); `charge`: what its request was charged,
   * booked with the completion (crawl-store.ts SpendLedger).
   */
  complete(lease: Lease, outcome: string, charge?: Charge): void {
    this.ctx.calls.settle(this.ctx.store.complete(lease, outcome, charge));
  }

  /**
   * Done once the record just written for it (`wrote`; a skip may have
   * none) is confirmed, on a durable store; then `then`. `started`: it
   * counted as started and, ending without a request, no longer does.
   */
  completeAfterRecord(lease: Lease, outcome: string, wrote: boolean, opts: { started?: boolean; then?: () => void } = {}): void {
    const { calls, store } = this.ctx;
    if (opts.started) this.uncountStart();
    if (wrote && store.durable)
      calls.settle(
        this.records.confirmed().then(() => (this.records.readerGone ? store.release(lease, lease.entry) : store.complete(lease, outcome))),
        opts.then,
      );
    else calls.settle(store.complete(lease, outcome), opts.then);
  }

  /**
   * A fetched page's record is written: resolves true once the lease may
   * be completed (its record confirmed, on a durable store), false when it
   * went back instead (the reader is gone: the resumed crawl writes it again).
   */
  async recordOut(lease: Lease): Promise<boolean> {
    const { records } = this;
    const { store } = this.ctx;
    await (store.durable ? records.confirmed() : records.writes);
    if (!store.durable || !records.readerGone) return true;
    this.handBack(lease);
    return false;
  }

  /** Back to the store, no longer counted as started: taken again later, or by the resumed crawl. */
  handBack(lease: Lease, back: HandBack = {}): void {
    this.uncountStart();
    this.ctx.calls.settle(this.ctx.store.release(lease, back.entry ?? lease.entry, back.dueAt), back.then);
  }

  /** Back to the store untouched: it never started. */
  putBack(lease: Lease): void {
    this.ctx.calls.settle(this.ctx.store.release(lease, lease.entry));
  }

  /** A lease starts its request: one more in the count --max-pages reads; `then` gets the new count. */
  countStart(then?: (count: number) => void): void {
    this.ctx.calls.settle(this.ctx.store.addToCounter('started', 1), then);
  }

  /** A start counted ahead (a shared store's page cap) that will not happen. */
  uncountStart(): void {
    this.ctx.calls.settle(this.ctx.store.addToCounter('started', -1));
  }
}
