/**
 * Rendering as the crawl loop sees it: which fetched pages are rendered
 * (render-decision.ts), and the rendered DOM handed back in place of the
 * fetched body, so links, `--content` and `--extract` read what a browser
 * shows. Built by the crawler only when some host renders.
 *
 * Contract:
 * - A page's document request is an ordinary page job. Once its response is
 *   in and the page is to be rendered, the job hands its slot back
 *   (`wrap` → JobContext.handOff): the global slot and its host's
 *   concurrency are free while the browser works, because the browser's own
 *   requests — to that same host too — need them (holding them would
 *   deadlock a host with concurrency 1; DESIGN: never wait holding a slot).
 *   Each browser request is then a job of its own host (subresource-fetcher.ts).
 * - At most `concurrency` pages render at once; at most as many more are
 *   being fetched (on hosts that render every page) or wait, fetched, for a
 *   browser page. Past that a host that
 *   may render gets no new page job (`holdBack`) until one starts rendering
 *   or its page job ends, so fetching never runs ahead of rendering (a crash
 *   then loses at most that many fetched documents, fetched again on resume).
 * - `pending` counts pages handed off and not finished: the crawl does not
 *   end before they are.
 * - A page not rendered within `timeoutMs` is closed: its record keeps the
 *   fetched HTML's links and carries error RENDER_TIMEOUT. A browser that
 *   dies costs the pages it held one retry on a new browser; a second
 *   failure is RENDER_FAILED. Either way every page gets its record.
 * - The DOM is read once the page has loaded, no request of its own is under
 *   way, and the DOM has not changed for SETTLE_QUIET_MS (links a timer adds
 *   shortly after load are in), or after SETTLE_MAX_MS spent watching it
 *   change.
 */
import type { Page } from 'playwright-core';
import type { FetchResult } from '../fetch/fetcher.js';
import type { RenderedDocument } from '../crawl/page-outcome.js';
import { redactCredentials } from '../fetch/redact.js';
import type { FrontierEntry } from '../store/crawl-store.js';
import type { Job, JobContext } from '../politeness/host-state.js';
import { handOffJob } from '../schedule/hand-off-job.js';
import type { RenderSettings } from '../config/settings-types.js';
import type { PageRecord } from '../types.js';
import type { CrawlContext } from '../crawl/crawl-context.js';
import { BrowserCrashedError, BrowserPool } from './browser-pool.js';
import { BrowserMissingError, INSTALL_HINT } from './browser-path.js';
import { PageRequests, type SubrequestEvent } from './page-requests.js';
import { renderDecision } from './render-decision.js';
import { SubresourceCache } from './subresource-cache.js';
import { SubresourceFetcher, type SubresourceFetcherParts } from './subresource-fetcher.js';
import { countSubrequest } from './subrequest-stats.js';
import type { RenderTotals } from '../output/metrics.js';

/** The DOM is read once it has not changed for this long (ms). */
export const SETTLE_QUIET_MS = 500;
/** …or after this long of changes (a ticking clock never goes quiet); shortened to fit the render timeout. */
export const SETTLE_MAX_MS = 5_000;
/** Of the render timeout, what is kept for reading the DOM once watching it stops (ms). */
const READ_MARGIN_MS = 250;

/** What one render read from the browser. */
interface Rendered {
  html: string;
  /** The document's URL when it was read (history.pushState changes it). */
  documentUrl: string;
  /** GET navigations the page tried after its document (page-requests.ts): links. */
  navigations: string[];
}

export type RenderFields = Pick<PageRecord, 'rendered' | 'renderReason' | 'subrequests' | 'navigations'>;

export interface RenderOutcome {
  /**
   * The fetched response, its body the rendered DOM when rendered, with the
   * document's URL then (relative links resolve against it) and the
   * navigations the page tried (links too).
   */
  res: FetchResult & RenderedDocument;
  fields: RenderFields;
  error?: { code: 'RENDER_TIMEOUT' | 'RENDER_FAILED'; message: string };
}

