/**
 * Fans one abort signal out to every exchange running under it. A fetcher
 * keeps one AbortFanout and registers each exchange for as long as its
 * fetch() call runs.
 */
import type { Exchange } from './exchange.js';

/**
 * Aborts every exchange running under a signal, with ONE listener per signal
 * however many requests share it (the crawler passes one signal to all of
 * them: a listener per request cost an add and a remove each time, and a
 * MaxListenersExceededWarning past ten).
 */
export class AbortFanout {
  private readonly running = new WeakMap<AbortSignal, Set<Exchange>>();

  add(signal: AbortSignal, exchange: Exchange): void {
    let set = this.running.get(signal);
    if (set === undefined) {
      const members = new Set<Exchange>();
      set = members;
      this.running.set(signal, members);
      signal.addEventListener(
        'abort',
        () => {
          for (const e of members) e.abandon(signal.reason);
          members.clear();
        },
        { once: true },
      );
    }
    set.add(exchange);
  }

  delete(signal: AbortSignal, exchange: Exchange): void {
    this.running.get(signal)?.delete(exchange);
  }
}
