/**
 * Which proxy a request goes through, and what the SSRF guard can still
 * promise when it does.
 *
 * Choice, first that applies: the URL's `domains` entry `proxy` (a URL, or
 * `false` for a direct connection), then `defaults.proxy` / `--proxy`, then
 * the environment as curl and undici's EnvHttpProxyAgent read it
 * (`https_proxy`/`HTTPS_PROXY` for https URLs, `http_proxy`/`HTTP_PROXY`
 * for both when the former is unset; `no_proxy`/`NO_PROXY` exempts hosts
 * from those two only, and so are localhost and loopback addresses). The politeness key stays the target host whatever
 * the proxy: the limits protect the site, not the proxy.
 *
 * The guard: without a proxy it judges the address actually connected to
 * (address-guard.ts). Through a proxy the crawler never connects to the
 * target, so it judges what it can before the request leaves: an IP literal
 * as it stands, and a name as the crawler's own resolver answers it. A
 * refused answer means a `private-address` skip, exactly as without a proxy;
 * a name the crawler cannot resolve is left to the proxy (it may see names
 * we do not). What the proxy resolves the name to later is its own affair:
 * DNS rebinding between the two lookups, or a name only the proxy's resolver
 * knows, are not caught; the proxy's own access rules are the hard limit.
 */
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import { AddressRefusedError, guardLookup, type AddressGuard } from './address-guard.js';

/** The proxy variables of the environment, as read once at the start. */
export interface EnvProxies {
  http: string | null;
  https: string | null;
  /** Parsed NO_PROXY; `'*'` exempts every host. */
  noProxy: readonly NoProxyEntry[] | '*';
}

export interface NoProxyEntry {
  hostname: string;
  /** 0: any port. */
  port: number;
}

const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value.trim());

/** Parses NO_PROXY as undici does: comma- or space-separated `host`, `host:port`, `.suffix` or `*.suffix`; `*` alone for every host. */
export function parseNoProxy(text: string): readonly NoProxyEntry[] | '*' {
  if (text.trim() === '*') return '*';
  const out: NoProxyEntry[] = [];
  for (const entry of text.split(/[,\s]/)) {
    if (!entry) continue;
    const m = /^(.+):(\d+)$/.exec(entry);
    out.push({ hostname: (m ? m[1] : entry).replace(/^\*?\./, '').toLowerCase(), port: m ? Number(m[2]) : 0 });
  }
  return out;
}

/** Reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY (lowercase first, as curl and undici do). */
export function readEnvProxies(env: NodeJS.ProcessEnv): EnvProxies {
  const http = nonEmpty(env.http_proxy ?? env.HTTP_PROXY);
  const https = nonEmpty(env.https_proxy ?? env.HTTPS_PROXY);
  return { http, https, noProxy: parseNoProxy(env.no_proxy ?? env.NO_PROXY ?? '') };
}

/** Whether NO_PROXY exempts `url`'s host: the host itself or any subdomain of an entry, on the entry's port if it names one. */
export function noProxyMatches(noProxy: EnvProxies['noProxy'], url: URL): boolean {
  if (noProxy === '*') return true;
  const hostname = url.hostname.toLowerCase();
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return noProxy.some((e) => (e.port === 0 || e.port === port) && (hostname === e.hostname || hostname.endsWith(`.${e.hostname}`)));
}

/**
 * The proxy URL for a request to `url`, or null for a direct connection.
 * `configured` is the URL's policy `proxy`: a URL, `false` (direct), or null
 * when neither its entry, `defaults` nor `--proxy` set one.
 */
export function selectProxy(url: URL, configured: string | false | null, env: EnvProxies): string | null {
  if (configured === false) return null;
  if (configured !== null) return configured;
  const fromEnv = url.protocol === 'https:' ? (env.https ?? env.http) : env.http;
  if (fromEnv === null || noProxyMatches(env.noProxy, url) || isLoopbackHost(url.hostname)) return null;
  return fromEnv;
}

/**
 * localhost names and loopback literals never take the environment's proxy
 * (Go's net/http does the same): a proxy set for the outside world cannot
 * reach this machine's servers, and `crawl http://localhost:3000/` should
 * not need a NO_PROXY. A configured proxy still applies to them.
 */
function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '[::1]';
}

export { proxyUrlProblem } from './request-syntax.js';

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/**
 * The guard's check of a proxied request's target, before it is handed to
 * the proxy (see the module comment for what it does and does not promise).
 * Resolves when the request may go; rejects with AddressRefusedError.
 */
export function checkProxiedTarget(guard: AddressGuard | undefined, lookup: LookupFunction, url: URL): Promise<void> {
  if (guard === undefined || guard.off) return Promise.resolve();
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
  if (guard.exempts(hostname, port)) return Promise.resolve();
  if (net.isIP(hostname) !== 0) {
    const refused = guard.refusal(hostname);
    return refused ? Promise.reject(new AddressRefusedError(hostname, refused)) : Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    guardLookup(guard, lookup)(hostname, { all: true }, (err) => {
      if (err instanceof AddressRefusedError) reject(err);
      else resolve(); // resolved to allowed addresses, or not resolvable here: the proxy decides
    });
  });
}
