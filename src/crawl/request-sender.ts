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
import type { SharedStart, SharedStore } from '../store/crawl-store.js';
import type { Scheduler } from '../schedule/scheduler.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { CrawlContext } from './crawl-context.js';
import { sleep } from '../clock.js';
import { countRequest } from '../output/summary.js';
import { withFields } from '../util/with-fields.js';

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
    this.exemptSeedHosts(seeds);
  }

  /** A user who typed a seed meant it: the seeds' own hosts (and named sitemaps') are exempt from the SSRF guard. */
  exemptSeedHosts(seeds: string[]): void {
    const { settings } = this.ctx;
    this.guard = createAddressGuard({ ...settings.network, allowUrls: [...seeds, ...settings.sitemaps.urls] });
  }

  /**
   * Runs `run` as the next job of `key`'s host, for a request that is no
   * lease's (robots.txt, a browser's request): with a shared store, a start
   * is reserved there first (`sharedStart`) and ended once `run` settles.
   * Shared first, then local, as a page's claim comes before its job: a job
   * that held its host's local slot while it waited for a shared start could
   * wait forever on a claim of this worker's own that waits for that slot.
   */
  async submit<T>(
    scheduler: Pick<Scheduler<HostPolicy>, 'submit'>,
    key: string,
    run: (job: JobContext, slot: SharedStart | undefined) => Promise<T>,
    wanted?: () => boolean,
  ): Promise<T> {
    const { shared } = this.ctx.store;
    // Not wanted any more: no shared start is claimed for it (run still decides what it answers).
    const slot = shared && (wanted === undefined || wanted()) ? await this.sharedStart(shared, key) : undefined;
    try {
      return await new Promise<T>((resolve, reject) => scheduler.submit(key, (job) => run(job, slot).then(resolve, reject), wanted));
    } finally {
      if (slot && shared) this.ctx.calls.settle(shared.endStart(slot));
    }
  }

  /**
   * Performs the job's one request, reporting its real send and response times
   * to the limiter; `startedAt` is when it left, which tells a throttling
   * answer from one to a request already in flight, and `sinceLastMs` how
   * long after the host's previous request (Infinity: none), which tells a
   * refusal of our pace from one that comes whatever the pace. With `start`
   * (a lease, or a slot from `submit`), a shared store hears of the write.
   */
  async send(url: string, key: string, job: JobContext, req: SendRequest, start?: SharedStart): Promise<Sent> {
    const { ctx } = this;
    const { shared } = ctx.store;
    countRequest(ctx.stats, key);
    let startedAt = ctx.clock.now();
    let sinceLastMs = Infinity;
    const res = await this.fetcher.fetch(
      url,
      withFields<SendRequest, Pick<FetchRequest, 'guard' | 'signal' | 'onDispatched' | 'onResponse'>>(req, {
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
          if (start && shared) ctx.calls.settle(shared.dispatched(start, at));
        },
        onResponse: (at) => {
          const arrival = job.onResponse(at);
          // A shared store moves the host's last start there too, for every worker's next start.
          if (start && shared && arrival !== undefined) shared.responded(start, arrival);
        },
      }),
    );
    return { res, startedAt, sinceLastMs };
  }

  /**
   * A start at `key` from the shared store, waiting as long as it says (its
   * gap, windows and concurrency count every worker's requests); undefined
   * once the crawl is aborted (the fetch then fails as ABORTED, sending nothing).
   */
  private async sharedStart(shared: SharedStore, key: string): Promise<SharedStart | undefined> {
    const { clock } = this.ctx;
    const { signal } = this;
    for (;;) {
      if (signal.aborted) return undefined;
      const answer = await shared.reserve(key);
      if (!('notBefore' in answer)) {
        if (!signal.aborted) return answer;
        await shared.endStart(answer);
        return undefined;
      }
      await sleep(clock, Math.max(0, answer.notBefore - clock.now()), signal);
    }
  }
}
