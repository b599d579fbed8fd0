/**
 * The spend ledger of one process's store (memory, SQLite): what completed
 * leases were charged, per currency and host key, and what leases in flight
 * have reserved against a budget (crawl-store.ts SpendLedger). Reservations
 * live only in memory: a process that dies takes its leases' reservations
 * with it, and its leases go back to be fetched (and reserved) again. The
 * SQLite store writes `spent()` with the commit that completes the lease it
 * was charged to.
 */
import type { Charge, Lease, Spending } from './crawl-store.js';

export class SpendBook {
  private spent: Spending = {};
  private readonly reserved = new Map<number, Charge>();
  private readonly reservedTotal = new Map<string, number>();

  constructor(saved?: Spending) {
    if (saved) this.spent = structuredClone(saved);
  }

  /** Reserves `money` for the lease when spent + reserved + it ≤ `limit` (its currency's micro-units). */
  reserve(lease: Lease, money: Charge, limit: number): boolean {
    this.end(lease.id);
    const held = this.reservedTotal.get(money.currency) ?? 0;
    if ((this.spent[money.currency]?.micros ?? 0) + held + money.micros > limit) return false;
    this.reserved.set(lease.id, money);
    this.reservedTotal.set(money.currency, held + money.micros);
    return true;
  }

  /** The lease's reservation, if any, is over (it completed or went back). */
  end(id: number): void {
    const money = this.reserved.get(id);
    if (money === undefined) return;
    this.reserved.delete(id);
    this.reservedTotal.set(money.currency, (this.reservedTotal.get(money.currency) ?? 0) - money.micros);
  }

  /** Books a charge to host `key`. */
  charge(key: string, money: Charge): void {
    const row = (this.spent[money.currency] ??= { micros: 0, hosts: {} });
    row.micros += money.micros;
    row.hosts[key] = (row.hosts[key] ?? 0) + money.micros;
  }

  /** The ledger, a copy. */
  spending(): Spending {
    return structuredClone(this.spent);
  }

  /** Whether anything was ever charged (a store writes nothing until then). */
  get empty(): boolean {
    return Object.keys(this.spent).length === 0;
  }
}
