/**
 * `explain(url)`: what a crawl would do with one URL, and why — the scope
 * verdict, the host policy and the config entry it came from, the robots.txt
 * verdict with its deciding rule, line and group, the Crawl-delay, and
 * whether the SSRF guard lets the crawl connect to the host's address. It
 * fetches nothing but the URL's robots.txt (and not even that when given
 * `robotsTxt` or when robots.txt is disabled); for the guard it resolves the
 * host name, unless the host is exempt or the URL out of scope.
 *
 * `crawl check` prints this result; the wording lives there.
 */
import type { LookupAddress } from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import { checkSeeds } from '../config/seeds.js';
import { ROBOTS_TIMEOUT_MS } from '../crawl/robots-hop.js';
import { createAddressGuard, type AddressGuard } from '../fetch/address-guard.js';
import { describeRefusal, parseNetwork, refusalFor } from '../fetch/address-ranges.js';
import { createFetcher, lookupWithLocalhost } from '../fetch/fetcher.js';
import type { RequestDescription } from '../fetch/request-extras.js';
import { setUpRequests, setUpSigning, type RequestSetup } from '../fetch/request-setup.js';
import { createScope, explainScope, type ScopeRejection } from '../parse/scope.js';
import { hostKeyOf, originOf } from '../parse/url.js';
import { capRobotsText, parseRobots } from '../robots/rules.js';
import { loadUsageParserFor, RobotsCache } from '../robots/cache.js';
import { statedBefore } from '../robots/gate.js';
import { TDMREP_PURPOSES } from '../usage/tdmrep.js';
import { purposesFor } from '../usage/usage-denied.js';
import type { RobotsState } from '../robots/types.js';
import { combine, type UsageSource, type UsageValue } from '../usage/page-usage.js';
import type { Purpose } from '../usage/usage-vocab.js';
import type { CrawlSettings, HostPolicy, IpPolicy } from '../config/settings-types.js';
import type { ErrorCode } from '../types.js';
import type { ExplainOptions } from './options.js';
import { EXPLAIN_ONLY, resolveOptions } from './resolve-options.js';

/** Whether the URL is one the crawl follows at all (scheme, length, scope, include/exclude). */
export type ScopeResult = { inScope: true; explanation: string } | { inScope: false; reason: ScopeRejection; detail: string; explanation: string };

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
      /** Set when the file was longer than the cap (`robots.maxSize`): the cap in bytes; rules past it are ignored. */
      truncatedAt?: number;
    }
  /** No usable file (e.g. a 404): everything is allowed. */
  | { checked: true; kind: 'allow-all'; allowed: true; reason: string }
  /**
   * 5xx, 429, timeout or network failure: a crawl treats the whole host as
   * disallowed until it answers, and once `robots.unavailableRetries` re-fetches
   * have failed skips its URLs as `robots-unavailable`. `connectError` is set
   * when the host could not be connected to at all (refused, DNS failure,
   * connect timeout, TLS failure): a crawl then gives the host up within
   * seconds and records each of its URLs as a page carrying that code.
   */
  | { checked: true; kind: 'unavailable'; allowed: false; reason: string; connectError?: ErrorCode };

/** Whether a crawl may connect to the URL's host: the SSRF guard's verdict. */
export interface NetworkResult {
  /** False when the guard refuses every address the host resolves to (a crawl records a `private-address` skip). */
  allowed: boolean;
  /** Whether the host was looked up: not for a seed's host, with `allowPrivate`, or for a URL out of scope. */
  checked: boolean;
  /** The addresses the host resolved to (an IP literal: itself); empty when not checked or not resolvable. */
  addresses: string[];
  /** The verdict in words, naming the refused address and its block, e.g. "127.0.0.1 (loopback, 127.0.0.0/8)". */
  explanation: string;
}

/** The per-IP limits (`perIp`) and the address the URL's host is counted under. */
export interface PerIpResult {
  /** The limits every host on one address shares; null when off. */
  policy: IpPolicy | null;
  /** The address the host is counted under (the first its name resolves to); null when off, proxied, with hostKey "domain", or unresolved. */
  address: string | null;
  /** The verdict in words. */
  explanation: string;
}

/**
 * What robots.txt states the URL's content may be used for, against the
 * crawl's declared purposes (`purpose`). What the page's own response
 * states (headers, <meta>) is known only once it is fetched.
 */
