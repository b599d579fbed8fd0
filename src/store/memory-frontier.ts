/**
 * The frontier: URLs waiting to be fetched, one FIFO queue per host key
 * (Mercator's back queues), plus the set of every URL ever accepted.
 *
 * The memory store (memory-store.ts) keeps its queues here; the crawl loop
 * talks only to the CrawlStore interface (crawl-store.ts).
 */
import type { FrontierEntry } from './crawl-store.js';
import { SeenSet } from '../util/seen-set.js';

export type { FrontierEntry } from './crawl-store.js';

// ---------------------------------------------------------------- compact queue
//
// Memory contract: a queued entry costs 24 bytes here (three 8-byte column
// slots) plus its URL string; a million queued URLs must stay under 150 bytes
// each, and an object per entry (64 bytes) plus its array slot and the slack of
// a growing array did not leave room for a 75-character URL. Entries are
// therefore stored by value, in columns, and rebuilt when taken out: callers
// never get back the object they pushed, only an equal one.

/** Fields the columns hold. Adding a field to FrontierEntry fails to compile here until it is stored too. */
type StoredField = 'url' | 'parent' | 'depth' | 'hops' | 'attempt' | 'throttles' | 'extra';
type AssertTrue<T extends true> = T;
export type FrontierEntryFullyStored = AssertTrue<Exclude<keyof FrontierEntry, StoredField> extends never ? true : false>;

/** First chunk of a queue; chunks double up to MAX_CHUNK, so a host with one URL stays small. */
const MIN_CHUNK = 4;
const MAX_CHUNK = 1024;
/** depth, hops, attempt and throttles packed in one double: 8 bits for each small field, the rest for depth. */
const SMALL = 256;
const MAX_PACKED_DEPTH = 2 ** 28;

function pack(e: FrontierEntry): number {
  if (e.extra !== undefined) return -1; // rare: kept whole
  const throttles = e.throttles === undefined ? 0 : e.throttles + 1; // 0 keeps "absent" apart from 0
  if (!(isSmall(e.hops) && isSmall(e.attempt) && isSmall(throttles) && Number.isInteger(e.depth) && e.depth >= 0 && e.depth < MAX_PACKED_DEPTH)) {
    return -1; // does not fit: the entry is kept whole
  }
  return ((e.depth * SMALL + e.hops) * SMALL + e.attempt) * SMALL + throttles;
}

/** Packed numbers below this have depth 0 (depth is the highest field). */
const DEPTH_ONE = SMALL * SMALL * SMALL;

function isSmall(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n < SMALL;
}

function unpack(url: string, parent: string | null, packed: number): FrontierEntry {
  const throttles = packed % SMALL;
  let rest = (packed - throttles) / SMALL;
  const attempt = rest % SMALL;
  rest = (rest - attempt) / SMALL;
  const hops = rest % SMALL;
  const depth = (rest - hops) / SMALL;
  const entry: FrontierEntry = { url, depth, parent, hops, attempt };
  if (throttles > 0) entry.throttles = throttles - 1;
  return entry;
}

class Chunk {
  /** A URL, or a whole entry when its numbers do not pack (`meta` is then -1). */
  readonly urls: Array<string | FrontierEntry | undefined>;
  readonly parents: Array<string | null>;
  readonly meta: number[];
  next: Chunk | null = null;

  constructor(readonly size: number) {
    this.urls = new Array<string | FrontierEntry | undefined>(size);
    this.parents = new Array<string | null>(size);
    this.meta = new Array<number>(size);
  }

  set(i: number, e: FrontierEntry): void {
    const packed = pack(e);
    this.urls[i] = packed === -1 ? { ...e } : e.url;
    this.parents[i] = packed === -1 ? null : e.parent;
    this.meta[i] = packed;
  }

  get(i: number): FrontierEntry {
    const stored = this.urls[i]!;
    return typeof stored === 'string' ? unpack(stored, this.parents[i], this.meta[i]) : { ...stored };
  }

  /** Whether the entry in slot `i` has depth 0, without rebuilding it. */
  isDepthZero(i: number): boolean {
    const packed = this.meta[i];
    return packed === -1 ? (this.urls[i] as FrontierEntry).depth === 0 : packed < DEPTH_ONE;
  }

  clear(i: number): void {
    this.urls[i] = undefined;
    this.parents[i] = null;
  }
}

/** A FIFO of entries in a list of column chunks: no copying on shift, no slack beyond one chunk. Used until empty, then discarded. */
class EntryQueue {
  private head: Chunk = new Chunk(MIN_CHUNK);
  private tail: Chunk = this.head;
  /** First live slot of `head`, next free slot of `tail`. */
  private headIndex = 0;
  private tailIndex = 0;
  length = 0;
  /** Entries of depth 0 queued (seeds and where they redirect): clearing a queue without them touches none of its entries. */
  private zeroDepth = 0;

  push(e: FrontierEntry): void {
    if (e.depth === 0) this.zeroDepth++;
    if (this.tailIndex === this.tail.size) {
      const chunk = new Chunk(Math.min(this.tail.size * 2, MAX_CHUNK));
      this.tail.next = chunk;
      this.tail = chunk;
      this.tailIndex = 0;
    }
    this.tail.set(this.tailIndex++, e);
    this.length++;
  }