/** What the browser's own requests go through (subresource-fetcher.ts); the renderer keeps their cache itself. */
export type RendererParts = Omit<SubresourceFetcherParts, 'cache'>;

export class RenderTimeoutError extends Error {
  readonly code = 'RENDER_TIMEOUT';
}

export class Renderer {
  /** Pages handed off and not finished. */
  pending = 0;
  private rendering = 0;
  /** Page jobs of hosts that may render, from their start until they hand off (or end): documents being fetched. */
  private fetching = 0;
  private readonly queue: Array<() => void> = [];
  private readonly heldBack = new Set<string>();
  private readonly pool: BrowserPool;
  private readonly fetcher: SubresourceFetcher;
  private readonly block: ReadonlySet<string>;
  readonly cache: SubresourceCache;
  private readonly counts = {
    pages: 0,
    decisions: new Map<string, { render: boolean; reason: string; count: number }>(),
    subrequests: { fetched: 0, cached: 0, blocked: 0, disallowed: 0, failed: 0 },
  };

  constructor(
    private readonly ctx: CrawlContext,
    parts: RendererParts,
    private readonly settings: RenderSettings,
    private readonly executablePath: string,
    private readonly onEvent?: (page: string, event: SubrequestEvent) => void,
  ) {
    this.pool = new BrowserPool({
      executablePath,
      userAgent: ctx.settings.userAgent,
      recycleAfter: settings.recycleAfter,
      ...(settings.maxBrowserMemoryBytes !== undefined && { maxMemoryBytes: settings.maxBrowserMemoryBytes }),
      onMemoryRestart: (bytes) =>
        ctx.log?.info(
          `the browser holds ${Math.round(bytes / 2 ** 20)} MiB, past renderOptions.maxBrowserMemory (${Math.round(settings.maxBrowserMemoryBytes! / 2 ** 20)} MiB): restarting it between pages`,
        ),
    });
    this.cache = new SubresourceCache(settings.cacheBytes);
    this.fetcher = new SubresourceFetcher(ctx, { ...parts, cache: this.cache });
    this.block = new Set(settings.block);
  }

  /** Browsers started (restarts after a crash included). */
  get launches(): number {
    return this.pool.launches;
  }

  /** Running totals for `--metrics` (read on each scrape). */
  totals(): RenderTotals {
    return { ...this.counts, browserRestarts: Math.max(0, this.pool.launches - 1) };
  }

  private decided(render: boolean, reason: string): void {
    const key = `${render}:${reason}`;
    const row = this.counts.decisions.get(key);
    if (row) row.count++;
    else this.counts.decisions.set(key, { render, reason, count: 1 });
  }

  /**
   * Launches the browser before the crawl's first request (the crawl awaits
   * it): a browser that cannot start (`--browser /bin/true`, a broken
   * install) is one line and exit 2, not a RENDER_FAILED on every page.
   */
  async start(): Promise<void> {
    try {
      await this.pool.ready();
    } catch (err) {
      throw new BrowserMissingError(
        `rendering needs a browser: ${JSON.stringify(this.executablePath)} did not start as Chromium (${messageOf(err)}); ${INSTALL_HINT}`,
      );
    }
  }

  /** Gives the page job a way to end before the page does (see the contract); `key`: its host. */
  wrap(job: Job, key: string): Job {
    return (ctx) => {
      // Counted until it hands off or ends: a document being fetched for a host that renders every page is a page
      // ahead of the browser too. Not on an "auto" host, most of whose pages are usually static: counted there, a
      // broad crawl would fetch no more pages at once than it renders.
      let counted = this.ctx.hosts.get(key).policy.render === true;
      if (counted) this.fetching++;
      const uncount = () => {
        if (!counted) return;
        counted = false;
        this.fetching--;
        this.wakeHeldBack();
      };
      return handOffJob(job, {
        handedOff: () => {
          this.pending++;
          uncount();
        },
        ended: (handed) => {
          uncount();
          if (!handed) return;
          this.pending--;
          // A handed-off page finished: the crawl may be done.
          this.ctx.signals.settled();
        },
      })(ctx);
    };
  }

