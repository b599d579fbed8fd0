import { describe, expect, it } from 'vitest';
import { keepAfterCrash } from '../../src/store/output-ledger.js';

describe('keepAfterCrash: the -o lines after the last commit that a resumed crawl keeps', () => {
  const done = new Map<string, number>([
    ['http://a.example/done', 5_000],
    ['http://a.example/parent-done', 5_000],
  ]);
  const isDone = (url: string, claimedAt?: number) => done.has(url) && (claimedAt === undefined || done.get(url)! >= claimedAt);
  // Queued and never completed: the resumed crawl claims it again.
  const handedOut = new Set(['http://a.example/queued']);
  const state = { isDone, willHandOut: (url: string) => handedOut.has(url) };
  const line = (record: object) => JSON.stringify(record);
  const at = (ms: number) => new Date(ms).toISOString();

  it('keeps a page record only if its URL is done by that fetch or a later one', () => {
    expect(keepAfterCrash(line({ type: 'page', url: 'http://a.example/done', fetchedAt: at(4_000) }), state)).toBe(true);
    expect(keepAfterCrash(line({ type: 'page', url: 'http://a.example/done', fetchedAt: at(6_000) }), state)).toBe(false);
    expect(keepAfterCrash(line({ type: 'page', url: 'http://a.example/lost', fetchedAt: at(4_000) }), state)).toBe(false);
  });

  it('keeps a skip record if its URL or the page it was found on is done: else that page writes it again', () => {
    const skip = (url: string, parent: string | null) => line({ type: 'skipped', url, reason: 'robots', depth: 1, parent });
    expect(keepAfterCrash(skip('http://a.example/x', 'http://a.example/parent-done'), state)).toBe(true);
    expect(keepAfterCrash(skip('http://a.example/done', null), state)).toBe(true);
    expect(keepAfterCrash(skip('http://a.example/x', 'http://a.example/lost'), state)).toBe(false);
  });

  it('drops a skip record whose URL the state hands out again, whatever its parent: skipped when claimed, it is skipped again', () => {
    const skip = line({ type: 'skipped', url: 'http://a.example/queued', reason: 'robots', depth: 1, parent: 'http://a.example/parent-done' });
    expect(keepAfterCrash(skip, state)).toBe(false);
  });

  it('keeps other records and lines it cannot read', () => {
    expect(keepAfterCrash(line({ type: 'robots', url: 'http://a.example/robots.txt', status: 200 }), state)).toBe(true);
    expect(keepAfterCrash('{"type":"page","url":', state)).toBe(true);
  });
});
