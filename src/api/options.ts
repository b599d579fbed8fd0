/**
 * What a library caller passes to `crawl()` and `explain()`: the config
 * file's fields, as written in crawler.config.json, plus a few options that
 * only make sense in code (seeds, a signal, a buffer size, a log).
 *
 * Types only; validation lives in resolve-options.ts.
 */
import type { z } from 'zod';
import type { configFileSchema } from '../config/file-schema.js';
import type { HandlerSpec } from '../handler/handler-types.js';

/**
 * The config file's shape, exactly as in crawler.config.json (durations as
 * `"30s"`, rates as `"2/s"`, sizes as `"10MiB"`), checked by the same schema
 * and reported with the same messages. See crawler.config.example.json for
 * every field and crawler.config.schema.json for their docs.
 */
export type CrawlConfig = z.input<ReturnType<typeof configFileSchema>>;

/** Where the crawl reports what a user may want to know (a host given up, a capped Crawl-delay). `console` fits. */
export interface CrawlLog {
  info(message: string): void;
  warn(message: string): void;
  /** Details worth a line only when asked for (the CLI's `-v`), e.g. a host's rate changed by its response times. @default none */
  debug?(message: string): void;
}

/**
 * Options of {@link crawl}: the config file's fields plus the ones below.
 * Among the fields, each as its flag: `content: 'markdown'` (or `'text'`,
 * `'html'`) and `extract: { title: 'h1', 'links[]': 'a::attr(href)' }` add
 * the page's main content and CSS-selected fields to each HTML page record
 * (`--content`, `--extract`); `followCanonical` (`--follow-canonical`);
 * `sitemaps: [url]` (`--sitemap`) and `robotsSitemaps: true` (`--sitemaps`);
 * `checkLinks` (`--check-links`); `defaults.headers` or a `domains` entry's
 * `headers` (`--header`; a credential in `defaults.headers`, such as
 * X-Api-Key or an `{ env }` value, goes to the seeds' hosts only),
 * `cookies: { send: ['sid=1'], jar: 'cookies.txt' }`
 * (`--cookie`, `--cookie-jar`), `defaults.proxy` (`--proxy`) and
 * `tls: { insecure, ca }` (`--insecure`, `--ca`).
 */
