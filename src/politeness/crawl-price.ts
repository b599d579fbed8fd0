/**
 * Crawl pricing as servers state it (HTTP 402 pay-per-crawl): a `402` names
 * its price in `crawler-price: USD 0.01`; a client offers to pay up to an
 * amount (`crawler-max-price`) or exactly the quoted price
 * (`crawler-exact-price`); a paid answer says `crawler-charged: USD 0.01`.
 *
 * Money is never a float here: an amount is a whole number of micro-units
 * (millionths of the currency's unit), parsed from and written back to
 * decimal strings, so a ledger of a million cent charges adds up exactly.
 * The currency is kept as the server spelt it.
 */

/** Decimal places an amount may have: micro-units. */
const PLACES = 6;
const UNIT = 10 ** PLACES;
/** Far below Number.MAX_SAFE_INTEGER micro-units (9 × 10^9 units), so sums stay exact. */
const MAX_UNITS = 1e9;

export interface Money {
  /** As the server states it ("USD"). */
  currency: string;
  /** Whole micro-units: 10 000 is 0.01. */
  micros: number;
}

/** A limit a user gives (--max-price, --budget): an amount, in one currency or in whatever currency a server states. */
export interface MoneyLimit {
  micros: number;
  /** Only this currency is paid; absent: the amount holds in any currency a server states, each counted apart. */
  currency?: string;
}

const CURRENCY = /^[A-Za-z][A-Za-z0-9]{0,11}$/;
const AMOUNT = /^(\d{1,10})(?:\.(\d{1,6}))?$/;

/** "0.01" → 10000 micro-units; undefined when not a plain non-negative decimal with at most 6 places. */
export function parseAmount(text: string): number | undefined {
  const m = AMOUNT.exec(text);
  if (!m) return undefined;
  const units = Number(m[1]);
  if (units > MAX_UNITS) return undefined;
  return units * UNIT + Number((m[2] ?? '').padEnd(PLACES, '0'));
}

/** 10000 → "0.01": at least two places, no trailing zeros past them. */
export function formatAmount(micros: number): string {
  const units = Math.floor(micros / UNIT);
  const frac = String(micros % UNIT)
    .padStart(PLACES, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `${units}.${frac}`;
}

/** A price header's value ("USD 0.01") → Money; undefined when it is not a currency and an amount. */
export function parsePrice(value: string | undefined): Money | undefined {
  if (value === undefined) return undefined;
  const parts = value.trim().split(/\s+/);
  if (parts.length !== 2 || !CURRENCY.test(parts[0])) return undefined;
  const micros = parseAmount(parts[1]);
  return micros === undefined ? undefined : { currency: parts[0], micros };
}

/** Money as a header value and in messages: "USD 0.01". */
export function formatMoney(money: Money): string {
  return `${money.currency} ${formatAmount(money.micros)}`;
}

/** Money as a record carries it: the amount as a decimal string, never a float. */
export function priceField(money: Money): { amount: string; currency: string } {
  return { amount: formatAmount(money.micros), currency: money.currency };
}

/** `--max-price` / `--budget`: "0.05" or "USD 0.05" → a limit, or a problem in words. */
export function parseLimit(text: string): MoneyLimit | { problem: string } {
  const parts = text.trim().split(/\s+/);
  const amount = parts.length === 2 ? parts[1] : parts[0];
  const currency = parts.length === 2 ? parts[0] : undefined;
  const micros = parts.length <= 2 ? parseAmount(amount) : undefined;
  if (micros === undefined || (currency !== undefined && !CURRENCY.test(currency)))
    return { problem: `expected an amount like "0.05" or "USD 0.05" (at most 6 decimal places), got ${JSON.stringify(text)}` };
  return currency === undefined ? { micros } : { micros, currency };
}

/** The limit's amount in `currency`, or undefined when the limit is in another currency (nothing may be paid in it). */
export function limitIn(limit: MoneyLimit, currency: string): number | undefined {
  return limit.currency === undefined || limit.currency === currency ? limit.micros : undefined;
}

/** The request headers of pricing. */
export const PRICE_HEADERS = {
  price: 'crawler-price',
  maxPrice: 'crawler-max-price',
  exactPrice: 'crawler-exact-price',
  charged: 'crawler-charged',
} as const;

/** The status a priced page answers. */
export const PAYMENT_REQUIRED = 402;
