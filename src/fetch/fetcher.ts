/**
 * One HTTP GET over undici, and nothing more: no redirects followed, no
 * retries, no waiting for politeness. The scheduler decides when a request may
 * start and what to do with the answer; this module performs it on a shared
 * keep-alive Agent, enforces connect/headers/body timeouts and the decoded
 * body cap, and turns transport failures into FetchError with a stable code.
 * HTTP statuses, 4xx and 5xx included, are returned as data.
 *
 * Requests go through undici's `dispatch` with a handler of our own rather
 * than its `request` API: an uncompressed body is collected straight from the
 * parser's chunks instead of through a Readable, an async iterator and an
 * AsyncResource, and one abort listener per signal serves every request.
 * bench/ measured `request` at ~1.4x the CPU per request of `dispatch`, the
 * largest cost in the crawler after parsing. Compressed bodies still go
 * through a Readable into body.ts, whose decoders need one.
 *
 * Hostile servers are expected: every response has a total deadline besides
 * the idle timeouts (a body sent at one byte a second never goes silent for
 * long), and a request may carry an AddressGuard (address-guard.ts) that
 * refuses special-purpose addresses at connect time. Requests under
 * different guards never share a connection.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, errors, ProxyAgent, type Dispatcher, type Pool } from 'undici';
import { AbortFanout } from './abort-fanout.js';
import { findRefusal, guardedConnector, type AddressGuard } from './address-guard.js';
import { decodeBody, parseContentType } from './charset.js';
import type { Clock } from '../clock.js';
import { Exchange, type IncomingHttpHeaders } from './exchange.js';
import { requestHead, type ResponseCapture } from './capture.js';
import { cachedLookup, DNS_CACHE_DEFAULTS, type DnsCacheOptions } from './dns-cache.js';
import { bodyDigest } from './body-digest.js';
import { classifyError, FetchError, LOCAL_RESOURCE_CODES, TOTAL_TIMEOUT_CODE } from './fetch-error.js';
import { redactCredentials } from './redact.js';
import { checkProxiedTarget } from './proxy.js';
import { describeProxyStatus, tunnelClientFactory } from './proxy-tunnel.js';
import type { RequestExtras } from './request-extras.js';
import { tlsConnectOptions, type TlsSettings } from './tls.js';
import { PhaseDeadlines, type DeadlineCode } from './phase-deadlines.js';
import { timedConnector } from './timed-connector.js';
import { http2Factory, ProtocolLog, type HttpVersion } from './http2-pool.js';
import { leanPool } from './lean-pool.js';
import { QuietClient } from './quiet-close.js';
import type { ErrorCode } from '../types.js';
import type { RequestSigner } from '../identity/request-signer.js';

export interface FetcherOptions {
  /** Sent as the User-Agent header on every request. */
  userAgent: string;
  /**
   * connectMs: TCP (+TLS) connect; headersMs: from request written to response
   * headers; bodyMs: longest silence between body chunks; totalMs: deadline
   * from the fetch() call to the last body byte, however the bytes trickle in
   * (TOTAL_TIMEOUT). @default totalMs: none
   */
  timeouts: { connectMs: number; headersMs: number; bodyMs: number; totalMs?: number };
  /** Cap on DECOMPRESSED body bytes kept per response; the rest is not read. */
  maxBodyBytes: number;
  /** Source of `elapsedMs` and `onDispatched` timestamps. */
  clock: Clock;
  /** Max sockets per origin in the keep-alive pool (the scheduler limits concurrency itself). @default 64 */
  connectionsPerOrigin?: number;
  /** Resolves host names (tests map names to chosen addresses). @default lookupWithLocalhost, its answers cached (dns-cache.ts) */
  lookup?: LookupFunction;
  /** Idle keep-alive sockets, and with them the origin's pool, close after this long. @default IDLE_ORIGIN_MS (4 s) */
  idleOriginMs?: number;
  /** How long resolved addresses (and failures) are reused; `false`: ask the resolver at every connect. @default DNS_CACHE_DEFAULTS with the default resolver; `false` when `lookup` is given */
  dnsCache?: Partial<DnsCacheOptions> | false;
  /** Per-URL headers, credentials, cookies and proxy (request-extras.ts). @default none: the crawler's own headers, direct connections */
  extras?: RequestExtras;
  /** TLS trust: `insecure`, extra `ca` (tls.ts). Applies through proxies too. @default Node's */
  tls?: TlsSettings;
  /**
   * HTTP/2 per origin: the stream limit (the host's concurrency) for an
   * https origin ("https://host:port") that may use h2 when its server
   * offers it, or null for HTTP/1.1 only (http2-pool.ts). Not through a
   * proxy. @default none: HTTP/1.1 everywhere
   */
  http2?: (origin: string) => number | null;
  /**
   * Signs every request (Web Bot Auth, identity/request-signer.ts) as it is
   * handed to its connection: robots.txt, redirect hops, retries and a
   * browser's subresources alike, each for the authority it goes to.
   * @default none: nothing is signed
   */
  signer?: RequestSigner;
}

