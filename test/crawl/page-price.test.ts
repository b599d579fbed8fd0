/**
 * HTTP 402 pricing in the crawl loop, on a scripted priced site under fake
 * time: a 402 is recorded with its price and never retried blindly; with
 * --max-price a quote within it is paid with crawler-exact-price, later
 * requests to the host offer crawler-max-price, and crawler-charged adds up
 * in the ledger; --budget stops offers exactly at its limit.
 */
import { describe, expect, it } from 'vitest';
import { fakeCrawl } from '../support/fake-crawl.js';
import type { ScriptedResponse, ScriptedSite, ServerRequest } from '../support/scripted-fetcher.js';
import { parsePrice } from '../../src/politeness/crawl-price.js';
import { statsToJson, formatSummary } from '../../src/output/summary.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';

const PAGES = ['/a', '/b', '/c', '/d'];

/** Every page costs `price`: paid when the request offers at least that, else a 402 quoting it. */
function pricedSite(price = 'USD 0.01'): ScriptedSite {
  const quote = parsePrice(price)!;
  return {
    pages: {
      '/': PAGES.map((p) => `<a href="${p}">${p}</a>`).join(' '),
      ...Object.fromEntries(PAGES.map((p) => [p, `<title>${p}</title>`])),
    },
    handler: (req: ServerRequest, next): ScriptedResponse => {
      const h = req.entry.headers;
      const exact = parsePrice(h['crawler-exact-price']);
      const max = parsePrice(h['crawler-max-price']);
      const pays =
        (exact && exact.currency === quote.currency && exact.micros === quote.micros) || (max && max.currency === quote.currency && max.micros >= quote.micros);
      if (pays) {
        const page = next();
        return { ...page, headers: { ...page.headers, 'crawler-charged': price } };
      }
      return { status: 402, headers: { 'crawler-price': price }, body: 'pay up' };
    },
  };
}

