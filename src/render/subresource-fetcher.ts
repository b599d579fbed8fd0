/**
 * A browser's request, made as the crawl's own: the crawl-wide cache first;
 * else the subresource host's robots.txt (loaded first, through that host's
 * limits, like a page's), then one request run by the scheduler as the next
 * job of that host — its rate, windows, concurrency, Crawl-delay, pauses,
 * adaptive rate and per-IP limits — sent by the RequestSender with the SSRF
 * guard, the crawl's headers, cookies and auth, body cap and deadlines.
 *
 * A 429/503 answer pauses the host exactly as on a page (HostFeedback), and
 * the request is made again after the pause, as a page's would be (up to the
 * host's `throttleRetries`), while a page still waits for it (the render
 * timeout bounds the wait). Requests for one URL already under way are shared, so pages rendering
 * at once that need the same bundle cause one request. A 404/410 and a
 * failure of the host (DNS, refused) are remembered crawl-wide for a while
 * (subresource-cache.ts): a missing script shared by every page is asked
 * for once.
 */
import { AddressRefusedError } from '../fetch/address-guard.js';
import type { HostFeedback } from '../politeness/server-feedback.js';
import type { RobotsGate } from '../robots/gate.js';
import type { HostPolicy } from '../config/settings-types.js';
import type { PageArchive } from '../archive/page-archive.js';
import type { CrawlContext } from '../crawl/crawl-context.js';
import { hostKeyOf } from '../parse/url.js';
import type { RequestSender } from '../crawl/request-sender.js';
import type { Scheduler } from '../schedule/scheduler.js';
import { errorCode } from '../fetch/fetch-error.js';
import type { CachedFailure, CachedResponse, SubresourceCache } from './subresource-cache.js';

/** Failures that say something about the URL's host rather than the moment, so a page rendered a second later would meet them again. */
const REMEMBERED_FAILURES: ReadonlySet<string> = new Set(['DNS_FAILURE', 'CONNECTION_REFUSED', 'PRIVATE_ADDRESS']);

export type SubresourceAnswer =
  | { kind: 'response'; response: CachedResponse; host: string; cached: boolean }
  | { kind: 'disallowed'; host: string; detail: string }
  | { kind: 'blocked'; host: string; detail: string }
  | { kind: 'failed'; host: string; detail: string };

export interface SubresourceFetcherParts {
  scheduler: Scheduler<HostPolicy>;
  sender: RequestSender;
  robots: RobotsGate;
  feedback: HostFeedback;
  cache: SubresourceCache;
  /** --warc: what was fetched is kept for replay. @default none */
  archive?: PageArchive;
}

export class SubresourceFetcher {
  /** Requests under way by URL, with every page's "still wanted?" (a page retried after a crash shares its own earlier request). */
  private readonly inflight = new Map<string, { answer: Promise<SubresourceAnswer>; wanted: Array<() => boolean> }>();

  constructor(
    private readonly ctx: CrawlContext,
    private readonly parts: SubresourceFetcherParts,
  ) {}

  /** The answer for a GET of `url`; `wanted()` false means no page waits for it any more (its request is then not made). */
  get(url: string, wanted: () => boolean): Promise<SubresourceAnswer> {
    const { ctx, parts } = this;
    let key: string;
    try {
      key = hostKeyOf(url, ctx.settings.hostKey);
    } catch {
      return Promise.resolve({ kind: 'blocked', host: '', detail: 'not a URL the crawl can fetch' });
    }
    const now = ctx.clock.now();
    const cached = parts.cache.get(url, now);
    if (cached !== undefined) return Promise.resolve({ kind: 'response', response: cached, host: key, cached: true });
    const failed = parts.cache.failure(url, now);
    if (failed !== undefined) return Promise.resolve(failed);
    const running = this.inflight.get(url);
    if (running !== undefined) {
      running.wanted.push(wanted);
      return running.answer.then((a) => (a.kind === 'response' ? { ...a, cached: true } : a));
    }
    const wants = [wanted];
    const anyone = () => wants.some((w) => w());
    const answer = this.fetch(url, key, anyone).finally(() => this.inflight.delete(url));
    this.inflight.set(url, { answer, wanted: wants });
    return answer;
  }

  private async fetch(url: string, key: string, wanted: () => boolean): Promise<SubresourceAnswer> {
    const { ctx, parts } = this;
    if (ctx.settings.robots.enabled) {
      const verdict = await parts.robots.verdict(url, key);
      if (verdict.kind === 'skip') return { kind: 'disallowed', host: key, detail: verdict.detail ?? verdict.reason };
      if (verdict.kind !== 'go') return { kind: 'disallowed', host: key, detail: verdict.kind === 'fail' ? verdict.message : 'robots.txt unavailable' };
    }
    if (ctx.hosts.get(key).givenUp) return { kind: 'failed', host: key, detail: 'its host was given up' };
    for (let attempt = 0; ; attempt++) {
      const sent = await this.once(url, key, wanted);
      if (sent === null) return { kind: 'failed', host: key, detail: 'no page waits for it any more' };
      if ('err' in sent) return this.failed(url, key, sent.err);
      const { res, startedAt, sinceLastMs } = sent;
      const { policy } = ctx.hosts.get(key);
      if (policy.throttleStatuses.includes(res.status)) {
        parts.feedback.throttled(key, res, startedAt, sinceLastMs);
        if (attempt < policy.throttleRetries && !ctx.stopping && wanted()) continue;
      }
      if (parts.archive?.keepResource && res.capture !== undefined) {
        // The archive failed (the disk is full): the crawl stops with it.
        await parts.archive.keepResource(res, new Date(ctx.clock.wallNow()).toISOString()).catch((err: unknown) => ctx.signals.fail(err));
      }
      const response: CachedResponse = { status: res.status, headers: res.headers, body: res.raw ?? Buffer.alloc(0) };
      parts.cache.put(url, response, ctx.clock.now());
      return { kind: 'response', response, host: key, cached: false };
    }
  }

  /** A request that failed; remembered crawl-wide when the failure is its host's (a name, a refusal), not the moment's (a timeout, a reset). */
  private failed(url: string, key: string, err: unknown): SubresourceAnswer {
    const refused = err instanceof AddressRefusedError;
    const code = refused ? 'PRIVATE_ADDRESS' : errorCode(err);
    const answer: CachedFailure = refused
      ? { kind: 'blocked', host: key, detail: err.detail }
      : { kind: 'failed', host: key, detail: `${code}: ${err instanceof Error ? err.message : String(err)}` };
    if (REMEMBERED_FAILURES.has(code)) this.parts.cache.putFailure(url, answer, this.ctx.clock.now());
    return answer;
  }

  /**
   * One request as the next job of `key`'s host; null when no page wanted it
   * by the time the host was ready. A request no page wants any more (its
   * render timed out) is dropped by the scheduler before it takes a start:
   * the host's gap goes to requests that someone waits for.
   */
  private once(url: string, key: string, wanted: () => boolean) {
    const { ctx, parts } = this;
    type Sent = Awaited<ReturnType<RequestSender['send']>>;
    const stillWanted = () => wanted() && !ctx.stopping;
    return parts.sender.submit(
      parts.scheduler,
      key,
      async (job, slot): Promise<Sent | { err: unknown } | null> => {
        if (!stillWanted()) return null;
        try {
          return await parts.sender.send(url, key, job, { read: 'raw', capture: parts.archive?.keepResource !== undefined }, slot);
        } catch (err) {
          return { err };
        }
      },
      stillWanted,
    );
  }
}