export interface FetchRequest {
  /**
   * 'html' reads and decodes the body only for HTML content types (text/html, application/xhtml+xml); other bodies are discarded without reading them fully. 'text' reads any body as text (robots.txt).
   * 'raw' reads any body as bytes, Content-Encoding undone but not decoded to text (`raw`; sitemaps, which may be gzip files). 'none' reads no body (a link check).
   */
  read: 'html' | 'text' | 'raw' | 'none';
  /**
   * Also hand out what an archive keeps (`FetchResult.capture`, capture.ts): with 'html', a
   * non-HTML body is then read too (capped, `body` stays null). @default false: nothing extra is kept
   */
  capture?: boolean;
  /** HEAD asks for the head only (a link check); its body is never read. @default 'GET' */
  method?: 'GET' | 'HEAD';
  /** Overrides the fetcher's cap (robots.txt uses its own). @default FetcherOptions.maxBodyBytes */
  maxBodyBytes?: number;
  signal?: AbortSignal;
  /** Called with clock.now() at the moment the request is actually written to a socket (after connect) — the scheduler times politeness gaps from this. Called at most once. */
  onDispatched?: (at: number) => void;
  /** Called with clock.now() when the response headers arrive: proof the server has the request by then. Called at most once. */
  onResponse?: (at: number) => void;
  /** Overrides the fetcher's headers and body timeouts for this request (robots.txt uses shorter ones). @default FetcherOptions.timeouts */
  timeoutMs?: number;
  /** Overrides the total deadline for this request (robots.txt gets at most 10 s). @default FetcherOptions.timeouts.totalMs */
  totalMs?: number;
  /**
   * Refuses special-purpose addresses at connect time; the fetch then rejects
   * with AddressRefusedError instead of a FetchError. Requests under one
   * guard share a connection pool. @default none: any address
   */
  guard?: AddressGuard;
  /**
   * More request headers (lowercased names), over the fetcher's own: a
   * re-crawl's `if-none-match` / `if-modified-since`. @default none
   */
  headers?: Readonly<Record<string, string>>;
  /** Also hand out the digest of a body that is read (`FetchResult.digest`, body-digest.ts). @default false */
  digest?: boolean;
}

export interface FetchResult {
  url: string;
  status: number;
  /** Lowercased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Mime type only, lowercased, e.g. "text/html". */
  contentType: string | null;
  /** The canonical encoding the body was decoded with, e.g. "windows-1252"; null when not read. */
  charset: string | null;
  /** Decoded text, or null when not read. */
  body: string | null;
  /** The body's bytes with Content-Encoding undone, for `read: 'raw'` only. */
  raw?: Buffer;
  /** Head and body bytes as received, for `capture: true` only (capture.ts). */
  capture?: ResponseCapture;
  /** Decoded body bytes read and kept; 0 when the body was skipped (a non-HTML body on an html read), whatever Content-Length said. */
  bytes: number;
  /** The body was cut at the cap. */
  truncated: boolean;
  /** Raw Location header of a 3xx response, unresolved. */
  location: string | null;
  /** From the fetch() call until the body was done. */
  elapsedMs: number;
  /** With `digest: true` and a body read: `sha256:BASE32` of its bytes, Content-Encoding undone (body-digest.ts). */
  digest?: string;
  /** The HTTP version the connection negotiated, for origins that offer HTTP/2 only (`FetcherOptions.http2`); absent: HTTP/1.1. */
  httpVersion?: HttpVersion;
}

