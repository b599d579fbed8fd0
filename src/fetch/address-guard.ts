/**
 * The SSRF guard: a crawl follows links that strangers wrote, so it must not
 * connect wherever they point. Loopback, private, link-local (cloud metadata),
 * unique-local and the other special-purpose addresses (address-ranges.ts)
 * are refused, except:
 * - the exact hosts (host and port) the seeds name: a user who typed a seed
 *   meant it;
 * - networks listed in `allowNetworks`;
 * - everything, with `allowPrivate`.
 *
 * The check runs on the address actually connected to, inside the connect
 * step: IP literals before any socket exists, names in the resolver callback
 * that hands addresses to `net.connect` (refused answers are dropped; if none
 * is left, the connect fails). So a name that resolves to 127.0.0.1
 * (`evil.localhost`, or DNS rebinding between two requests) is caught, and
 * pages, redirect hops and robots.txt are all covered: they all connect here.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import { describeRefusal, parseNetwork, refusalFor, type Network, type Refusal } from './address-ranges.js';

export interface AddressGuardOptions {
  /** Lift the guard altogether (`--allow-private`). @default false */
  allowPrivate?: boolean;
  /** Special-purpose networks that may be connected to anyway, as CIDRs ("10.0.0.0/8"). Validated by the config schema. @default [] */
  allowNetworks?: readonly string[];
  /** URLs whose hosts (host and port) are exempt: the seeds. @default [] */
  allowUrls?: readonly string[];
}

/** What the fetcher needs to judge a connection. Immutable; one per crawl. */
export interface AddressGuard {
  /** True when nothing is refused (`allowPrivate`). */
  readonly off: boolean;
  /** Whether connections to this host and port skip the check (a seed's host). */
  exempts(hostname: string, port: number): boolean;
  /** Why `address` may not be connected to, or null when it may. */
  refusal(address: string): Refusal | null;
}

/** The connect step refused an address. A decision, not a transport failure: the crawl records it as a `private-address` skip. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'PRIVATE_ADDRESS';
  /** The host the URL named. */
  readonly hostname: string;
  readonly refused: Refusal;
  /** "127.0.0.1 (loopback, 127.0.0.0/8)": the address and why, for records. */
  readonly detail: string;

  constructor(hostname: string, refused: Refusal) {
    const detail = describeRefusal(refused);
    const what = hostname === refused.address ? 'refused' : `${hostname} resolves to refused`;
    super(`${what} special-purpose address ${detail}; allow it with --allow-private or allowNetworks`);
    this.hostname = hostname;
    this.refused = refused;
    this.detail = detail;
  }
}

/** The first AddressRefusedError in an error's cause chain (undici and net may wrap what the connector reported). */
export function findRefusal(err: unknown): AddressRefusedError | undefined {
  for (let current = err, depth = 0; current !== null && typeof current === 'object' && depth < 8; depth++) {
    if (current instanceof AddressRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function exemptKey(hostname: string, port: number): string {
  return `${unbracket(hostname).toLowerCase()}:${port}`;
}

/**
 * Builds the guard. `allowNetworks` entries that do not parse throw (the
 * config schema reports them first, with the field's path).
 */
export function createAddressGuard(opts: AddressGuardOptions = {}): AddressGuard {
  const allowed: Network[] = (opts.allowNetworks ?? []).map(parseNetwork);
  const exempt = new Set<string>();
  for (const raw of opts.allowUrls ?? []) {
    const url = new URL(raw);
    exempt.add(exemptKey(url.hostname, url.port === '' ? defaultPort(url.protocol) : Number(url.port)));
  }
  const off = opts.allowPrivate === true;
  return {
    off,
    exempts: (hostname, port) => off || exempt.has(exemptKey(hostname, port)),
    refusal: (address) => (off ? null : refusalFor(address, allowed)),
  };
}

/**
 * Wraps a resolver so that it only ever answers addresses the guard allows;
 * when every answer is refused it fails with AddressRefusedError naming the
 * first. Always asks `lookup` for every address (`all: true`) and answers in
 * the shape the caller asked for.
 */
export function guardLookup(guard: AddressGuard, lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, answer) => {
      const reply = callback as (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;
      if (err) return reply(err);
      const list = Array.isArray(answer) ? answer : [];
      const kept: LookupAddress[] = [];
      let first: Refusal | undefined;
      for (const entry of list) {
        const refused = guard.refusal(entry.address);
        if (refused) first ??= refused;
        else kept.push(entry);
      }
      if (kept.length === 0) {
        if (first) return reply(new AddressRefusedError(hostname, first));
        return reply(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
      }
      if (options.all) reply(null, kept);
      else reply(null, kept[0].address, kept[0].family);
    });
  };
}

export interface GuardedConnectorOptions {
  /** TCP + TLS connect timeout in ms (undici's connector enforces it). */
  timeout: number;
  /** The resolver for names (the guard filters its answers). */
  lookup: LookupFunction;
  /** TLS options for https connections (`--insecure`, `--ca`: tls.ts). @default Node's */
  tls?: ConnectionOptions;
  /** Offer HTTP/2 in TLS's ALPN (http2-pool.ts). @default false */
  allowH2?: boolean;
}

/**
 * An undici connector that applies `guard` before any socket is opened for
 * an IP literal, and inside the resolver callback for a name. Exempt hosts
 * (the seeds') connect without the check.
 */
export function guardedConnector(guard: AddressGuard, opts: GuardedConnectorOptions): buildConnector.connector {
  const allowH2 = opts.allowH2 === true;
  const open = buildConnector({ ...opts.tls, allowH2, timeout: opts.timeout, lookup: opts.lookup });
  if (guard.off) return open;
  const checked = buildConnector({ ...opts.tls, allowH2, timeout: opts.timeout, lookup: guardLookup(guard, opts.lookup) });
  return (options, callback) => {
    const { hostname, protocol } = options;
    const port = options.port === '' || options.port === undefined ? defaultPort(protocol) : Number(options.port);
    if (guard.exempts(hostname, port)) return open(options, callback);
    if (net.isIP(unbracket(hostname)) !== 0) {
      const refused = guard.refusal(unbracket(hostname));
      if (refused) {
        // Asynchronous like a failed connect: undici expects the callback after connect() returns.
        process.nextTick(() => callback(new AddressRefusedError(unbracket(hostname), refused), null));
        return;
      }
      return open(options, callback);
    }
    return checked(options, callback);
  };
}
