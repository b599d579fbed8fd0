/**
 * A page's price (HTTP 402 pay-per-crawl, politeness/crawl-price.ts): what
 * its request offers, what its answer quoted or charged, and the budget.
 *
 * - A `402` with `crawler-price` is recorded with the price and never
 *   retried blindly: only with `--max-price` at or above the quote is it
 *   asked again, once, with `crawler-exact-price` (the entry carries the
 *   quote as `extra.pay`).
 * - A host that priced a page gets `crawler-max-price` on its later
 *   requests, so a page within the limit is paid in one request.
 * - Every offer first reserves what it may cost against `--budget` in the
 *   store (crawl-store.ts SpendLedger: atomic across workers): an offer
 *   that could pass the budget is not made, and a quoted page that cannot be
 *   paid is skipped with reason `price`.
 * - A `crawler-charged` answer is charged to the lease's host with its
 *   completion (the store books both at once), whatever was offered: the
 *   ledger says what servers say they charged.
 */
import type { FetchResult } from '../fetch/fetcher.js';
import type { Charge, FrontierEntry, Lease } from '../store/crawl-store.js';
import type { PageRecord } from '../types.js';
import { formatMoney, limitIn, PAYMENT_REQUIRED, parsePrice, PRICE_HEADERS, priceField, type Money } from '../politeness/crawl-price.js';
import type { CrawlContext } from './crawl-context.js';
import { addNote } from '../output/summary.js';

/** What a page's request offers to pay. */
export interface Offer {
  /** Request headers: `crawler-max-price` or `crawler-exact-price`. */
  headers?: Record<string, string>;
  /** A priced page that cannot be paid within the budget: not requested, skipped with reason `price`. */
  skip?: { price: Money; detail: string };
}

/** What a page's answer said about money. */
export interface PriceAnswer {
  /** The 402's quote. */
  price?: Money;
  /** What the server says it charged (booked with the completion). */
  charged?: Charge;
  /** Ask again with `crawler-exact-price` (the quote is within --max-price, and this was not yet a paid attempt). */
  payAgain?: boolean;
}

const NO_OFFER: Offer = {};

export class PagePrice {
  /** Host keys that priced a page, with the currency they stated: their requests offer --max-price. */
  private readonly priced = new Map<string, string>();

  constructor(private readonly ctx: CrawlContext) {}

  /** Whether the crawl may pay at all (`--max-price`). */
  private get maxPrice() {
    return this.ctx.settings.pricing.maxPrice;
  }

  /**
   * The offer for a leased page, its budget reserved first: the quote for a
   * page asked again to be paid, else --max-price on a host that priced a page.
   */
  offer(lease: Lease): Offer | Promise<Offer> {
    const { entry, key } = lease;
    const quote = payFor(entry);
    if (quote !== undefined)
      return then(this.reserve(lease, quote), (reserved) =>
        reserved
          ? { headers: { [PRICE_HEADERS.exactPrice]: formatMoney(quote) } }
          : { skip: { price: quote, detail: `${formatMoney(quote)} quoted; paying it could pass the budget (${this.budgetText(quote.currency)})` } },
      );
    const currency = this.priced.size === 0 ? undefined : this.priced.get(key);
    const max = this.maxPrice;
    if (currency === undefined || max === null) return NO_OFFER;
    const limit = limitIn(max, currency);
    if (limit === undefined) return NO_OFFER;
    const offer = { currency, micros: limit };
    // No offer that could pass the budget: the server answers 402 and its quote decides.
    return then(this.reserve(lease, offer), (reserved) => (reserved ? { headers: { [PRICE_HEADERS.maxPrice]: formatMoney(offer) } } : NO_OFFER));
  }

  /** The answer's price and charge; whether to ask again, paying. */
  answered(lease: Lease, res: Pick<FetchResult, 'status' | 'headers'>): PriceAnswer | undefined {
    const chargedHeader = res.headers[PRICE_HEADERS.charged];
    const priceHeader = res.status === PAYMENT_REQUIRED ? res.headers[PRICE_HEADERS.price] : undefined;
    if (chargedHeader === undefined && priceHeader === undefined) return undefined;
    const out: PriceAnswer = {};
    const charged = parsePrice(chargedHeader);
    if (charged !== undefined) out.charged = charged;
    else if (chargedHeader !== undefined) this.note(lease.key, `${PRICE_HEADERS.charged} ${JSON.stringify(chargedHeader)} does not parse: not booked`);
    const price = parsePrice(priceHeader);
    if (price !== undefined) {
      out.price = price;
      this.priced.set(lease.key, price.currency);
      const max = this.maxPrice;
      const limit = max === null ? undefined : limitIn(max, price.currency);
      out.payAgain = payFor(lease.entry) === undefined && limit !== undefined && price.micros <= limit;
    } else if (priceHeader !== undefined)
      this.note(lease.key, `${PRICE_HEADERS.price} ${JSON.stringify(priceHeader)} does not parse: the 402 is recorded without a price`);
    return out;
  }

  /** The entry that asks again, paying `price`. */
  payingEntry(entry: FrontierEntry, price: Money): FrontierEntry {
    return { ...entry, extra: { ...entry.extra, pay: formatMoney(price) } };
  }

  /** Puts `price` and `charged` on the record. */
  decorate(record: PageRecord, answer: PriceAnswer | undefined): void {
    if (answer?.price) record.price = priceField(answer.price);
    if (answer?.charged) record.charged = priceField(answer.charged);
  }

  private reserve(lease: Lease, money: Money): boolean | Promise<boolean> {
    const budget = this.ctx.settings.pricing.budget;
    if (budget === null) return true; // only --max-price bounds it
    const limit = limitIn(budget, money.currency);
    if (limit === undefined) return false;
    return this.ctx.store.reserveSpend(lease, money, limit);
  }

  private budgetText(currency: string): string {
    const budget = this.ctx.settings.pricing.budget;
    if (budget === null) return 'no budget';
    const limit = limitIn(budget, currency);
    return limit === undefined ? `the budget is in ${budget.currency}` : `budget ${formatMoney({ currency, micros: limit })}`;
  }

  private note(key: string, message: string): void {
    addNote(this.ctx.stats, message, key);
  }
}

/** `f` of a value that may be a promise, without a microtask when it is not. */
function then<T, U>(value: T | Promise<T>, f: (v: T) => U): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** The quote an entry is asked again to pay (`extra.pay`), if it is. */
function payFor(entry: FrontierEntry): Money | undefined {
  const pay = entry.extra?.pay;
  return typeof pay === 'string' ? parsePrice(pay) : undefined;
}