export interface Fetcher {
  /** Rejects with FetchError, or with AddressRefusedError when `req.guard` refused the address. */
  fetch(url: string, req: FetchRequest): Promise<FetchResult>;
  /** Closes the pool after in-flight requests finish. */
  close(): Promise<void>;
  /**
   * The address a direct request to `host` ("hostname[:port]") connects to:
   * the first the resolver answers, through the same cache the connect
   * uses, so asking ahead costs the connect nothing (and the guard still
   * judges every address then). An IP literal is itself; null when requests
   * to the host may go through a proxy (the crawler never connects to it).
   * Rejects with FetchError DNS_FAILURE when the name does not resolve.
   * Optional: a fetcher without it is not asked ahead (the crawl then counts
   * no address per host, and DNS happens inside the connect).
   */
  resolveHost?(host: string): Promise<string | null>;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = {
  html: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
  text: 'text/plain,*/*',
  raw: 'application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5',
  none: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
} as const;

/** True for "localhost" and any "*.localhost" name (RFC 6761 §6.3). */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * dns.lookup, except that localhost names resolve to 127.0.0.1 without asking
 * DNS, as browsers do; the demo web and the tests rely on `news.localhost`.
 * Answers in whichever shape the caller asked for (`all: true` is what Node's
 * happy-eyeballs connect uses).
 */
export const lookupWithLocalhost: LookupFunction = (hostname, options, callback) => {
  if (!isLocalhostName(hostname)) {
    dns.lookup(hostname, options, callback);
    return;
  }
  // Asynchronous like a real lookup: net expects the callback after connect() returns.
  process.nextTick(() => {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  });
};

function flattenHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    // A "__proto__" header is just a header: define it, never assign it (that would set the prototype).
    if (key === '__proto__') Object.defineProperty(out, key, { value: text, enumerable: true, writable: true, configurable: true });
    else out[key] = text;
  }
  return out;
}

function contentLengthOf(headers: Record<string, string>): number {
  const value = headers['content-length'];
  return value !== undefined && /^\d+$/.test(value.trim()) ? Number(value) : 0;
}

function expect(condition: boolean, name: string, what: string, got: unknown): void {
  if (!condition) throw new TypeError(`Expected \`${name}\` to be ${what}, got ${String(got)}`);
}

function validate(opts: FetcherOptions): void {
  expect(typeof opts.userAgent === 'string' && opts.userAgent.trim() !== '', 'userAgent', 'a non-empty string', opts.userAgent);
  for (const key of ['connectMs', 'headersMs', 'bodyMs'] as const) {
    const value = opts.timeouts?.[key];
    expect(Number.isFinite(value) && value > 0, `timeouts.${key}`, 'a positive number of milliseconds', value);
  }
  const total = opts.timeouts?.totalMs;
  expect(total === undefined || (Number.isFinite(total) && total > 0), 'timeouts.totalMs', 'a positive number of milliseconds', total);
  expect(Number.isSafeInteger(opts.maxBodyBytes) && opts.maxBodyBytes >= 0, 'maxBodyBytes', 'an integer from 0 and up', opts.maxBodyBytes);
  const perOrigin = opts.connectionsPerOrigin;
  expect(perOrigin === undefined || (Number.isSafeInteger(perOrigin) && perOrigin >= 1), 'connectionsPerOrigin', 'an integer from 1 and up', perOrigin);
  const idle = opts.idleOriginMs;
  expect(idle === undefined || (Number.isFinite(idle) && idle > 0), 'idleOriginMs', 'a positive number of milliseconds', idle);
}

