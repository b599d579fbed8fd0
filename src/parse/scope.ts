/**
 * Whether a discovered URL belongs to this crawl at all: scheme, length,
 * `--scope` relative to the seeds, and the `--include` / `--exclude` filters.
 * Pure and synchronous; robots.txt, depth and page limits are decided
 * elsewhere. Checks run cheapest-and-most-fundamental first, so a URL gets the
 * reason a user would look for first.
 */
import { canonicalize, hostKeyOf, hostnameOf, registrableDomain } from './url.js';
import type { Scope } from '../config/settings-types.js';
import type { SkipReason } from '../types.js';
import type { UserPattern } from '../config/user-pattern.js';

export interface ScopeOptions {
  /**
   * `host`: same host and port as a seed. `domain`: same registrable domain
   * as a seed, any subdomain and any port. `any`: every http(s) URL.
   */
  scope: Scope;
  /** Absolute http(s) URLs the crawl starts from; they define `host`/`domain` scope. */
  seeds: string[];
  /**
   * If non-empty, a URL must match at least one of these (tested on its
   * canonical form). Compiled by config/user-pattern.ts, the only way a
   * user's pattern is matched: in linear time.
   * @default []
   */
  include?: UserPattern[];
  /**
   * A URL matching any of these is rejected (tested on its canonical form).
   * @default []
   */
  exclude?: UserPattern[];
  /**
   * Longest canonical URL accepted, in UTF-16 code units.
   * @default Infinity
   */
  maxUrlLength?: number;
}

export type ScopeRejection = Extract<SkipReason, 'scope' | 'filtered' | 'url-too-long' | 'unsupported-scheme'>;

export type ScopeVerdict = { ok: true } | { ok: false; reason: ScopeRejection; detail: string };

export type ScopeCheck = (url: string) => ScopeVerdict;

/** Thrown by `createScope` / `explainScope` for invalid options. */
export class ScopeOptionsError extends Error {
  readonly code = 'INVALID_SCOPE_OPTIONS';

  constructor(message: string) {
    super(message);
    this.name = 'ScopeOptionsError';
  }
}

interface Compiled {
  scope: Scope;
  /** Scope key (host key or registrable domain) → the first seed that has it. */
  seedByKey: Map<string, string>;
  include: UserPattern[];
  exclude: UserPattern[];
  maxUrlLength: number;
}

type Judgement = { ok: true; seed: string | null; include: string | null } | { ok: false; reason: ScopeRejection; detail: string };

const IN_SCOPE: ScopeVerdict = Object.freeze({ ok: true });

/**
 * Builds the scope predicate once; options are validated here so a bad seed
 * fails at start-up, not on the first link.
 *
 * @throws ScopeOptionsError for a seed that is not an http(s) URL or a bad `maxUrlLength`.
 */
export function createScope(options: ScopeOptions): ScopeCheck {
  const compiled = compile(options);
  return (url) => {
    const judgement = judge(compiled, url);
    return judgement.ok ? IN_SCOPE : judgement;
  };
}

const REJECTION_PREFIX: Record<ScopeRejection, string> = {
  scope: 'out of scope',
  filtered: 'filtered out',
  'url-too-long': 'URL too long',
  'unsupported-scheme': 'not crawlable',
};

/**
 * One human sentence on why `url` is or is not crawled under `options`, for
 * `crawl check`, e.g. "in scope: same host as seed http://a.com/" or
 * "out of scope: host b.com is not a seed host (--scope host)".
 *
 * @throws ScopeOptionsError like `createScope`.
 */
export function explainScope(options: ScopeOptions, url: string): string {
  const compiled = compile(options);
  const judgement = judge(compiled, url);
  if (!judgement.ok) return `${REJECTION_PREFIX[judgement.reason]}: ${judgement.detail}`;

  const parts: string[] = [];
  if (compiled.scope === 'any') {
    parts.push('--scope any admits every http(s) URL');
  } else if (compiled.scope === 'host') {
    parts.push(`same host as seed ${judgement.seed}`);
  } else {
    const domain = registrableDomain(new URL(url).hostname);
    parts.push(`same registrable domain (${domain}) as seed ${judgement.seed}`);
  }
  if (judgement.include !== null) parts.push(`matches --include ${judgement.include}`);
  if (compiled.exclude.length > 0) parts.push('matches no --exclude pattern');
  return `in scope: ${parts.join('; ')}`;
}

function compile(options: ScopeOptions): Compiled {
  const maxUrlLength = options.maxUrlLength ?? Infinity;
  if (!(maxUrlLength === Infinity || (Number.isInteger(maxUrlLength) && maxUrlLength > 0))) {
    throw new ScopeOptionsError(`Expected \`maxUrlLength\` to be a positive integer or Infinity, got ${String(maxUrlLength)}`);
  }
  const seedByKey = new Map<string, string>();
  for (const seed of options.seeds) {
    const canonical = canonicalize(seed);
    if (canonical === null) {
      throw new ScopeOptionsError(`Expected every seed to be an absolute http(s) URL, got ${JSON.stringify(seed)}`);
    }
    const key = scopeKey(options.scope, canonical);
    if (!seedByKey.has(key)) seedByKey.set(key, canonical);
  }
  return {
    scope: options.scope,
    seedByKey,
    include: options.include ?? [],
    exclude: options.exclude ?? [],
    maxUrlLength,
  };
}

function scopeKey(scope: Scope, canonicalUrl: string): string {
  if (scope === 'domain') return registrableDomain(hostnameOf(canonicalUrl)!); // canonical: always parses
  return hostKeyOf(canonicalUrl, 'host');
}

function judge(c: Compiled, url: string): Judgement {
  const canonical = canonicalize(url);
  if (canonical === null) return { ok: false, reason: 'unsupported-scheme', detail: describeUncrawlable(url) };

  if (canonical.length > c.maxUrlLength) {
    return {
      ok: false,
      reason: 'url-too-long',
      detail: `${canonical.length} characters, over the limit of ${c.maxUrlLength}`,
    };
  }

  let seed: string | null = null;
  if (c.scope !== 'any') {
    const key = scopeKey(c.scope, canonical);
    seed = c.seedByKey.get(key) ?? null;
    if (seed === null) {
      const what = c.scope === 'host' ? 'host' : 'domain';
      return {
        ok: false,
        reason: 'scope',
        detail: `${what} ${key} is not a seed ${what} (--scope ${c.scope})`,
      };
    }
  }

  const excluded = c.exclude.find((p) => p.test(canonical));
  if (excluded !== undefined) return { ok: false, reason: 'filtered', detail: `matches --exclude ${String(excluded)}` };

  let include: string | null = null;
  if (c.include.length > 0) {
    const matched = c.include.find((p) => p.test(canonical));
    if (matched === undefined) {
      const labels = c.include.map(String).join(', ');
      return { ok: false, reason: 'filtered', detail: `matches no --include pattern (${labels})` };
    }
    include = String(matched);
  }
  return { ok: true, seed, include };
}

function describeUncrawlable(url: string): string {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
    return `${JSON.stringify(shown)} is not an absolute URL`;
  }
  return `scheme ${protocol} is not crawled (http and https only)`;
}
