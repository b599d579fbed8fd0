/**
 * Sends one request for a scheduler job (a page or a robots.txt hop) through
 * the fetcher, with the crawl's SSRF guard and abort signal, and reports its
 * real send and response times to the host's limiter. Remembers when each
 * host record's latest request left, so an answer can say how quiet the host
 * was before it (a refusal after a long quiet is not about the pace).
 */
import type { Fetcher, FetchRequest, FetchResult } from '../fetch/fetcher.js';
import { createAddressGuard, type AddressGuard } from '../fetch/address-guard.js';
import type { JobContext } from '../politeness/host-state.js';
import type { HostState } from '../politeness/host-state.js';
import type { Lease } from '../store/crawl-store.js';
import type { CrawlContext } from './crawl-context.js';
import { countRequest } from '../output/summary.js';

export type SendRequest = Pick<FetchRequest, 'read' | 'method' | 'maxBodyBytes' | 'timeoutMs' | 'totalMs' | 'capture'>;

export interface Sent {
  res: FetchResult;
  /** When the request left (its dispatch; before that, when it was asked for). */
  startedAt: number;
  /** How long after the host's previous request it left (Infinity: none). */
  sinceLastMs: number;
}

export class RequestSender {
  /** When each host record's latest request left: how quiet the host was before the next one. */
  private readonly lastSent = new WeakMap<HostState, number>();
  /** The SSRF guard every request carries: special-purpose addresses are refused except on the seeds' hosts. */
  private guard!: AddressGuard;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly fetcher: Fetcher,
    private readonly signal: AbortSignal,
    seeds: string[],
  ) {
    this.allow(seeds);
  }

  /** A user who typed a seed meant it: the seeds' own hosts (and named sitemaps') are exempt from the SSRF guard. */
  allow(seeds: string[]): void {
    const { settings } = this.ctx;
    this.guard = createAddressGuard({ ...settings.network, allowUrls: [...seeds, ...settings.sitemaps.urls] });
  }

  /**
   * Performs the job's one request, reporting its real send and response times
   * to the limiter; `startedAt` is when it left, which tells a throttling
   * answer from one to a request already in flight, and `sinceLastMs` how
   * long after the host's previous request (Infinity: none), which tells a
   * refusal of our pace from one that comes whatever the pace. With `lease`,
   * a shared store hears of the write.
   */
  async send(url: string, key: string, job: JobContext, req: SendRequest, lease?: Lease): Promise<Sent> {
    const { ctx } = this;
    countRequest(ctx.stats, key);
    let startedAt = ctx.clock.now();
    let sinceLastMs = Infinity;
    const res = await this.fetcher.fetch(url, {
      ...req,
      guard: this.guard,
      signal: this.signal,
      onDispatched: (at) => {
        startedAt = at;
        // Keyed by the record: a host swept for being idle comes back as a new one, rightly quiet.
        const host = ctx.hosts.get(key);
        const last = this.lastSent.get(host);
        if (last !== undefined) sinceLastMs = at - last;
        if (last === undefined || at > last) this.lastSent.set(host, at);
        job.onDispatched(at);
        // A shared store holds other workers' next start to this host until it hears of this write.
        if (lease && ctx.store.shared) ctx.calls.settle(ctx.store.shared.dispatched(lease, at));
      },
      onResponse: (at) => job.onResponse(at),
    });
    return { res, startedAt, sinceLastMs };
  }
}
