/**
 * One Chromium, driven by playwright-core (imported only when a crawl
 * renders), handing out pages to the renderer.
 *
 * Contract:
 * - The browser is launched on first use, once (concurrent callers share the
 *   launch). A page is rendered in a browser context that holds no other
 *   page while it renders: the context's route (every request of the page,
 *   its frames, workers and popups) goes to that render's handler, so a
 *   popup is its opener's by construction. When the render ends, its
 *   popups are closed and its tab taken to about:blank before the context
 *   serves another page; the context and its tab are reused (a new tab costs
 *   a renderer process: rendering with a context per page took 1.6× the
 *   time) until they have served `recycleAfter` pages (a context's caches
 *   and leaked listeners grow with every page: playwright#6319). A request
 *   that arrives while no render holds the context is refused.
 * - The network is denied at the network layer, not only per page: the
 *   browser's only proxy is a dead end of ours (a local socket that closes
 *   every connection it is given, loopback included: `<-loopback>`), so a
 *   request the route handler never sees — a speculative prefetch, a
 *   preconnect, a navigation's socket, a vector nobody thought of — has no
 *   way out and fails closed. WebRTC may use proxied traffic only (no UDP at
 *   all, TCP to the dead end), and pages get no RTCPeerConnection either.
 *   Service workers are blocked and WebSockets answered (closed) by us.
 *   Connections the dead end took are counted (`escapes`).
 * - When the browser dies (killed, crashed, OOM), the next page launches a
 *   new one; `withPage` rejects with
 *   BrowserCrashedError for a page the dead browser held, so the renderer can
 *   retry it once. The browser is also restarted after `restartAfter` pages,
 *   and when its processes hold more than `maxMemoryBytes` (looked at every
 *   MEMORY_CHECK_EVERY pages), which bounds what a long crawl's browser can
 *   accumulate; pages it still holds finish in it first.
 * - `close()` closes the browser and the dead end; pages still open reject.
 */
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { createServer, type Server } from 'node:net';
import { descendantMemory } from './browser-memory.js';

export interface BrowserPoolOptions {
  executablePath: string;
  /** The crawl's User-Agent: what scripts read in navigator.userAgent (every request carries it anyway). */
  userAgent: string;
  /** Pages one context serves before it is closed and a fresh one made. @default 50 */
  recycleAfter?: number;
  /** Pages per browser before it is restarted. @default 1000 */
  restartAfter?: number;
  /** Browser launch timeout, ms. @default 30000 */
  launchTimeoutMs?: number;
  /** Memory the browser's processes may hold (bytes of PSS, browser-memory.ts) before it is restarted; checked every MEMORY_CHECK_EVERY pages. @default none */
  maxMemoryBytes?: number;
  /** Reads the browser's memory in bytes, null when it cannot. @default descendantMemory (browser-memory.ts) */
  memory?: () => number | null;
  /** Told when the browser is restarted for its memory. */
  onMemoryRestart?: (bytes: number) => void;
}

/** Pages between two looks at the browser's memory (a look reads /proc for each of its processes). */
export const MEMORY_CHECK_EVERY = 5;

/** How long closing a page may take before the renderer goes on without waiting (ms). */
const CLOSE_WAIT_MS = 5_000;

/**
 * Chromium's switches beyond Playwright's own. Prediction and prerendering
 * off (they would only be refused); WebRTC limited to proxied traffic, which
 * means none: the proxy is the dead end and carries no UDP.
 */
