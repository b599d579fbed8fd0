/**
 * One Chromium, driven by playwright-core (imported only when a crawl
 * renders), handing out pages to the renderer.
 *
 * Contract:
 * - The browser is launched on first use, once (concurrent callers share the
 *   launch). Pages come from a shared context that is replaced every
 *   `recycleAfter` pages (a context's caches, cookies and leaked listeners
 *   grow with every page: playwright#6319); the old one is closed when its
 *   last page closes.
 * - Every context blocks service workers (they would fetch behind our route
 *   handler's back) and answers every WebSocket itself, closing it. A page's
 *   own route (the renderer's) answers its requests; the context's route
 *   refuses every request of a page that has none: a popup, whose pages are
 *   also closed as soon as their opener reports them.
 * - The network is denied at the network layer, not only per page: the
 *   browser's only proxy is a dead end of ours (a local socket that closes
 *   every connection it is given, loopback included: `<-loopback>`), so a
 *   request no route sees — a speculative prefetch or prerender, a
 *   preconnect, a navigation's socket, a vector nobody thought of — has no
 *   way out and fails closed. WebRTC may use proxied traffic only (no UDP at
 *   all, TCP to the dead end), and pages get no RTCPeerConnection.
 * - When the browser dies (killed, crashed, OOM), the next page launches a
 *   new one; `withPage` rejects with
 *   BrowserCrashedError for a page the dead browser held, so the renderer can
 *   retry it once. The browser is also restarted after `restartAfter` pages,
 *   and when its processes hold more than `maxMemoryBytes` (looked at every
 *   MEMORY_CHECK_EVERY pages), which bounds what a long crawl's browser can
 *   accumulate; pages it still holds finish in it first.
 * - `close()` closes the browser and the dead end; pages still open reject.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createServer, type Server } from 'node:net';
import { descendantMemory } from './browser-memory.js';

export interface BrowserPoolOptions {
  executablePath: string;
  /** The crawl's User-Agent: what scripts read in navigator.userAgent (every request carries it anyway). */
  userAgent: string;
  /** Pages per context before a new one is made. @default 50 */
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

interface Live {
  browser: Browser;
  pages: number;
  context: BrowserContext | null;
  contextPages: number;
  /** Pages open per context, so a replaced context closes when its last page does. */
  open: Map<BrowserContext, number>;
  /** Past `restartAfter` or the memory cap: no new pages; closed when its last page closes. */
  retired: boolean;
  /** `pages` when the memory was last looked at. */
  checkedAt?: number;
  /**
   * Rejects when the browser disconnects. A page's work races it: a call in
   * flight when the browser is killed (or a wait of ours on the page) is not
   * always answered, and the page would otherwise learn of the crash only at
   * its render timeout.
   */
  gone: Promise<never>;
}

export class BrowserPool {
  private live: Promise<Live> | null = null;
  private current: Live | null = null;
  private closed = false;
  private deadEnd: Promise<Server> | null = null;
  /** Browsers started, restarts included: what a crash test and the summary read. */
  launches = 0;

  constructor(private readonly opts: BrowserPoolOptions) {}

  /** Whether a browser is up (or starting). */
  get up(): boolean {
    return this.live !== null && (this.current === null || this.current.browser.isConnected());
  }

  /** Resolves once a browser is up (launching one if needed; the launch has its own timeout). */
  async ready(): Promise<void> {
    await this.connected();
  }

  /** Runs `fn` on a fresh page, closed afterwards however `fn` ends. */
  async withPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
    if (this.closed) throw new BrowserCrashedError();
    let live = await this.connected();
    if (live.pages >= (this.opts.restartAfter ?? 1000) || this.overMemory(live)) {
      this.retire(live);
      live = await this.connected();
    }
    const context = await this.contextFor(live);
    let page: Page;
    try {
      page = await Promise.race([context.newPage(), live.gone]);
    } catch (err) {
      this.release(live, context);
      throw this.dead(live) ? new BrowserCrashedError(err) : err;
    }
    try {
      return await Promise.race([fn(page), live.gone]);
    } catch (err) {
      throw this.dead(live) ? new BrowserCrashedError(err) : err;
    } finally {
      // Bounded: a wedged browser must not hold the page's record.
      await Promise.race([page.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
      this.release(live, context);
    }
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
    let disconnected: (err: Error) => void = () => {};
    const gone = new Promise<never>((_, reject) => (disconnected = reject));
    gone.catch(() => {}); // raced by pages; nobody else waits on it
    const live: Live = { browser, pages: 0, context: null, contextPages: 0, open: new Map(), retired: false, gone };
    this.current = live;
    browser.on('disconnected', () => {
      disconnected(new BrowserCrashedError());
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
    if (live.open.size === 0) void live.browser.close().catch(() => {});
  }

  private async contextFor(live: Live): Promise<BrowserContext> {
    const recycleAfter = this.opts.recycleAfter ?? 50;
    if (live.context === null || live.contextPages >= recycleAfter) {
      const old = live.context;
      live.context = null;
      const context = await live.browser.newContext({
        serviceWorkers: 'block',
        userAgent: this.opts.userAgent,
        acceptDownloads: false,
        viewport: { width: 1280, height: 900 },
      });
      // A WebSocket routed and never connected to its server is answered by us: closed at once.
      await context.routeWebSocket(/.*/, (ws) => ws.close());
      await context.addInitScript(NO_WEBRTC_SCRIPT);
      // A page's own route comes first; this one answers the pages that have none (popups): refused.
      await context.route('**/*', (route) => route.abort('blockedbyclient').catch(() => {}));
      if (live.context === null) {
        live.context = context;
        live.contextPages = 0;
      } else {
        void context.close().catch(() => {}); // another caller made one meanwhile
      }
      if (old !== null && (live.open.get(old) ?? 0) === 0) void old.close().catch(() => {});
    }
    const context = live.context;
    live.contextPages++;
    live.pages++;
    live.open.set(context, (live.open.get(context) ?? 0) + 1);
    return context;
  }

  private release(live: Live, context: BrowserContext): void {
    const left = (live.open.get(context) ?? 1) - 1;
    if (left > 0) live.open.set(context, left);
    else {
      live.open.delete(context);
      if (context !== live.context) void context.close().catch(() => {});
    }
    if (live.retired && live.open.size === 0) void live.browser.close().catch(() => {});
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
