/**
 * The scheduler's work source: hands it a host's next request, made from a
 * lease claimed from the store. Never waits: what robots.txt forbids is
 * skipped, a host whose name does not resolve gets its error record, and a
 * lease that cannot start yet (robots.txt still loading) waits in the
 * one-lease-per-host buffer (`held`) instead of going back to the store.
 *
 * An asynchronous claim (a network store) is remembered while under way, its
 * answer buffered, and a shared store's "not before" (its own politeness)
 * kept until its time; the host is woken when either arrives. Delayed
 * entries (retries) are promoted when the due timer fires.
 *
 * `--max-pages` on a shared store: another worker's starts reach this one's
 * view of the count only with the next answer, so several workers at 9 of 10
 * would each start a tenth page. There, a claimed lease first takes its
 * place in the count (one atomic increment; more than the cap gives it back
 * and returns the lease), and a reserved lease that does not start after all
 * (robots.txt, a dead name, the crawl ending) gives its place back.
 */
import type { Job, JobContext } from '../politeness/host-state.js';
import type { Renderer } from '../render/renderer.js';
import type { PageHandlers } from '../handler/page-handlers.js';
import type { LeaseFate } from './lease-fate.js';
import type { RobotsGate } from '../robots/gate.js';
import type { ClaimWait, Lease } from '../store/crawl-store.js';
import type { ErrorCode } from '../types.js';
import { capReached, type CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { DueTimer } from '../util/due-timer.js';
import type { HostAddresses } from '../schedule/host-addresses.js';
import type { PageExchange } from './page-exchange.js';
import { errorCode } from '../fetch/fetch-error.js';
import type { TakeResult } from '../schedule/scheduler.js';
import type { SlowRequests } from '../schedule/slow-requests.js';

export interface LeaseSourceParts {
  records: CrawlRecords;
  robots: RobotsGate;
  slow: SlowRequests;
  /** Absent: names are resolved inside the connect. */
  addresses: HostAddresses | undefined;
  dueTimer: DueTimer;
  /** Makes a started lease's request. */
  exchange: Pick<PageExchange, 'fetchPage'>;
  /** Where leases end without a request: completed after their skip record, or given back (lease-fate.ts). */
  fate: LeaseFate;
  /** Renders pages (render/renderer.ts): it may hold a host's next page back, and its jobs may end before their page does. @default none */
  renderer?: Pick<Renderer, 'holdBack' | 'wrap'>;
  /** The user's page handler: without a renderer, its jobs get their way to end before their page does. @default none */
  handlers?: Pick<PageHandlers, 'wrap'>;
}

export class LeaseSource {
  /**
   * The local prefetch buffer: a lease per host claimed from the store but not
   * started yet (its host waits on robots.txt, or it came back from an
   * asynchronous claim). Taken before the store is asked again.
   */
  private readonly held = new Map<string, Lease>();
  /** Hosts with an asynchronous claim under way. */
  private readonly claiming = new Set<string>();
  /** Hosts whose last asynchronous claim answered "not before": the store's (shared) politeness says wait until then. */
  private readonly claimWaits = new Map<string, number>();
  /** Held leases whose page already counts in `started` (a shared store with a page cap). */
  private readonly reserved = new Set<Lease>();

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: LeaseSourceParts,
  ) {}

  /** Leases held, not started yet (they count as queued). */
  get heldCount(): number {
    return this.held.size;
  }

  /** Held leases that count in `started` already: they start at their host's next take, so the crawl is not over. */
  get reservedCount(): number {
    return this.reserved.size;
  }

  /** Asynchronous claims under way. */
  get claimingCount(): number {
    return this.claiming.size;
  }

  /** Takes the host's held lease out of the buffer, if it has one. */
  takeHeld(key: string): Lease | undefined {
    const lease = this.held.get(key);
    if (lease) {
      this.held.delete(key);
      this.unreserve(lease);
    }
    return lease;
  }

  /** Empties the buffer (the crawl is ending), handing back what it held. */
  takeAllHeld(): Lease[] {
    const leases = [...this.held.values()];
    this.held.clear();
    for (const lease of leases) this.unreserve(lease);
    return leases;
  }

  hasWork(key: string): boolean {
    return (this.held.has(key) || this.ctx.store.queued(key) > 0) && !capReached(this.ctx);
  }

  /** Picks the host's next request, skipping what robots.txt forbids. Never waits. */
  take(key: string, now: number): TakeResult {
    const { ctx, parts } = this;
    const { store } = ctx;
    if (ctx.stopping) return null;
    // Enough fetched pages wait for the browser: this host's next one waits too (woken when one starts rendering).
    if (parts.renderer?.holdBack(key)) return this.waitWithout(key);
    // Slow requests gave their global slot back, not their host's: woken when one ends.
    const slow = parts.slow.holds(key);
    if (slow > 0) {
      const { limiter, policy } = ctx.hosts.get(key);
      if (limiter.inFlight + slow >= policy.concurrency) return this.waitWithout(key);
    }
    for (;;) {
      let lease = this.held.get(key);
      // A reserved lease has its place in the count already: the cap may read reached because of it.
      if (!(lease && this.reserved.has(lease)) && capReached(ctx)) return null;
      if (lease) {
        this.held.delete(key);
      } else {
        if (this.claiming.has(key)) return { notBefore: Infinity };
        const wait = this.claimWaits.get(key);
        if (wait !== undefined) {
          if (wait > now) return { notBefore: wait };
          this.claimWaits.delete(key);
        }
        const claimed = store.claim(key, now);
        if (claimed instanceof Promise) {
          this.claimLater(key, claimed);
          return { notBefore: Infinity }; // woken when the lease arrives
        }
        if (!claimed) return null;
        // A shared store's politeness (other workers' starts, a pause one of them saw) says not yet.
        if (!('entry' in claimed)) return { notBefore: claimed.notBefore };
        lease = claimed;
      }
      const { entry } = lease;
      const unresolved = parts.addresses?.failure(key);
      if (unresolved !== undefined) {
        // Its name does not resolve: a DNS_FAILURE record at once, no request, no slot (host-addresses.ts).
        this.unreserve(lease);
        parts.records.unreached(entry, key, errorCode(unresolved), `GET ${entry.url} failed: ${unresolved.message.replace(/^\S+ \S+ failed: /, '')}`);
        const wait = this.endUnstarted(key, lease, errorCode(unresolved), true);
        if (wait) return wait;
        continue;
      }
      if (ctx.settings.robots.enabled) {
        const verdict = parts.robots.check(entry.url, key);
        if (verdict.kind === 'wait') {
          // A shared store's claim holds every worker's next start to the host until this one is written:
          // give it back rather than hold it while robots.txt loads.
          if (store.shared) {
            this.unreserve(lease);
            parts.fate.putBack(lease);
          } else this.held.set(key, lease);
          return { notBefore: verdict.until };
        }
        if (verdict.kind === 'fail') {
          // Its host could not be connected to for robots.txt: a page record with that error (a dead link), not a skip.
          this.unreserve(lease);
          parts.records.unreached(entry, key, verdict.code as ErrorCode, verdict.message);
          const wait = this.endUnstarted(key, lease, verdict.code, true);
          if (wait) return wait;
          continue;
        }
        if (verdict.kind === 'skip') {
          this.unreserve(lease);
          const wrote = parts.records.skip(entry.url, verdict.reason, entry.depth, entry.parent, verdict.detail, false, verdict.usage);
          const wait = this.endUnstarted(key, lease, verdict.reason, wrote);
          if (wait) return wait;
          continue;
        }
      }
      if (!this.reserved.delete(lease)) parts.fate.countStart();
      return this.start(key, lease);
    }
  }

  /**
   * The host waits until woken; a shared store's lease claimed for it meanwhile
   * goes back rather than wait too. A claimed lease holds every worker's next
   * start to its host until it is written, and what this wait is for — the
   * browser rendering pages, which needs requests to that host — may need one
   * of those starts.
   */
  private waitWithout(key: string): TakeResult {
    const { ctx } = this;
    const lease = ctx.store.shared ? this.takeHeld(key) : undefined;
    if (lease) this.parts.fate.putBack(lease);
    return { notBefore: Infinity };
  }

  /**
   * Completes a lease that ends without a request, its record just written
   * (`wrote`), once that record is confirmed (`LeaseFate.completeAfterRecord`).
   * A shared store counts the lease among its host's starts until then, so
   * the host's next claim waits for the completion instead of being told
   * "busy": the host sleeps (the answer returned) until it is woken then.
   */
  private endUnstarted(key: string, lease: Lease, outcome: string, wrote: boolean): TakeResult | undefined {
    const { ctx, parts } = this;
    const waits = wrote && ctx.store.durable && ctx.store.shared;
    parts.fate.completeAfterRecord(lease, outcome, wrote, { then: waits ? () => ctx.signals.wake(key) : undefined });
    return waits ? { notBefore: Infinity } : undefined;
  }

  /** The lease's request, as a job that gives its global slot back once slow (slow-requests.ts). */
  private start(key: string, lease: Lease): Job {
    const { parts } = this;
    const page = (job: JobContext) => parts.exchange.fetchPage(lease, job);
    // The renderer's wrap serves the handler too: one hand-off per job.
    return parts.slow.wrap(key, parts.renderer ? parts.renderer.wrap(page, key) : parts.handlers ? parts.handlers.wrap(page) : page);
  }

  private claimLater(key: string, claim: Promise<Lease | ClaimWait | undefined>): void {
    const { ctx } = this;
    this.claiming.add(key);
    ctx.calls.settle(claim, (answer) => {
      if (!answer || !('entry' in answer) || !ctx.store.shared || !Number.isFinite(ctx.settings.maxPages)) {
        this.claiming.delete(key);
        // A wait is kept until its time: the next take hands it to the scheduler, which sleeps the host until then.
        if (answer && 'entry' in answer) this.held.set(key, answer);
        else if (answer) this.claimWaits.set(key, answer.notBefore);
        if (answer) ctx.signals.wake(key);
        return;
      }
      // Shared, with a page cap: the lease takes its place in every worker's count before it is held.
      this.parts.fate.countStart((count) => {
        this.claiming.delete(key);
        if (count > ctx.settings.maxPages) {
          this.parts.fate.handBack(answer);
          return;
        }
        this.reserved.add(answer);
        this.held.set(key, answer);
        ctx.signals.wake(key);
      });
    });
  }

  /** A reserved lease will not start after all: its place in the count goes back. */
  private unreserve(lease: Lease): void {
    if (this.reserved.delete(lease)) this.parts.fate.uncountStart();
  }

  /** Delayed entries (retries) came due (the due timer's `due` signal): they are at the head of their hosts' queues now. */
  promoteDue(): void {
    const { ctx, parts } = this;
    ctx.calls.settle(ctx.store.promoteDue(ctx.clock.now()), (keys) => {
      for (const key of keys) ctx.signals.wake(key);
      parts.dueTimer.armAt(ctx.store.nextDueAt());
    });
  }
}
