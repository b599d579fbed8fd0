/**
 * Calls into the CrawlStore, whose methods may answer at once or with a
 * promise. The crawl acts at once on a plain value and counts a promise until
 * it settles, so the memory store never makes the hot path await while a
 * network store is waited for only where its answer is needed; the crawl
 * cannot end while a call is `pending`, and a failed call ends it with that
 * error.
 */
import type { CrawlStore, FrontierEntry, MaybePromise } from '../store/crawl-store.js';

export class StoreCalls {
  /** Asynchronous store calls not settled yet (a sync store never has any). */
  pending = 0;

  constructor(
    private readonly store: CrawlStore,
    /** A call settled: the crawl may have ended. */
    private readonly settled: () => void,
    /** A call failed: nothing can be trusted any more. */
    private readonly fail: (err: unknown) => void,
  ) {}

  /**
   * Waits for a store call only if it is asynchronous: a sync store's answer
   * is used at once, a promise is counted until it settles so the crawl
   * cannot end under it, and a failure ends the crawl with that error.
   */
  settle<T>(value: MaybePromise<T>, then?: (v: T) => void): void {
    if (!(value instanceof Promise)) {
      then?.(value);
      return;
    }
    this.pending++;
    value.then(
      (v) => {
        this.pending--;
        then?.(v);
        this.settled();
      },
      (err: unknown) => {
        this.pending--;
        this.fail(err);
      },
    );
  }

  /** The store's add; a synchronous failure ends the crawl as an asynchronous one does (never a page's error). */
  add(url: string, key: string, entry: FrontierEntry | null): MaybePromise<boolean> {
    try {
      return this.store.add(url, key, entry);
    } catch (err) {
      this.fail(err);
      return false;
    }
  }
}
