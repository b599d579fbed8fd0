/**
 * `explain(url)`: what a crawl would do with one URL, and why — the scope
 * verdict, the host policy and the config entry it came from, the robots.txt
 * verdict with its deciding rule, line and group, and the Crawl-delay. It
 * fetches nothing but the URL's robots.txt (and not even that when given
 * `robotsTxt` or when robots.txt is disabled).
 *
 * `crawl check` prints this result; the wording lives there.
 */
import { systemClock, type Clock } from '../clock.js';
import { checkSeeds } from '../config/seeds.js';
import { createFetcher } from '../fetch/fetcher.js';
import { createScope, explainScope, type ScopeRejection } from '../parse/scope.js';
import { hostKeyOf, originOf } from '../parse/url.js';
import { capRobotsText, parseRobots, RobotsCache, type RobotsState } from '../robots/index.js';
import type { CrawlSettings, HostPolicy } from '../types.js';
import type { ExplainOptions } from './options.js';
import { EXPLAIN_ONLY, resolveOptions } from './resolve-options.js';

/** Whether the URL is one the crawl follows at all (scheme, length, scope, include/exclude). */
export type ScopeResult =
  | { inScope: true; explanation: string }
  | { inScope: false; reason: ScopeRejection; detail: string; explanation: string };

/** What robots.txt says about the URL for our user agent. */
export type RobotsResult =
  /** robots.txt handling is disabled (`robots.enabled: false`). */
  | { checked: false; allowed: true }
  /** A robots.txt was read; `rule`/`line` are null when no rule matched, `group` when no group applies to us. */
  | {
      checked: true;
      kind: 'rules';
      allowed: boolean;
      rule: string | null;
      line: number | null;
      group: string | null;
      /** The robots.txt URL whose body decided (the last hop of a redirect chain). */
      source: string;
      crawlDelayMs: number | null;
    }
  /** No usable file (e.g. a 404): everything is allowed. */
  | { checked: true; kind: 'allow-all'; allowed: true; reason: string }
  /** 5xx, timeout or network failure: a crawl treats the whole host as disallowed until it answers. */
  | { checked: true; kind: 'unavailable'; allowed: false; reason: string };

export interface CheckResult {
  /** The URL in canonical form. */
  url: string;
  /** The seeds the scope was judged against. */
  seeds: string[];
  scope: ScopeResult;
  /** The key the URL's host shares its politeness budget under. */
  hostKey: string;
  /** The policy for that key; `policy.matched` is the config entry that decided it, or "defaults". */
  policy: HostPolicy;
  robots: RobotsResult;
  /** robots.txt Crawl-delay for our group, in ms; null when absent or not checked. */
  crawlDelayMs: number | null;
  /** In scope and allowed by robots.txt. */
  wouldFetch: boolean;
}

export interface ExplainInput {
  /** Canonical URL (checkSeeds). */
  url: string;
  /** Canonical seeds. */
  seeds: string[];
  settings: CrawlSettings;
  /** robots.txt text to use instead of fetching it. @default fetched */
  robotsTxt?: string;
  /** @default systemClock */
  clock?: Clock;
}

/**
 * Explains `url` under `options` (the config file's fields, plus `seeds` and
 * `robotsTxt`).
 *
 * @throws UsageError (as a rejection) for an invalid URL or seed.
 * @throws ConfigError (as a rejection) with one line per problem in `options`.
 */
export async function explain(url: string, options: ExplainOptions = {}): Promise<CheckResult> {
  const [canonical] = checkSeeds([url]);
  const { seeds, settings, extra } = resolveOptions(options, EXPLAIN_ONLY, [canonical!]);
  return explainWith({ url: canonical!, seeds, settings, robotsTxt: extra.robotsTxt as string | undefined });
}

/** The same from validated settings (the CLI merges its flags into them first). */
export async function explainWith(input: ExplainInput): Promise<CheckResult> {
  const { url, seeds, settings } = input;
  const scopeOptions = { scope: settings.scope, seeds, include: settings.include, exclude: settings.exclude, maxUrlLength: settings.maxUrlLength };
  const verdict = createScope(scopeOptions)(url);
  const explanation = explainScope(scopeOptions, url);
  const scope: ScopeResult = verdict.ok ? { inScope: true, explanation } : { inScope: false, reason: verdict.reason, detail: verdict.detail, explanation };

  const hostKey = hostKeyOf(url, settings.hostKey);
  const policy = settings.policyFor(hostKey);

  const robots: RobotsResult = settings.robots.enabled
    ? robotsResult(await robotsFor(url, settings, input.robotsTxt, input.clock ?? systemClock), url)
    : { checked: false, allowed: true };
  const crawlDelayMs = robots.checked && robots.kind === 'rules' ? robots.crawlDelayMs : null;
  return { url, seeds, scope, hostKey, policy, robots, crawlDelayMs, wouldFetch: scope.inScope && robots.allowed };
}

async function robotsFor(url: string, settings: CrawlSettings, text: string | undefined, clock: Clock): Promise<RobotsState> {
  if (text !== undefined) {
    // Read exactly as much of the file as a crawl would.
    const capped = capRobotsText(text, settings.robots.maxBytes).text;
    return parseRobots(`${originOf(url)}/robots.txt`, capped, settings.userAgent, clock.now(), settings.robots.cacheTtlMs);
  }
  const fetcher = createFetcher({ userAgent: settings.userAgent, timeouts: settings.timeouts, maxBodyBytes: settings.robots.maxBytes, clock });
  try {
    const cache = new RobotsCache({
      clock,
      userAgent: settings.userAgent,
      maxBytes: settings.robots.maxBytes,
      cacheTtlMs: settings.robots.cacheTtlMs,
      // One look is the answer: a check reports "unavailable" rather than wait for retries.
      unavailableRetries: 0,
      unavailableRetryDelayMs: settings.robots.unavailableRetryDelayMs,
      fetchOne: (u) => fetcher.fetch(u, { read: 'text', maxBodyBytes: settings.robots.maxBytes }),
    });
    return await cache.load(originOf(url));
  } finally {
    await fetcher.close();
  }
}

function robotsResult(state: RobotsState, url: string): RobotsResult {
  switch (state.kind) {
    case 'allow-all':
      return { checked: true, kind: 'allow-all', allowed: true, reason: state.reason };
    case 'unavailable':
      return { checked: true, kind: 'unavailable', allowed: false, reason: state.reason };
    case 'rules': {
      const why = state.explain(url);
      return { checked: true, kind: 'rules', allowed: why.allowed, rule: why.rule, line: why.line, group: why.group, source: state.source, crawlDelayMs: state.crawlDelayMs };
    }
  }
}
