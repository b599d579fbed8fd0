/**
 * Shared data shapes: the normalised crawl settings every module reads, and the
 * records the crawler writes. Validation lives in config/; these are the
 * already-checked forms.
 */
import type { HeaderValue, Secret } from './fetch/secret.js';
import type { UserPattern } from './config/user-pattern.js';

/** A request budget for one window: no more than `count` starts in ANY span of `windowMs`. */
export interface WindowLimit {
  count: number;
  windowMs: number;
  /** As the user wrote it, e.g. "100/min". */
  label: string;
}

/** Per-host politeness settings, fully resolved (no optional fields). */
export interface HostPolicy {
  /** Which config entry decided it: an exact host, a "*.suffix" wildcard, or "defaults". */
  matched: string;
  /** Minimum milliseconds between request starts; 0 = no gap. */
  intervalMs: number;
  /** The rate as the user wrote it ("2/s", "500ms", "unlimited"). */
  rateLabel: string;
  /** Extra sliding windows, enforced exactly. */
  windows: WindowLimit[];
  /** Requests in flight at once to this host. */
  concurrency: number;
  /** Up to this many random extra milliseconds added to each gap (never subtracted). */
  jitterMs: number;
  /** Whether robots.txt Crawl-delay raises the gap. */
  respectCrawlDelay: boolean;
  /** Crawl-delay values above this are capped (and the cap is reported). */
  maxCrawlDelayMs: number;

  // Server feedback (429/503, Retry-After, failures).
  /** Retries of one URL after a transient failure (connection reset, timeout, a `retryStatuses` answer). */
  retries: number;
  /** Statuses retried as transient failures. */
  retryStatuses: number[];
  /** Exponential backoff with jitter, for retries and for throttling without Retry-After: base delay… */
  backoffBaseMs: number;
  /** …and its cap. */
  backoffCapMs: number;
  /** Statuses that mean "slow down": pause the host, lower its rate, re-queue the URL. */
  throttleStatuses: number[];
  /** A longer Retry-After is cut to this (and the cut is reported). */
  maxRetryAfterMs: number;
  /** Times one URL may be throttled before it gets an error record (separate from `retries`). */
  throttleRetries: number;
  /** Lower the host's rate on throttling and recover it gradually after successes. */
  adaptive: boolean;
  /** Consecutive failures (refused, timeouts, 5xx) after which the host is paused with growing backoff. */
  hostFailurePause: number;
  /** Consecutive failures after which the host is given up for this crawl. */
  hostFailureGiveUp: number;

  // Trap defence.
  /** URLs of this host key accepted into the crawl (seeds and redirect targets included) before the rest are skipped as `max-pages-per-host`. */
  maxPagesPerHost: number;

  // Requests (fetch/request-extras.ts): decided by the policy of the URL's exact host, whatever `hostKey` says.
  /** Extra request headers (lowercased names); values read from the environment are Secrets. */
  headers: Readonly<Record<string, HeaderValue>>;
  /**
   * The names in `headers` the matched `domains` entry sets itself; absent
   * when it sets none. The rest come from `defaults` (and `--header`), and
   * those that are credentials go to the seeds' hosts only.
   */
  entryHeaders?: readonly string[];
  /** Credentials sent to this host only (`domains` entries; never in `defaults`). */
  auth: HostAuth | null;
  /** The proxy URL; `false`: a direct connection; null: unset, so HTTP_PROXY/HTTPS_PROXY/NO_PROXY decide. */
  proxy: string | false | null;

  /** Offer HTTP/2 to this host's https servers (fetch/http2-pool.ts); politeness is the same either way. */
  http2: boolean;

  // Rendering (src/render/).
  /** Render this host's pages in a browser: always, never, or `auto` (only pages that look like an application shell). */
  render: RenderMode;
}

/** A host's `render` setting: `true` renders every HTML page, `auto` only application shells (render/render-decision.ts). */
export type RenderMode = boolean | 'auto';