const BROWSER_ARGS = [
  '--disable-dev-shm-usage',
  '--no-pings',
  '--dns-prefetch-disable',
  '--disable-features=NetworkPrediction,Prerender2,SpeculationRulesPrefetchProxy',
  '--force-webrtc-ip-handling-policy',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** Runs in every page and frame before its scripts: a crawl needs no peer-to-peer connection, and a page gets no handle to make one. */
const NO_WEBRTC_SCRIPT = `for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceTransport']) { try { delete globalThis[name]; } catch {} }`;

/** The browser a page ran in died under it. */
export class BrowserCrashedError extends Error {
  readonly code = 'BROWSER_CRASHED';

  constructor(cause?: unknown) {
    super('the browser closed while rendering the page', { cause });
    this.name = 'BrowserCrashedError';
  }
}

/** The route handler of the render that holds a context. */
export type RouteHandler = (route: Route) => Promise<void>;

/** A context and whose render it serves now. */
interface Slot {
  context: BrowserContext;
  /** Its tab, kept between renders (on about:blank): a new tab costs a renderer process. */
  page: Page | null;
  /** Pages it has served. */
  served: number;
  /** The render holding it; null between renders (its requests are refused then). */
  handler: RouteHandler | null;
}

interface Live {
  browser: Browser;
  pages: number;
  /** Pages rendering now: a retired browser closes when none is left. */
  open: number;
  /** Contexts no render holds, ready for the next. */
  idle: Slot[];
  /** Past `restartAfter` or the memory cap: no new pages; closed when its last page closes. */
  retired: boolean;
  /** `pages` when the memory was last looked at. */
  checkedAt?: number;
}

export class BrowserPool {
  private live: Promise<Live> | null = null;
  private current: Live | null = null;
  private closed = false;
  private deadEnd: Promise<Server> | null = null;
  /** Browsers started, restarts included: what a crash test and the summary read. */
  launches = 0;
  /** Connections the browser made by itself, which the dead end took and closed: each was a way out that the route handler never saw. */
  escapes = 0;

  constructor(private readonly opts: BrowserPoolOptions) {}

  /** Whether a browser is up (or starting). */
  get up(): boolean {
    return this.live !== null && (this.current === null || this.current.browser.isConnected());
  }

  /** Starts the browser now, so its launch (seconds) overlaps the first fetches; a failed launch is tried again by the first page. */
  warm(): void {
    if (!this.closed) this.ensure().catch(() => {});
  }

  /** Resolves once a browser is up (launching one if needed; the launch has its own timeout). */
  async ready(): Promise<void> {
    await this.connected();
  }

  /**
   * Runs `fn` on a fresh page whose context routes every request to
   * `handler` (the page's, its frames', workers' and popups'). The page and
   * its popups are closed afterwards however `fn` ends.
   */
  async withPage<T>(handler: RouteHandler, fn: (page: Page) => Promise<T>): Promise<T> {
    if (this.closed) throw new BrowserCrashedError();
    let live = await this.connected();
    if (live.pages >= (this.opts.restartAfter ?? 1000) || this.overMemory(live)) {
      this.retire(live);
      live = await this.connected();
    }
    live.pages++;
    live.open++;
    let slot: Slot | undefined;
    try {
      let page: Page;
      try {
        slot = live.idle.pop() ?? (await this.newSlot(live));
        slot.handler = handler;
        slot.served++;
        page = slot.page !== null && !slot.page.isClosed() ? slot.page : await slot.context.newPage();
        slot.page = page;
      } catch (err) {
        throw this.dead(live) ? new BrowserCrashedError(err) : err;
      }
      try {
        return await fn(page);
      } catch (err) {
        throw this.dead(live) ? new BrowserCrashedError(err) : err;
      }
    } finally {
      live.open--;
      // Not awaited: the page's record need not wait for its tab to be cleared; the context is idle only once it is.
      if (slot !== undefined) void this.giveBack(live, slot);
      if (live.retired && live.open === 0) void live.browser.close().catch(() => {});
    }
  }

  /** A new context: its only way out is the route of whichever render holds it. */
  private async newSlot(live: Live): Promise<Slot> {
    const context = await live.browser.newContext({
      serviceWorkers: 'block',
      userAgent: this.opts.userAgent,
      acceptDownloads: false,
      viewport: { width: 1280, height: 900 },
    });
    const slot: Slot = { context, page: null, served: 0, handler: null };
    // A WebSocket routed and never connected to its server is answered by us: closed at once.
    await context.routeWebSocket(/.*/, (ws) => ws.close());
    await context.addInitScript(NO_WEBRTC_SCRIPT);
    await context.route('**/*', (route) => (slot.handler === null ? route.abort('blockedbyclient').catch(() => {}) : slot.handler(route)));
    return slot;
  }

  /**
   * Ends the render's hold on its context: from now on the context's
   * requests are refused; its popups are closed and its tab is taken to
   * about:blank (what the page was doing ends there, its pagehide beacons
   * refused), bounded so that a wedged browser cannot hold the page's record.
   * The context is kept for the next page, or closed when it has served its
   * share, something would not close, or the browser is going.
   */
  private async giveBack(live: Live, slot: Slot): Promise<void> {
    slot.handler = null;
    if (this.dead(live)) return; // its contexts went with it
    const tab = slot.page;
    const cleared = Promise.all(
      slot.context.pages().map((page) => (page === tab ? page.goto('about:blank').then(() => true) : page.close().then(() => true))),
    ).catch(() => false);
    const clean = await Promise.race([cleared, new Promise<false>((resolve) => setTimeout(() => resolve(false), CLOSE_WAIT_MS).unref())]);
    const reusable = clean && slot.context.pages().length <= 1 && !live.retired && !this.dead(live) && this.current === live;
    if (reusable && slot.served < (this.opts.recycleAfter ?? 50)) live.idle.push(slot);
    else void slot.context.close().catch(() => {});
  }

  /** Whether the browser holds more memory than its cap: looked at every MEMORY_CHECK_EVERY pages, restarts then come between pages. */
  private overMemory(live: Live): boolean {
    const cap = this.opts.maxMemoryBytes;
    if (cap === undefined || live.pages === 0 || live.pages % MEMORY_CHECK_EVERY !== 0 || live.checkedAt === live.pages) return false;
    live.checkedAt = live.pages;
    const bytes = (this.opts.memory ?? descendantMemory)();
    if (bytes === null || bytes <= cap) return false;
    this.opts.onMemoryRestart?.(bytes);
    return true;
  }

  /** Whether `live`'s browser is gone (a crash, a kill, or a restart that replaced it). */
  private dead(live: Live): boolean {
    return !live.browser.isConnected();
  }

  /**
   * A browser that is up: one killed a moment ago may not have said
   * 'disconnected' yet, and a retry must not get it again.
   */
  private async connected(): Promise<Live> {
    for (let i = 0; ; i++) {
      const live = await this.ensure();
      if (live.browser.isConnected() || i === 2) return live;
      if (this.current === live) {
        this.current = null;
        this.live = null;
      }
    }
  }

  private ensure(): Promise<Live> {
    if (this.live === null) {
      const launching = this.launch();
      this.live = launching;
      launching.catch(() => {
        if (this.live === launching) this.live = null;
      });
    }
    return this.live;
  }

  /**
   * The browser's only proxy: a socket on loopback that closes every
   * connection at once. Chromium does not fall back to a direct connection
   * when a fixed proxy fails, so this is where every request we did not
   * answer ourselves ends.
   */
  private openDeadEnd(): Promise<Server> {
    this.deadEnd ??= new Promise<Server>((resolve, reject) => {
      const server = createServer((socket) => {
        this.escapes++;
        socket.on('error', () => {});
        socket.destroy();
      });
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
      server.unref();
    });
    return this.deadEnd;
  }

  private async launch(): Promise<Live> {
    const { chromium } = await import('playwright-core');
    const deadEnd = await this.openDeadEnd();
    const { port } = deadEnd.address() as { port: number };
    const args = [...BROWSER_ARGS];
    // Chromium refuses to start as root with its sandbox on (containers, CI).
    if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--no-sandbox');
    const browser = await chromium.launch({
      executablePath: this.opts.executablePath,
      args,
      timeout: this.opts.launchTimeoutMs ?? 30_000,
      // Loopback too: Chromium sends it around any proxy unless told `<-loopback>` (Playwright adds it when the bypass list names no loopback host).
      proxy: { server: `http://127.0.0.1:${port}` },
    });
    this.launches++;
    const live: Live = { browser, pages: 0, open: 0, idle: [], retired: false };
    this.current = live;
    browser.on('disconnected', () => {
      // The next page gets a new browser; the pages this one held reject with BrowserCrashedError.
      if (this.current === live) {
        this.current = null;
        this.live = null;
      }
    });
    return live;
  }

  /** Hands out no more pages from `live`; it closes once its last page has. */
  private retire(live: Live): void {
    if (this.current === live) {
      this.current = null;
      this.live = null;
    }
    live.retired = true;
    for (const slot of live.idle.splice(0)) void slot.context.close().catch(() => {});
    if (live.open === 0) void live.browser.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    const live = this.live;
    this.live = null;
    const deadEnd = this.deadEnd;
    this.deadEnd = null;
    const got = await live?.catch(() => null);
    await got?.browser.close().catch(() => {});
    const server = await deadEnd?.catch(() => null);
    server?.close();
  }
}
