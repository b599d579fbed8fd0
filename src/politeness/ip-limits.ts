/**
 * Per-IP politeness: the hosts that share one address (shared hosting, a CDN
 * edge) limited together, on top of each host's own limiter. Off unless the
 * config sets `perIp` (or `--ip-rate` / `--ip-concurrency`).
 *
 * Contract:
 * - One record per address, created on first use, holding a HostLimiter with
 *   the per-IP policy: the gap between starts to the address (timed from
 *   the real write, as a host's is) and the requests in flight to it. The
 *   scheduler starts a request only when both the host's limiter and its
 *   address's say go now, and acquires, dispatches, answers and releases
 *   both together.
 * - A host that is ready but whose address is not waits in the address's
 *   FIFO (`wait`), holding no global slot and no place in the scheduler's
 *   ready list. When the address may start again (its gap is over, a
 *   request was written or ended), `next` hands out ONE waiting host; the
 *   scheduler visits it and then passes the turn on if the address is still
 *   ready. So a start costs O(1) whatever the number of hosts on the
 *   address, never a wake-up of all of them.
 * - `sweep` forgets addresses whose state constrains nothing (idle limiter,
 *   nobody waiting); a forgotten address comes back fresh and equivalent.
 */
import type { IpPolicy, WindowLimit } from '../config/settings-types.js';
import { RingQueue } from '../util/ring-queue.js';
import { HostLimiter, type LimiterPolicy } from './host-limiter.js';

export type { IpPolicy } from '../config/settings-types.js';

/** The state of one address. */
export interface IpState {
  readonly ip: string;
  readonly limiter: HostLimiter;
  /** Scheduler: the wake time this address is filed under (Infinity: not filed). */
  wakeAt: number;
  /** Hosts ready but for this address, first come first served; null while none. */
  waiting: { queue: RingQueue<string>; keys: Set<string> } | null;
}

const NO_WINDOWS: readonly WindowLimit[] = [];

export class IpLimits {
  private readonly records = new Map<string, IpState>();
  private readonly limiterPolicy: LimiterPolicy;

  constructor(readonly policy: IpPolicy) {
    this.limiterPolicy = { intervalMs: policy.intervalMs, windows: NO_WINDOWS, concurrency: policy.concurrency, jitterMs: 0 };
  }

  /** The record of `ip`, created on first use. */
  get(ip: string): IpState {
    let state = this.records.get(ip);
    if (!state) {
      state = { ip, limiter: new HostLimiter(this.limiterPolicy), wakeAt: Infinity, waiting: null };
      this.records.set(ip, state);
    }
    return state;
  }

  peek(ip: string): IpState | undefined {
    return this.records.get(ip);
  }

  get size(): number {
    return this.records.size;
  }

  /** The earliest time a request to `ip` may start (`now` when it may now; Infinity until a request is written or ends). */
  readyAt(ip: string, now: number): number {
    const state = this.records.get(ip);
    return state === undefined ? now : state.limiter.readyAt(now);
  }

  /** `key` is ready but for `ip`: queue it (once) until the address hands it a turn. */
  wait(state: IpState, key: string): void {
    if (state.waiting === null) state.waiting = { queue: new RingQueue<string>(), keys: new Set() };
    if (state.waiting.keys.has(key)) return;
    state.waiting.keys.add(key);
    state.waiting.queue.push(key);
  }

  /** The next host waiting for `state`'s address, taken out of its queue, or undefined when none waits. O(1). */
  next(state: IpState): string | undefined {
    const w = state.waiting;
    if (w === null) return undefined;
    const key = w.queue.shift();
    w.keys.delete(key);
    if (w.queue.length === 0) state.waiting = null;
    return key;
  }

  /** Forgets addresses that constrain nothing. O(addresses); the scheduler runs it with its host sweep. */
  sweep(now: number): void {
    for (const [ip, s] of this.records) {
      if (s.waiting === null && s.wakeAt === Infinity && s.limiter.isIdle(now)) this.records.delete(ip);
    }
  }
}