/** How pages are rendered, for the whole crawl (which hosts render is each host's `render`). */
export interface RenderSettings {
  /** Some host may be rendered: the browser is needed (and looked for before the crawl starts). */
  enabled: boolean;
  /** The browser named by `--browser` / `renderOptions.browser`; null: CRAWL_BROWSER, then PATH. */
  browser: string | null;
  /** Pages rendered at once. */
  concurrency: number;
  /** A page not rendered within this is closed with RENDER_TIMEOUT. */
  timeoutMs: number;
  /** Resource types the browser may not fetch (Playwright's names: image, media, font, stylesheet, script, xhr, fetch, …). */
  block: string[];
  /** URLs the browser may not fetch (trackers), as regexes. */
  blockUrls: UserPattern[];
  /** Pages per browser context before a fresh one. */
  recycleAfter: number;
  /** Bytes of subresources kept crawl-wide for reuse. */
  cacheBytes: number;
  /** Memory (PSS) the browser's processes may hold before it is restarted between pages (render/browser-memory.ts). @default none */
  maxBrowserMemoryBytes?: number;
}

/** HTTP credentials of one `domains` entry; the secret parts print as `***`. */
export type HostAuth = { kind: 'basic'; user: string; password: Secret } | { kind: 'bearer'; token: Secret };

/** Cookies and TLS trust of a crawl (fetch/cookie-jar.ts, fetch/tls.ts). */
export interface RequestSettings {
  cookies: {
    /** `--cookie name=value`: host-only cookies for the seeds' hosts. */
    send: Array<{ name: string; value: string }>;
    /** `--cookie-jar`: a Netscape cookies.txt read at the start, as written (relative to the working directory); null for none. */
    jar: string | null;
    /** Keep the cookies responses set and send them back (RFC 6265 rules). */
    keep: boolean;
  };
  tls: {
    /** `--insecure`: accept any certificate. */
    insecure: boolean;
    /** `--ca`: a PEM file of extra trusted CAs, as written; null for none. */
    ca: string | null;
  };
  /** The config's secrets read from environment variables, with where each is written: a crawl does not start while one its seeds' hosts need is unset. */
  secrets: Array<{ where: string; secret: Secret }>;
}

export type Scope = 'host' | 'domain' | 'any';
export type HostKeyMode = 'host' | 'domain';

/** Everything a crawl needs, after config file + CLI flags are merged and validated. */
/** What one IP address may take, all hosts on it together (`perIp`, `--ip-rate`, `--ip-concurrency`). */
export interface IpPolicy {
  /** Minimum milliseconds between request starts to one address; 0 = no gap. */
  intervalMs: number;
  /** The rate as the user wrote it ("5/s", "unlimited"). */
  rateLabel: string;
  /** Requests in flight at once to one address. */
  concurrency: number;
}