export interface UsageResult {
  /** The declared purposes; empty when none. */
  purposes: Purpose[];
  /** robots.txt's Content-Usage / Content-Signal rules for the URL (none when robots.txt was not read or has none). */
  stated: UsageSource[];
  /** Combined per use (any "n" wins). */
  usage: Partial<Record<Purpose, UsageValue>>;
  /** The first declared purpose robots.txt states "n" for; null when none. */
  denied: Purpose | null;
  /** `fetchDenied`: a denied page is requested anyway (its content withheld). */
  fetchDenied: boolean;
}

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
  usage: UsageResult;
  /** robots.txt Crawl-delay for our group, in ms; null when absent or not checked. */
  crawlDelayMs: number | null;
  network: NetworkResult;
  perIp: PerIpResult;
  /** What a request to the URL carries: headers (secrets as `***`), the kind of credentials, the proxy, cookie names. */
  requests: RequestDescription;
  /** In scope, allowed by robots.txt, not denied a declared purpose by it (or `fetchDenied`), and on an address the crawl may connect to. */
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
  /** Resolves host names, for the guard's verdict and the robots.txt request. @default lookupWithLocalhost */
  lookup?: LookupFunction;
  /** Relative paths in the settings (`tls.ca`, `cookies.jar`) are resolved against this. @default process.cwd() */
  cwd?: string;
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
  const { seeds, settings, extra } = resolveOptions(options, EXPLAIN_ONLY, [canonical]);
  return explainWith({ url: canonical, seeds, settings, robotsTxt: extra.robotsTxt as string | undefined });
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

  const lookup = input.lookup ?? lookupWithLocalhost;
  const guard = createAddressGuard({ ...settings.network, allowUrls: seeds });
  const clock = input.clock ?? systemClock;
  // An unset secret's variable is reported in `requests`, not refused: a check explains, it does not crawl.
  const requests = setUpRequests(settings, seeds, { cwd: input.cwd, now: () => clock.wallNow(), requireSecrets: false });
  // A key that cannot be used fails the check as it would fail the crawl (exit 2).
  requests.signer = await setUpSigning(settings, { cwd: input.cwd, now: () => clock.wallNow() });
  const robotsState = settings.robots.enabled ? await robotsFor(url, settings, input.robotsTxt, clock, guard, lookup, requests) : undefined;
  const robots: RobotsResult = robotsState ? robotsResult(robotsState, url) : { checked: false, allowed: true };
  const usage = usageResult(robotsState, url, settings);
  const crawlDelayMs = robots.checked && robots.kind === 'rules' ? robots.crawlDelayMs : null;
  const network = await networkFor(url, settings, guard, lookup);
  const described = requests.describe(url);
  // The signature a request made now would carry: it signs the authority, with a fresh nonce each time; the key is never shown.
  if (requests.signer) for (const [name, value] of Object.entries(requests.signer.sign(new URL(url)))) described.headers.push(`${name}: ${value}`);
  const perIp = await perIpFor(url, settings, described.proxy !== null, lookup);
  return {
    url,
    seeds,
    scope,
    hostKey,
    policy,
    robots,
    usage,
    crawlDelayMs,
    network,
    perIp,
    requests: described,
    wouldFetch: scope.inScope && robots.allowed && (usage.denied === null || usage.fetchDenied) && network.allowed,
  };
}

/** Which address the crawl would count the host under, resolved as a crawl resolves it before scheduling (schedule/host-addresses.ts). */
async function perIpFor(url: string, settings: CrawlSettings, proxied: boolean, lookup: LookupFunction): Promise<PerIpResult> {
  const policy = settings.perIp ?? null;
  if (policy === null) return { policy, address: null, explanation: 'off (no perIp in the config, no --ip-rate or --ip-concurrency)' };
  const limits = `${policy.rateLabel === 'unlimited' ? 'no gap' : `rate ${policy.rateLabel}`}, ${Number.isFinite(policy.concurrency) ? `${policy.concurrency} at once` : 'no cap on requests at once'} per address, all its hosts together`;
  const counted = (address: string | null, how: string): PerIpResult => ({ policy, address, explanation: `${limits}; ${how}` });
  if (settings.hostKey !== 'host') return counted(null, 'not applied: hostKey "domain" spans names that may resolve apart');
  if (proxied) return counted(null, 'not applied: requests go through a proxy, which connects to the host, not the crawl');
  const hostname = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(hostname) !== 0) return counted(hostname, `counted under ${hostname}`);
  try {
    const [first] = await resolveAll(lookup, hostname);
    if (first === undefined) return counted(null, `${hostname} resolves to no address: a crawl would record DNS_FAILURE`);
    return counted(first, `counted under ${first} (the first address ${hostname} resolves to)`);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return counted(null, `${hostname} could not be resolved (${typeof code === 'string' ? code : String(err)}): a crawl would record DNS_FAILURE`);
  }
}