describe('crawl pricing (HTTP 402)', () => {
  it('without --max-price a 402 is recorded with its price and requested once', async () => {
    const run = await fakeCrawl({ sites: { 'paid.test': pricedSite() }, seeds: ['http://paid.test/'] });
    expect(run.pages).toEqual([expect.objectContaining({ url: 'http://paid.test/', status: 402, price: { amount: '0.01', currency: 'USD' } })]);
    expect(run.pages[0].charged).toBeUndefined();
    expect(
      run.fetcher
        .requests()
        .filter((e) => e.path === '/')
        .map((e) => e.headers),
    ).toEqual([{}]);
    expect(run.stats.spend).toBeUndefined();
  });

  it('pays a quote within --max-price with crawler-exact-price, then offers crawler-max-price; charges add up per host', async () => {
    const run = await fakeCrawl({
      sites: { 'paid.test': pricedSite() },
      seeds: ['http://paid.test/'],
      flags: { maxPrice: '0.05', signKey: ['key'], signatureAgent: 'https://bot.example' },
    });
    const seedRequests = run.fetcher.requests().filter((e) => e.path === '/');
    // The seed: quoted, then asked again paying exactly the quote.
    expect(seedRequests.map((e) => [e.status, e.headers])).toEqual([
      [402, {}],
      [200, { 'crawler-exact-price': 'USD 0.01' }],
    ]);
    // The host priced a page: every later request offers --max-price in its currency, and is paid at once.
    for (const p of PAGES) {
      expect(
        run.fetcher
          .requests()
          .filter((e) => e.path === p)
          .map((e) => [e.status, e.headers]),
      ).toEqual([[200, { 'crawler-max-price': 'USD 0.05' }]]);
    }
    expect(run.pages).toHaveLength(5);
    for (const page of run.pages) expect(page).toMatchObject({ status: 200, charged: { amount: '0.01', currency: 'USD' } });
    expect(run.stats.spend).toEqual({ USD: { micros: 50_000, hosts: { 'paid.test': 50_000 } } });
    expect(statsToJson(run.stats).spend).toEqual({ USD: { amount: '0.05', hosts: { 'paid.test': '0.05' } } });
    expect(formatSummary(run.stats)).toMatch(/^ {2}spent {4}USD 0\.05 \(paid\.test 0\.05\)$/m);
  });

  it('a quote above --max-price is recorded, not paid and not asked again', async () => {
    const run = await fakeCrawl({
      sites: { 'dear.test': pricedSite('USD 0.10') },
      seeds: ['http://dear.test/'],
      flags: { maxPrice: '0.05', signKey: ['key'], signatureAgent: 'https://bot.example' },
    });
    expect(run.pages).toEqual([expect.objectContaining({ status: 402, price: { amount: '0.10', currency: 'USD' } })]);
    expect(run.fetcher.requests().filter((e) => e.path === '/')).toHaveLength(1);
  });

  it('a --max-price in another currency pays nothing', async () => {
    const run = await fakeCrawl({
      sites: { 'eu.test': pricedSite('EUR 0.01') },
      seeds: ['http://eu.test/'],
      flags: { maxPrice: 'USD 0.05', signKey: ['key'], signatureAgent: 'https://bot.example' },
    });
    expect(run.pages).toEqual([expect.objectContaining({ status: 402, price: { amount: '0.01', currency: 'EUR' } })]);
  });

  it('--budget stops offers exactly at its limit: what is left is skipped with reason price', async () => {
    const run = await fakeCrawl({
      sites: { 'paid.test': pricedSite() },
      seeds: ['http://paid.test/'],
      flags: { maxPrice: '0.05', budget: '0.03', signKey: ['key'], signatureAgent: 'https://bot.example' },
    });
    const paid = run.pages.filter((p) => p.charged);
    expect(paid).toHaveLength(3);
    expect(run.stats.spend).toEqual({ USD: { micros: 30_000, hosts: { 'paid.test': 30_000 } } });
    // An offer of 0.05 could pass a 0.03 budget: never sent; each page is quoted, then paid exactly while the budget holds it.
    expect(run.fetcher.requests().some((e) => e.headers['crawler-max-price'] !== undefined)).toBe(false);
    const skipped = run.skipped.filter((s) => s.reason === 'price');
    expect(skipped).toHaveLength(2);
    for (const s of skipped) {
      expect(s).toMatchObject({ price: { amount: '0.01', currency: 'USD' } });
      expect(s.detail).toMatch(/USD 0\.01 quoted; paying it could pass the budget \(budget USD 0\.03\)/);
    }
    // The skipped pages were quoted once each and never asked again.
    for (const s of skipped)
      expect(
        run.fetcher
          .requests()
          .filter((e) => `http://paid.test${e.path}` === s.url)
          .map((e) => e.status),
      ).toEqual([402]);
    expect(run.stats.skippedByReason.get('price')).toBe(2);
  });
});

describe('pricing settings', () => {
  const settings = (flags: Record<string, string | string[]>, config: Record<string, unknown> = {}) =>
    buildSettings(validateConfig(config, 'test config'), flags);

  it('--max-price without --sign-key is refused: a paying crawler must be identifiable', () => {
    expect(() => settings({ maxPrice: '0.05' })).toThrow(/^--max-price needs --sign-key/);
    expect(() => settings({}, { maxPrice: '0.05' })).toThrow(/^--max-price needs --sign-key/);
    expect(settings({ maxPrice: '0.05', signKey: ['k'], signatureAgent: 'https://bot.example', budget: 'USD 1' }).pricing).toEqual({
      maxPrice: { micros: 50_000 },
      budget: { micros: 1_000_000, currency: 'USD' },
    });
  });

  it('a malformed amount is one line naming the flag', () => {
    expect(() => settings({ maxPrice: '5 cents', signKey: ['k'], signatureAgent: 'https://bot.example' })).toThrow(
      /--max-price.*expected an amount like "0.05" or "USD 0.05"/,
    );
    expect(() => settings({ budget: '-1' })).toThrow(/--budget.*expected an amount/);
  });
});