export interface CrawlSettings {
  userAgent: string;
  /** Global number of requests in flight. */
  concurrency: number;
  hostKey: HostKeyMode;
  maxDepth: number; // Infinity = unlimited
  maxPages: number; // Infinity = unlimited
  /** URLs waiting in the queue (all hosts) before new ones are skipped as `queue-full`: bounded memory. */
  maxQueued: number;
  /** Defences against URL spaces that never end (crawl/admission.ts); each refusal is a skip reason. */
  traps: {
    /** Most times one segment may appear in a URL's path (`repeated-path`). */
    maxPathRepeats: number;
    /** Most query parameters in one URL (`query-explosion`). */
    maxQueryParams: number;
    /** Most distinct query strings accepted for one scheme, host and path (`query-explosion`). */
    maxQueryVariants: number;
  };
  scope: Scope;
  /** URL filters, compiled for a linear-time engine (config/user-pattern.ts). */
  include: UserPattern[];
  exclude: UserPattern[];
  /** connect, headers and body are idle limits; totalMs is a deadline on the whole response (connect to last body byte). */
  timeouts: { connectMs: number; headersMs: number; bodyMs: number; totalMs: number };
  maxBodyBytes: number;
  maxUrlLength: number;
  maxRedirects: number;
  robots: {
    enabled: boolean;
    maxBytes: number;
    cacheTtlMs: number;
    /** How often a 5xx/unreachable robots.txt is retried before the host is given up. */
    unavailableRetries: number;
    unavailableRetryDelayMs: number;
  };
  /** Honour rel=nofollow, <meta name=robots content=nofollow> and X-Robots-Tag: nofollow. */
  respectNofollow: boolean;
  emitSkipped: boolean;
  emitLinks: boolean;
  /** What `--content` and `--extract` add to page records (src/content/). */
  content: ContentSettings;
  /** `--follow-canonical`: a page's in-scope rel=canonical marks that URL seen (crawl/canonical.ts). */
  followCanonical: boolean;
  /** Sitemaps that seed the crawl (crawl/entries/sitemaps.ts): files named by the user (canonical URLs), and whether to use the seeds' robots.txt `Sitemap:` lines. */
  sitemaps: { urls: string[]; fromRobots: boolean };
  /** Link-check mode (crawl/entries/link-check.ts): out-of-scope links get one HEAD (then GET) request each, never parsed or followed. */
  checkLinks: boolean;
  /**
   * The SSRF guard (fetch/address-guard.ts): special-purpose addresses are
   * refused except on the seeds' own hosts, unless `allowPrivate`, or the
   * address is in one of `allowNetworks` (normalised CIDRs).
   */
  network: { allowPrivate: boolean; allowNetworks: string[] };
  /** Per-IP limits over all hosts on one address (politeness/ip-limits.ts); null or absent: off. */
  perIp?: IpPolicy | null;
  /** Rendering in a browser (src/render/); absent: no host renders. */
  render?: RenderSettings;
  /** Some host's policy offers HTTP/2 (`defaults.http2` or a `domains` entry's); absent or false: HTTP/1.1 everywhere. */
  http2?: boolean;
  /** Resolves the policy for a host (lowercased hostname, port dropped). */
  policyFor(hostname: string): HostPolicy;
  /** Cookies and TLS trust (headers, credentials and proxies are per host, in the policy). */
  requests: RequestSettings;
}

/** The form of a page record's `content`. */
export type ContentFormat = 'text' | 'html' | 'markdown';

/** One `--extract` field (src/content/extract.ts). */
export interface ExtractRule {
  /** The key in the record's `extract` object. */
  name: string;
  /** A CSS selector, as cheerio reads it. */
  selector: string;
  /** What of a matching element: its text, its outer HTML, or an attribute. */
  take: 'text' | 'html' | { attr: string };
  /** Every match as an array (`name[]=…`); otherwise the first match, or null. */
  all: boolean;
}

export interface ContentSettings {
  /** The main content in this form, or null for none. */
  format: ContentFormat | null;
  /** Cap on `content` (and on each extracted string), in UTF-8 bytes. */
  maxBytes: number;
  extract: ExtractRule[];
}

/** Why a URL was not fetched. Stable strings: scripts match on them. */
export type SkipReason =
  | 'robots'              // disallowed by robots.txt
  | 'robots-unavailable'  // robots.txt answered 5xx / unreachable until we gave up
  | 'scope'               // outside --scope
  | 'filtered'            // failed --include / matched --exclude
  | 'max-depth'
  | 'max-pages'
  | 'nofollow'
  | 'url-too-long'
  | 'unsupported-scheme'
  | 'host-failed'         // its host kept failing and was given up for this crawl
  | 'interrupted'         // still queued when the crawl was stopped
  | 'private-address'     // its host is (or resolved to) a loopback/private/link-local/… address; detail names it
  | 'queue-full'          // found while maxQueued URLs were waiting (not remembered: found again later, it may be queued then)
  | 'max-pages-per-host'  // its host key had maxPagesPerHost URLs accepted already (not remembered either)
  | 'repeated-path'       // a path segment repeated more than traps.maxPathRepeats times (/a/b/a/b/a/b/a/b/)
  | 'query-explosion';    // more than traps.maxQueryParams parameters, or its path had traps.maxQueryVariants query strings already

