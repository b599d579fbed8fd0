/**
 * The default store: the whole crawl state in this process's memory, answered
 * synchronously (so the crawl loop never awaits it). Queues and the seen set
 * are the compact ones of memory-frontier.ts (≤ 150 B per queued URL, ≤ 16 B
 * per seen-only URL); leases are a map from id to lease; delayed entries a
 * time heap. Nothing survives the process: `open` on a fresh store always
 * starts a new crawl.
 */
import type { HostSaved } from '../politeness/host-state.js';
import type { RobotsRecord } from '../robots/types.js';
import type { Charge, Cleared, CounterName, CrawlMeta, CrawlStore, FrontierEntry, Lease, OpenResult, RecordLog, Spending, StoreCounts } from './crawl-store.js';
import { SpendBook } from './spend-book.js';
import { MemoryFrontier } from './memory-frontier.js';
import { TimeHeap } from '../util/time-heap.js';
import { MemoryHistory } from './page-history.js';

export class MemoryStore implements CrawlStore {
  readonly kind = 'memory';
  readonly durable: boolean = false;
  private readonly frontier = new MemoryFrontier();
  private readonly leases = new Map<number, Lease>();
  private readonly delayed = new TimeHeap<{ key: string; entry: FrontierEntry }>();
  private readonly hostRecords = new Map<string, HostSaved>();
  private readonly robotsRecords = new Map<string, RobotsRecord>();
  private readonly counters: Record<CounterName, number> = { started: 0 };
  /** Per-page history (page-history.ts): kept only when the crawl is told a previous run's (`--since`). */
  readonly history = new MemoryHistory();
  private readonly spend = new SpendBook();
  private nextLease = 1;
  private meta: CrawlMeta | null = null;
  private finished = false;
  /** Created on first use: every record appended stays in memory (the crawl appends only on a durable store). */
  private log: unknown[] | null = null;

  open(meta: CrawlMeta): OpenResult {
    if (this.meta) return { resumed: true, finished: this.finished, meta: this.meta };
    this.meta = { seeds: [...meta.seeds], configFingerprint: meta.configFingerprint };
    return { resumed: false, finished: false, meta: this.meta };
  }

  finish(): void {
    this.finished = true;
  }

  close(): void {}

  reserveSpend(lease: Lease, money: Charge, limit: number): boolean {
    return this.spend.reserve(lease, money, limit);
  }

  spending(): Spending {
    return this.spend.spending();
  }

  add(url: string, key: string, entry: FrontierEntry | null): boolean {
    if (!this.frontier.markSeen(url)) return false;
    if (entry) this.frontier.push(key, entry);
    return true;
  }

  isSeen(url: string): boolean {
    return this.frontier.isSeen(url);
  }

  claim(key: string, _now: number): Lease | undefined {
    const entry = this.frontier.shift(key);
    if (!entry) return undefined;
    const lease: Lease = { id: this.nextLease++, key, entry };
    this.leases.set(lease.id, lease);
    return lease;
  }

  complete(lease: Lease, _outcome?: string, charge?: Charge): void {
    this.take(lease);
    this.spend.end(lease.id);
    if (charge) this.spend.charge(lease.key, charge);
  }

  release(lease: Lease, entry: FrontierEntry, dueAt?: number): void {
    this.take(lease);
    this.spend.end(lease.id);
    if (dueAt === undefined) this.frontier.unshift(lease.key, entry);
    else this.delayed.push(dueAt, { key: lease.key, entry: { ...entry } });
  }

  promoteDue(now: number): string[] {
    const keys: string[] = [];
    while (this.delayed.peekTime() <= now) {
      const { key, entry } = this.delayed.pop()!.item;
      this.frontier.unshift(key, entry);
      keys.push(key);
    }
    return keys;
  }

  nextDueAt(): number {
    return this.delayed.peekTime();
  }

  drain(key?: string): FrontierEntry[] {
    if (key !== undefined) {
      const out = this.frontier.drain(key);
      if (this.delayed.size > 0) for (const d of this.delayed.removeWhere((d) => d.key === key)) out.push(d.entry);
      return out;
    }
    const out: FrontierEntry[] = [];
    // One push per entry: push(...queue) passes one argument per URL and overflows the stack on a big queue.
    for (const k of [...this.frontier.hosts()]) for (const e of this.frontier.drain(k)) out.push(e);
    for (const d of this.delayed.drain()) out.push(d.entry);
    return out;
  }

  /** Drops whole queues: a time per host (and per delayed entry), not per queued URL, unless the queue holds depth-0 entries. */
  clear(key?: string): Cleared {
    const counts = new Map<string, number>();
    const depthZero: FrontierEntry[] = [];
    for (const k of key === undefined ? [...this.frontier.hosts()] : [key]) {
      const cleared = this.frontier.clear(k);
      if (cleared.removed > cleared.depthZero.length) counts.set(k, cleared.removed - cleared.depthZero.length);
      for (const e of cleared.depthZero) depthZero.push(e);
    }
    if (this.delayed.size > 0) {
      const removed = key === undefined ? this.delayed.drain() : this.delayed.removeWhere((d) => d.key === key);
      for (const d of removed) {
        if (d.entry.depth === 0) depthZero.push(d.entry);
        else counts.set(d.key, (counts.get(d.key) ?? 0) + 1);
      }
    }
    return { counts: [...counts], depthZero };
  }

  queued(key?: string): number {
    return this.frontier.size(key);
  }

  hostsWithWork(): Iterable<string> {
    return [...this.frontier.hosts()];
  }

  counts(): StoreCounts {
    return { queued: this.frontier.size(), delayed: this.delayed.size, leased: this.leases.size, seen: this.frontier.seenCount() };
  }

  saveHost(key: string, saved: HostSaved): void {
    this.hostRecords.set(key, structuredClone(saved));
  }

  loadHosts(): Array<[string, HostSaved]> {
    return [...this.hostRecords].map(([k, v]) => [k, structuredClone(v)]);
  }

  putRobots(origin: string, record: RobotsRecord): void {
    this.robotsRecords.set(origin, structuredClone(record));
  }

  getRobots(origin: string): RobotsRecord | undefined {
    const record = this.robotsRecords.get(origin);
    return record && structuredClone(record);
  }

  counter(name: CounterName): number {
    return this.counters[name];
  }

  addToCounter(name: CounterName, by: number): number {
    return (this.counters[name] += by);
  }

  recordLog(): RecordLog {
    const log = (this.log ??= []);
    return {
      append: (record) => {
        // A copy, as a store that serialises keeps what was appended, not later changes to it.
        log.push(structuredClone(record));
      },
      async *read() {
        // Up to the length at each step: records appended while reading are read too.
        for (let i = 0; i < log.length; i++) yield structuredClone(log[i]);
      },
    };
  }

  private take(lease: Lease): void {
    if (!this.leases.delete(lease.id)) throw new Error(`lease ${lease.id} (${lease.entry.url}) is not held: completed or released already`);
  }
}
