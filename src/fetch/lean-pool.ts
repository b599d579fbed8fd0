/**
 * undici's Pool with a small waiting queue. A Pool keeps the requests that
 * wait for a free connection in a FixedQueue whose first buffer is a
 * 2,048-slot array filled up front: 16 KB of heap for every open origin,
 * about half of what an origin costs, for a queue the crawl hardly uses
 * (the scheduler starts at most a host's concurrency at once). A broad
 * crawl keeps thousands of origins open together: at 2,000 hosts these
 * arrays were 33 MB of a 79 MB live heap (BENCHMARKS.md § 9).
 *
 * The pool's queue is swapped for a {@link RingQueue} (16 slots, growing as
 * needed) behind the three methods the Pool calls. The queue is found by
 * its symbol's description; if an undici release names or shapes it
 * otherwise, the pool keeps its own queue and only the saving is lost.
 */
import type { Pool } from 'undici';
import { RingQueue } from '../util/ring-queue.js';
import { QuietPool } from './quiet-close.js';

/** What undici's Pool asks of its waiting queue (FixedQueue's interface). */
class WaitingQueue<T> {
  private readonly items = new RingQueue<T>();

  isEmpty(): boolean {
    return this.items.length === 0;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** null when empty, as FixedQueue answers. */
  shift(): T | null {
    return this.items.length === 0 ? null : this.items.shift();
  }
}

type Holder = Record<symbol, unknown>;

/** The Pool's queue symbol, looked up once; null when this undici has none we recognise. */
let queueSymbol: symbol | null | undefined;

function findQueue(pool: Holder): symbol | null {
  for (const s of Object.getOwnPropertySymbols(pool)) {
    const value = pool[s] as Partial<Record<'isEmpty' | 'push' | 'shift', unknown>> | null;
    if (s.description === 'queue' && value && typeof value.isEmpty === 'function' && typeof value.push === 'function' && typeof value.shift === 'function')
      return s;
  }
  return null;
}

/** A Pool for `origin` whose waiting queue costs ~200 bytes instead of 16 KB (and whose close makes no error: quiet-close.ts). */
export function leanPool(origin: string | URL, options: Pool.Options): Pool {
  const pool = new QuietPool(origin, options);
  const holder = pool as unknown as Holder;
  queueSymbol ??= findQueue(holder);
  // Only a queue still empty is replaced: nothing can be waiting in it yet.
  if (queueSymbol !== null && (holder[queueSymbol] as { isEmpty(): boolean }).isEmpty()) holder[queueSymbol] = new WaitingQueue();
  return pool;
}

/** Whether `pool` waits in a lean queue (for tests and the memory probe). */
export function isLean(pool: Pool): boolean {
  return queueSymbol != null && (pool as unknown as Holder)[queueSymbol] instanceof WaitingQueue;
}
