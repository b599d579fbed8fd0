/**
 * Which politeness policy applies to a host.
 *
 * Lookup order, first hit wins:
 *   1. an exact `host:port` entry (only when the caller knows a non-default port),
 *   2. an exact `host` entry,
 *   3. the most specific `*.suffix` wildcard (longest suffix; `*.example.com`
 *      covers `example.com` itself and every subdomain),
 *   4. `defaults`.
 * Fallback is per field: whatever the matched entry leaves unset comes from
 * `defaults` (never from a less specific wildcard, so one entry can be read on
 * its own).
 *
 * Rules that span two fields (backoff base <= cap, say) are checked here too,
 * on the merged result, because per-field fallback is what can break them.
 */
import type { HostAuth, HostPolicy, WindowLimit } from './settings-types.js';
import type { Rate } from './rate.js';
import { parseCrawlHours, type CrawlHours } from '../politeness/crawl-hours.js';
import type { Purpose } from '../usage/usage-vocab.js';

/** How robots.txt `Crawl-delay` is treated: as a floor on the gap, or not at all. */
export type CrawlDelayMode = 'floor' | 'ignore';

/**
 * The politeness fields of `defaults` (all set) — parsed, in milliseconds.
 * Flat on purpose: the file's `backoff` and `hostFailures` objects become two
 * fields each, so an entry that sets one sub-field falls back to defaults for
 * the other like any other field.
 */
export interface PolicyFields extends Pick<
  HostPolicy,
  | 'concurrency'
  | 'jitterMs'
  | 'maxCrawlDelayMs'
  | 'retries'
  | 'retryStatuses'
  | 'backoffBaseMs'
  | 'backoffCapMs'
  | 'throttleStatuses'
  | 'maxRetryAfterMs'
  | 'throttleRetries'
  | 'adaptive'
  | 'latencyBackoff'
  | 'hostFailurePause'
  | 'hostFailureGiveUp'
  | 'maxPagesPerHost'
  | 'headers'
  | 'render'
  | 'http2'
> {
  /** Quiet hours as written ("22:00-06:00"); absent: any time. */
  hours?: string;
  /** The IANA zone `hours` is read in; absent: UTC. */
  timezone?: string;
  // What differs from HostPolicy: the rate and Crawl-delay as written, windows as `limits`, and an unset proxy.
  rate: Rate;
  limits: WindowLimit[];
  crawlDelay: CrawlDelayMode;
  /** A proxy URL, `false` for direct; absent: unset. */
  proxy?: string | false;
}

/**
 * A `domains` entry: any subset of the fields; the rest come from defaults.
 * `auth` exists only here: credentials never come from defaults.
 */
export type PolicyOverride = Partial<PolicyFields> & { auth?: HostAuth; purpose?: Purpose[] };

/** Domain entries keyed by their normalised key ("example.com", "example.com:8080", "*.example.org"). */
export type DomainPolicies = Readonly<Record<string, PolicyOverride>>;

/** Resolves a policy from `host` or `host:port` (as in `URL.host`); see {@link createPolicyResolver}. */
export type PolicyResolver = (host: string) => HostPolicy;

/** Normalises the host part for matching: lowercase, without the DNS root dot ("example.com."). */
function normaliseHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Splits `URL.host`-style input into hostname and port. Bracketed IPv6
 * ("[::1]:8080") keeps its brackets, as `URL.hostname` does; a bare IPv6
 * address (several colons, no brackets) is all host.
 */
export function splitHostPort(host: string): { hostname: string; port?: string } {
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(host);
  return m ? { hostname: m[1], port: m[2] } : { hostname: host };
}

/**
 * The key of the entry that applies to `host` (and `port`, if given), or
 * undefined when only defaults apply. `has` is the set of entry keys.
 */
export function matchDomainKey(has: (key: string) => boolean, host: string, port?: string): string | undefined {
  const name = normaliseHost(host);
  if (port && has(`${name}:${port}`)) return `${name}:${port}`;
  if (has(name)) return name;
  // Walk from the full name towards the TLD, so the first wildcard found is
  // the one with the longest (most specific) suffix.
  for (let suffix = name; suffix !== '';) {
    if (has(`*.${suffix}`)) return `*.${suffix}`;
    const dot = suffix.indexOf('.');
    if (dot < 0) break;
    suffix = suffix.slice(dot + 1);
  }
  return undefined;
}

