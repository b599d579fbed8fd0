import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base36, pageKey } from '../../src/store/redis-history.js';
import { fingerprint } from '../../src/util/seen-set.js';

describe('Redis page keys', () => {
  it('base36 writes what Number#toString(36) writes, for every safe integer from 0', () => {
    for (const n of [0, 1, 35, 36, 36 ** 6 - 1, 36 ** 6, 36 ** 6 + 1, 2 ** 32, 2 ** 53 - 1]) expect(base36(n)).toBe(n.toString(36));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(base36(n)).toBe(n.toString(36));
      }),
      { numRuns: 2_000 },
    );
  });

  it('are the keys earlier versions stored: the fingerprint in base 36', () => {
    fc.assert(
      fc.property(fc.webUrl(), (url) => {
        expect(pageKey(url)).toBe(fingerprint(url).toString(36));
      }),
      { numRuns: 300 },
    );
  });
});
