/**
 * What a site-specific crawl's code sees: the page handler's arguments and
 * what it may answer (docs/handlers.md). Types only: the step that runs a
 * handler is page-handlers.ts.
 */
import type { Cheerio, CheerioAPI } from 'cheerio';
// cheerio's own types name domhandler's: wherever they resolve, so does this.
import type { Element } from 'domhandler';
import type { PageRecord } from '../types.js';

/** A JSON value: what `userData` and an item's `data` may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One fetched page as a handler gets it (a rendered page after rendering). */
export interface HandlerPage {
  /** The URL requested (canonical, as in the record). */
  readonly url: string;
  /** The document's URL when it was read: `url`, or where `history.pushState` left a rendered page. */
  readonly finalUrl: string;
  readonly status: number;
  /** Response headers, lowercased names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text (the rendered DOM's HTML when rendered); null when the crawl did not read it (not HTML or text). */
  readonly body: string | null;
  /**
   * cheerio on the body (the rendered DOM when rendered), built at the first
   * call and then reused; an empty document when there is no body.
   * `page.$('h1')` selects, as `page.$()('h1')` does. A method: call it on
   * `page` (`const { $ } = page` loses it).
   */
  $: PageQuery;
  /** The links the crawl found on the page that its scope allows, canonical, in document order. */
  readonly links: readonly string[];
  /** The record that will be written for the page (changes to it are written too). */
  readonly record: PageRecord;
  /** The label the URL was enqueued with (`ctx.enqueue(url, { label })`); undefined for seeds and links followed by the crawl. */
  readonly label: string | undefined;
  /** What the enqueuing page attached (`ctx.enqueue(url, { userData })`). */
  readonly userData: JsonValue | undefined;
  /** Links from a seed: 0 for a seed. */
  readonly depth: number;
}

/** `page.$`: the page's cheerio root, or a selection when given a selector. */
export interface PageQuery {
  (): CheerioAPI;
  (selector: string): Cheerio<Element>;
}

export interface EnqueueOptions {
  /** Routes the page to `handle[label]` when `handle` is a router. */
  label?: string;
  /** JSON carried to the page's handler as `page.userData`; at most 16 KiB as JSON (a field set to undefined is left out, as JSON does). */
  userData?: unknown;
}

export interface HandlerLog {
  info(message: string): void;
  warn(message: string): void;
}

/** What a handler can do beyond reading its page. Calls after the handler settled (or timed out) are ignored. */
export interface HandlerContext {
  /**
   * Adds URLs (absolute, or relative to the page) to the crawl; every rule
   * still applies: scope, filters, robots.txt, depth (one more than the
   * page's), caps and dedupe. A URL the crawl already knows keeps its first
   * label and userData. Throws a TypeError for a URL that is not http(s).
   */
  enqueue(urls: string | readonly string[], options?: EnqueueOptions): void;
  /**
   * Emits an item: a `{"type":"item","url",…,"data"}` record written before
   * the page's own. `data` must be JSON: a function, a cycle, a BigInt, NaN
   * or a class instance other than Date throws (a field set to undefined is
   * left out, as JSON does).
   */
  push(data: unknown): void;
  /** `follow(false)`: the page's links are not followed by the crawl; only what the handler enqueues is. @default true */
  follow(follow: boolean): void;
  /** The crawl's log (stderr for the CLI), each line prefixed with the page's URL. */
  readonly log: HandlerLog;
}

/** What a handler may return (or resolve to). */
export type HandlerResult = void | undefined | { follow?: boolean };

/** Called once per page answered 2xx (after rendering, when the page is rendered). */
export type PageHandler = (page: HandlerPage, ctx: HandlerContext) => HandlerResult | Promise<HandlerResult>;

/** Routes a page by the label it was enqueued with; `default` takes unlabelled pages and labels with no handler of their own. */
export interface HandlerRouter {
  default?: PageHandler;
  [label: string]: PageHandler | undefined;
}

/** `handle`: one function for every page, or a router by label. */
export type HandlerSpec = PageHandler | HandlerRouter;