/**
 * How long an origin with nothing in flight keeps its keep-alive sockets,
 * whatever the server's Keep-Alive hint says (undici would keep them up to
 * 10 minutes). undici's Agent keeps one Pool per origin and drops it when
 * its last socket closes, so this is also how long an idle origin's pool
 * lives: ~30 KB of heap and a file descriptor per origin while open
 * (bench/host-memory-probe.js), nothing after. A broad crawl touches
 * thousands of origins; pools kept for a minute held most of the memory of
 * the hosts it had finished with. 4 s spans the next request of any host
 * at 1/s or faster (the default rate); slower hosts reconnect.
 */
export const IDLE_ORIGIN_MS = 4_000;

/** Creates a fetcher with its own keep-alive pool(s). Options are validated here, once. */
export function createFetcher(opts: FetcherOptions): Fetcher {
  validate(opts);
  const { clock, timeouts, signer } = opts;
  // One cache for every pool: resolved once per host for the crawl, under
  // the guard, which still judges every address of every connect.
  // A resolver passed in is asked at every connect unless `dnsCache` says otherwise (tests rebind names between requests).
  const caching = opts.dnsCache !== undefined ? opts.dnsCache !== false : opts.lookup === undefined;
  const base = opts.lookup ?? lookupWithLocalhost;
  const lookup = caching ? cachedLookup(base, { now: () => clock.now(), ...DNS_CACHE_DEFAULTS, ...(opts.dnsCache || {}) }) : base;
  const idleMs = opts.idleOriginMs ?? IDLE_ORIGIN_MS;
  const tlsOptions = tlsConnectOptions(opts.tls);
  // What every pool shares, direct or through a proxy.
  const pool = {
    connections: opts.connectionsPerOrigin ?? 64,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: idleMs,
    keepAliveMaxTimeout: idleMs,
    // Server hints are shortened by this much (a socket the server is about to close is not reused); undici's 2 s would leave nothing of a 4 s cap.
    keepAliveTimeoutThreshold: Math.min(1_000, idleMs / 4),
  };
  // Timed on our clock: undici's own connect timer runs on a coarse tick (timed-connector.ts).
  const connector = (guard: AddressGuard | undefined, allowH2: boolean) =>
    timedConnector(
      guard
        ? guardedConnector(guard, { timeout: timeouts.connectMs, lookup, tls: tlsOptions, allowH2 })
        : buildConnector({ ...tlsOptions, allowH2, timeout: timeouts.connectMs, lookup }),
      timeouts.connectMs,
      clock,
    );
  const protocols = opts.http2 ? new ProtocolLog() : undefined;
  // undici's own factory, but with the lean waiting queue (lean-pool.ts) and closes that make no error (quiet-close.ts):
  // thousands of origins are open at once in a broad crawl, and each closes when idle.
  const originPool = (origin: string | URL, options: object): Dispatcher =>
    (options as Pool.Options).connections === 1 ? new QuietClient(origin, options) : leanPool(origin, options);
  const newAgent = (guard: AddressGuard | undefined) =>
    new Agent({
      ...pool,
      connect: connector(guard, false),
      factory: opts.http2 ? http2Factory({ streamsFor: opts.http2, connect: connector(guard, true), idleMs, protocols: protocols! }) : originPool,
    });
  const open = newAgent(undefined);
  // One ProxyAgent per proxy URL. The SSRF guard cannot see the proxy's connection to the target; checkProxiedTarget judges what it can first (proxy.ts).
  const proxied = new Map<string, ProxyAgent>();
  const proxyAgentFor = (proxy: string): ProxyAgent => {
    let agent = proxied.get(proxy);
    if (agent === undefined) {
      agent = new ProxyAgent({
        uri: proxy,
        // http URLs go as absolute-form GETs (what forward proxies expect); https ones through a CONNECT tunnel.
        proxyTunnel: false,
        ...pool,
        proxyTls: { timeout: timeouts.connectMs },
        requestTls: { ...tlsOptions, timeout: timeouts.connectMs },
        // A refused CONNECT fails as PROXY_ERROR with the proxy's status, not as ABORTED (proxy-tunnel.ts).
        clientFactory: tunnelClientFactory,
      });
      proxied.set(proxy, agent);
    }
    return agent;
  };
  // One pool per guard, so a socket opened under a lenient guard never serves a stricter one. A crawl has one.
  const guarded = new Map<AddressGuard, Agent>();
  const agentFor = (guard: AddressGuard | undefined): Agent => {
    if (guard === undefined || guard.off) return open;
    let agent = guarded.get(guard);
    if (agent === undefined) guarded.set(guard, (agent = newAgent(guard)));
    return agent;
  };
  // undici does not modify request headers, so each kind of read shares one object.
  const requestHeaders = {
    html: { 'user-agent': opts.userAgent, accept: ACCEPT.html, 'accept-encoding': 'gzip, deflate, br' },
    text: { 'user-agent': opts.userAgent, accept: ACCEPT.text, 'accept-encoding': 'gzip, deflate, br' },
    raw: { 'user-agent': opts.userAgent, accept: ACCEPT.raw, 'accept-encoding': 'gzip, deflate, br' },
    none: { 'user-agent': opts.userAgent, accept: ACCEPT.none, 'accept-encoding': 'gzip, deflate, br' },
  };
  const aborts = new AbortFanout();

  function describe(code: ErrorCode, err: unknown, req: FetchRequest): string | undefined {
    if (code === 'CONNECT_TIMEOUT') return `connect timed out (limit ${timeouts.connectMs} ms)`;
    if (code === 'HEADERS_TIMEOUT') return `no response headers within ${req.timeoutMs ?? timeouts.headersMs} ms`;
    if (code === 'BODY_TIMEOUT') return `response body stalled for ${req.timeoutMs ?? timeouts.bodyMs} ms`;
    if (code === 'TOTAL_TIMEOUT') return `response not complete within ${req.totalMs ?? timeouts.totalMs} ms (total deadline)`;
    if (code === 'LOCAL_RESOURCE') return `${DESCRIBE_LOCAL} (${localCode(err) ?? 'resource exhausted'})`;
    if ((code === 'DECODE_ERROR' || code === 'FETCH_FAILED') && err instanceof Error) return redactCredentials(err.message);
    if (code === 'PROXY_ERROR') return describeProxyStatus(err);
    return undefined;
  }

  async function fetchOnce(url: string, req: FetchRequest): Promise<FetchResult> {
    const started = clock.now();
    const signal = req.signal;
    let exchange: Exchange | undefined;
    let deadlines: PhaseDeadlines | undefined;
    try {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const target = new URL(url);
      const { onDispatched, onResponse } = req;
      const capture = req.capture === true;
      const proxy = opts.extras?.proxyFor(target) ?? null;
      const extra = opts.extras?.headersFor(target);
      // A fresh object when anything is added: the shared ones serve every other request (and ProxyAgent writes a Host into what it gets).
      let sent: Record<string, string> =
        extra !== undefined || proxy !== null || req.headers !== undefined
          ? Object.assign({}, requestHeaders[req.read], extra, req.headers) // not a spread: see util/with-fields.ts
          : requestHeaders[req.read];
      const current = (exchange = new Exchange(
        req.maxBodyBytes ?? opts.maxBodyBytes,
        {
          dispatched: () => {
            deadlines?.dispatched();
            onDispatched?.(clock.now());
          },
          responded: () => {
            deadlines?.responded();
            onResponse?.(clock.now());
          },
          data: () => deadlines?.data(),
        },
        capture,
      ));
      if (signal) aborts.add(signal, current);
      // Headers, body-idle and total deadlines to the millisecond; undici's coarser timers stay as a backstop (phase-deadlines.ts).
      const idleMs = req.timeoutMs;
      const limits = { headersMs: idleMs ?? timeouts.headersMs, bodyMs: idleMs ?? timeouts.bodyMs, totalMs: req.totalMs ?? timeouts.totalMs };
      deadlines = new PhaseDeadlines(clock, limits, (code, ms) => current.abandon(deadlineError(code, ms)));
      if (proxy !== null) await checkProxiedTarget(req.guard, lookup, target);
      // Signed last, as the request leaves: `created` is now, and a fresh nonce every time.
      if (signer !== undefined) sent = Object.assign({}, sent, signer.sign(target));
      (proxy === null ? agentFor(req.guard) : proxyAgentFor(proxy)).dispatch(
        {
          origin: target.origin,
          path: target.pathname + target.search,
          method: req.method ?? 'GET',
          headers: sent,
          ...(req.timeoutMs !== undefined && { headersTimeout: req.timeoutMs, bodyTimeout: req.timeoutMs }),
        },
        current,
      );
      const head = await current.head;
      const setCookie = head.headers['set-cookie'];
      if (setCookie !== undefined && opts.extras) opts.extras.received(target, Array.isArray(setCookie) ? setCookie : [setCookie]);
      const headers = flattenHeaders(head.headers);
      const type = parseContentType(headers['content-type']);
      const isHtml = type !== null && HTML_TYPES.has(type.mime);
      const status = head.status;
      const contentType = type?.mime ?? null;
      const location = status >= 300 && status < 400 ? (headers.location ?? null) : null;
      // Both results are built as literals with one property order (no spreads):
      // this runs for every page, and one object shape keeps readers monomorphic.
      if ((req.read === 'html' && !isHtml && !capture) || req.read === 'none' || req.method === 'HEAD') {
        // Not read, so not counted: a Content-Length is only a claim, and a hostile one can say 200 MB (and a HEAD answer's is the GET body's).
        await current.skipBody(req.method === 'HEAD' ? 0 : contentLengthOf(headers));
        return { url, status, headers, contentType, charset: null, body: null, bytes: 0, truncated: false, location, elapsedMs: clock.now() - started };
      }
      const { data, truncated } = await current.readBody(headers['content-encoding']);
      const digest = req.digest === true ? bodyDigest(data) : undefined;
      if (capture) {
        // An archive keeps bodies of every type; only HTML is decoded to text for the parser.
        // The archived head never holds a credential: what extras added is masked by the rules that added it.
        const shown = opts.extras ? opts.extras.masked(target, sent) : sent;
        const kept = current.captured(data, truncated, requestHead(target, shown));
        const text = isHtml || req.read === 'text' ? decodeBody(data, { headerCharset: type?.charset ?? null, html: isHtml }) : null;
        // A raw read (a rendering browser's subresource) still gets its bytes.
        return {
          url,
          status,
          headers,
          contentType,
          charset: text?.charset ?? null,
          body: text?.text ?? null,
          ...(req.read === 'raw' && { raw: data }),
          bytes: data.length,
          truncated,
          location,
          elapsedMs: clock.now() - started,
          capture: kept,
          digest,
        };
      }
      if (req.read === 'raw') {
        return {
          url,
          status,
          headers,
          contentType,
          charset: null,
          body: null,
          raw: data,
          bytes: data.length,
          truncated,
          location,
          elapsedMs: clock.now() - started,
          digest,
        };
      }
      const { text, charset } = decodeBody(data, { headerCharset: type?.charset ?? null, html: isHtml });
      return { url, status, headers, contentType, charset, body: text, bytes: data.length, truncated, location, elapsedMs: clock.now() - started, digest };
    } catch (err) {
      exchange?.abandon(err);
      // A refusal is the guard's decision, not a transport failure: the caller records it as such.
      const refused = findRefusal(err);
      if (refused) throw refused;
      // Whatever the abort surfaced as (the signal's reason can be any value), it was an abort.
      const code = signal?.aborted ? 'ABORTED' : classifyError(err);
      // undici asserts on some responses it cannot parse (status line "HTTP/1.1 000"): the server's fault, not ours.
      if (code === 'FETCH_FAILED' && exchange?.wasDispatched && isAssertion(err)) {
        throw new FetchError('INVALID_RESPONSE', {
          method: req.method ?? 'GET',
          url: redactCredentials(url),
          cause: err,
          detail: 'invalid HTTP response (a status line or header undici rejects)',
        });
      }
      throw new FetchError(code, { method: req.method ?? 'GET', url: redactCredentials(url), cause: err, detail: describe(code, err, req) });
    } finally {
      deadlines?.stop();
      if (signal && exchange) aborts.delete(signal, exchange);
    }
  }

  // With HTTP/2 on for some origins, their results say which protocol their connection negotiated.
  const fetch =
    protocols === undefined
      ? fetchOnce
      : async (url: string, req: FetchRequest): Promise<FetchResult> => {
          const res = await fetchOnce(url, req);
          const version = protocols.of(new URL(url).origin);
          if (version !== undefined) res.httpVersion = version;
          return res;
        };

  async function close(): Promise<void> {
    await Promise.all([open.close(), ...[...guarded.values(), ...proxied.values()].map((agent) => agent.close())]);
  }

  function resolveHost(host: string): Promise<string | null> {
    const http = new URL(`http://${host}/`);
    // Either scheme through a proxy: the proxy connects, not us (proxy.ts).
    if (opts.extras && (opts.extras.proxyFor(http) !== null || opts.extras.proxyFor(new URL(`https://${host}/`)) !== null)) return Promise.resolve(null);
    const hostname = http.hostname.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(hostname) !== 0) return Promise.resolve(hostname);
    return new Promise((resolve, reject) => {
      const failed = (cause: unknown) => {
        const why = (cause as { code?: unknown } | null)?.code;
        reject(
          new FetchError('DNS_FAILURE', {
            method: 'GET',
            url: http.href,
            cause,
            detail: `${hostname} could not be resolved${typeof why === 'string' ? ` (${why})` : ''}`,
          }),
        );
      };
      try {
        // `all: true` and no family: the shape (and cache entry) of the connect's own question.
        lookup(hostname, { all: true }, (err, answer) => {
          const first = Array.isArray(answer) ? (answer as Array<{ address: string }>)[0] : undefined;
          if (err || first === undefined) failed(err);
          else resolve(first.address);
        });
      } catch (err) {
        failed(err);
      }
    });
  }

  return { fetch, close, resolveHost };
}

