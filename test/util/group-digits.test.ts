import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupDigits } from '../../src/util/group-digits.js';

describe('groupDigits', () => {
  it('writes an integer as en-US toLocaleString does', () => {
    expect(groupDigits(0)).toBe('0');
    expect(groupDigits(999)).toBe('999');
    expect(groupDigits(1000)).toBe('1,000');
    expect(groupDigits(-1234567)).toBe('-1,234,567');
    expect(groupDigits(Number.MAX_SAFE_INTEGER)).toBe('9,007,199,254,740,991');
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        if (Object.is(n, -0)) return;
        expect(groupDigits(n)).toBe(n.toLocaleString('en-US'));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves what is not a safe integer to toLocaleString', () => {
    for (const n of [1.5, NaN, Infinity, -Infinity, 2 ** 60]) expect(groupDigits(n)).toBe(n.toLocaleString('en-US'));
  });
});
