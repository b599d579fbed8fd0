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
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { AbortFanout } from './abort-fanout.js';
import { decodeBody, parseContentType } from './charset.js';
import type { Clock } from '../clock.js';
import { Exchange, type IncomingHttpHeaders } from './exchange.js';
import { classifyError, FetchError } from './fetch-error.js';
import type { ErrorCode } from '../types.js';

export interface FetcherOptions {
  /** Sent as the User-Agent header on every request. */
  userAgent: string;
  /** connectMs: TCP (+TLS) connect; headersMs: from request written to response headers; bodyMs: longest silence between body chunks. */
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  /** Cap on DECOMPRESSED body bytes kept per response; the rest is not read. */
  maxBodyBytes: number;
  /** Source of `elapsedMs` and `onDispatched` timestamps. */
  clock: Clock;
  /** Max sockets per origin in the keep-alive pool (the scheduler limits concurrency itself). @default 64 */
  connectionsPerOrigin?: number;
}

export interface FetchRequest {
  /** 'html' reads and decodes the body only for HTML content types (text/html, application/xhtml+xml); other bodies are discarded without reading them fully. 'text' reads any body as text (robots.txt). */
  read: 'html' | 'text';
  /** Overrides the fetcher's cap (robots.txt uses its own). @default FetcherOptions.maxBodyBytes */
  maxBodyBytes?: number;
  signal?: AbortSignal;
  /** Called with clock.now() at the moment the request is actually written to a socket (after connect) — the scheduler times politeness gaps from this. Called at most once. */
  onDispatched?: (at: number) => void;
  /** Called with clock.now() when the response headers arrive: proof the server has the request by then. Called at most once. */
  onResponse?: (at: number) => void;
  /** Overrides the fetcher's headers and body timeouts for this request (robots.txt uses shorter ones). @default FetcherOptions.timeouts */
  timeoutMs?: number;
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
  /** Decoded body bytes read, or Content-Length when the body was skipped (0 if unknown). */
  bytes: number;
  /** The body was cut at the cap. */
  truncated: boolean;
  /** Raw Location header of a 3xx response, unresolved. */
  location: string | null;
  /** From the fetch() call until the body was done. */
  elapsedMs: number;
}

export interface Fetcher {
  fetch(url: string, req: FetchRequest): Promise<FetchResult>;
  /** Closes the pool after in-flight requests finish. */
  close(): Promise<void>;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = { html: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', text: 'text/plain,*/*' } as const;

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
  expect(Number.isSafeInteger(opts.maxBodyBytes) && opts.maxBodyBytes >= 0, 'maxBodyBytes', 'an integer from 0 and up', opts.maxBodyBytes);
  const perOrigin = opts.connectionsPerOrigin;
  expect(perOrigin === undefined || (Number.isSafeInteger(perOrigin) && perOrigin >= 1), 'connectionsPerOrigin', 'an integer from 1 and up', perOrigin);
}

/** Creates a fetcher with its own keep-alive pool. Options are validated here, once. */
export function createFetcher(opts: FetcherOptions): Fetcher {
  validate(opts);
  const { clock, timeouts } = opts;
  const agent = new Agent({
    connections: opts.connectionsPerOrigin ?? 64,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    connect: { timeout: timeouts.connectMs, lookup: lookupWithLocalhost },
  });
  // undici does not modify request headers, so each kind of read shares one object.
  const requestHeaders = {
    html: { 'user-agent': opts.userAgent, accept: ACCEPT.html, 'accept-encoding': 'gzip, deflate, br' },
    text: { 'user-agent': opts.userAgent, accept: ACCEPT.text, 'accept-encoding': 'gzip, deflate, br' },
  };
  const aborts = new AbortFanout();

  function describe(code: ErrorCode, err: unknown, timeoutMs?: number): string | undefined {
    if (code === 'CONNECT_TIMEOUT') return `connect timed out (limit ${timeouts.connectMs} ms)`;
    if (code === 'HEADERS_TIMEOUT') return `no response headers within ${timeoutMs ?? timeouts.headersMs} ms`;
    if (code === 'BODY_TIMEOUT') return `response body stalled for ${timeoutMs ?? timeouts.bodyMs} ms`;
    if ((code === 'DECODE_ERROR' || code === 'FETCH_FAILED') && err instanceof Error) return err.message;
    return undefined;
  }

  async function fetch(url: string, req: FetchRequest): Promise<FetchResult> {
    const started = clock.now();
    const signal = req.signal;
    let exchange: Exchange | undefined;
    try {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const target = new URL(url);
      const { onDispatched, onResponse } = req;
      exchange = new Exchange(req.maxBodyBytes ?? opts.maxBodyBytes, {
        dispatched: onDispatched && (() => onDispatched(clock.now())),
        responded: onResponse && (() => onResponse(clock.now())),
      });
      if (signal) aborts.add(signal, exchange);
      agent.dispatch(
        {
          origin: target.origin,
          path: target.pathname + target.search,
          method: 'GET',
          headers: requestHeaders[req.read],
          ...(req.timeoutMs !== undefined && { headersTimeout: req.timeoutMs, bodyTimeout: req.timeoutMs }),
        },
        exchange,
      );
      const head = await exchange.head;
      const headers = flattenHeaders(head.headers);
      const type = parseContentType(headers['content-type']);
      const isHtml = type !== null && HTML_TYPES.has(type.mime);
      const status = head.status;
      const contentType = type?.mime ?? null;
      const location = status >= 300 && status < 400 ? (headers.location ?? null) : null;
      // Both results are built as literals with one property order (no spreads):
      // this runs for every page, and one object shape keeps readers monomorphic.
      if (req.read === 'html' && !isHtml) {
        await exchange.skipBody(contentLengthOf(headers));
        const bytes = contentLengthOf(headers);
        return { url, status, headers, contentType, charset: null, body: null, bytes, truncated: false, location, elapsedMs: clock.now() - started };
      }
      const { data, truncated } = await exchange.readBody(headers['content-encoding']);
      const { text, charset } = decodeBody(data, { headerCharset: type?.charset ?? null, html: isHtml });
      return { url, status, headers, contentType, charset, body: text, bytes: data.length, truncated, location, elapsedMs: clock.now() - started };
    } catch (err) {
      exchange?.abandon(err);
      // Whatever the abort surfaced as (the signal's reason can be any value), it was an abort.
      const code = signal?.aborted ? 'ABORTED' : classifyError(err);
      throw new FetchError(code, { method: 'GET', url, cause: err, detail: describe(code, err, req.timeoutMs) });
    } finally {
      if (signal && exchange) aborts.delete(signal, exchange);
    }
  }

  return { fetch, close: () => agent.close() };
}
