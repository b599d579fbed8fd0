/**
 * Whether a new, in-scope URL may join the crawl: the trap defences and the
 * caps that keep a crawl bounded whatever a site links to.
 *
 * Contract:
 * - `check(url, depth)` judges the URL itself: depth (`max-depth`), a
 *   repeated path segment (`repeated-path`), too many query parameters
 *   (`query-explosion`). These verdicts never change, so the crawl remembers
 *   the URL as seen (one skip record, counted once).
 * - `reserve(url, key, isSeed)` judges capacity: the queue (`queue-full`,
 *   maxQueued), the host key's page budget (`max-pages-per-host`) and the
 *   distinct query strings of the URL's path (`query-explosion`,
 *   traps.maxQueryVariants). When it admits a URL it counts it at once
 *   (a seed is counted and never refused: the user named it); `release`
 *   takes the count back when the store turns out to know the URL already.
 *   A capacity refusal is NOT remembered: remembering every URL refused for
 *   lack of room is what would make memory grow with the site (16 B each in
 *   the seen set), so a URL found again is judged again, and counted (and
 *   recorded, with emitSkipped) each time.
 * - Budgets count URLs accepted in this run (a resumed crawl counts afresh);
 *   the queue cap reads the store's own count, so it holds across runs.
 */
import type { CrawlSettings, SkipReason } from '../types.js';
import { CountTable, queryParamCount, queryPathKey, repeatedSegment, withoutQuery } from './trap-guard.js';

export interface Refusal {
  reason: SkipReason;
  detail?: string;
}

const MAX_DEPTH: Refusal = Object.freeze({ reason: 'max-depth' });

export class Admission {
  private readonly perHost = new Map<string, number>();
  private readonly variants = new CountTable();
  private readonly queueFull: Refusal;

  constructor(
    private readonly settings: CrawlSettings,
    /** URLs queued now, all hosts. */
    private readonly queued: () => number,
  ) {
    this.queueFull = { reason: 'queue-full', detail: `${settings.maxQueued} URLs queued (maxQueued)` };
  }

  /** What is wrong with the URL itself; null when nothing is. */
  check(url: string, depth: number): Refusal | null {
    const { maxDepth, traps } = this.settings;
    if (depth > maxDepth) return MAX_DEPTH;
    const repeated = repeatedSegment(url, traps.maxPathRepeats);
    if (repeated) {
      return { reason: 'repeated-path', detail: `segment ${JSON.stringify(repeated.segment)} ${repeated.count} times in the path, over traps.maxPathRepeats (${traps.maxPathRepeats})` };
    }
    const params = queryParamCount(url);
    if (params > traps.maxQueryParams) {
      return { reason: 'query-explosion', detail: `${params} query parameters, over traps.maxQueryParams (${traps.maxQueryParams})` };
    }
    return null;
  }

  /** Room for the URL, counted when there is; null then, else why not. */
  reserve(url: string, key: string, isSeed: boolean): Refusal | null {
    const budget = this.settings.policyFor(key).maxPagesPerHost;
    const taken = this.perHost.get(key) ?? 0;
    const path = queryPathKey(url);
    if (!isSeed) {
      if (this.queued() >= this.settings.maxQueued) return this.queueFull;
      if (taken >= budget) return { reason: 'max-pages-per-host', detail: `${taken} URLs of ${key} accepted already (maxPagesPerHost ${budget})` };
      const max = this.settings.traps.maxQueryVariants;
      if (path !== 0 && this.variants.get(path) >= max) {
        return { reason: 'query-explosion', detail: `${max} query strings of ${withoutQuery(url)} accepted already (traps.maxQueryVariants)` };
      }
    }
    this.perHost.set(key, taken + 1);
    if (path !== 0) this.variants.add(path, 1);
    return null;
  }

  /** The store knew the URL already: what `reserve` counted for it is given back. */
  release(url: string, key: string): void {
    const taken = this.perHost.get(key) ?? 0;
    if (taken > 0) this.perHost.set(key, taken - 1);
    const path = queryPathKey(url);
    if (path !== 0) this.variants.add(path, -1);
  }
}