/** The guard's verdict on the URL's host, as the connect step would reach it. */
async function networkFor(url: string, settings: CrawlSettings, guard: AddressGuard, lookup: LookupFunction): Promise<NetworkResult> {
  const notChecked = (explanation: string): NetworkResult => ({ allowed: true, checked: false, addresses: [], explanation });
  if (guard.off) return notChecked('not checked: allowPrivate lifts the guard');
  const target = new URL(url);
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
  if (guard.exempts(hostname, port)) return notChecked("not checked: a seed's host (host and port) is exempt");
  // Judged out of scope too: "allowed, not checked" for a private address read as if the guard would let it through.
  let addresses: string[];
  if (net.isIP(hostname) !== 0) {
    addresses = [hostname];
  } else {
    try {
      addresses = await resolveAll(lookup, hostname);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return {
        allowed: true,
        checked: true,
        addresses: [],
        explanation: `${hostname} could not be resolved (${typeof code === 'string' ? code : String(err)}): a crawl would record DNS_FAILURE`,
      };
    }
  }
  if (addresses.length === 0)
    return { allowed: true, checked: true, addresses, explanation: `${hostname} resolves to no address: a crawl would record DNS_FAILURE` };
  const refused = addresses.map((a) => guard.refusal(a)).filter((r) => r !== null);
  if (refused.length === addresses.length) {
    const via = net.isIP(hostname) !== 0 ? '' : `${hostname} resolves to `;
    return {
      allowed: false,
      checked: true,
      addresses,
      explanation: `refused: ${via}${refused.map(describeRefusal).join(', ')}, a special-purpose address; --allow-private or allowNetworks lifts it`,
    };
  }
  // The connect step drops refused answers and uses the rest.
  const allowNetworks = settings.network.allowNetworks.map(parseNetwork);
  const describeAllowed = (a: string) => {
    if (refusalFor(a) === null) return a;
    const by = allowNetworks.find((n) => refusalFor(a, [n]) === null);
    return `${a} (special-purpose, allowed by allowNetworks ${by?.cidr})`;
  };
  const kept = addresses.filter((a) => guard.refusal(a) === null).map(describeAllowed);
  const dropped = refused.length > 0 ? `; not ${refused.map(describeRefusal).join(', ')}` : '';
  return { allowed: true, checked: true, addresses, explanation: `allowed: ${kept.join(', ')}${dropped}` };
}

function resolveAll(lookup: LookupFunction, hostname: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: true }, (err, answer) => {
      if (err) reject(err);
      else resolve((answer as unknown as LookupAddress[]).map((a) => a.address));
    });
  });
}

async function robotsFor(
  url: string,
  settings: CrawlSettings,
  text: string | undefined,
  clock: Clock,
  guard: AddressGuard,
  lookup: LookupFunction,
  requests: RequestSetup,
): Promise<RobotsState> {
  if (text !== undefined) {
    // Read exactly as much of the file as a crawl would.
    const capped = capRobotsText(text, settings.robots.maxBytes);
    await loadUsageParserFor(capped.text);
    const rules = parseRobots(`${originOf(url)}/robots.txt`, capped.text, settings.userAgent, clock.now(), settings.robots.cacheTtlMs);
    if (capped.truncated) rules.truncatedAt = settings.robots.maxBytes;
    return rules;
  }
  // With the crawl's headers, credentials, cookies, proxy and TLS trust: robots.txt is fetched as a crawl would.
  const fetcher = createFetcher({
    userAgent: settings.userAgent,
    timeouts: settings.timeouts,
    maxBodyBytes: settings.robots.maxBytes,
    clock,
    lookup,
    extras: requests.extras,
    tls: requests.tls,
    signer: requests.signer,
  });
  try {
    const cache = new RobotsCache({
      clock,
      userAgent: settings.userAgent,
      maxBytes: settings.robots.maxBytes,
      cacheTtlMs: settings.robots.cacheTtlMs,
      // One look is the answer: a check reports "unavailable" rather than wait for retries.
      unavailableRetries: 0,
      tdmrep: (origin) => purposesFor(settings, settings.policyFor(hostKeyOf(origin, settings.hostKey))).some((p) => TDMREP_PURPOSES.includes(p)),
      unavailableRetryDelayMs: settings.robots.unavailableRetryDelayMs,
      // As a crawl fetches it: through the guard, and within robots.txt's own limits.
      fetchOne: (u) =>
        fetcher.fetch(u, {
          read: 'text',
          maxBodyBytes: settings.robots.maxBytes,
          guard,
          timeoutMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.headersMs),
          totalMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.totalMs),
        }),
    });
    return await cache.load(originOf(url));
  } finally {
    await fetcher.close();
  }
}

function usageResult(state: RobotsState | undefined, url: string, settings: CrawlSettings): UsageResult {
  const stated = state === undefined ? [] : statedBefore(state, url);
  const usage = combine(stated.map((s) => s.states));
  const purposes = purposesFor(settings, settings.policyFor(hostKeyOf(url, settings.hostKey)));
  const denied = purposes.find((p) => usage[p] === 'n') ?? null;
  return { purposes: [...purposes], stated, usage, denied, fetchDenied: settings.fetchDenied };
}

function robotsResult(state: RobotsState, url: string): RobotsResult {
  switch (state.kind) {
    case 'allow-all':
      return { checked: true, kind: 'allow-all', allowed: true, reason: state.reason };
    case 'unavailable':
      return {
        checked: true,
        kind: 'unavailable',
        allowed: false,
        reason: state.reason,
        ...(state.connectError && { connectError: state.connectError.code as ErrorCode }),
      };
    case 'rules': {
      const why = state.explain(url);
      const { source, crawlDelayMs, truncatedAt } = state;
      return {
        checked: true,
        kind: 'rules',
        allowed: why.allowed,
        rule: why.rule,
        line: why.line,
        group: why.group,
        source,
        crawlDelayMs,
        ...(truncatedAt !== undefined && { truncatedAt }),
      };
    }
  }
}