  /** Pages ahead of the browser: being fetched, or fetched and waiting for a browser page. */
  private get ahead(): number {
    return this.fetching + this.queue.length;
  }

  /** True when `key` may render and enough pages are ahead of the browser: it is woken when one starts rendering or a page job ends. */
  holdBack(key: string): boolean {
    if (this.ahead < this.settings.concurrency) return false;
    if (this.ctx.hosts.get(key).policy.render === false) return false;
    this.heldBack.add(key);
    return true;
  }

  /**
   * What the record of a fetched page is built from, on a host that renders;
   * null when its host does not render. Pages only: the crawl never asks for a sitemap or a link check.
   */
  async page(entry: FrontierEntry, res: FetchResult, key: string, job: JobContext): Promise<RenderOutcome | null> {
    const mode = this.ctx.hosts.get(key).policy.render;
    if (mode === false) return null;
    const decision = renderDecision(mode, res);
    this.decided(decision.render, decision.reason);
    if (!decision.render) return { res, fields: { rendered: false, renderReason: decision.reason } };
    job.handOff?.();
    await this.slot();
    try {
      let lastError: unknown;
      for (let attempt = 0; attempt < 2; attempt++) {
        const requests: PageRequests[] = [];
        try {
          const { html, documentUrl, navigations } = await this.renderOnce(entry, res, requests);
          const counts = requests[0].counts;
          this.counts.pages++;
          return {
            res: { ...res, body: html, documentUrl, navigations },
            fields: { rendered: true, renderReason: decision.reason, subrequests: { ...counts }, ...(navigations.length > 0 && { navigations }) },
          };
        } catch (err) {
          lastError = err;
          const counts = requests[0]?.counts;
          const fields: RenderFields = { rendered: false, renderReason: decision.reason, ...(counts && { subrequests: { ...counts } }) };
          if (err instanceof RenderTimeoutError) {
            return {
              res,
              fields,
              error: { code: 'RENDER_TIMEOUT', message: `not rendered within ${this.settings.timeoutMs / 1000}s; links are the fetched HTML's` },
            };
          }
          if (!(err instanceof BrowserCrashedError) || this.ctx.stopping) {
            return {
              res,
              fields,
              error: { code: 'RENDER_FAILED', message: redactCredentials(`rendering failed: ${messageOf(err)}; links are the fetched HTML's`) },
            };
          }
          this.ctx.log?.warn(`the browser died while rendering ${redactCredentials(entry.url)}: rendering it again in a new browser`);
        }
      }
      return {
        res,
        fields: { rendered: false, renderReason: decision.reason },
        error: { code: 'RENDER_FAILED', message: redactCredentials(`rendering failed twice: ${messageOf(lastError)}; links are the fetched HTML's`) },
      };
    } finally {
      this.release();
    }
  }

