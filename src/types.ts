/**
 * Shared data shapes: the normalised crawl settings every module reads, and the
 * records the crawler writes. Validation lives in config/; these are the
 * already-checked forms.
 */

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
}

export type Scope = 'host' | 'domain' | 'any';
export type HostKeyMode = 'host' | 'domain';

/** Everything a crawl needs, after config file + CLI flags are merged and validated. */
export interface CrawlSettings {
  userAgent: string;
  /** Global number of requests in flight. */
  concurrency: number;
  hostKey: HostKeyMode;
  maxDepth: number; // Infinity = unlimited
  maxPages: number; // Infinity = unlimited
  /** URLs waiting in the queue (all hosts) before new ones are skipped as `queue-full`: bounded memory. */
  maxQueued: number;
  /** Defences against URL spaces that never end (crawl/trap-guard.ts); each refusal is a skip reason. */
  traps: {
    /** Most times one segment may appear in a URL's path (`repeated-path`). */
    maxPathRepeats: number;
    /** Most query parameters in one URL (`query-explosion`). */
    maxQueryParams: number;
    /** Most distinct query strings accepted for one scheme, host and path (`query-explosion`). */
    maxQueryVariants: number;
  };
  scope: Scope;
  include: RegExp[];
  exclude: RegExp[];
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
  /**
   * The SSRF guard (fetch/address-guard.ts): special-purpose addresses are
   * refused except on the seeds' own hosts, unless `allowPrivate`, or the
   * address is in one of `allowNetworks` (normalised CIDRs).
   */
  network: { allowPrivate: boolean; allowNetworks: string[] };
  /** Resolves the policy for a host (lowercased hostname, port dropped). */
  policyFor(hostname: string): HostPolicy;
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
  | 'FETCH_FAILED';

/**
 * Error codes a record may carry: a failed request's (ErrorCode), or what the
 * crawl concluded about an answer that arrived (a redirect back into its own chain).
 */
export type RecordErrorCode = ErrorCode | 'REDIRECT_LOOP';

export interface PageRecord {
  type: 'page';
  url: string;
  /** The host key whose limits paced the request: host[:port], or the registrable domain with `hostKey: "domain"`. */
  host: string;
  status: number | null;
  depth: number;
  parent: string | null;
  contentType: string | null;
  /** Decoded body bytes read and kept; 0 when the body was not read (not HTML), whatever Content-Length claimed. */
  bytes: number;
  /** The body was cut at --max-body; links come from the part that was read. */
  truncated?: boolean;
  title: string | null;
  links: number;
  linkList?: string[];
  location?: string;
  fetchedAt: string;
  /**
   * Epoch milliseconds when the request was written to the socket: the
   * moment the host's limiter counts (and a report measures gaps by).
   * Absent when no answer came (a transport error).
   */
  startedAt?: number;
  elapsedMs: number;
  /** Fetch attempts, when more than one (retries after failures or throttling). */
  attempts?: number;
  /** The worker that wrote the record, in a crawl shared through Redis (`--worker`, default host-pid). */
  worker?: string;
  error?: { code: RecordErrorCode; message: string };
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

export type OutputRecord = PageRecord | SkipRecord;
