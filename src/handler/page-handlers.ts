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
 *   while its job still holds its slot, so the wait is backpressure on the
 *   crawl, never memory.
 * - A handler that returns a promise is raced against `timeoutMs`, and its
 *   page's job hands its slot back while it waits. One that returns at once
 *   keeps the slot (nothing else runs meanwhile anyway) and cannot time out:
 *   JavaScript cannot interrupt a synchronous loop.
 * - `userData` must be JSON of at most USER_DATA_MAX_BYTES; an item, JSON.
 *   Past either, the call throws (a HANDLER_ERROR when not caught).
 * - `wrap` gives a page job the hand-off the renderer gives on crawls that
 *   render (render/renderer.ts): the job ends, giving its global slot and its
 *   host's concurrency back, while the handler's promise is pending;
 *   `pending` counts such pages, and the crawl does not end while any is.
 */
import type { CheerioAPI } from 'cheerio';
import type { Job } from '../politeness/host-state.js';
import { handOffJob, type HandOffHooks } from '../schedule/hand-off-job.js';
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
  /** Links the scope allows, canonical: asked for only when the handler reads `page.links`. */
  links: () => string[];
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
    return handOffJob(job, this.handOffHooks);
  }

  private readonly handOffHooks: HandOffHooks = {
    handedOff: () => this.pending++,
    ended: (handed) => {
      if (!handed) return;
      this.pending--;
      this.parts.settled();
    },
  };

  /**
   * Runs the page's handler once it has a turn and gives its outcome; never
   * throws. A handler that returns at once (no promise) is done with at
   * once: nothing else could run while it did, so its page keeps its slot
   * and no promise is made for it (the common case costs little). One that
   * returns a promise is raced against the timeout, and `handOff` is called
   * first: the page's job gives its slot back while the handler waits.
   */
  run(page: HandledPage, handOff: () => void): HandlerOutcome | Promise<HandlerOutcome> {
    if (this.running < this.settings.concurrency) {
      this.running++;
      return this.runHeld(page, handOff);
    }
    // Waiting for a turn still holds the job's slot: backpressure on the crawl.
    return new Promise<void>((resolve) => this.waiting.push(resolve)).then(() => this.runHeld(page, handOff));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private runHeld(page: HandledPage, handOff: () => void): HandlerOutcome | Promise<HandlerOutcome> {
    const label = typeof page.extra?.label === 'string' ? page.extra.label : undefined;
    const fn = this.route(label);
    const outcome: HandlerOutcome = { items: [], enqueued: [], follow: true };
    if (fn === undefined) {
      this.release();
      return outcome;
    }
    const state = { open: true };
    let result: unknown;
    try {
      result = fn(this.view(page, label), this.context(page, outcome, state));
    } catch (err) {
      return this.failedWith(page, outcome, state, err);
    }
    if (!isThenable(result)) return this.settled(outcome, state, result);
    handOff();
    return this.awaited(page, outcome, state, result);
  }

  private async awaited(page: HandledPage, outcome: HandlerOutcome, state: { open: boolean }, pending: PromiseLike<unknown>): Promise<HandlerOutcome> {
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.setTimer(() => reject(new HandlerTimeout()), this.settings.timeoutMs);
    });
    const ran = Promise.resolve(pending);
    ran.then(undefined, () => {}); // lost the race: its rejection is nobody's now
    try {
      return this.settled(outcome, state, await Promise.race([ran, timeout]));
    } catch (err) {
      return this.failedWith(page, outcome, state, err);
    } finally {
      timer?.cancel();
    }
  }

  /** The handler returned `result`: its turn goes back, late calls are ignored, and the outcome is final. */
  private settled(outcome: HandlerOutcome, state: { open: boolean }, result: unknown): HandlerOutcome {
    state.open = false;
    this.release();
    if (result !== null && typeof result === 'object' && (result as { follow?: unknown }).follow === false) outcome.follow = false;
    return outcome;
  }

  /** The handler failed with `err` (or timed out): as `settled`, and all or nothing: half a page's work is none. */
  private failedWith(page: HandledPage, outcome: HandlerOutcome, state: { open: boolean }, err: unknown): HandlerOutcome {
    state.open = false;
    this.release();
    // Whether to follow its links is what it said before it failed.
    outcome.items = [];
    outcome.enqueued = [];
    outcome.error =
      err instanceof HandlerTimeout
        ? { code: 'HANDLER_TIMEOUT', message: `the page handler did not settle within ${this.settings.timeoutMs / 1000}s` }
        : { code: 'HANDLER_ERROR', message: messageOf(err), cause: err };
    this.failed(page.url, outcome.error);
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
    return new PageView(page, label, this.cheerio!);
  }

  /** `ctx`: plain closures, so a handler may destructure it (`handle(page, { push })`). */
  private context(page: HandledPage, outcome: HandlerOutcome, state: { open: boolean }): HandlerContext {
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
        if (!state.open) return late('enqueue()');
        for (const url of resolved) outcome.enqueued.push({ url, extra });
      },
      push: (data) => {
        checkJson(data, 'ctx.push');
        if (!state.open) return late('push()');
        // Kept as given, not copied: it is written when the handler has settled, as it is then.
        outcome.items.push(data as JsonValue);
      },
      follow: (follow) => {
        if (state.open) outcome.follow = follow !== false;
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

/**
 * A page as its handler sees it. A class, not an object literal: a literal
 * with a getter is built on V8's slow path, which tripled the crawl loop's
 * CPU per page (bench/loop-cpu.js --handler).
 */
class PageView implements HandlerPage {
  readonly url: string;
  readonly finalUrl: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
  readonly record: PageRecord;
  readonly userData: JsonValue | undefined;
  readonly depth: number;
  private dom: CheerioAPI | undefined;
  private found: string[] | undefined;

  constructor(
    private readonly page: HandledPage,
    readonly label: string | undefined,
    private readonly cheerio: typeof import('cheerio'),
  ) {
    this.url = page.url;
    this.finalUrl = page.finalUrl;
    this.status = page.status;
    this.headers = page.headers;
    this.body = page.body;
    this.record = page.record;
    this.userData = page.extra?.userData as JsonValue | undefined;
    this.depth = page.depth;
  }

  // A method, not a closure made per page: one made per page cost as much as the rest of the handler step
  // (bench/loop-cpu.js --handler). So `page.$(…)`, not `const { $ } = page`.
  $(): CheerioAPI;
  $(selector: string): ReturnType<PageQuery>;
  $(selector?: string): CheerioAPI | ReturnType<PageQuery> {
    return selector === undefined ? this.root() : (this.root()(selector) as ReturnType<PageQuery>);
  }

  get links(): readonly string[] {
    return (this.found ??= this.page.links());
  }

  private root(): CheerioAPI {
    return (this.dom ??= this.cheerio.load(this.page.body ?? '', { baseURI: this.page.finalUrl }));
  }
}

class HandlerTimeout extends Error {}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

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
  checkJson(value, what);
  return JSON.stringify(value);
}