/** Stable error codes in records; group by these, never by message. */
export type ErrorCode =
  | 'CONNECTION_REFUSED'
  | 'CONNECTION_RESET'
  | 'CONNECT_TIMEOUT'
  | 'HEADERS_TIMEOUT'
  | 'BODY_TIMEOUT'        // the body went silent for longer than the body timeout
  | 'TOTAL_TIMEOUT'       // the response was not complete within the total deadline (a drip-fed body)
  | 'DNS_FAILURE'
  | 'TLS_ERROR'
  | 'INVALID_RESPONSE'
  | 'DECODE_ERROR'
  | 'REDIRECT_LIMIT'
  | 'REDIRECT_INVALID'
  | 'ABORTED'
  | 'THROTTLED'           // still throttled (429/503) after the throttle retry budget
  | 'LOCAL_RESOURCE'      // our side ran out of something (EMFILE, ENFILE, ENOBUFS, …): not the server's fault
  | 'PROXY_ERROR'         // the proxy answered CONNECT with something other than 200 (407: it wants credentials)
  | 'FETCH_FAILED';

/**
 * Error codes a record may carry: a failed request's (ErrorCode), or what the
 * crawl concluded about an answer that arrived (a redirect back into its own chain).
 */
export type RecordErrorCode = ErrorCode | 'REDIRECT_LOOP' | 'RENDER_TIMEOUT' | 'RENDER_FAILED';

/** What a rendered page's browser asked for (render/page-requests.ts says what each means). */
export interface SubrequestCounts {
  /** Requests made for it through their hosts' limits. */
  fetched: number;
  /** Answered from the crawl-wide cache (or a request another page had under way). */
  cached: number;
  /** Not made: a blocked resource type or URL, a navigation, a non-GET request, a refused address. */
  blocked: number;
  /** Not made: robots.txt of their host disallows them. */
  disallowed: number;
}

export interface PageRecord {
  type: 'page';
  url: string;
  /** The host key whose limits paced the request: host[:port], or the registrable domain with `hostKey: "domain"`. */
  host: string;
  status: number | null;
  depth: number;
  parent: string | null;
  contentType: string | null;
  /**
   * Decoded body bytes read and kept; null when the body was not read (not
   * HTML: the crawler does not download what it cannot parse), with the
   * size the server declared in `contentLength`. 0 when no answer came.
   */
  bytes: number | null;
  /** The response's Content-Length, when the body was not read and the server declared one. Only a claim: nothing checked it. */
  contentLength?: number;
  /** The body was cut at --max-body; links come from the part that was read. */
  truncated?: boolean;
  title: string | null;
  links: number;
  linkList?: string[];
  /**
   * The page's rel=canonical URL (`<link rel="canonical">`, else a
   * `Link: <…>; rel="canonical"` header), absolute and canonical; absent
   * when the page names none (or none that is an http(s) URL).
   */
  canonical?: string;
  /** With `--content`: the page's main content as text, HTML or Markdown (src/content/main-content.ts says which part). */
  content?: string;
  /** `content` was cut at `maxContent`. */
  contentTruncated?: boolean;
  /** With `--extract`: one key per rule; a string or null (first match), or an array (`name[]`). */
  extract?: Record<string, string | null | string[]>;
  /**
   * What the request was, when not a page crawled as usual: `sitemap` (a
   * sitemap file; `links` counts the URLs it lists) or `link-check` (an
   * out-of-scope link checked with --check-links, not parsed or followed).
   */
  kind?: 'sitemap' | 'link-check';
  /** A link check's method: the status is HEAD's, or GET's after HEAD was refused. */
  method?: 'HEAD' | 'GET';
  /** The `<lastmod>` of the sitemap entry this URL came from, as written there. */
  lastmod?: string;
  location?: string;
  /** When the URL was claimed for its request (ISO 8601 UTC, ms): the record's own time. Instants in records are all such strings; durations are numbers of ms named `…Ms`. */
  fetchedAt: string;
  /**
   * When the request was written to the socket (ISO 8601 UTC, ms): the
   * moment the host's limiter counts (and a report measures gaps by).
   * Absent when no answer came (a transport error).
   */
  startedAt?: string;
  elapsedMs: number;
  /** On a host whose policy offers HTTP/2 (`http2`): the HTTP version the answer came over, "2" or "1.1". Absent elsewhere: HTTP/1.1. */
  httpVersion?: '1.1' | '2';
  /** Fetch attempts, when more than one (retries after failures or throttling). */
  attempts?: number;
  /** The worker that wrote the record, in a crawl shared through Redis (`--worker`, default host-pid). */
  worker?: string;
  /**
   * When this URL's earlier attempts were sent (or began, when one failed
   * before it was sent), ISO 8601, oldest first; the latest 10 only
   * (crawl/attempt-history.ts; `attempts` counts them all). Absent for a
   * first-attempt record.
   */
  attemptStarts?: string[];
  /** The 429/503 answers this URL got (the latest 10), oldest first, each with the pause it caused its host. */
  throttles?: ThrottleEvent[];
  /** The response's ETag, as sent (`W/"…"` when weak); on a 304 that names none, the one kept from the last pass. */
  etag?: string;
  /** The response's Last-Modified, as sent; on a 304 that names none, the one kept from the last pass. */
  lastModified?: string;
  /** `sha256:BASE32` of the body read, Content-Encoding undone (fetch/body-digest.ts); on a 304, the last pass's. Absent when no body was read (not HTML). */
  digest?: string;
  /** In a re-crawl (`--recrawl`, `--since`, `--revisit`): what happened to the page since the last pass (recrawl/recrawl-change.ts); absent when no usable answer came. */
  change?: PageChange;
  /** In a re-crawl: when the last pass fetched the page (ISO 8601). */
  previousFetchedAt?: string;
  /** The first URL of this crawl whose body had the same digest (a mirror, a session-id URL). */
  duplicateOf?: string;
  /** With --save-dir, a 2xx body's file, relative to that directory, "/"-separated (archive/url-path.ts). */
  savedPath?: string;
  /** With --warc, the byte offset of this page's response record (its gzip member) in the WARC file. */
  warcOffset?: number;
  /** On a host that renders (`render` true or "auto"): whether this page was rendered in the browser; links, content and extract then come from the rendered DOM. */
  rendered?: boolean;
  /** Why it was or was not rendered (render/render-decision.ts): configured, empty-mount, noscript, script-shell, static, not-html. */
  renderReason?: string;
  /** A rendered page's browser requests. */
  subrequests?: SubrequestCounts;
  error?: { code: RecordErrorCode; message: string };
}

