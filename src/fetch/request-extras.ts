/**
 * What a request carries besides the crawler's own headers, decided per URL
 * from the policy of its exact host (`URL.host`, whatever `hostKey` says):
 * the configured headers, the host's credentials, the cookies the jar holds
 * for it, and the proxy it goes through. The fetcher asks for every request,
 * redirect hops and robots.txt included, so credentials follow the URL and
 * never the chain: a redirect to another host is a request to that host,
 * and gets only what that host's entry gives it.
 *
 * Headers from `defaults` (and `--header`) go to every host, except those
 * the crawler classes as credentials (`isCredentialHeader`: a credential-like
 * name such as X-Api-Key, or a value read from the environment): like
 * `--cookie`, those go to the seeds' hosts only (host and port exactly), so a
 * crawl whose scope or `--check-links` reaches other hosts, or a redirect,
 * never hands them out. A `domains` entry's own headers go to its hosts.
 */
import type { HostAuth, HostPolicy } from '../config/settings-types.js';
import type { CrawlCookieJar } from './cookie-jar.js';
import { selectProxy, type EnvProxies } from './proxy.js';
import { describeHeaders, isCredentialHeader, isSensitiveHeader } from './request-headers.js';
import { revealValue, Secret, type HeaderValue } from './secret.js';
import { redactCredentials } from './redact.js';

/** The part of a host's policy this module reads. */
export type RequestPolicy = Pick<HostPolicy, 'headers' | 'entryHeaders' | 'auth' | 'proxy'>;

export interface RequestExtras {
  /** Headers to add to a request for `url` (lowercased names), or undefined when there are none. */
  headersFor(url: URL): Record<string, string> | undefined;
  /** The proxy for `url`, or null for a direct connection. */
  proxyFor(url: URL): string | null;
  /** A response to `url` arrived with these Set-Cookie headers. */
  received(url: URL, setCookie: readonly string[]): void;
  /**
   * `headers` as sent to `url`, fit to be written out (a WARC's request
   * record): credentials, cookies, credential-like names and every value read
   * from a secret as `***`.
   */
  masked(url: URL, headers: Readonly<Record<string, string>>): Record<string, string>;
  /** More seeds, whose hosts credential headers from `defaults` may go to: a resumed crawl learns its seeds from its store. */
  allowSeeds(seeds: readonly string[]): void;
}

export interface RequestExtrasOptions {
  /** The policy for a URL's `host` (host, or host:port). */
  policyFor(host: string): RequestPolicy;
  /** The crawl's cookie jar; absent: no Cookie header is sent and Set-Cookie is ignored. */
  cookies?: CrawlCookieJar;
  /** Proxy variables of the environment. @default none */
  env?: EnvProxies;
  /** The seeds' hosts (`URL.host`: host, and port when not the default): the only ones credential headers from `defaults` go to. @default none */
  seedHosts?: ReadonlySet<string>;
}

/** The policy's headers for `host`: a credential that is not the matched entry's own stays off hosts that are not a seed's. */
function headersSentTo(policy: RequestPolicy, seedHost: boolean): Array<[string, HeaderValue]> {
  const own = policy.entryHeaders;
  return Object.entries(policy.headers ?? {}).filter(([name, value]) => seedHost || own?.includes(name) || !isCredentialHeader(name, value));
}

const NO_ENV: EnvProxies = { http: null, https: null, noProxy: [] };

export function authorizationOf(auth: HostAuth): string {
  if (auth.kind === 'bearer') return `Bearer ${auth.token.reveal()}`;
  return `Basic ${Buffer.from(`${auth.user}:${auth.password.reveal()}`, 'utf8').toString('base64')}`;
}

