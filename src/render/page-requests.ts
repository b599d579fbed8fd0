/**
 * The route handler of one rendered page: every request the browser makes
 * for it arrives here (Playwright `page.route('**\/*')`), and none reaches the
 * network by itself (browser-pool.ts denies the rest, popups included).
 *
 * - The page's own document is answered from the response the crawler
 *   already fetched: it is never requested twice.
 * - A later navigation of the page (a script setting `location`, a form
 *   submitted, a meta refresh, a link clicked) is a link, as a redirect is:
 *   its URL is kept for the crawl to queue through the usual admission
 *   (`navigations`), and the browser is answered 204 No Content, which ends
 *   a navigation with the page left as it was, so the DOM read is the
 *   page's own and not an error page. Only GETs are links (a POST is
 *   counted `blocked`).
 * - Frames' navigations are aborted: a document is crawled as a page of its
 *   own, through the frontier.
 * - Resource types that a rendered DOM does not need are aborted and counted
 *   `blocked`: the ones in `--render-block` (default image, media, font), and
 *   always WebSocket, EventSource, manifests, pings, prefetches and other
 *   speculative requests (type "other"). So are non-GET requests (the
 *   crawler fetches, it does not post), URLs matching `blockUrls` (trackers),
 *   and addresses the SSRF guard refuses.
 * - Everything else is a GET made by the SubresourceFetcher: from the
 *   crawl-wide cache (`cached`), refused by robots.txt (`disallowed`,
 *   aborted as Google's renderer does), or requested through its host's
 *   limits (`fetched`).
 */
import type { Page, Request, Route } from 'playwright-core';
import type { FetchResult } from '../fetch/fetcher.js';
import { resolveLink } from '../parse/url.js';
import type { UserPattern } from '../config/user-pattern.js';
import type { SubrequestCounts } from '../types.js';
import type { SubresourceAnswer, SubresourceFetcher } from './subresource-fetcher.js';

export type { SubrequestCounts };

/** What one browser request became, for per-host totals and `-v` listings. */
export interface SubrequestEvent {
  url: string;
  type: string;
  host: string;
  outcome: keyof SubrequestCounts | 'failed';
}

/** Types never fetched: live connections, and requests a page makes for later or for someone else. */
export const ALWAYS_BLOCKED = new Set(['websocket', 'eventsource', 'manifest', 'other', 'ping', 'texttrack', 'prefetch', 'csp_report', 'signedexchange']);

/** Headers that described the bytes on the wire, not the bytes handed to the browser (decoded, whole). */
const WIRE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** Client navigations kept per page, at most: a page that navigates in a loop does not grow its record without end. */
export const MAX_NAVIGATIONS = 100;

export interface PageRequestsOptions {
  page: Page;
  /** The document as the crawler fetched it. */
  document: FetchResult;
  fetcher: SubresourceFetcher;
  block: ReadonlySet<string>;
  blockUrls: readonly UserPattern[];
  /** Each request's outcome, as it is decided. */
  onEvent?(event: SubrequestEvent): void;
}

export class PageRequests {
  readonly counts: SubrequestCounts = { fetched: 0, cached: 0, blocked: 0, disallowed: 0 };
  /** GET navigations the page tried after its document: links for the crawl, in order, each once. */
  readonly navigations: string[] = [];
  private documentServed = false;
  private running = 0;
  private idleWaiters: Array<() => void> = [];
  /** The page is closed or given up: answers that arrive now are dropped, and requests not sent yet are not made. */
  private done = false;

  constructor(private readonly opts: PageRequestsOptions) {}

  /** Requests under way for this page. */
  get busy(): boolean {
    return this.running > 0;
  }

  /** Resolves when no request of this page is under way. */
  idle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Closes the page now (its render timed out: a script that never ends would spin on until the context is replaced). */
  closePage(): void {
    void this.opts.page.close().catch(() => {});
  }

  /** The page is done: nothing more is fetched for it. */
  finish(): void {
    this.done = true;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  async handle(route: Route): Promise<void> {
    const { opts } = this;
    const req = route.request();
    const url = req.url();
    try {
      if (req.isNavigationRequest()) {
        if (req.frame() === opts.page.mainFrame()) {
          if (!this.documentServed) {
            this.documentServed = true;
            return await route.fulfill(documentResponse(opts.document));
          }
          this.navigated(req, url);
          // 204: the navigation ends and the page stays as it was (HTML's "abort navigation" for 204/205).
          return await route.fulfill({ status: 204, body: '' });
        }
        return await this.refuse(route, url, 'document', 'blocked');
      }
      const type = req.resourceType();
      if (!/^https?:/i.test(url)) return await route.continue(); // data:, blob: never leave the browser
      if (ALWAYS_BLOCKED.has(type) || opts.block.has(type) || req.method() !== 'GET' || opts.blockUrls.some((re) => re.test(url))) {
        return await this.refuse(route, url, type, 'blocked');
      }
      if (this.done) return await route.abort('aborted');
      this.running++;
      let answer: SubresourceAnswer;
      try {
        answer = await opts.fetcher.get(url, () => !this.done);
      } finally {
        this.running--;
        if (this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
      if (answer.kind === 'response') {
        const outcome = answer.cached ? 'cached' : 'fetched';
        this.counts[outcome]++;
        opts.onEvent?.({ url, type, host: answer.host, outcome });
        if (this.done) return;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(answer.response.headers)) if (!WIRE_HEADERS.has(name)) headers[name] = value;
        return await route.fulfill({ status: answer.response.status, headers, body: answer.response.body });
      }
      if (answer.kind === 'disallowed' || answer.kind === 'blocked') {
        this.counts[answer.kind]++;
        opts.onEvent?.({ url, type, host: answer.host, outcome: answer.kind });
        if (!this.done) await route.abort(answer.kind === 'disallowed' ? 'accessdenied' : 'blockedbyclient');
        return;
      }
      opts.onEvent?.({ url, type, host: answer.host, outcome: 'failed' });
      if (!this.done) await route.abort('failed');
    } catch {
      // The page closed under the request (a timeout, a crash): nothing is waiting for this answer.
    }
  }

  /** A navigation the page tried after its document: a link when it is a GET of an http(s) URL, else refused and counted. */
  private navigated(req: Request, url: string): void {
    // Canonical as the parser's links are (fragment dropped, and so on); null for what the crawl cannot fetch.
    const link = req.method() === 'GET' ? resolveLink(url, url) : null;
    if (link === null) {
      this.counts.blocked++;
      this.opts.onEvent?.({ url, type: 'document', host: hostOf(url), outcome: 'blocked' });
      return;
    }
    if (this.navigations.length < MAX_NAVIGATIONS && !this.navigations.includes(link)) this.navigations.push(link);
  }

  private async refuse(route: Route, url: string, type: string, outcome: 'blocked'): Promise<void> {
    this.counts[outcome]++;
    this.opts.onEvent?.({ url, type, host: hostOf(url), outcome });
    await route.abort('blockedbyclient');
  }
}

/** A URL's host for counts and listings; '' when it is not a URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The fetched document as the browser gets it: its status and headers, its body decoded and sent as UTF-8. */
function documentResponse(res: FetchResult): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (!WIRE_HEADERS.has(name)) headers[name] = value;
  headers['content-type'] = `${res.contentType ?? 'text/html'}; charset=utf-8`;
  return { status: res.status, headers, body: res.body ?? '' };
}
