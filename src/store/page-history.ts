/**
 * Per-page history: what the last pass saw of each page, so a later pass can
 * ask the server for changes only (conditional requests) and say what
 * changed. An optional store capability (`CrawlStore.history`), checked once
 * by the crawl.
 *
 * Contract (the store contract suite runs it on every store that has one):
 * - `put(url, page, outlinks)` keeps the page's latest facts; `outlinks`
 *   null keeps the last pass's (a 304 has none of its own). `get` answers
 *   them back (undefined for a page never put); `outlinks` the links kept,
 *   as URLs, each once, in no particular order, without the ones the store
 *   no longer knows (a store may keep only URLs it holds; Redis holds the
 *   URLs it completed). A put for a URL whose lease is held may take effect
 *   with that lease's completion (Redis sends the two in one script).
 * - `pass()` is the pass the crawl is in, 1 for the first. `startPass`
 *   (durable stores) begins the next one: every URL the crawl knows (done,
 *   queued, delayed; not those only marked seen) is queued again, with its
 *   attempt counts reset; what the store held as seen-only is forgotten, so
 *   it may be found again; the `started` counter goes back to 0 and the
 *   crawl is no longer finished. History stays. Atomic: a crash leaves
 *   either the old pass or the new one.
 * - `revisits` (durable stores, `--revisit`): `at(url, dueAt)` makes a
 *   completed page a delayed entry due at `dueAt` (the crawl's clock), its
 *   attempt counts reset, as part of the same commit as its completion;
 *   `scheduleAll` does that for every completed page with history that waits
 *   for nothing (due at its last fetch plus its interval, or plus the default)
 *   and unmarks a finished crawl. Neither touches a page in any other state.
 */
import type { MaybePromise } from './crawl-store.js';

export interface PageHistory {
  /** The status of the last usable answer (a 304 keeps the status it confirmed, normally 200). */
  status: number;
  /** When it was fetched, epoch ms (wall clock); stores may keep whole seconds. */
  fetchedAt: number;
  /** The ETag, as sent (`W/"…"` when weak). */
  etag?: string;
  /** The Last-Modified header, as sent. */
  lastModified?: string;
  /** `sha256:BASE32` of the body (fetch/body-digest.ts). */
  digest?: string;
  /** The page's revisit interval, ms (--revisit). */
  intervalMs?: number;
}

export interface PageHistoryStore {
  get(url: string): MaybePromise<PageHistory | undefined>;
  /** Keeps `page` for `url`; `outlinks` null keeps the ones kept before. */
  put(url: string, page: PageHistory, outlinks: readonly string[] | null): MaybePromise<void>;
  outlinks(url: string): MaybePromise<string[]>;
  /** The pass the crawl is in (1: the first). */
  pass(): number;
  /** Begins the next pass (see the contract); answers its number. Durable stores only. */
  startPass?(): MaybePromise<number>;
  /** Pages due again (`--revisit`; see the contract). Durable stores only. */
  readonly revisits?: RevisitSchedule;
}

/** A durable store's revisit schedule (`--revisit`): completed pages wait as delayed entries until they are due again. */
export interface RevisitSchedule {
  /** The completed page is due again at `dueAt` (crawl clock). */
  at(url: string, dueAt: number): MaybePromise<void>;
  /**
   * Every completed page with history that waits for nothing becomes due at
   * its last fetch (wall clock, shifted by `wallToCrawl` onto the crawl's)
   * plus its interval, or plus `defaultMs` without one. Answers how many.
   */
  scheduleAll(defaultMs: number, wallToCrawl: number): MaybePromise<number>;
}

/**
 * Last-Modified as epoch seconds, when the IMF-fixdate written from them
 * gives the same text back (so a store may keep the number and still answer
 * the header as sent); undefined otherwise.
 */
export function lastModifiedSeconds(text: string): number | undefined {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || ms % 1000 !== 0) return undefined;
  return new Date(ms).toUTCString() === text ? ms / 1000 : undefined;
}

/** History in this process's memory: a `--since` crawl (loaded from records) or a crawl that keeps none beyond itself. */
export class MemoryHistory implements PageHistoryStore {
  private readonly pages = new Map<string, { page: PageHistory; outlinks: string[] }>();

  get size(): number {
    return this.pages.size;
  }

  get(url: string): PageHistory | undefined {
    const kept = this.pages.get(url);
    return kept && { ...kept.page };
  }

  put(url: string, page: PageHistory, outlinks: readonly string[] | null): void {
    const before = this.pages.get(url);
    this.pages.set(url, { page: { ...page }, outlinks: outlinks === null ? (before?.outlinks ?? []) : [...outlinks] });
  }

  outlinks(url: string): string[] {
    return [...(this.pages.get(url)?.outlinks ?? [])];
  }

  pass(): number {
    return 1;
  }
}

/**
 * Ids as bytes: sorted, each the unsigned LEB128 varint of its distance from
 * the one before (the first from 0), so a page's 50 links to nearby ids take
 * one or two bytes each. Order is not kept (a pass only needs the set).
 */
export function encodeIds(ids: readonly number[]): Buffer {
  // A typed array sorts numerically in place, with no comparator calls; repeats are skipped once sorted.
  const sorted = Float64Array.from(ids).sort();
  // A delta of an id below 2^53 takes at most 8 varint bytes.
  const out = Buffer.allocUnsafe(sorted.length * 8);
  let at = 0;
  let last = 0;
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i];
    if (i > 0 && id === last) continue;
    let delta = id - last;
    last = id;
    while (delta >= 0x80) {
      out[at++] = (delta % 0x80) | 0x80;
      delta = Math.floor(delta / 0x80);
    }
    out[at++] = delta;
  }
  return Buffer.from(out.subarray(0, at));
}

export function decodeIds(bytes: Uint8Array): number[] {
  const ids: number[] = [];
  let last = 0;
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (byte & 0x80) {
      scale *= 0x80;
      continue;
    }
    last += value;
    ids.push(last);
    value = 0;
    scale = 1;
  }
  return ids;
}