/** Throws a TypeError naming `what` and where in `value` it is not JSON. */
function checkJson(value: unknown, what: string): void {
  const problem = notJson(value, '', new Set());
  if (problem !== undefined) throw new TypeError(`${what}: not JSON: ${problem}`);
}

/**
 * What in `value` is not JSON ("a function at .price"), or undefined. The
 * path is built only on the way back from a problem: checking a good value
 * allocates nothing but the set of objects open on the way down.
 */
function notJson(value: unknown, at: string, open: Set<object>): string | undefined {
  const problem = firstProblem(value, open);
  return problem === undefined ? undefined : `${problem.what}${problem.path === '' && at === '' ? '' : ` at ${at}${problem.path}`}`;
}

function firstProblem(value: unknown, open: Set<object>): { what: string; path: string } | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : { what: String(value), path: '' };
    case 'object':
      break;
    default:
      return { what: typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`, path: '' };
  }
  if (value === null || value instanceof Date) return undefined;
  if (open.has(value)) return { what: 'a cycle', path: '' };
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return { what: `a ${value.constructor?.name ?? 'non-plain'} object`, path: '' };
  open.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = firstProblem(value[i], open);
        if (problem) return { what: problem.what, path: `[${i}]${problem.path}` };
      }
      return undefined;
    }
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue; // left out, as JSON does: an optional field
      const problem = firstProblem(v, open);
      if (problem) return { what: problem.what, path: `.${key}${problem.path}` };
    }
    return undefined;
  } finally {
    open.delete(value);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