const KEY_HINT = 'expected a hostname like "example.com", "example.com:8080" or "*.example.com"';

/**
 * Checks and normalises a `domains` key: a hostname (IDN allowed, stored as
 * punycode, lowercased, no trailing dot), optionally with `:port`, or `*.` +
 * a hostname suffix. Returns the normalised key or a problem description.
 */
export function parseDomainKey(raw: string): { key: string } | { problem: string } {
  const wildcard = raw.startsWith('*.');
  const rest = wildcard ? raw.slice(2) : raw;
  if (rest.includes('*')) return { problem: `a wildcard is only allowed as a leading "*." (like "*.example.com"), got ${JSON.stringify(raw)}` };
  const { hostname, port } = splitHostPort(rest);
  // URL would quietly accept a path, credentials or a scheme-like prefix and
  // keep only part of the key; refuse anything but a bare host up front.
  if (hostname === '' || /[\s/\\?#@%:]/.test(hostname.replace(/^\[[0-9a-fA-F:.]+\]$/, '[]'))) {
    return { problem: `${KEY_HINT}, got ${JSON.stringify(raw)}` };
  }
  let normalised: string;
  try {
    normalised = new URL(`http://${hostname}`).hostname;
  } catch {
    return { problem: `${KEY_HINT}, got ${JSON.stringify(raw)}` };
  }
  if (normalised.endsWith('.')) normalised = normalised.slice(0, -1);
  if (!normalised.startsWith('[') && normalised.split('.').some((label) => label === '')) {
    return { problem: `${KEY_HINT}, got ${JSON.stringify(raw)} (empty label)` };
  }
  if (port !== undefined) {
    if (wildcard) return { problem: `a wildcard entry cannot name a port, got ${JSON.stringify(raw)}` };
    const n = Number(port);
    if (n < 1 || n > 65535) return { problem: `port must be 1-65535, got ${JSON.stringify(raw)}` };
    // URL.host omits default ports, so an entry naming one could never match.
    if (n === 80 || n === 443) {
      return { problem: `port ${n} is a default port and never appears in a URL's host; write ${JSON.stringify(normalised)}` };
    }
    return { key: `${normalised}:${n}` };
  }
  return { key: wildcard ? `*.${normalised}` : normalised };
}

/** A frozen copy, so one host's policy cannot be changed through the config it came from (or vice versa). */
function frozenList<T>(list: readonly T[]): T[] {
  return Object.freeze([...list]) as T[];
}

/** The parsed quiet hours; null for "any time". The config schema has checked both values already. */
function crawlHours(hours: string | undefined, timezone: string | undefined): CrawlHours | null {
  return hours === undefined ? null : parseCrawlHours(hours, timezone ?? 'UTC');
}

/** Builds the resolved, frozen policy for one entry (or defaults when `entry` is empty). */
function mergePolicy(matched: string, entry: PolicyOverride, defaults: PolicyFields): HostPolicy {
  const rate = entry.rate ?? defaults.rate;
  const windows = (entry.limits ?? defaults.limits).map((w) => Object.freeze({ ...w }));
  return Object.freeze({
    matched,
    intervalMs: rate.intervalMs,
    rateLabel: rate.label,
    windows: frozenList(windows),
    concurrency: entry.concurrency ?? defaults.concurrency,
    jitterMs: entry.jitterMs ?? defaults.jitterMs,
    respectCrawlDelay: (entry.crawlDelay ?? defaults.crawlDelay) === 'floor',
    maxCrawlDelayMs: entry.maxCrawlDelayMs ?? defaults.maxCrawlDelayMs,
    retries: entry.retries ?? defaults.retries,
    retryStatuses: frozenList(entry.retryStatuses ?? defaults.retryStatuses),
    backoffBaseMs: entry.backoffBaseMs ?? defaults.backoffBaseMs,
    backoffCapMs: entry.backoffCapMs ?? defaults.backoffCapMs,
    throttleStatuses: frozenList(entry.throttleStatuses ?? defaults.throttleStatuses),
    maxRetryAfterMs: entry.maxRetryAfterMs ?? defaults.maxRetryAfterMs,
    throttleRetries: entry.throttleRetries ?? defaults.throttleRetries,
    adaptive: entry.adaptive ?? defaults.adaptive,
    latencyBackoff: entry.latencyBackoff ?? defaults.latencyBackoff,
    hostFailurePause: entry.hostFailurePause ?? defaults.hostFailurePause,
    hostFailureGiveUp: entry.hostFailureGiveUp ?? defaults.hostFailureGiveUp,
    maxPagesPerHost: entry.maxPagesPerHost ?? defaults.maxPagesPerHost,
    headers: Object.freeze({ ...(defaults.headers ?? {}), ...(entry.headers ?? {}) }),
    // Which headers are the entry's own: a credential from defaults is for the seeds' hosts only (fetch/request-extras.ts).
    ...(entry.headers && Object.keys(entry.headers).length > 0 && { entryHeaders: Object.freeze(Object.keys(entry.headers)) }),
    auth: entry.auth ?? null,
    proxy: entry.proxy ?? defaults.proxy ?? null,
    render: entry.render ?? defaults.render ?? false,
    http2: entry.http2 ?? defaults.http2 ?? false,
    // Each field falls back on its own: an entry's hours are read in defaults.timezone unless it names its own.
    hours: crawlHours(entry.hours ?? defaults.hours, entry.timezone ?? defaults.timezone),
    ...(entry.purpose && { purpose: frozenList(entry.purpose) }),
  });
}

/**
 * The policy for `host` (a hostname as in `URL.hostname`), optionally on a
 * non-default `port`. Pure: resolves from scratch on every call; use
 * {@link createPolicyResolver} on hot paths.
 */
export function resolveHostPolicy(domains: DomainPolicies, defaults: PolicyFields, host: string, port?: string): HostPolicy {
  const key = matchDomainKey((k) => Object.hasOwn(domains, k), host, port);
  return key === undefined ? mergePolicy('defaults', {}, defaults) : mergePolicy(key, domains[key], defaults);
}

/** Options for {@link createPolicyResolver}. */
export interface PolicyResolverOptions {
  /**
   * Hosts remembered before the oldest is forgotten. A broad crawl meets
   * millions of hosts; a miss only costs a few map lookups, so the cache is
   * bounded rather than allowed to grow with the crawl.
   * @default 10000
   */
  cacheSize?: number;
}

/**
 * A resolver for the scheduler's hot path. Each entry is merged with defaults
 * once, up front, so every host matched by the same entry gets the very same
 * frozen object; results are cached per input string.
 *
 * Accepts `URL.host` ("example.com:8080") so port-specific entries can match,
 * or `URL.hostname`.
 */
export function createPolicyResolver(domains: DomainPolicies, defaults: PolicyFields, options: PolicyResolverOptions = {}): PolicyResolver {
  const cacheSize = options.cacheSize ?? 10_000;
  const merged = new Map<string, HostPolicy>();
  for (const [key, entry] of Object.entries(domains)) merged.set(key, mergePolicy(key, entry, defaults));
  const fallback = mergePolicy('defaults', {}, defaults);
  const has = (key: string) => merged.has(key);
  // Two generations of half the size each: a full one is set aside whole and the older dropped, O(1).
  // Evicting the oldest key one at a time (`delete(keys().next().value)`) left holes at the head of
  // the Map that every later `keys().next()` walked over: ~0.5 s of a 100,000-seed start-up.
  const generation = Math.max(1, Math.floor(cacheSize / 2));
  let cache = new Map<string, HostPolicy>();
  let previous = new Map<string, HostPolicy>();

  return (host: string): HostPolicy => {
    const hit = cache.get(host) ?? previous.get(host);
    if (hit) return hit;
    const { hostname, port } = splitHostPort(host);
    const key = matchDomainKey(has, hostname, port);
    const policy = key === undefined ? fallback : merged.get(key)!;
    if (cache.size >= generation) {
      previous = cache;
      cache = new Map();
    }
    cache.set(host, policy);
    return policy;
  };
}

// ---------------------------------------------------------------- conflicts

/** A rule two fields break together; see {@link policyConflicts}. */
export interface PolicyConflict {
  /** The config-file field it is reported at: always one the entry sets itself. */
  field: 'backoff' | 'hostFailures' | 'retryStatuses' | 'throttleStatuses';
  /** What is wrong, naming both sides and which one came from defaults. */
  message: string;
}

/** A duration the way a config file would spell it: "90s", "2m", "1500ms". */
function showDuration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `"${ms / size}${unit}"`;
  }
  return `"${ms}ms"`;
}

