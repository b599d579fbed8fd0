import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AbortFanout } from '../../src/fetch/abort-fanout.js';
import { Exchange } from '../../src/fetch/exchange.js';

/** Settles to the exchange's head failure, or to 'pending' if it has none yet. */
async function headState(exchange: Exchange): Promise<unknown> {
  const pending = Symbol('pending');
  const outcome = await Promise.race([
    exchange.head.then(
      () => 'resolved',
      (reason: unknown) => reason,
    ),
    new Promise((resolve) => setImmediate(resolve, pending)),
  ]);
  return outcome === pending ? 'pending' : outcome;
}

describe('AbortFanout', () => {
  it('abandons every exchange registered under a signal with its reason, through one listener', async () => {
    const fanout = new AbortFanout();
    const controller = new AbortController();
    const exchanges = [new Exchange(1024, {}), new Exchange(1024, {}), new Exchange(1024, {})];
    for (const exchange of exchanges) fanout.add(controller.signal, exchange);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);

    const reason = new Error('crawl stopped');
    controller.abort(reason);
    for (const exchange of exchanges) expect(await headState(exchange)).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaves alone an exchange deleted before the abort, and exchanges under other signals', async () => {
    const fanout = new AbortFanout();
    const aborted = new AbortController();
    const other = new AbortController();
    const finished = new Exchange(1024, {});
    const running = new Exchange(1024, {});
    const elsewhere = new Exchange(1024, {});
    fanout.add(aborted.signal, finished);
    fanout.add(aborted.signal, running);
    fanout.add(other.signal, elsewhere);
    fanout.delete(aborted.signal, finished);

    aborted.abort('stop');
    expect(await headState(running)).toBe('stop');
    expect(await headState(finished)).toBe('pending');
    expect(await headState(elsewhere)).toBe('pending');
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(1);
  });
});
