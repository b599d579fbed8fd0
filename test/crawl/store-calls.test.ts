/**
 * StoreCalls (crawl/crawl-context.ts): a store's plain answer is used at
 * once, a promise is counted until it settles and then reported as
 * `settled`, and a failure, asynchronous or not, fails the crawl.
 */
import { describe, expect, it } from 'vitest';
import { StoreCalls } from '../../src/crawl/crawl-context.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { CrawlStore } from '../../src/store/crawl-store.js';

function calls(store: CrawlStore = new MemoryStore()) {
  const seen = { settled: 0, failed: [] as unknown[] };
  const c = new StoreCalls(store, {
    settled: () => seen.settled++,
    fail: (err) => seen.failed.push(err),
  });
  return { c, seen };
}

describe('StoreCalls', () => {
  it('uses a plain answer at once, counts nothing and does not report a settle', () => {
    const { c, seen } = calls();
    let got: number | undefined;
    c.settle(7, (v) => (got = v));
    expect(got).toBe(7);
    expect(c.pending).toBe(0);
    expect(seen.settled).toBe(0);
  });

  it('counts a promise until it settles, then hands on its answer and reports the settle after it', async () => {
    const { c, seen } = calls();
    let resolve!: (v: string) => void;
    const order: string[] = [];
    c.settle(new Promise<string>((r) => (resolve = r)), (v) => order.push(`then ${v} (settled ${seen.settled})`));
    expect(c.pending).toBe(1);
    resolve('ok');
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual(['then ok (settled 0)']);
    expect(seen.settled).toBe(1);
    expect(c.pending).toBe(0);
  });

  it('a rejected call fails the crawl with its error, and its then never runs', async () => {
    const { c, seen } = calls();
    const err = new Error('store gone');
    let ran = false;
    c.settle(Promise.reject(err), () => (ran = true));
    await new Promise((r) => setImmediate(r));
    expect(seen.failed).toEqual([err]);
    expect(ran).toBe(false);
    expect(seen.settled).toBe(0);
    expect(c.pending).toBe(0);
  });

  it('add: a store that throws at once fails the crawl and answers false (never a page error)', () => {
    const store = new MemoryStore();
    const err = new Error('disk full');
    store.add = () => {
      throw err;
    };
    const { c, seen } = calls(store);
    expect(c.add('http://a.localhost/', 'a.localhost', null)).toBe(false);
    expect(seen.failed).toEqual([err]);
  });

  it('add: hands on the store answer, new then repeat', () => {
    const { c } = calls();
    expect(c.add('http://a.localhost/', 'a.localhost', null)).toBe(true);
    expect(c.add('http://a.localhost/', 'a.localhost', null)).toBe(false);
  });
});
