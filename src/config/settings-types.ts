/**
 * The normalised crawl settings every module reads: the already-checked
 * forms that config/ (settings.ts, policy-resolver.ts and the zod schemas
 * of the config file) builds from flags and the config file.
 */
import type { Purpose } from '../usage/usage-vocab.js';
import type { HeaderValue, Secret } from '../fetch/secret.js';
import type { UserPattern } from './user-pattern.js';
import type { CrawlHours } from '../politeness/crawl-hours.js';
import type { IdentitySettings } from './identity-schema.js';
import type { MoneyLimit } from '../politeness/crawl-price.js';

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
  /** Lower the host's rate while its time to first byte climbs above its own baseline (politeness/latency-signal.ts). */
  latencyBackoff: boolean;
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

  /** Quiet hours (politeness/crawl-hours.ts): the daily window the host is crawled in; null: any time. */
  hours: CrawlHours | null;

  /** A `domains` entry's own `purpose` (usage/): replaces the crawl's for this host; absent: the crawl's. */
  purpose?: readonly Purpose[];

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
  /** `--archive-noarchive`: pages that say noarchive are saved and archived too. */
  archiveNoarchive: boolean;
  /** `--fetch-denied`: request pages robots.txt denies a declared purpose anyway (robots/gate.ts). */
  fetchDenied: boolean;
  /** `--follow-canonical`: a page's in-scope rel=canonical marks that URL seen (crawl/page-links.ts). */
  followCanonical: boolean;
  /** `--purpose`: the uses the output is for; a page stated `n` for one has its content withheld (usage/). Empty: none declared. */
  purpose: Purpose[];
  /**
   * Crawl pricing (crawl/page-price.ts): the most one request may cost
   * (`--max-price`; null: a 402 is recorded, never paid) and the most the
   * crawl spends (`--budget`; null: no cap but the per-request one).
   */
  pricing: { maxPrice: MoneyLimit | null; budget: MoneyLimit | null };
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
  /** Who the crawler is, verifiably: every request signed (src/identity/); null or absent: nothing is signed. */
  identity?: IdentitySettings | null;
}

/** The form of a page record's `content`. */
export type ContentFormat = 'text' | 'html' | 'markdown';

/** One `--extract` field (read by src/content/extract-rules.ts, run by src/content/extract.ts). */
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
