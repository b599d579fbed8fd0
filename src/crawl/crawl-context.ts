/**
 * What the parts of one crawl share (crawler.ts builds it once): settings,
 * clock, store, host records and stats, the calls into the store
 * (store-calls.ts), and the two flags every part reads. Each part takes this
 * and, by name, the few collaborators of its own it needs; none reaches into
 * another's fields.
 */
import type { Clock } from '../clock.js';
import type { HostTable } from '../politeness/host-state.js';
import type { CrawlStats } from '../output/summary.js';
import type { CrawlStore } from '../store/crawl-store.js';
import type { CrawlSettings } from '../config/settings-types.js';
import { hostKeyOf } from '../parse/url.js';
import type { StoreCalls } from './store-calls.js';

export interface CrawlLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface CrawlContext {
  readonly settings: CrawlSettings;
  readonly clock: Clock;
  readonly store: CrawlStore;
  readonly hosts: HostTable;
  readonly stats: CrawlStats;
  readonly log: CrawlLog | undefined;
  readonly calls: StoreCalls;
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
