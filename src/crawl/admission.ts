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
import type { CrawlSettings } from '../config/settings-types.js';
import type { SkipReason } from '../types.js';
import { rangeHash } from '../util/seen-set.js';

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
      return {
        reason: 'repeated-path',
        detail: `segment ${JSON.stringify(repeated.segment)} ${repeated.count} times in the path, over traps.maxPathRepeats (${traps.maxPathRepeats})`,
      };
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

/*
 * Trap defences on canonical URLs: a path that repeats one segment (a
 * relative link that keeps adding itself, `/a/b/a/b/a/b/a/b/`), a query with
 * too many parameters, and a count of distinct query strings per scheme,
 * host and path (a calendar: `/cal?d=1`, `/cal?d=2`, …).
 *
 * These run on every new URL the crawl finds, so they work on the string as
 * it is, by index: no URL parsing, no splitting, and no allocation unless a
 * URL is refused (the segment check hashes segments into a reused scratch
 * array, and only for paths longer than the limit). Memory of the per-path
 * count: one 12-byte slot per distinct path with a query, at a load of at
 * most 3/4, in typed arrays (no Map: no per-entry objects, no size limit).
 */
// What pathBounds found, in module variables rather than a returned object: these run once per new URL.
let pathStart = 0;
let pathEnd = 0;
let queryStart = -1;

/** Sets where the path of an absolute URL starts (the "/" after the authority) and ends (before "?" or "#"), and where its query starts (-1: none). */
function pathBounds(url: string): void {
  const authority = url.indexOf('//');
  let start = url.indexOf('/', authority < 0 ? 0 : authority + 2);
  if (start < 0) start = url.length;
  const hash = url.indexOf('#', start);
  const limit = hash < 0 ? url.length : hash;
  const q = url.indexOf('?', start);
  queryStart = q < 0 || q > limit ? -1 : q;
  pathStart = start;
  pathEnd = queryStart < 0 ? limit : queryStart;
}

let hashes = new Float64Array(64);
let sorted = new Float64Array(64);
let starts = new Int32Array(64);

/**
 * The first segment (in path order) that appears more than `max` times in
 * the URL's path, with its count; null when none does. A trailing "/" ends
 * the last segment rather than starting an empty one.
 */
export function repeatedSegment(url: string, max: number): { segment: string; count: number } | null {
  pathBounds(url);
  const start = pathStart;
  const end = pathEnd;
  // Segments: between one "/" and the next (or the end of the path).
  let k = 0;
  for (let i = start; i < end; i++) if (url.charCodeAt(i) === 47 /* / */ && i + 1 < end) k++;
  if (k <= max) return null;
  if (hashes.length < k) {
    hashes = new Float64Array(k * 2);
    sorted = new Float64Array(k * 2);
    starts = new Int32Array(k * 2);
  }
  let n = 0;
  for (let i = start; i < end && n < k;) {
    const from = i + 1;
    let to = url.indexOf('/', from);
    if (to < 0 || to > end) to = end;
    starts[n] = from;
    hashes[n] = rangeHash(url, from, to);
    n++;
    i = to;
  }
  sorted.set(hashes.subarray(0, n));
  const view = sorted.subarray(0, n).sort();
  let worst = 0;
  for (let i = 0; i < n;) {
    let j = i + 1;
    while (j < n && view[j] === view[i]) j++;
    if (j - i > max) worst = Math.max(worst, j - i);
    i = j;
  }
  if (worst === 0) return null;
  // The first offender in path order: each segment's run in the sorted hashes, by binary search
  // (a run is only walked past `max` for the segment that is returned).
  for (let i = 0; i < n; i++) {
    const h = hashes[i];
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (view[mid] < h) lo = mid + 1;
      else hi = mid;
    }
    let count = 0;
    while (lo + count < n && view[lo + count] === h) count++;
    if (count > max) {
      let to = url.indexOf('/', starts[i]);
      if (to < 0 || to > end) to = end;
      return { segment: url.slice(starts[i], to), count };
    }
  }
  return null;
}

/** Parameters in the URL's query: its "&"-separated parts that are not empty. */
export function queryParamCount(url: string): number {
  pathBounds(url);
  const query = queryStart;
  if (query < 0) return 0;
  const hash = url.indexOf('#', query);
  const end = hash < 0 ? url.length : hash;
  let count = 0;
  let empty = true;
  for (let i = query + 1; i < end; i++) {
    if (url.charCodeAt(i) === 38 /* & */) {
      if (!empty) count++;
      empty = true;
    } else empty = false;
  }
  return empty ? count : count + 1;
}

/** The hash of a URL's scheme, host and path, when it has a query; 0 when it has none. */
export function queryPathKey(url: string): number {
  pathBounds(url);
  return queryStart < 0 ? 0 : rangeHash(url, 0, queryStart);
}

/** The URL up to its query ("http://host/path"), for messages. */
export function withoutQuery(url: string): string {
  pathBounds(url);
  return queryStart < 0 ? url : url.slice(0, queryStart);
}

const MAX_LOAD = 0.75;

/** Counts per 53-bit key (never 0), in an open-addressing table of typed arrays. */
export class CountTable {
  private keys = new Float64Array(1024);
  private counts = new Uint32Array(1024);
  private size = 0;

  get(key: number): number {
    const i = this.slot(key);
    return this.keys[i] === key ? this.counts[i] : 0;
  }

  /** Adds `by` (which may be negative; counts stop at 0) and returns the new count. */
  add(key: number, by: number): number {
    if (this.size >= this.keys.length * MAX_LOAD) this.grow();
    const i = this.slot(key);
    if (this.keys[i] !== key) {
      this.keys[i] = key;
      this.size++;
    }
    const next = Math.max(0, this.counts[i] + by);
    this.counts[i] = next;
    return next;
  }

  /** The slot holding `key`, or the empty one where it would go. */
  private slot(key: number): number {
    const keys = this.keys;
    const capacity = keys.length;
    for (let i = Math.floor(((key >>> 0) / 4294967296) * capacity); ;) {
      const k = keys[i];
      if (k === key || k === 0) return i;
      if (++i === capacity) i = 0;
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldCounts = this.counts;
    this.keys = new Float64Array(oldKeys.length * 2);
    this.counts = new Uint32Array(oldKeys.length * 2);
    for (let j = 0; j < oldKeys.length; j++) {
      if (oldKeys[j] === 0) continue;
      const i = this.slot(oldKeys[j]);
      this.keys[i] = oldKeys[j]!;
      this.counts[i] = oldCounts[j]!;
    }
  }
}