const DESCRIBE_LOCAL = 'out of a local resource, not a server failure';

/** The reason an exchange is abandoned with when a deadline passes, with the code classifyError maps to it. */
function deadlineError(code: DeadlineCode, ms: number): Error {
  if (code === 'TOTAL_TIMEOUT') return Object.assign(new Error(`response not complete within ${ms} ms`), { code: TOTAL_TIMEOUT_CODE });
  if (code === 'HEADERS_TIMEOUT') return new errors.HeadersTimeoutError(`no response headers within ${ms} ms`);
  return new errors.BodyTimeoutError(`response body stalled for ${ms} ms`);
}

/** Whether `code` is on the error or anywhere in its cause chain. */
function hasCode(err: unknown, code: string): boolean {
  for (let current = err, depth = 0; current !== null && typeof current === 'object' && depth < 8; depth++) {
    if ((current as { code?: unknown }).code === code) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The local errno (EMFILE, …) behind a LOCAL_RESOURCE failure, for its message. */
function localCode(err: unknown): string | undefined {
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 16; i++) {
    const current = queue[i];
    if (current === null || typeof current !== 'object') continue;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && LOCAL_RESOURCE_CODES.has(code)) return code;
    queue.push((current as { cause?: unknown }).cause);
    const members = (current as { errors?: unknown }).errors;
    if (Array.isArray(members)) queue.push(...(members as unknown[]));
  }
  return undefined;
}

function isAssertion(err: unknown): boolean {
  return hasCode(err, 'ERR_ASSERTION');
}
