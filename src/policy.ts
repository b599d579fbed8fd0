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
 */
import type { HostPolicy, WindowLimit } from './types.js';
import type { Rate } from './rate.js';

/** How robots.txt `Crawl-delay` is treated: as a floor on the gap, or not at all. */
export type CrawlDelayMode = 'floor' | 'ignore';

/** The politeness fields of `defaults` (all set) — parsed, in milliseconds. */
export interface PolicyFields {
  rate: Rate;
  limits: WindowLimit[];
  concurrency: number;
  jitterMs: number;
  crawlDelay: CrawlDelayMode;
  maxCrawlDelayMs: number;
}

/** A `domains` entry: any subset of the fields; the rest come from defaults. */
export type PolicyOverride = Partial<PolicyFields>;

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
  return m ? { hostname: m[1]!, port: m[2]! } : { hostname: host };
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
  for (let suffix = name; suffix !== ''; ) {
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

/** Builds the resolved, frozen policy for one entry (or defaults when `entry` is empty). */
function mergePolicy(matched: string, entry: PolicyOverride, defaults: PolicyFields): HostPolicy {
  const rate = entry.rate ?? defaults.rate;
  const windows = (entry.limits ?? defaults.limits).map((w) => Object.freeze({ ...w }));
  return Object.freeze({
    matched,
    intervalMs: rate.intervalMs,
    rateLabel: rate.label,
    windows: Object.freeze(windows) as WindowLimit[],
    concurrency: entry.concurrency ?? defaults.concurrency,
    jitterMs: entry.jitterMs ?? defaults.jitterMs,
    respectCrawlDelay: (entry.crawlDelay ?? defaults.crawlDelay) === 'floor',
    maxCrawlDelayMs: entry.maxCrawlDelayMs ?? defaults.maxCrawlDelayMs,
  });
}

/**
 * The policy for `host` (a hostname as in `URL.hostname`), optionally on a
 * non-default `port`. Pure: resolves from scratch on every call; use
 * {@link createPolicyResolver} on hot paths.
 */
export function resolveHostPolicy(domains: DomainPolicies, defaults: PolicyFields, host: string, port?: string): HostPolicy {
  const key = matchDomainKey((k) => Object.hasOwn(domains, k), host, port);
  return key === undefined ? mergePolicy('defaults', {}, defaults) : mergePolicy(key, domains[key]!, defaults);
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
export function createPolicyResolver(
  domains: DomainPolicies,
  defaults: PolicyFields,
  options: PolicyResolverOptions = {},
): PolicyResolver {
  const cacheSize = options.cacheSize ?? 10_000;
  const merged = new Map<string, HostPolicy>();
  for (const [key, entry] of Object.entries(domains)) merged.set(key, mergePolicy(key, entry, defaults));
  const fallback = mergePolicy('defaults', {}, defaults);
  const has = (key: string) => merged.has(key);
  const cache = new Map<string, HostPolicy>();

  return (host: string): HostPolicy => {
    const hit = cache.get(host);
    if (hit) return hit;
    const { hostname, port } = splitHostPort(host);
    const key = matchDomainKey(has, hostname, port);
    const policy = key === undefined ? fallback : merged.get(key)!;
    // Map iterates in insertion order, so the first key is the oldest entry.
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    cache.set(host, policy);
    return policy;
  };
}
