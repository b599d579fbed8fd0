/**
 * The config fields of crawl pricing (politeness/crawl-price.ts): `maxPrice`
 * and `budget`, spread into the file schema; the flags `--max-price` and
 * `--budget` parse through the same `moneyLimit`, so a bad amount reads
 * the same from a flag as from the file. `pricingIdentityProblem` is the one
 * rule that ties pricing to request signing.
 */
import { z } from 'zod';
import { once } from './fields.js';
import { showValue } from './units.js';
import { parseLimit, type MoneyLimit } from '../politeness/crawl-price.js';

/** "0.05" or "USD 0.05" → a limit in micro-units; anything else is one problem. */
export function moneyLimit() {
  return z.string({ error: (i) => `expected an amount like "0.05" or "USD 0.05" as a string, got ${showValue(i.input)}` }).transform((text, ctx) => {
    const parsed = parseLimit(text);
    if ('problem' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.problem, input: text });
      return z.NEVER;
    }
    return parsed satisfies MoneyLimit;
  });
}

/** Top-level fields of the config file. */
export const pricingFields = once(() => ({
  maxPrice: moneyLimit()
    .optional()
    .describe(
      'The most the crawl pays for one request to a host that prices its pages (HTTP 402 with crawler-price): "0.05" in whatever currency the server states, or "USD 0.05" for that currency only. Offered as crawler-max-price; a page quoted within it is asked again with crawler-exact-price. Needs request signing (--sign-key): a paying crawler must be identifiable. Default none: a 402 is recorded with its price, never paid.',
    ),
  budget: moneyLimit()
    .optional()
    .describe(
      'The most the whole crawl spends (per currency, or in the one named: "USD 5"); with --redis, one budget for every worker. Once the next charge could pass it, no more offers are sent and priced pages are skipped with reason "price". Default none: only maxPrice bounds each request.',
    ),
}));

/**
 * Paying crawlers must be identifiable: a price limit without a signing key
 * is refused. `signKey`: the signing key as configured (`--sign-key`, or the
 * config's `identity.key`), undefined when none. The one place this rule
 * lives, so request signing wires into it.
 */
export function pricingIdentityProblem(maxPrice: MoneyLimit | undefined, signKey: string | undefined): string | undefined {
  if (maxPrice === undefined || (signKey !== undefined && signKey !== '')) return undefined;
  return '--max-price needs --sign-key: a crawler that pays must be identifiable (signed requests)';
}
