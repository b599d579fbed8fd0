/**
 * The one error a fetch rejects with, and the mapping from whatever undici,
 * Node's net/dns/tls layers or the body decoders threw to a stable
 * {@link ErrorCode}. Classification looks only at `code` properties (walking
 * `cause` chains and AggregateError members), never at messages, which change
 * between versions.
 *
 * HTTP statuses are data and never become a FetchError.
 */
import { errors } from 'undici';
import type { ErrorCode } from '../types.js';
import { PROXY_STATUS_CODE } from './proxy-tunnel.js';

/** Error code used by body.ts for anything the content decoders reject. */
export const CONTENT_DECODING_CODE = 'ERR_CONTENT_DECODING';

/** Error code of the reason the fetcher abandons a response with when its total deadline passes. */
export const TOTAL_TIMEOUT_CODE = 'ERR_CRAWL_TOTAL_TIMEOUT';

const DESCRIPTIONS: Record<ErrorCode, string> = {
  CONNECTION_REFUSED: 'connection refused',
  CONNECTION_RESET: 'connection reset',
  CONNECT_TIMEOUT: 'connect timed out',
  HEADERS_TIMEOUT: 'timed out waiting for response headers',
  BODY_TIMEOUT: 'timed out waiting for response body',
  TOTAL_TIMEOUT: 'response not complete within the total deadline',
  DNS_FAILURE: 'host name could not be resolved',
  TLS_ERROR: 'TLS handshake or certificate failure',
  INVALID_RESPONSE: 'invalid HTTP response',
  DECODE_ERROR: 'response body could not be decoded',
  REDIRECT_LIMIT: 'too many redirects',
  REDIRECT_INVALID: 'invalid redirect target',
  ABORTED: 'aborted',
  THROTTLED: 'still throttled by the server after every retry',
  LOCAL_RESOURCE: 'out of a local resource (file descriptors, buffers or ports), not a server failure',
  PROXY_ERROR: 'the proxy refused to open a tunnel to the host',
  FETCH_FAILED: 'request failed',
};

export interface FetchErrorOptions {
  method: string;
  url: string;
  /** What went wrong, as thrown by the transport; kept for logs and debugging. */
  cause?: unknown;
  /** Replaces the generic description after "failed: ", e.g. "timed out waiting for response headers (5000 ms)". */
  detail?: string;
}

/** A transport-level failure of one request. `code` is stable; `message` is for humans. */
export class FetchError extends Error {
  override readonly name = 'FetchError';
  readonly code: ErrorCode;
  readonly url: string;
  override readonly cause: unknown;

  constructor(code: ErrorCode, options: FetchErrorOptions) {
    super(`${options.method} ${options.url} failed: ${options.detail ?? DESCRIPTIONS[code]}`);
    this.code = code;
    this.url = options.url;
    this.cause = options.cause;
  }
}

/** Exact transport codes; anything not listed falls through to the prefix rules below. */
const BY_CODE: Record<string, ErrorCode> = {
  UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  ETIMEDOUT: 'CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT',
  ECONNREFUSED: 'CONNECTION_REFUSED',
  ECONNRESET: 'CONNECTION_RESET',
  EPIPE: 'CONNECTION_RESET',
  UND_ERR_SOCKET: 'CONNECTION_RESET',
  ENOTFOUND: 'DNS_FAILURE',
  EAI_AGAIN: 'DNS_FAILURE',
  EAI_FAIL: 'DNS_FAILURE',
  EAI_NONAME: 'DNS_FAILURE',
  EAI_NODATA: 'DNS_FAILURE',
  UND_ERR_ABORTED: 'ABORTED',
  UND_ERR_ABORT: 'ABORTED',
  ABORT_ERR: 'ABORTED',
  EPROTO: 'TLS_ERROR',
  UND_ERR_HEADERS_OVERFLOW: 'INVALID_RESPONSE',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'INVALID_RESPONSE',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'INVALID_RESPONSE',
  UND_ERR_RESPONSE: 'INVALID_RESPONSE',
  UND_ERR_NOT_SUPPORTED: 'INVALID_RESPONSE',
  [CONTENT_DECODING_CODE]: 'DECODE_ERROR',
  [TOTAL_TIMEOUT_CODE]: 'TOTAL_TIMEOUT',
  [PROXY_STATUS_CODE]: 'PROXY_ERROR',
};

/**
 * Our process or host ran out of something: per-process file descriptors
 * (EMFILE), the system file table (ENFILE), buffers or memory, a local port
 * to connect from (EADDRNOTAVAIL). The server is not to blame.
 */
export const LOCAL_RESOURCE_CODES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL', 'EAI_MEMORY']);
for (const code of LOCAL_RESOURCE_CODES) BY_CODE[code] = 'LOCAL_RESOURCE';

/** Certificate and handshake failures: OpenSSL verify codes and Node's TLS/SSL error families. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)|_CERT(_|$)/;

function codeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Maps one code to an ErrorCode, or undefined when it says nothing specific. */
function classifyCode(code: string): ErrorCode | undefined {
  const exact = BY_CODE[code];
  if (exact) return exact;
  if (TLS_CODE.test(code)) return 'TLS_ERROR';
  // llhttp parser failures (HPE_INVALID_CONSTANT, HPE_INVALID_CHUNK_SIZE, ...).
  if (code.startsWith('HPE_')) return 'INVALID_RESPONSE';
  return undefined;
}

/**
 * The stable code for a transport failure. Looks at the error itself, then its
 * `cause` chain and AggregateError members (Node's happy-eyeballs connect
 * reports one error per address), so wrapped errors classify by their origin.
 * The first specific code found wins, except that LOCAL_RESOURCE anywhere
 * wins over everything: when one address of a happy-eyeballs connect failed
 * with EMFILE, the server may well be fine, and it must not be blamed.
 */
export function classifyError(err: unknown): ErrorCode {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  let first: ErrorCode | undefined;
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const found = classifyOne(current);
    if (found === 'LOCAL_RESOURCE') return found;
    first ??= found;
    queue.push((current as { cause?: unknown }).cause);
    const members = (current as { errors?: unknown }).errors;
    if (Array.isArray(members)) queue.push(...(members as unknown[]));
  }
  return first ?? 'FETCH_FAILED';
}

function classifyOne(current: object): ErrorCode | undefined {
  const code = codeOf(current);
  const found = code === undefined ? undefined : classifyCode(code);
  if (found) return found;
  // undici 7 leaves `code` undefined on llhttp failures (it looks the numeric
  // error up in a name-to-number table), so the parser error is known by its class.
  if (current instanceof errors.HTTPParserError) return 'INVALID_RESPONSE';
  // DOMException('...', 'AbortError') from AbortSignal.abort() has a numeric code.
  if ((current as { name?: unknown }).name === 'AbortError') return 'ABORTED';
  return undefined;
}

/** A failure's stable code: a FetchError's own; anything else is FETCH_FAILED. */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof FetchError ? err.code : 'FETCH_FAILED';
}
