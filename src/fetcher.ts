/**
 * One HTTP GET over undici, and nothing more: no redirects followed, no
 * retries, no waiting for politeness. The scheduler decides when a request may
 * start and what to do with the answer; this module performs it on a shared
 * keep-alive Agent, enforces connect/headers/body timeouts and the decoded
 * body cap, and turns transport failures into FetchError with a stable code.
 * HTTP statuses, 4xx and 5xx included, are returned as data.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { readDecodedBody } from './body.js';
import { decodeBody, parseContentType } from './charset.js';
import type { Clock } from './clock.js';
import { classifyError, FetchError } from './fetch-error.js';
import type { ErrorCode } from './types.js';

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

type IncomingHttpHeaders = Dispatcher.ResponseData['headers'];

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = { html: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', text: 'text/plain,*/*' } as const;
/**
 * A skipped body up to this size is drained so its socket can be reused (a
 * new connection costs more than a few KB); larger ones are cut off at once.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * undici waits one full event-loop turn (a setImmediate) after a response ends
 * before it marks the socket free. A caller that fetches the same origin again
 * straight away would otherwise find the socket "busy" and make the pool open
 * a second connection; yielding one turn here lets the keep-alive socket be
 * reused.
 */
function afterSocketRelease(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

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

/**
 * Wraps a dispatch handler to report when undici starts the request on a
 * connected socket: onRequestStart runs in the HTTP/1 writer right before the
 * request head is written, not when the request is queued in the pool.
 */
class DispatchNotifier implements Dispatcher.DispatchHandler {
  private fired = false;
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly notify: () => void,
  ) {}
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
    // The inner handler aborts here when the caller's signal already fired; nothing is written then.
    if (controller.aborted || this.fired) return;
    this.fired = true;
    this.notify();
  }
  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.inner.onRequestUpgrade?.(...args);
  }
  onResponseStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>): void {
    this.inner.onResponseStart?.(...args);
  }
  onResponseData(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseData']>>): void {
    this.inner.onResponseData?.(...args);
  }
  onResponseEnd(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>): void {
    this.inner.onResponseEnd?.(...args);
  }
  onResponseError(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseError']>>): void {
    this.inner.onResponseError?.(...args);
  }
}

function flattenHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  // fromEntries defines own properties, so a "__proto__" header is just a header.
  return Object.fromEntries(
    Object.entries(raw)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]),
  );
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

  function describe(code: ErrorCode, err: unknown): string | undefined {
    if (code === 'CONNECT_TIMEOUT') return `connect timed out (limit ${timeouts.connectMs} ms)`;
    if (code === 'HEADERS_TIMEOUT') return `no response headers within ${timeouts.headersMs} ms`;
    if (code === 'BODY_TIMEOUT') return `response body stalled for ${timeouts.bodyMs} ms`;
    if ((code === 'DECODE_ERROR' || code === 'FETCH_FAILED') && err instanceof Error) return err.message;
    return undefined;
  }

  async function fetch(url: string, req: FetchRequest): Promise<FetchResult> {
    const started = clock.now();
    const onDispatched = req.onDispatched;
    const dispatcher = onDispatched
      ? agent.compose((dispatch) => (options, handler) =>
          dispatch(options, new DispatchNotifier(handler, () => onDispatched(clock.now()))))
      : agent;
    try {
      const res = await request(url, {
        dispatcher,
        method: 'GET',
        headers: { 'user-agent': opts.userAgent, accept: ACCEPT[req.read], 'accept-encoding': 'gzip, deflate, br' },
        signal: req.signal,
      });
      const headers = flattenHeaders(res.headers);
      const type = parseContentType(headers['content-type']);
      const isHtml = type !== null && HTML_TYPES.has(type.mime);
      const redirect = res.statusCode >= 300 && res.statusCode < 400;
      const base = {
        url,
        status: res.statusCode,
        headers,
        contentType: type?.mime ?? null,
        location: redirect ? (headers.location ?? null) : null,
      };

      if (req.read === 'html' && !isHtml) {
        await res.body.dump({ limit: DRAIN_LIMIT_BYTES });
        await afterSocketRelease();
        const skipped = { charset: null, body: null, bytes: contentLengthOf(headers), truncated: false };
        return { ...base, ...skipped, elapsedMs: clock.now() - started };
      }

      const cap = req.maxBodyBytes ?? opts.maxBodyBytes;
      const { data, truncated } = await readDecodedBody(res.body, headers['content-encoding'], cap);
      if (!truncated) await afterSocketRelease();
      const { text, charset } = decodeBody(data, { headerCharset: type?.charset ?? null, html: isHtml });
      return { ...base, charset, body: text, bytes: data.length, truncated, elapsedMs: clock.now() - started };
    } catch (err) {
      // Whatever the abort surfaced as (the signal's reason can be any value), it was an abort.
      const code = req.signal?.aborted ? 'ABORTED' : classifyError(err);
      throw new FetchError(code, { method: 'GET', url, cause: err, detail: describe(code, err) });
    }
  }

  return { fetch, close: () => agent.close() };
}