/**
 * What a re-crawl found: `new` (not in the last pass), `changed`,
 * `unchanged` (a 304, or the same digest), `removed` (a 404/410, or a
 * redirect elsewhere, where there was a page).
 */
export type PageChange = 'new' | 'changed' | 'unchanged' | 'removed';

/** A throttling answer (a status in `throttleStatuses`) and the pause it caused. */
export interface ThrottleEvent {
  /** When the answer came (ISO 8601): the host's pause began then. */
  at: string;
  status: number;
  /** What Retry-After announced, ms (before maxRetryAfter capped it); absent when the server sent none (the pause is a backoff). */
  retryAfterMs?: number;
  /** Until when the host was paused (ISO 8601). */
  pausedUntil: string;
}

export interface SkipRecord {
  type: 'skipped';
  url: string;
  reason: SkipReason;
  depth: number;
  parent: string | null;
  detail?: string;
  /** As in PageRecord. */
  worker?: string;
}

/**
 * One robots.txt request (each redirect hop is one), written with
 * `--emit-robots` (and always kept for the report). It paced its host like a
 * page request did.
 */
export interface RobotsFetchRecord {
  type: 'robots';
  url: string;
  /** The host key whose limiter paced the request. */
  host: string;
  /** null when no answer came (then `error` says why). */
  status: number | null;
  /** When the request was sent (or began, when it failed before it was sent), ISO 8601. */
  startedAt: string;
  elapsedMs: number;
  /** Bytes of robots.txt read (at most robots.maxSize). */
  bytes: number;
  /** A 429/503 answer: until when it paused the host (ISO 8601), and what Retry-After announced (ms). */
  pausedUntil?: string;
  retryAfterMs?: number;
  error?: { code: string; message: string };
  /** As in PageRecord. */
  worker?: string;
}

export type OutputRecord = PageRecord | SkipRecord | RobotsFetchRecord;
