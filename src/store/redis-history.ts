/**
 * Per-page history in the Redis store (page-history.ts has the contract), so
 * any number of workers re-crawl a shared crawl together (`--recrawl`).
 *
 * Contract (beyond PageHistoryStore's):
 * - Every completed URL is kept in `P pages` (redis-scripts.ts) under its
 *   page key: the 53-bit fingerprint of its URL (util/seen-set.ts) in base
 *   36, computed here, so no script hashes a URL for it. Two URLs sharing a
 *   key share a history (odds about n²/2⁵⁴: 1 in 18,000 at a million URLs).
 * - A page's history rides on its lease's completion: `put` for a URL whose
 *   lease this worker holds is sent with `complete`, in the same script, so
 *   the history and the completion land together; any other `put` is a
 *   script of its own.
 * - `outlinks` answers the linked URLs this crawl has completed (the seen
 *   set holds fingerprints, not URLs): in a finished crawl, every one it
 *   fetched.
 * - `startPass` is one script (NEW_PASS); a worker that finds the crawl's
 *   pass already moved on (another worker began it) joins that pass; with
 *   leases held anywhere it refuses. The crawl loop begins a pass on a
 *   shared store only over a finished crawl.
 * - `revisits` (`--revisit`): a completed page waits for its revisit as a
 *   delayed entry of its host (attempts reset), due on the scheduling
 *   worker's clock like any delayed entry, and is marked waiting in
 *   `P pages` until its next completion, so `scheduleAll` (run by every
 *   worker that starts) schedules each page once however many workers
 *   start. `at` follows the completion on the same connection; a crash in
 *   between leaves the page completed and waiting for nothing, which the
 *   next start's `scheduleAll` schedules.
 *
 * Stored compactly: the fetch time and the revisit interval in whole
 * seconds, Last-Modified as epoch seconds when its IMF-fixdate form gives
 * the same text back, a sha256 digest as its base32 text without the
 * `sha256:` prefix.
 */
import { fingerprint } from '../util/seen-set.js';
import { lastModifiedSeconds, type PageHistory, type PageHistoryStore, type RevisitSchedule } from './page-history.js';
import { decodeEntry, RedisStoreError } from './redis-codec.js';
import type { ScriptName } from './redis-scripts.js';

/** A page's key in `P pages`. */
export function pageKey(url: string): string {
  return base36(fingerprint(url));
}

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** 36^6: the low six digits fit a 32-bit integer's arithmetic. */
const LOW = 2_176_782_336;

/**
 * `n.toString(36)` for a safe integer n ≥ 0, the same text, ~4× faster: V8's
 * radix conversion takes the general (fractional) path and cost ~0.8 µs a
 * fingerprint, for the ~14 keys a page's history and completion need.
 */
export function base36(n: number): string {
  const hi = Math.floor(n / LOW);
  const low = digits(n - hi * LOW, '', hi === 0 ? 1 : 6);
  return hi === 0 ? low : digits(hi, low, 1);
}

/** `n` (below 2^32) in base 36, at least `width` digits, before `after`. */
function digits(n: number, after: string, width: number): string {
  let out = after;
  for (let i = 0; n > 0 || i < width; i++) {
    const q = Math.floor(n / 36);
    out = DIGITS[n - q * 36] + out;
    n = q;
  }
  return out;
}

/** The outlinks' page keys, each once, space-separated. */
function linkKeys(outlinks: readonly string[]): string {
  const keys = new Set<string>();
  for (const link of outlinks) keys.add(pageKey(link));
  return [...keys].join(' ');
}

const DIGEST_PREFIX = 'sha256:';

/** The 4 history lines a script keeps: `status fetched every`, ETag, Last-Modified, digest. */
export function encodeHistory(page: PageHistory): string {
  const head = `${page.status} ${Math.floor(page.fetchedAt / 1000)} ${page.intervalMs === undefined ? '' : Math.round(page.intervalMs / 1000)}`;
  const digest = page.digest === undefined ? '' : page.digest.startsWith(DIGEST_PREFIX) ? page.digest.slice(DIGEST_PREFIX.length) : `=${page.digest}`;
  return [head.trimEnd(), page.etag ?? '', page.lastModified === undefined ? '' : compactDate(page.lastModified), digest].join('\n');
}

