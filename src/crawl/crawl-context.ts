/**
 * What the parts of one crawl share (crawler.ts builds it once): settings,
 * clock, store, host records and stats, the calls into the store
 * (`StoreCalls`, below), the signals the parts send each other
 * (crawl-signals.ts), and the two flags every part reads. Each part takes
 * this and, by name, the few collaborators of its own it needs; none reaches
 * into another's fields.
 *
 * Store calls: the CrawlStore's methods may answer at once or with a
 * promise. The crawl acts at once on a plain value and counts a promise
 * until it settles, so the memory store never makes the hot path await
 * while a network store is waited for only where its answer is needed; the
 * crawl cannot end while a call is `pending`, and a failed call ends it with
 * that error.
 */
import type { Clock } from '../clock.js';
import type { HostTable } from '../politeness/host-state.js';
import type { CrawlStats } from '../output/summary.js';
import type { CrawlStore, FrontierEntry, MaybePromise } from '../store/crawl-store.js';
import type { CrawlSettings } from '../config/settings-types.js';
import { hostKeyOf } from '../parse/url.js';
import type { CrawlSignals, SignalTargets } from './crawl-signals.js';

export interface CrawlLog {
  info(msg: string): void;
  warn(msg: string): void;
  /** What only `-v` shows (a host's rate changed by its latency signal). @default none */
  debug?(msg: string): void;
}

export interface CrawlContext {
  readonly settings: CrawlSettings;
  readonly clock: Clock;
  readonly store: CrawlStore;
  readonly hosts: HostTable;
  readonly stats: CrawlStats;
  readonly log: CrawlLog | undefined;
  readonly calls: StoreCalls;
  /** The signals the parts send each other: wake a host, the crawl's end re-checked, the crawl failed, … (crawl-signals.ts). */
  readonly signals: CrawlSignals;
  /** `stop()` was called: nothing new starts, nothing goes back to the queue to be tried again. */
  stopping: boolean;
  /** The crawl has ended (or failed): its end is never decided again. */
  finished: boolean;
}

/** `maxPages` requests have started (the store's count: a shared store's is every worker's). */
export function capReached(ctx: CrawlContext): boolean {
  return ctx.store.counter('started') >= ctx.settings.maxPages;
}

export function hostKey(ctx: CrawlContext, url: string): string {
  return hostKeyOf(url, ctx.settings.hostKey);
}

/** Calls into the CrawlStore, each answered at once or counted until it settles (see the file's contract). */
export class StoreCalls {
  /** Asynchronous store calls not settled yet (a sync store never has any). */
  pending = 0;

  constructor(
    private readonly store: CrawlStore,
    /** `settled`: a call settled, the crawl may have ended; `fail`: a call failed, nothing can be trusted any more. */
    private readonly signals: Pick<SignalTargets, 'settled' | 'fail'>,
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
        this.signals.settled();
      },
      (err: unknown) => {
        this.pending--;
        this.signals.fail(err);
      },
    );
  }

  /** The store's add; a synchronous failure ends the crawl as an asynchronous one does (never a page's error). */
  add(url: string, key: string, entry: FrontierEntry | null): MaybePromise<boolean> {
    try {
      return this.store.add(url, key, entry);
    } catch (err) {
      this.signals.fail(err);
      return false;
    }
  }
}