export interface CrawlOptions extends CrawlConfig {
  /**
   * Absolute http(s) URLs to start from; duplicates are dropped. Required,
   * unless `sitemaps` names sitemap files to start from (then `[]` will do).
   */
  seeds: string[];
  /**
   * Aborting it ends the crawl: nothing new starts, requests in flight are
   * cancelled (their records carry the error code `ABORTED`), and the
   * iteration ends normally with `stats.interrupted` set. Already aborted
   * when the first record is pulled: nothing is fetched and nothing yielded.
   * @default none
   */
  signal?: AbortSignal;
  /**
   * Also yield a record for each URL skipped by robots.txt, scope, depth or
   * caps (a skipped seed always gets one), like `--emit-skipped`.
   * @default false
   */
  emitSkipped?: boolean;
  /**
   * Include each page's extracted links (`linkList`), like `--links`.
   * @default false
   */
  links?: boolean;
  /**
   * Also yield a `type: "robots"` record for each robots.txt request, like
   * `--emit-robots`.
   * @default false
   */
  emitRobots?: boolean;
  /**
   * Save each 2xx body (any type, up to `maxBody`) under this directory, like
   * `--save-dir`: the page record's `savedPath` names its file, relative to
   * the directory. Created if needed; relative to the working directory.
   * Checked when the first record is pulled: a directory that cannot be
   * written rejects that pull with an `OutputError`, before anything is fetched.
   * @default none
   */
  saveDir?: string;
  /**
   * Also write requests and responses as WARC 1.1 to this file (its name must
   * end in `.warc.gz`), like `--warc`: the page record's `warcOffset` is its
   * response record's offset. Written as `FILE.partial` and renamed once the
   * iteration has ended (completely, by `break` or by `stop()`); a crawl that
   * fails leaves the `.partial`. Relative to the working directory. An
   * existing file (or its `.partial`) is never overwritten: the first pull
   * rejects with an `OutputError` of code `OUTPUT_EXISTS`; so it does, with a
   * `UsageError`, for a file inside `saveDir` or one that is `cookies.jar`.
   * A disk that fills up fails the crawl with an `OutputError` of code
   * `IO_FAILED`.
   * @default none
   */
  warc?: string;
  /**
   * Records held for a consumer that is not pulling. Once that many wait, the
   * crawl stops starting requests until the consumer catches up, so memory
   * stays bounded however slow the loop body is.
   * @default 32
   */
  highWaterMark?: number;
  /**
   * Receives warnings (host given up, capped Retry-After, robots.txt ignored).
   * @default none: the library prints nothing
   */
  log?: CrawlLog;
  /**
   * Serve Prometheus series at `http://HOST:PORT/metrics` while the crawl
   * runs, like `--metrics`: `"9464"` (127.0.0.1), `"0.0.0.0:9464"`, or port
   * `"0"` for a free one. Bound at the first pull, before any request: a port
   * that cannot be bound rejects that pull with an error of code `USAGE`.
   * The URL is told to `log.info` ("metrics at …"); the endpoint closes when
   * the crawl ends. Loads prom-client only when set.
   * @default none
   */
  metrics?: string;
  /**
   * Hosts with series of their own (the top N by requests), like `--metrics-hosts`.
   * @default 10
   */
  metricsHosts?: number;
  /**
   * A previous run's records (as a `crawl()` yielded them, or parsed from its
   * JSON lines), like `--since`: every page they name is requested again
   * with the validators they carry (`etag`, `lastModified`), and each page
   * record says `change` (`new`, `changed`, `unchanged`, `removed`) and
   * `previousFetchedAt` (docs/crawling-again.md). Records other than pages
   * are passed over.
   * @default none
   */
  since?: readonly object[];
  /**
   * A page handler: `handle(page, ctx)` is called once per page answered 2xx
   * (after rendering, on a host that renders), or a router by label,
   * `{ default: fn, detail: fn }`. It reads the page (`page.$()` is cheerio
   * on it), adds URLs with `ctx.enqueue(url, { label, userData })`, emits
   * items with `ctx.push(data)` (yielded as `type: "item"` records just
   * before the page's), and may keep the crawl from following the page's
   * links (`ctx.follow(false)`). A throw is the page's `HANDLER_ERROR`.
   * See docs/handlers.md.
   * @default none
   */
  handle?: HandlerSpec;
  /**
   * A handler that has not settled by then gives the page `HANDLER_TIMEOUT`.
   * @default "30s"
   */
  handlerTimeout?: string | number;
  /**
   * `"stop"`: the first handler error stops the crawl (after its page's
   * record), and the iteration then throws a `HandlerError` (code
   * `HANDLER_ERROR`). `"record"`: it is the page's record's error only.
   * @default "record"
   */
  handlerErrors?: 'record' | 'stop';
  /**
   * Handlers running at once, at most; a page waits for a turn while still
   * holding its host's slot, so a slow handler slows the crawl instead of
   * piling pages up in memory.
   * @default the crawl's `concurrency`
   */
  handlerConcurrency?: number;
}

/** Options of {@link explain}: the config file's fields plus the ones below. */
export interface ExplainOptions extends CrawlConfig {
  /**
   * Seeds the scope check is relative to, like `crawl check --seed`.
   * @default [url]
   */
  seeds?: string[];
  /**
   * Use this robots.txt text instead of fetching the URL's robots.txt, like
   * `crawl check --robots-file`. Cut at `robots.maxSize` as a crawl would.
   * @default fetched from the URL's origin
   */
  robotsTxt?: string;
}
