/**
 * The address each host key is counted under, resolved before its first
 * request is scheduled.
 *
 * Contract:
 * - `state(key, now)` never waits. A key seen for the first time (or whose
 *   answer expired) is looked up in the background and answers PENDING; the
 *   scheduler leaves the host alone, holding no global slot, until
 *   `onResolved(key)` wakes it. A slow lookup therefore delays only its own
 *   host, never a slot or another host.
 * - The answer is an address, `null` (requests to the host go through a
 *   proxy, so the crawl never connects to it and counts no address), or the
 *   Error the lookup failed with: the crawl then records DNS_FAILURE for the
 *   host's URLs without a request.
 * - Answers are kept `ttlMs` (failures `negativeTtlMs`), as the fetcher's DNS
 *   cache keeps them (dns-cache.ts; the lookup goes through that same cache,
 *   so the connect that follows costs no second question). An expired
 *   address is still used while its refresh is out; an expired failure is
 *   asked again.
 * - At most `maxLookups` lookups run at once; more wait in a FIFO, so a
 *   broad crawl's 100,000 seeds do not flood the resolver (the system
 *   resolver runs on libuv's few threads, which file I/O shares).
 * - `sweep(keep)` drops settled answers of keys the caller no longer keeps a
 *   record of; the next `state` asks again (the DNS cache answers at once).
 *
 * Cost: `state` is one Map lookup, O(1); starting or queueing a lookup O(1).
 */
import type { Clock } from '../clock.js';
import { RingQueue } from '../util/ring-queue.js';

/** The answer is not known yet: its arrival wakes the host. */
export const PENDING = Symbol('pending');

export type AddressState = string | null | Error | typeof PENDING;

export interface HostAddressesOptions {
  clock: Clock;
  /** Resolves a host key ("hostname[:port]") to the address its requests connect to; null when they go through a proxy. */
  lookup(key: string): Promise<string | null>;
  /** Called when a key's answer arrives (or changes). */
  onResolved(key: string): void;
  /** @default 300 000 (the DNS cache's) */
  ttlMs?: number;
  /** @default 30 000 (the DNS cache's) */
  negativeTtlMs?: number;
  /** Lookups under way at once. @default 64 */
  maxLookups?: number;
}

interface Entry {
  /** The last answer; PENDING until the first arrives. */
  answer: AddressState;
  expiresAt: number;
  /** A lookup is queued or running. */
  asking: boolean;
}

export class HostAddresses {
  private readonly entries = new Map<string, Entry>();
  private readonly queued = new RingQueue<string>();
  private running = 0;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxLookups: number;

  constructor(private readonly opts: HostAddressesOptions) {
    this.ttlMs = opts.ttlMs ?? 300_000;
    this.negativeTtlMs = opts.negativeTtlMs ?? 30_000;
    this.maxLookups = opts.maxLookups ?? 64;
  }

  /** The key's answer now; starts a lookup when it has none or it expired. */
  state(key: string, now: number): AddressState {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { answer: PENDING, expiresAt: Infinity, asking: false };
      this.entries.set(key, entry);
      this.ask(key, entry);
      return PENDING;
    }
    if (entry.expiresAt <= now && !entry.asking) {
      this.ask(key, entry);
      // A failure is asked again before anything is recorded; an address serves while its refresh is out.
      if (entry.answer instanceof Error) entry.answer = PENDING;
    }
    return entry.answer;
  }

  /** The key's answer if one is known, without asking: for read-only views. */
  peek(key: string): AddressState | undefined {
    return this.entries.get(key)?.answer;
  }

  /** The failure a key's lookup ended with, while it stands; undefined otherwise. */
  failure(key: string): Error | undefined {
    const answer = this.entries.get(key)?.answer;
    return answer instanceof Error ? answer : undefined;
  }

  /** Lookups running or queued. */
  get pending(): number {
    return this.running + this.queued.length;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops settled answers of keys `keep` says no. O(keys). */
  sweep(keep: (key: string) => boolean): void {
    for (const [key, e] of this.entries) if (!e.asking && !keep(key)) this.entries.delete(key);
  }

  private ask(key: string, entry: Entry): void {
    entry.asking = true;
    if (this.running >= this.maxLookups) {
      this.queued.push(key);
      return;
    }
    this.run(key);
  }

  private run(key: string): void {
    this.running++;
    const settle = (answer: string | null | Error) => {
      this.running--;
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        entry.answer = answer;
        entry.asking = false;
        entry.expiresAt = this.opts.clock.now() + (answer instanceof Error ? this.negativeTtlMs : this.ttlMs);
      }
      while (this.running < this.maxLookups && this.queued.length > 0) this.run(this.queued.shift());
      this.opts.onResolved(key);
    };
    let asked: Promise<string | null>;
    try {
      asked = this.opts.lookup(key);
    } catch (err) {
      asked = Promise.reject(err);
    }
    asked.then(settle, (err: unknown) => settle(err instanceof Error ? err : new Error(String(err))));
  }
}