  /**
   * One try in the browser, bounded as a whole by the render timeout: opening
   * the page too, since a browser that dies at the wrong moment can leave a
   * call pending that nothing will ever answer.
   */
  private async renderOnce(entry: FrontierEntry, res: FetchResult, out: PageRequests[]): Promise<Rendered> {
    const { timeoutMs } = this.settings;
    // Starting the browser (seconds on a busy machine) is not the page's time.
    await this.pool.ready();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RenderTimeoutError(`not rendered within ${timeoutMs} ms`)), timeoutMs);
    });
    const launches = this.pool.launches;
    const work = this.renderIn(entry, res, out, timeoutMs);
    work.catch(() => {}); // lost the race: its rejection (the page closing) is expected
    try {
      return await Promise.race([work, timeout]);
    } catch (err) {
      // Out of time because the browser died under the page (a new one started meanwhile, or this one is gone): a crash, retried.
      if (err instanceof RenderTimeoutError && (this.pool.launches !== launches || !this.pool.up)) throw new BrowserCrashedError(err);
      if (err instanceof RenderTimeoutError) for (const requests of out) requests.closePage();
      throw err;
    } finally {
      clearTimeout(timer);
      for (const requests of out) requests.finish();
    }
  }

  private renderIn(entry: FrontierEntry, res: FetchResult, out: PageRequests[], timeoutMs: number): Promise<Rendered> {
    return this.pool.withPage(async (page) => {
      const requests = new PageRequests({
        page,
        document: res,
        fetcher: this.fetcher,
        block: this.block,
        blockUrls: this.settings.blockUrls,
        onEvent: (event) => {
          this.counts.subrequests[event.outcome]++;
          countSubrequest(this.ctx.stats, event);
          this.onEvent?.(entry.url, event);
        },
      });
      out.push(requests);
      // A popup gets nothing (the context's route refuses its requests) and is closed once it is reported.
      page.on('popup', (popup) => void popup.close().catch(() => {}));
      try {
        await page.route('**/*', (route) => requests.handle(route));
        const started = Date.now();
        // Load awaited in the page, not by Playwright's 'load': a navigation the page starts while loading (answered 204,
        // page-requests.ts) leaves Playwright waiting for a load that belongs to a document that never comes.
        await page.goto(entry.url, { waitUntil: 'commit', timeout: timeoutMs });
        await page.evaluate(LOADED_SCRIPT);
        // Watching the DOM may take what is left of the timeout, less a margin to read it in.
        await settle(page, requests, Math.min(SETTLE_MAX_MS, timeoutMs - (Date.now() - started) - READ_MARGIN_MS));
        const html = await page.content();
        // After history.pushState the document's URL is not the one fetched: relative links resolve against it.
        const documentUrl = page.url();
        return { html, documentUrl, navigations: requests.navigations.slice() };
      } finally {
        requests.finish();
      }
    });
  }

  private slot(): Promise<void> {
    if (this.rendering < this.settings.concurrency) {
      this.rendering++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push(() => {
        this.rendering++;
        resolve();
      });
      // The queue is full now only if it was before: nothing to wake.
    });
  }

  private release(): void {
    this.rendering--;
    const next = this.queue.shift();
    if (next) next();
    this.wakeHeldBack();
  }

  /** Room ahead of the browser again: the hosts held back may fetch their next page. */
  private wakeHeldBack(): void {
    if (this.heldBack.size === 0 || this.ahead >= this.settings.concurrency) return;
    const keys = [...this.heldBack];
    this.heldBack.clear();
    for (const key of keys) this.ctx.signals.wake(key);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Waits until no request of the page is under way and its DOM is quiet (see the contract). */
async function settle(page: Page, requests: PageRequests, maxMs: number): Promise<void> {
  // Only time spent watching the DOM counts against SETTLE_MAX_MS: waiting for
  // the page's own requests (paced by their hosts' limits, so seconds behind
  // other pages' requests) is bounded by the render timeout instead. Counted
  // from the start, a page whose API answer waited its turn was read before
  // its content arrived.
  let watched = 0;
  for (;;) {
    await requests.idle();
    const left = maxMs - watched;
    if (left <= 0) return;
    const from = Date.now();
    await page.evaluate(`(${QUIET_SCRIPT})(${JSON.stringify({ quietMs: SETTLE_QUIET_MS, maxMs: left })})`);
    watched += Date.now() - from;
    if (!requests.busy) return;
  }
}

/**
 * Runs in the page: resolves once the document has loaded. Polled, not a
 * 'load' listener: on a page that opens popups and navigates while loading,
 * a listener added from here was seen never to fire although the document
 * completed.
 */
const LOADED_SCRIPT = `new Promise((resolve) => { const check = () => (document.readyState === 'complete' ? resolve(true) : setTimeout(check, 50)); check(); })`;

/** Runs in the page: resolves when no DOM change has happened for `quietMs`, or after `maxMs`. */
const QUIET_SCRIPT = `({ quietMs, maxMs }) => new Promise((resolve) => {
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(cap); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quietMs); });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  timer = setTimeout(done, quietMs);
  const cap = setTimeout(() => { observer.disconnect(); clearTimeout(timer); resolve(false); }, maxMs);
})`;

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