/**
 * Rules that span two fields, checked on the entry *as merged with
 * `defaults`*: an entry that sets only `backoff.base` can still end up above
 * the cap it inherits, and an entry's `retryStatuses` can collide with the
 * default `throttleStatuses`. Only conflicts the entry takes part in are
 * returned (a rule between two inherited fields is the defaults' own problem,
 * reported once, there); check `defaults` itself by passing the fields the
 * user wrote as `entry` and the built-in defaults, with `inheritedFrom` "the
 * default". Fields missing from both sides are not checked, so this also
 * works when defaults are unknown.
 *
 * Rules: backoff base <= cap; hostFailures pause <= giveUp; no status in both
 * retryStatuses and throttleStatuses (a response either pauses the host or is
 * retried as a failure, and guessing which the user meant is not ours to do).
 */
export function policyConflicts(entry: PolicyOverride, defaults: PolicyOverride, inheritedFrom = 'from defaults'): PolicyConflict[] {
  const conflicts: PolicyConflict[] = [];
  const inherited = (own: unknown) => (own === undefined ? ` (${inheritedFrom})` : '');

  const base = entry.backoffBaseMs ?? defaults.backoffBaseMs;
  const cap = entry.backoffCapMs ?? defaults.backoffCapMs;
  const setsBackoff = entry.backoffBaseMs !== undefined || entry.backoffCapMs !== undefined;
  if (setsBackoff && base !== undefined && cap !== undefined && base > cap) {
    conflicts.push({
      field: 'backoff',
      message: `base ${showDuration(base)}${inherited(entry.backoffBaseMs)} ` + `is longer than cap ${showDuration(cap)}${inherited(entry.backoffCapMs)}`,
    });
  }

  const pause = entry.hostFailurePause ?? defaults.hostFailurePause;
  const giveUp = entry.hostFailureGiveUp ?? defaults.hostFailureGiveUp;
  const setsFailures = entry.hostFailurePause !== undefined || entry.hostFailureGiveUp !== undefined;
  if (setsFailures && pause !== undefined && giveUp !== undefined && pause > giveUp) {
    conflicts.push({
      field: 'hostFailures',
      message:
        `pause ${pause}${inherited(entry.hostFailurePause)} is more than giveUp ${giveUp}${inherited(entry.hostFailureGiveUp)}: ` +
        'the host would be given up before it is ever paused',
    });
  }

  const retry = entry.retryStatuses ?? defaults.retryStatuses;
  const throttle = entry.throttleStatuses ?? defaults.throttleStatuses;
  const setsStatuses = entry.retryStatuses !== undefined || entry.throttleStatuses !== undefined;
  const both = setsStatuses && retry && throttle ? throttle.filter((status) => retry.includes(status)) : [];
  if (both.length > 0) {
    // Report at the list the entry wrote; when it wrote both, at throttleStatuses.
    const [field, other] =
      entry.throttleStatuses !== undefined ? (['throttleStatuses', 'retryStatuses'] as const) : (['retryStatuses', 'throttleStatuses'] as const);
    conflicts.push({
      field,
      message:
        `${both.join(', ')} ${both.length === 1 ? 'is' : 'are'} also in ${other}${inherited(entry[other])}: ` +
        'a status either throttles the host or is retried as a failure, not both',
    });
  }
  return conflicts;
}