  unshift(e: FrontierEntry): void {
    if (e.depth === 0) this.zeroDepth++;
    if (this.headIndex === 0) {
      const chunk = new Chunk(MIN_CHUNK);
      chunk.next = this.head;
      this.head = chunk;
      this.headIndex = chunk.size;
    }
    this.head.set(--this.headIndex, e);
    this.length++;
  }

  peek(): FrontierEntry | undefined {
    return this.length === 0 ? undefined : this.head.get(this.headIndex);
  }

  shift(): FrontierEntry | undefined {
    if (this.length === 0) return undefined;
    const e = this.head.get(this.headIndex);
    this.head.clear(this.headIndex++);
    this.length--;
    if (e.depth === 0) this.zeroDepth--;
    // A queue that runs dry is dropped by its frontier, never refilled, so
    // an exhausted last chunk needs no reset.
    if (this.headIndex === this.head.size && this.head.next !== null) {
      this.head = this.head.next!;
      this.headIndex = 0;
    }
    return e;
  }

  drain(): FrontierEntry[] {
    const out: FrontierEntry[] = [];
    while (this.length > 0) out.push(this.shift()!);
    return out;
  }

  /** The depth-0 entries, in queue order; the others are neither rebuilt nor visited once all of these are found. */
  depthZero(): FrontierEntry[] {
    const out: FrontierEntry[] = [];
    let chunk = this.head;
    let i = this.headIndex;
    for (let left = this.length; left > 0 && out.length < this.zeroDepth; left--) {
      if (i === chunk.size) {
        chunk = chunk.next!;
        i = 0;
      }
      if (chunk.isDepthZero(i)) out.push(chunk.get(i));
      i++;
    }
    return out;
  }
}

/**
 * A host's queue. Most hosts of a broad crawl have one URL queued (their
 * seed, or the one link found to them), and an EntryQueue with its first
 * chunk costs ~280 bytes: one entry is kept alone instead, as its URL string
 * when it has a seed's shape (depth 0, no parent, nothing else: 0 bytes
 * more), else as a copy of the entry (~50 bytes). A second entry turns it
 * into an EntryQueue.
 */
type HostQueue = EntryQueue | string | FrontierEntry;

/** The lone entry as its own value (a copy: callers never get back what they pushed). */
function alone(e: FrontierEntry): string | FrontierEntry {
  return e.parent === null && pack(e) === 0 ? e.url : { ...e };
}

function entryOf(q: string | FrontierEntry): FrontierEntry {
  return typeof q === 'string' ? unpack(q, null, 0) : { ...q };
}

export class MemoryFrontier {
  private readonly queues = new Map<string, HostQueue>();
  private readonly seen = new SeenSet();
  private total = 0;

  markSeen(url: string): boolean {
    return this.seen.add(url);
  }

  isSeen(url: string): boolean {
    return this.seen.has(url);
  }

  push(hostKey: string, entry: FrontierEntry): void {
    const q = this.queues.get(hostKey);
    if (q === undefined) this.queues.set(hostKey, alone(entry));
    else if (q instanceof EntryQueue) q.push(entry);
    else this.queues.set(hostKey, queueOf(entryOf(q), entry));
    this.total++;
  }

  unshift(hostKey: string, entry: FrontierEntry): void {
    const q = this.queues.get(hostKey);
    if (q === undefined) this.queues.set(hostKey, alone(entry));
    else if (q instanceof EntryQueue) q.unshift(entry);
    else this.queues.set(hostKey, queueOf(entry, entryOf(q)));
    this.total++;
  }

  peek(hostKey: string): FrontierEntry | undefined {
    const q = this.queues.get(hostKey);
    if (q === undefined) return undefined;
    return q instanceof EntryQueue ? q.peek() : entryOf(q);
  }

  shift(hostKey: string): FrontierEntry | undefined {
    const q = this.queues.get(hostKey);
    if (q === undefined) return undefined;
    let e: FrontierEntry | undefined;
    if (q instanceof EntryQueue) {
      e = q.shift();
      if (!e) return undefined;
      if (q.length === 0) this.queues.delete(hostKey);
    } else {
      e = entryOf(q);
      this.queues.delete(hostKey);
    }
    this.total--;
    return e;
  }

  size(hostKey?: string): number {
    if (hostKey === undefined) return this.total;
    const q = this.queues.get(hostKey);
    return q === undefined ? 0 : q instanceof EntryQueue ? q.length : 1;
  }

  hosts(): IterableIterator<string> {
    return this.queues.keys();
  }

  drain(hostKey: string): FrontierEntry[] {
    const q = this.queues.get(hostKey);
    if (!q) return [];
    this.queues.delete(hostKey);
    const out = q instanceof EntryQueue ? q.drain() : [entryOf(q)];
    this.total -= out.length;
    return out;
  }

  /** Empties one host's queue at once: how many entries it held, and those of depth 0. */
  clear(hostKey: string): { removed: number; depthZero: FrontierEntry[] } {
    const q = this.queues.get(hostKey);
    if (!q) return { removed: 0, depthZero: [] };
    this.queues.delete(hostKey);
    if (!(q instanceof EntryQueue)) {
      this.total--;
      const e = entryOf(q);
      return { removed: 1, depthZero: e.depth === 0 ? [e] : [] };
    }
    this.total -= q.length;
    return { removed: q.length, depthZero: q.depthZero() };
  }

  seenCount(): number {
    return this.seen.size;
  }
}

function queueOf(first: FrontierEntry, second: FrontierEntry): EntryQueue {
  const q = new EntryQueue();
  q.push(first);
  q.push(second);
  return q;
}