/** A `P pages` value's history, or undefined when the page has none. */
export function decodeHistory(value: string): PageHistory | undefined {
  const [, , head = '', etag = '', lm = '', digest = ''] = value.split('\n');
  if (head === '') return undefined;
  const [status, fetched, every] = head.split(' ');
  const page: PageHistory = { status: Number(status), fetchedAt: Number(fetched) * 1000 };
  if (etag !== '') page.etag = etag;
  if (lm !== '') page.lastModified = /^\d+$/.test(lm) ? new Date(Number(lm) * 1000).toUTCString() : lm.slice(1);
  if (digest !== '') page.digest = digest.startsWith('=') ? digest.slice(1) : DIGEST_PREFIX + digest;
  if (every !== undefined && every !== '') page.intervalMs = Number(every) * 1000;
  return page;
}

/** Last-Modified as epoch seconds (page-history.ts `lastModifiedSeconds`, not before 1970: the reader takes digits only); else `=` and the text. */
function compactDate(text: string): string {
  const seconds = lastModifiedSeconds(text);
  return seconds !== undefined && seconds >= 0 ? String(seconds) : `=${text}`;
}

export interface RedisHistoryParts {
  run(name: ScriptName, args: string[]): Promise<unknown[]>;
  /** Whether this worker holds a lease on `url` now (its `put` then waits for the completion). */
  holds(url: string): boolean;
  /** Begins the next pass (NEW_PASS), answering the pass the crawl is in. */
  newPass(expected: number): Promise<number>;
  /** Runs a script whose answer starts with the VIEW, answering the rest (the store's views take the VIEW). */
  runViewed(name: ScriptName, args: string[]): Promise<unknown[]>;
}

export class RedisHistory implements PageHistoryStore {
  /** The pass the crawl is in, as of `open` or this worker's `startPass`. */
  current = 1;
  /** Histories waiting for their lease's completion, by URL. */
  private readonly pending = new Map<string, [history: string, links: string]>();

  readonly revisits: RevisitSchedule;

  constructor(private readonly parts: RedisHistoryParts) {
    this.revisits = {
      at: async (url, dueAt) => {
        await parts.runViewed('revisitAt', [pageKey(url), String(dueAt)]);
      },
      scheduleAll: async (defaultMs, wallToCrawl) => Number((await parts.runViewed('revisitAll', [String(defaultMs), String(wallToCrawl)]))[0]),
    };
  }

  async get(url: string): Promise<PageHistory | undefined> {
    const value = String(await this.parts.run('histGet', [pageKey(url)]));
    return value === '' ? undefined : decodeHistory(value);
  }

  put(url: string, page: PageHistory, outlinks: readonly string[] | null): Promise<void> | void {
    const args: [string, string] = [encodeHistory(page), outlinks === null ? '-' : linkKeys(outlinks)];
    if (this.parts.holds(url)) {
      this.pending.set(url, args);
      return;
    }
    return this.parts.run('histPut', [pageKey(url), ...args]).then(() => undefined);
  }

  /** The arguments COMPLETE takes for this URL: its page key, and the history `put` left for it ('' and '-': none). */
  completion(url: string): [key: string, history: string, links: string] {
    const pending = this.pending.get(url);
    if (pending === undefined) return [pageKey(url), '', '-'];
    this.pending.delete(url);
    return [pageKey(url), ...pending];
  }

  /** A lease given back: its URL's history is not for now. */
  drop(url: string): void {
    this.pending.delete(url);
  }

  async outlinks(url: string): Promise<string[]> {
    const flat = await this.parts.run('histLinks', [pageKey(url)]);
    const urls: string[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) urls.push(decodeEntry(String(flat[i + 1]), '', String(flat[i])).url);
    return urls;
  }

  pass(): number {
    return this.current;
  }

  async startPass(): Promise<number> {
    const pass = await this.parts.newPass(this.current);
    if (pass < 0) throw new RedisStoreError('a new pass cannot start while leases are held: another worker is still crawling this pass');
    this.current = pass;
    return pass;
  }
}
