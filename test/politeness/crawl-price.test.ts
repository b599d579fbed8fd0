/** Pricing headers and amounts: decimal strings to whole micro-units and back, never through a float. */
import { describe, expect, it } from 'vitest';
import { formatAmount, formatMoney, limitIn, parseAmount, parseLimit, parsePrice } from '../../src/politeness/crawl-price.js';

describe('crawl prices', () => {
  it.each([
    ['0.01', 10_000],
    ['0.1', 100_000],
    ['12', 12_000_000],
    ['0.000001', 1],
    ['1000000000.5', 1_000_000_000_500_000],
  ])('amount %s is %i micro-units', (text, micros) => {
    expect(parseAmount(text)).toBe(micros);
  });

  it.each(['', '-1', '1e3', '0.0000001', '.5', '1.', '0,01', ' 1', '1000000001', 'NaN'])('refuses amount %j', (text) => {
    expect(parseAmount(text)).toBeUndefined();
  });

  it('writes amounts back with at least two places, exactly', () => {
    expect([10_000, 1, 12_000_000, 1_234_500].map(formatAmount)).toEqual(['0.01', '0.000001', '12.00', '1.2345']);
    // A hundred thousand cent charges add up to exactly 1000.00, which floats do not.
    let micros = 0;
    for (let i = 0; i < 100_000; i++) micros += parseAmount('0.01')!;
    expect(formatAmount(micros)).toBe('1000.00');
  });

  it('reads a price header as the server states its currency', () => {
    expect(parsePrice('USD 0.01')).toEqual({ currency: 'USD', micros: 10_000 });
    expect(parsePrice('  eur   1.5 ')).toEqual({ currency: 'eur', micros: 1_500_000 });
    for (const bad of [undefined, '', '0.01', 'USD', 'USD 0.01 x', '$ 0.01', 'USD -1']) expect(parsePrice(bad)).toBeUndefined();
    expect(formatMoney({ currency: 'USD', micros: 50_000 })).toBe('USD 0.05');
  });

  it('reads a limit with or without its currency', () => {
    expect(parseLimit('0.05')).toEqual({ micros: 50_000 });
    expect(parseLimit('USD 5')).toEqual({ micros: 5_000_000, currency: 'USD' });
    expect(parseLimit('five')).toEqual({ problem: expect.stringMatching(/expected an amount like "0.05" or "USD 0.05".*"five"/) });
    expect(limitIn({ micros: 5, currency: 'USD' }, 'EUR')).toBeUndefined();
    expect(limitIn({ micros: 5 }, 'EUR')).toBe(5);
  });
});
