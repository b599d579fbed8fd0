/**
 * The user's page handler as one step of a page's trip (after its links are
 * found, before its record is written): routes the page by its label, runs
 * the handler with what it may see and do, and gives back one outcome —
 * the items to write before the page's record, the URLs to enqueue, whether
 * the page's own links are followed, and an error for the record when the
 * handler threw or did not settle in time.
 *
 * Contract:
 * - All or nothing: a handler that throws, rejects or times out leaves no
 *   item and no enqueued URL (they would be half a page's work); the page's
 *   links are followed as without a handler, unless it called
 *   `follow(false)` first. Calls made after it settled are ignored.
 * - At most `concurrency` handlers run at once; a page waits for its turn
 *   before its job hands its host's slot back (`acquire`), so the wait is
 *   backpressure on the crawl, never memory.
 * - `userData` must be JSON of at most USER_DATA_MAX_BYTES; an item, JSON.
 *   Past either, the call throws (a HANDLER_ERROR when not caught).
 * - `wrap` gives a page job the hand-off the renderer gives on crawls that
 *   render (render/renderer.ts): the job ends, giving its global slot and its
 *   host's concurrency back, while the handler runs on; `pending` counts
 *   such pages, and the crawl does not end while any is.
 */
import type { CheerioAPI } from 'cheerio';
import type { Job, JobContext } from '../politeness/host-state.js';
import { resolveLink } from '../parse/url.js';
import type { EntryExtra } from '../store/crawl-store.js';
import type { PageRecord } from '../types.js';
import { HandlerError } from './handler-error.js';
import type { EnqueueOptions, HandlerContext, HandlerPage, HandlerSpec, JsonValue, PageHandler, PageQuery } from './handler-types.js';

/** The largest `userData`, as JSON: it travels with the queued URL through every store. */
export const USER_DATA_MAX_BYTES = 16 * 1024;
/** The longest label. */
export const LABEL_MAX_LENGTH = 200;

export interface HandlerSettings {
  handle: HandlerSpec;
  /** A handler not settled by then gives HANDLER_TIMEOUT. */
  timeoutMs: number;
  /** Handlers running at once, at most. */
  concurrency: number;
  /** `stop`: the first handler error stops the crawl (after its page's record). */
  errors: 'record' | 'stop';
}

/** One page, as the crawl hands it over. */
export interface HandledPage {
  url: string;
  finalUrl: string;
  status: number;
  headers: Record<string, string>;
  body: string | null;
  /** Links the scope allows, canonical. */
  links: string[];
  record: PageRecord;
  depth: number;
  extra: EntryExtra | undefined;
}

/** A URL the handler enqueued, resolved and canonical, with what travels with it. */
export interface Enqueued {
  url: string;
  extra: EntryExtra | undefined;
}

export interface HandlerOutcome {
  items: JsonValue[];
  enqueued: Enqueued[];
  follow: boolean;
  error?: { code: 'HANDLER_ERROR' | 'HANDLER_TIMEOUT'; message: string; cause?: unknown };
}

export interface PageHandlersParts {
  log?: { info(message: string): void; warn(message: string): void; debug?(message: string): void };
  /** Told once the crawl is to stop (`errors: 'stop'`), with the error the handler threw. */
  stop(error: HandlerError): void;
  /** A handed-off page finished: the crawl may be done. */
  settled(): void;
  /** A handler timer (the crawl's clock in tests). @default setTimeout */
  setTimer?(fn: () => void, ms: number): { cancel(): void };
}

export class PageHandlers {
  /** Pages whose job handed its slot back and whose handler has not finished. */
  pending = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private cheerio: typeof import('cheerio') | undefined;
  private stopped = false;

  constructor(
    private readonly settings: HandlerSettings,
    private readonly parts: PageHandlersParts,
  ) {}

  /** Loads cheerio, for `page.$()` (awaited by the crawl before its first page, so `$()` stays synchronous). */
  async load(): Promise<void> {
    this.cheerio = await import('cheerio');
  }

  /** Gives a page job a way to end before its page does (see the contract). */
  wrap(job: Job): Job {
    return (ctx) =>
      new Promise<void>((resolve) => {
        let handed = false;
        const inner: JobContext = {
          onDispatched: (at) => ctx.onDispatched(at),
          onResponse: (at) => ctx.onResponse(at),
          ...(ctx.detach && { detach: () => ctx.detach!() }),
          handOff: () => {
            if (handed) return;
            handed = true;
            this.pending++;
            resolve();
          },
        };
        const end = () => {
          if (!handed) return resolve();
          this.pending--;
          this.parts.settled();
        };
        job(inner).then(end, end);
      });
  }

