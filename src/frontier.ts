/**
 * The frontier: URLs waiting to be fetched, one FIFO queue per host key
 * (Mercator's back queues), plus the set of every URL ever accepted.
 *
 * The scheduler only talks to the `Frontier` interface, so a durable or shared
 * store can replace the in-memory one without touching scheduling.
 */
import { SeenSet } from './seen-set.js';

export interface FrontierEntry {
  /** Canonical URL. */
  url: string;
  depth: number;
  parent: string | null;
  /** Redirect hops that led here (0 for a linked URL). */
  hops: number;
  /** Fetch attempts already made (retries re-enter with attempt + 1). */
  attempt: number;
  /** Times the server throttled this URL (a budget separate from `attempt`). */
  throttles?: number;
}

export interface Frontier {
  /** Records a canonical URL as accepted; false if it already was. */
  markSeen(url: string): boolean;
  isSeen(url: string): boolean;
  push(hostKey: string, entry: FrontierEntry): void;
  /** Puts an entry back at the head of its host's queue (it was peeked but could not go yet). */
  unshift(hostKey: string, entry: FrontierEntry): void;
  peek(hostKey: string): FrontierEntry | undefined;
  shift(hostKey: string): FrontierEntry | undefined;
  /** Queued entries for one host, or in total. */
  size(hostKey?: string): number;
  /** Host keys with queued entries. */
  hosts(): IterableIterator<string>;
  /** Removes and returns every queued entry of a host. */
  drain(hostKey: string): FrontierEntry[];
  seenCount(): number;
}

/** A FIFO that does not copy on shift: a head index, compacted when half the array is consumed. */
class EntryQueue {
  private items: (FrontierEntry | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(e: FrontierEntry): void {
    this.items.push(e);
  }

  unshift(e: FrontierEntry): void {
    if (this.head > 0) this.items[--this.head] = e;
    else this.items.unshift(e);
  }

  peek(): FrontierEntry | undefined {
    return this.items[this.head];
  }

  shift(): FrontierEntry | undefined {
    if (this.head >= this.items.length) return undefined;
    const e = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return e;
  }

  drain(): FrontierEntry[] {
    const out = this.items.slice(this.head) as FrontierEntry[];
    this.items = [];
    this.head = 0;
    return out;
  }
}

export class MemoryFrontier implements Frontier {
  private readonly queues = new Map<string, EntryQueue>();
  private readonly seen = new SeenSet();
  private total = 0;

  markSeen(url: string): boolean {
    return this.seen.add(url);
  }

  isSeen(url: string): boolean {
    return this.seen.has(url);
  }

  push(hostKey: string, entry: FrontierEntry): void {
    this.queueFor(hostKey).push(entry);
    this.total++;
  }

  unshift(hostKey: string, entry: FrontierEntry): void {
    this.queueFor(hostKey).unshift(entry);
    this.total++;
  }

  peek(hostKey: string): FrontierEntry | undefined {
    return this.queues.get(hostKey)?.peek();
  }

  shift(hostKey: string): FrontierEntry | undefined {
    const q = this.queues.get(hostKey);
    const e = q?.shift();
    if (!e) return undefined;
    this.total--;
    if (q!.length === 0) this.queues.delete(hostKey);
    return e;
  }

  size(hostKey?: string): number {
    if (hostKey === undefined) return this.total;
    return this.queues.get(hostKey)?.length ?? 0;
  }

  hosts(): IterableIterator<string> {
    return this.queues.keys();
  }

  drain(hostKey: string): FrontierEntry[] {
    const q = this.queues.get(hostKey);
    if (!q) return [];
    this.queues.delete(hostKey);
    const out = q.drain();
    this.total -= out.length;
    return out;
  }

  seenCount(): number {
    return this.seen.size;
  }

  private queueFor(hostKey: string): EntryQueue {
    let q = this.queues.get(hostKey);
    if (!q) {
      q = new EntryQueue();
      this.queues.set(hostKey, q);
    }
    return q;
  }
}