export function createRequestExtras(opts: RequestExtrasOptions): RequestExtras {
  const env = opts.env ?? NO_ENV;
  const seedHosts = new Set(opts.seedHosts);
  // Policies are shared frozen objects (one per config entry), so each one's headers are built once (for a seed's host, and for others).
  const built = [new WeakMap<RequestPolicy, Record<string, string>>(), new WeakMap<RequestPolicy, Record<string, string>>()];
  /** Per policy, the names of headers whose values came from a Secret. */
  const secretNames = new WeakMap<RequestPolicy, Set<string>>();
  const fixedHeaders = (policy: RequestPolicy, seedHost: boolean): Record<string, string> => {
    const cache = built[seedHost ? 1 : 0];
    let headers = cache.get(policy);
    if (headers === undefined) {
      headers = {};
      for (const [name, value] of headersSentTo(policy, seedHost)) headers[name] = revealValue(value);
      if (policy.auth) headers.authorization = authorizationOf(policy.auth);
      cache.set(policy, headers);
    }
    if (!secretNames.has(policy))
      secretNames.set(
        policy,
        new Set(
          Object.entries(policy.headers ?? {})
            .filter(([, v]) => v instanceof Secret)
            .map(([name]) => name),
        ),
      );
    return headers;
  };

  return {
    headersFor(url) {
      const fixed = fixedHeaders(opts.policyFor(url.host), seedHosts.has(url.host));
      const cookie = opts.cookies?.header(url);
      if (cookie === undefined) return Object.keys(fixed).length === 0 ? undefined : fixed;
      return { ...fixed, cookie };
    },
    proxyFor(url) {
      return selectProxy(url, opts.policyFor(url.host).proxy ?? null, env);
    },
    received(url, setCookie) {
      opts.cookies?.store(url, setCookie);
    },
    allowSeeds(seeds) {
      for (const seed of seeds) seedHosts.add(new URL(seed).host);
    },
    masked(url, headers) {
      const policy = opts.policyFor(url.host);
      fixedHeaders(policy, seedHosts.has(url.host));
      const secret = secretNames.get(policy)!;
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) out[name] = secret.has(name) || isSensitiveHeader(name) ? '***' : value;
      return out;
    },
  };
}

/** What requests to a URL carry, for humans (`crawl check`); nothing secret in it. */
export interface RequestDescription {
  /** `name: value` lines, credential-like and environment values as `***`. */
  headers: string[];
  /** The kind of credentials sent, with the user name for basic auth; null when none. */
  auth: string | null;
  /** The proxy URL (credentials as `***`), or null for a direct connection. */
  proxy: string | null;
  /** Where the proxy choice came from. */
  proxySource: 'config' | 'environment' | 'none';
  /** Names of the cookies the jar holds for the URL at the start (values never shown). */
  cookies: string[];
}

function describeAuth(auth: HostAuth): string {
  const secret = auth.kind === 'basic' ? auth.password : auth.token;
  const kind = auth.kind === 'basic' ? `basic (user ${JSON.stringify(auth.user)})` : 'bearer token';
  return secret.missing ? `${kind}, but ${secret.source} is not set: a crawl would not start` : kind;
}

export function describeRequest(url: URL, opts: RequestExtrasOptions): RequestDescription {
  const policy = opts.policyFor(url.host);
  const proxy = selectProxy(url, policy.proxy ?? null, opts.env ?? NO_ENV);
  const configured = policy.proxy ?? null;
  const sent = Object.fromEntries(headersSentTo(policy, opts.seedHosts?.has(url.host) ?? false));
  const held = Object.keys(policy.headers ?? {}).filter((name) => !Object.hasOwn(sent, name));
  return {
    headers: [
      ...describeHeaders(sent),
      ...held.map(
        (name) => `${name}: *** (not sent to this host: a credential goes to the seeds' hosts only, or to the hosts of a domains entry that sets it)`,
      ),
    ],
    auth: policy.auth ? describeAuth(policy.auth) : null,
    proxy: proxy === null ? null : redactCredentials(proxy),
    proxySource: configured === null ? (proxy === null ? 'none' : 'environment') : 'config',
    cookies: opts.cookies?.names(url) ?? [],
  };
}