  /** Resolves when a handler may start (see the contract); `release` after it. */
  acquire(): Promise<void> {
    if (this.running < this.settings.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** Runs the page's handler (its turn already acquired) and gives its outcome; never throws. */
  async handle(page: HandledPage): Promise<HandlerOutcome> {
    const label = typeof page.extra?.label === 'string' ? page.extra.label : undefined;
    const fn = this.route(label);
    const outcome: HandlerOutcome = { items: [], enqueued: [], follow: true };
    if (fn === undefined) return outcome;
    let open = true;
    const ctx = this.context(page, outcome, () => open);
    let timer: { cancel(): void } | undefined;
    try {
      const ran = new Promise<unknown>((resolve, reject) => {
        try {
          resolve(fn(this.view(page, label), ctx));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      const timeout = new Promise<never>((_, reject) => {
        timer = this.setTimer(() => reject(new HandlerTimeout()), this.settings.timeoutMs);
      });
      ran.catch(() => {}); // lost the race: its rejection is nobody's now
      const result = await Promise.race([ran, timeout]);
      if (result !== null && typeof result === 'object' && (result as { follow?: unknown }).follow === false) outcome.follow = false;
    } catch (err) {
      const follow = outcome.follow;
      outcome.items = [];
      outcome.enqueued = [];
      outcome.follow = follow;
      outcome.error =
        err instanceof HandlerTimeout
          ? { code: 'HANDLER_TIMEOUT', message: `the page handler did not settle within ${this.settings.timeoutMs / 1000}s` }
          : { code: 'HANDLER_ERROR', message: messageOf(err), cause: err };
      this.failed(page.url, outcome.error);
    } finally {
      open = false;
      timer?.cancel();
    }
    return outcome;
  }

  private failed(url: string, error: NonNullable<HandlerOutcome['error']>): void {
    const { log } = this.parts;
    const stack = error.cause instanceof Error ? error.cause.stack : undefined;
    if (stack && log?.debug) log.debug(`the page handler failed at ${url}:\n${stack}`);
    if (this.settings.errors !== 'stop' || this.stopped) return;
    this.stopped = true;
    this.parts.stop(new HandlerError(url, error.message, { cause: error.cause }));
  }

  private route(label: string | undefined): PageHandler | undefined {
    const { handle } = this.settings;
    if (typeof handle === 'function') return handle;
    return (label !== undefined && Object.hasOwn(handle, label) ? handle[label] : undefined) ?? handle.default;
  }

  private view(page: HandledPage, label: string | undefined): HandlerPage {
    const cheerio = this.cheerio;
    let dom: CheerioAPI | undefined;
    const root = () => (dom ??= cheerio!.load(page.body ?? '', { baseURI: page.finalUrl }));
    return {
      url: page.url,
      finalUrl: page.finalUrl,
      status: page.status,
      headers: page.headers,
      body: page.body,
      $: ((selector?: string) => (selector === undefined ? root() : root()(selector))) as PageQuery,
      links: page.links,
      record: page.record,
      label,
      userData: page.extra?.userData as JsonValue | undefined,
      depth: page.depth,
    };
  }

  private context(page: HandledPage, outcome: HandlerOutcome, open: () => boolean): HandlerContext {
    const { log } = this.parts;
    const late = (what: string) => log?.warn(`the page handler of ${page.url} called ${what} after it settled: ignored`);
    return {
      enqueue: (urls, options) => {
        const extra = enqueueExtra(options);
        const list = typeof urls === 'string' ? [urls] : urls;
        if (!Array.isArray(list)) throw new TypeError(`ctx.enqueue: expected a URL or an array of URLs, got ${typeof urls}`);
        const resolved = list.map((u: unknown) => {
          const url = typeof u === 'string' ? resolveLink(u, page.finalUrl) : null;
          if (url === null) throw new TypeError(`ctx.enqueue: not an http(s) URL: ${JSON.stringify(u)}`);
          return url;
        });
        if (!open()) return late('enqueue()');
        for (const url of resolved) outcome.enqueued.push({ url, extra });
      },
      push: (data) => {
        const json = jsonOf(data, 'ctx.push');
        if (!open()) return late('push()');
        outcome.items.push(JSON.parse(json) as JsonValue);
      },
      follow: (follow) => {
        if (open()) outcome.follow = follow !== false;
      },
      log: {
        info: (message) => log?.info(`${page.url}: ${String(message)}`),
        warn: (message) => log?.warn(`${page.url}: ${String(message)}`),
      },
    };
  }

  private setTimer(fn: () => void, ms: number): { cancel(): void } {
    if (this.parts.setTimer) return this.parts.setTimer(fn, ms);
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  }
}

class HandlerTimeout extends Error {}

/** What travels with an enqueued URL: its label and userData, checked. */
function enqueueExtra(options: EnqueueOptions | undefined): EntryExtra | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw new TypeError('ctx.enqueue: options must be an object like { label, userData }');
  const { label, userData } = options;
  const extra: EntryExtra = {};
  if (label !== undefined) {
    if (typeof label !== 'string' || label === '' || label.length > LABEL_MAX_LENGTH)
      throw new TypeError(`ctx.enqueue: label must be a non-empty string of at most ${LABEL_MAX_LENGTH} characters`);
    extra.label = label;
  }
  if (userData !== undefined) {
    const json = jsonOf(userData, 'ctx.enqueue: userData');
    const bytes = Buffer.byteLength(json);
    if (bytes > USER_DATA_MAX_BYTES)
      throw new RangeError(`ctx.enqueue: userData is ${bytes} bytes as JSON, over the limit of ${USER_DATA_MAX_BYTES}: carry an id and look the rest up`);
    extra.userData = JSON.parse(json) as JsonValue;
  }
  return label === undefined && userData === undefined ? undefined : extra;
}

/**
 * `value` as JSON, or a TypeError naming `what` and where in it the problem
 * is: JSON.stringify would drop a function or undefined silently, and turn
 * NaN into null, so what the handler meant would not be what is written.
 */
function jsonOf(value: unknown, what: string): string {
  const problem = notJson(value, '', new Set());
  if (problem !== undefined) throw new TypeError(`${what}: not JSON: ${problem}`);
  return JSON.stringify(value);
}

function notJson(value: unknown, at: string, open: Set<object>): string | undefined {
  const where = at === '' ? '' : ` at ${at}`;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${value}${where}`;
    case 'object':
      break;
    default:
      return `${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}${where}`;
  }
  if (value === null || value instanceof Date) return undefined;
  if (open.has(value)) return `a cycle${where}`;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return `a ${value.constructor?.name ?? 'non-plain'} object${where}`;
  open.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = notJson(value[i], `${at}[${i}]`, open);
        if (problem) return problem;
      }
      return undefined;
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue; // left out, as JSON does: an optional field
      const problem = notJson(v, `${at}.${key}`, open);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    open.delete(value);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
