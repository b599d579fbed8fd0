/**
 * A `Fetcher` whose "network" is a script and whose time is the injected
 * clock (normally a FakeClock): the crawl loop's timing, feedback and failure
 * handling can then be tested exactly, without sockets and without sleeping.
 *
 * The model of one request, every step a timer on the clock (even a 0 ms
 * one, so the crawler's microtasks run between steps as they would between
 * I/O events):
 *
 *   fetch() ──connectMs──► written (onDispatched) = ARRIVAL at the server
 *           ──latencyMs──► response headers (onResponse)
 *           ──bodyMs─────► body read, fetch() resolves
 *
 * There is no one-way network delay: the server sees the request the moment
 * it is written, and the client sees the headers the moment they are sent.
 * Failures happen where they would on a real wire: a refused or unresolvable
 * host before anything is written (no arrival), a hanging server after the
 * headers timeout, a slow body after the body timeout, a reset after the
 * server's latency. The abort signal rejects a request at the moment it fires.
 *
 * The server side keeps a request log in the shape of fixtures/web.js's, so
 * its `minGap`, `maxInWindow` and `duplicates` apply unchanged, plus when each
 * answer was sent and finished. Routing mirrors web.js too: the site's
 * server-side `limit` first (robots.txt included), then `robots` (404 unless
 * given), then `handler`, `pages`, `generate`, 404. Every response carries a
 * `Date` header from the server's wall clock, which may be skewed from ours.
 */
import type { Clock } from '../../src/clock.js';
import { parseContentType } from '../../src/fetch/charset.js';
import { FetchError } from '../../src/fetch/fetch-error.js';
import type { Fetcher, FetchRequest, FetchResult } from '../../src/fetch/fetcher.js';
import type { ErrorCode } from '../../src/types.js';
import { createServerLimiter, generatedLinks, type GenerateSpec } from '../../fixtures/web.js';

/** One scripted answer. */
export interface ScriptedResponse {
  /** @default 200 */
  status?: number;
  /** Lowercase names. Merged over `content-type: text/html; charset=utf-8` and the server's `date`. */
  headers?: Record<string, string>;
  /** @default '' */
  body?: string;
  /** Milliseconds from arrival to the response headers. @default the site's, else the fetcher's `latencyMs` */
  latencyMs?: number;
  /** Milliseconds from the headers to the end of the body. @default the site's, else 0 */
  bodyMs?: number;
  /** Accept the request and never answer: the client's headers timeout ends it. */
  hang?: boolean;
  /** After `latencyMs`, the transport fails with this code instead of answering (e.g. CONNECTION_RESET). */
  fail?: ErrorCode;
}

/** What a server-side handler sees of a request. */
export interface ServerRequest {
  host: string;
  /** Path with query. */
  path: string;
  /** Arrival on the clock's monotonic scale (the crawler's `clock.now()`). */
  at: number;
  /** The server's wall clock at arrival: the client's `wallNow()` plus the fetcher's `serverClockSkewMs`. */
  wall: number;
  /** Requests to this host in flight at arrival, this one included. */
  inFlight: number;
  /** Arrivals of this host and path so far, this one included (1 for the first). */
  nth: number;
  entry: ScriptedLogEntry;
}

/** A server-side rate limiter, as fixtures/web.js's `limit`: rejections use no budget (nginx `limit_req`). */
export interface ScriptedLimit {
  perSecond: number;
  status: 429 | 503;
  /** Retry-After on rejections; a function is called per rejection with that request. @default no header */
  retryAfter?: string | ((req: ServerRequest) => string);
  /** `window`: at most `perSecond` arrivals in any 1000 ms; `gap`: 1000/perSecond ms after the last accepted one. @default 'window' */
  mode?: 'window' | 'gap';
}

/** One scripted host. */
export interface ScriptedSite {
  /** `/robots.txt`: a body (served as text/plain), a full response, a function of the request, or null for 404. @default 404 */
  robots?: string | ScriptedResponse | null | ((req: ServerRequest) => ScriptedResponse);
  /** Exact routes by path (with query first, then without). A string is a 200 HTML page. */
  pages?: Record<string, string | ScriptedResponse>;
  /** Generated pages `/p/0 … /p/{pages-1}` with fixtures/web.js's links and HTML; `/` links to `/p/0`. */
  generate?: GenerateSpec;
  /**
   * Dynamic answers, consulted after `limit` and `robots`. `next()` is what
   * `pages`, `generate` or 404 would answer, to return as is or decorate.
   */
  handler?: (req: ServerRequest, next: () => ScriptedResponse) => ScriptedResponse | string;
  limit?: ScriptedLimit;
  /** Default `latencyMs` of this host's answers. */
  latencyMs?: number;
  /** Default `bodyMs` of this host's answers. */
  bodyMs?: number;
  /** Connection set-up before a request is written; a function varies it per request. @default 0 */
  connectMs?: number | ((path: string) => number);
  /** Nothing can be written to this host: every request fails with this code, CONNECT_TIMEOUT after the connect timeout. */
  connectFail?: 'CONNECTION_REFUSED' | 'DNS_FAILURE' | 'TLS_ERROR' | 'CONNECT_TIMEOUT';
}

/** A server-side log entry; structurally a fixtures/web.js RequestLogEntry, plus answer times. */
export interface ScriptedLogEntry {
  host: string;
  path: string;
  method: string;
  /** Arrival (= when the client wrote it), clock.now() scale. */
  at: number;
  userAgent: string | null;
  inFlight: number;
  /** Status sent; null while unanswered, or never (hang, reset, abort). */
  status: number | null;
  /** Request headers the crawl asked for beyond the fetcher's own (conditional ones, --header), lowercased names. */
  headers: Record<string, string>;
  /** When the response headers were sent (and received). */
  respondedAt: number | null;
  /** When the exchange ended for the server: body sent, or the client gave up. */
  endedAt: number | null;
  /** The response headers sent. */
  responseHeaders: Record<string, string> | null;
}

/** A client-side attempt: every fetch() call, including those that never reached a server. */
export interface ScriptedAttempt {
  url: string;
  host: string;
  path: string;
  startedAt: number;
  /** When it was written (its arrival), null if it never was. */
  dispatchedAt: number | null;
  endedAt: number | null;
  /** 'ok' or the FetchError code it failed with; null while running. */
  outcome: 'ok' | ErrorCode | null;
}

export interface ScriptedFetcherOptions {
  clock: Clock;
  sites: Record<string, ScriptedSite>;
  /** As the real fetcher's: connect, headers (written → headers) and body timeouts. */
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  /** Cap on body bytes kept; longer bodies are cut and marked truncated. */
  maxBodyBytes: number;
  /** Default time from arrival to response headers. @default 1 */
  latencyMs?: number;
  /** The server's wall clock minus ours, for Date and HTTP-date Retry-After headers. @default 0 */
  serverClockSkewMs?: number;
  /**
   * DNS: the address each host name resolves to. When given, the fetcher has
   * `resolveHost` (the crawl resolves hosts before scheduling them): a name
   * not listed fails with DNS_FAILURE. @default none: no `resolveHost`
   */
  addresses?: Record<string, string>;
  /** How long `resolveHost` takes; a function varies it per host. @default 0 */
  dnsMs?: number | ((host: string) => number);
}

export interface ScriptedFetcher extends Fetcher {
  /** Host names asked of `resolveHost`, in order. */
  readonly lookups: string[];
  /** Server-side log in arrival order (a copy; entries are live), optionally for one host. */
  requests(host?: string): ScriptedLogEntry[];
  /** Arrival times at one host. */
  arrivals(host: string): number[];
  count(host: string, path?: string): number;
  /** Most requests to `host` in flight at once, as the server saw them. */
  maxInFlight(host: string): number;
  /** Client-side attempts, including those that never arrived. */
  attempts(host?: string): ScriptedAttempt[];
  /** Requests whose fetch() has not settled. */
  readonly pending: number;
  /** The server's wall clock now. */
  serverWall(): number;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const HTML = 'text/html; charset=utf-8';

function notFound(): ScriptedResponse {
  return { status: 404, body: '<!doctype html><title>Not found</title><h1>404 Not found</h1>' };
}

/** fixtures/web.js's generated page HTML (without a port: scripted hosts use default ports). */
function generatedPage(gen: GenerateSpec, host: string, pathname: string): string | null {
  if (pathname === '/') return `<!doctype html><title>${host}</title><a href="/p/0">start</a>`;
  const m = /^\/p\/(0|[1-9]\d*)$/.exec(pathname);
  const page = m ? Number(m[1]) : -1;
  if (page < 0 || page >= gen.pages) return null;
  let items = '';
  for (const l of generatedLinks(gen, page)) items += `<li><a href="${l.host ? `http://${l.host}` : ''}/p/${l.page}">page ${l.page}</a></li>`;
  return `<!doctype html><html><head><title>${host} page ${page}</title></head><body><h1>Page ${page}</h1><ul>${items}</ul></body></html>`;
}

/** An HTTP-date (IMF-fixdate) for epoch milliseconds, truncated to the second as servers send it. */
export function httpDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toUTCString();
}

export function createScriptedFetcher(opts: ScriptedFetcherOptions): ScriptedFetcher {
  const { clock, timeouts } = opts;
  const sites = new Map(Object.entries(opts.sites).map(([h, s]) => [h.toLowerCase(), s]));
  for (const [host, site] of sites) {
    const g = site.generate;
    if (g && !(Number.isInteger(g.pages) && g.pages >= 1 && Number.isInteger(g.linksPerPage) && g.linksPerPage >= 0)) {
      throw new TypeError(`sites["${host}"].generate: expected integer pages >= 1 and linksPerPage >= 0, got ${JSON.stringify(g)}`);
    }
    if (site.limit && !(site.limit.perSecond > 0))
      throw new TypeError(`sites["${host}"].limit.perSecond: expected a number above 0, got ${site.limit.perSecond}`);
  }
  const defaultLatency = opts.latencyMs ?? 1;
  const skew = opts.serverClockSkewMs ?? 0;
  const log: ScriptedLogEntry[] = [];
  const attemptLog: ScriptedAttempt[] = [];
  const inFlight = new Map<string, number>();
  const arrivalsByPath = new Map<string, number>();
  const limiter = createServerLimiter(); // the same limiter as fixtures/web.js
  let pending = 0;
  const serverWall = () => clock.wallNow() + skew;
  // One listener per signal, as the real fetcher's AbortFanout: the crawler
  // shares one signal among all its requests, and EventTarget warns past 10 listeners.
  const watchers = new WeakMap<AbortSignal, Set<() => void>>();
  const abortWatchers = (signal: AbortSignal) => {
    let set = watchers.get(signal);
    if (!set) {
      const created = new Set<() => void>();
      set = created;
      watchers.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          for (const fn of created) fn();
          created.clear();
        },
        { once: true },
      );
    }
    return set;
  };

  /** The server's answer to a request that just arrived. */
  function route(site: ScriptedSite, req: ServerRequest): ScriptedResponse {
    const pathname = req.path.split('?')[0];
    const limit = site.limit;
    if (limit && limiter.overLimit(req.host, limit, req.at)) {
      const retryAfter = typeof limit.retryAfter === 'function' ? limit.retryAfter(req) : limit.retryAfter;
      return {
        status: limit.status,
        body: limit.status === 429 ? 'Too Many Requests' : 'Service Unavailable',
        headers: { 'content-type': 'text/plain', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
      };
    }
    if (pathname === '/robots.txt') {
      const robots = site.robots;
      if (robots === undefined || robots === null) return notFound();
      if (typeof robots === 'string') return { body: robots, headers: { 'content-type': 'text/plain' } };
      const answer = typeof robots === 'function' ? robots(req) : robots;
      return { ...answer, headers: { 'content-type': 'text/plain', ...answer.headers } };
    }
    const next = (): ScriptedResponse => {
      const page = site.pages?.[req.path] ?? site.pages?.[pathname];
      if (page !== undefined) return typeof page === 'string' ? { body: page } : page;
      if (site.generate) {
        const body = generatedPage(site.generate, req.host, pathname);
        if (body !== null) return { body };
      }
      return notFound();
    };
    if (!site.handler) return next();
    const answer = site.handler(req, next);
    return typeof answer === 'string' ? { body: answer } : answer;
  }

  async function fetch(url: string, req: FetchRequest): Promise<FetchResult> {
    const started = clock.now();
    const target = new URL(url);
    const host = target.hostname.toLowerCase();
    const path = target.pathname + target.search;
    const attempt: ScriptedAttempt = { url, host, path, startedAt: started, dispatchedAt: null, endedAt: null, outcome: null };
    attemptLog.push(attempt);
    const { signal } = req;
    const failure = (code: ErrorCode, detail?: string) => new FetchError(code, { method: 'GET', url, ...(detail === undefined ? {} : { detail }) });
    /** Resolves after `ms` on the clock; rejects with ABORTED the moment the signal fires. */
    const wait = (ms: number) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(failure('ABORTED'));
        const onAbort = () => {
          clock.clearTimer(timer);
          reject(failure('ABORTED'));
        };
        const timer = clock.setTimer(() => {
          if (signal) abortWatchers(signal).delete(onAbort);
          resolve();
        }, ms);
        if (signal) abortWatchers(signal).add(onAbort);
      });

    pending++;
    let entry: ScriptedLogEntry | undefined;
    try {
      if (signal?.aborted) throw failure('ABORTED');
      const site = sites.get(host);
      if (!site) {
        await wait(0);
        throw failure('DNS_FAILURE');
      }
      const connectMs = typeof site.connectMs === 'function' ? site.connectMs(path) : (site.connectMs ?? 0);
      if (site.connectFail === 'CONNECT_TIMEOUT' || connectMs > timeouts.connectMs) {
        await wait(timeouts.connectMs);
        throw failure('CONNECT_TIMEOUT', `connect timed out (limit ${timeouts.connectMs} ms)`);
      }
      await wait(connectMs);
      if (site.connectFail) throw failure(site.connectFail);

      // Written: it arrives at the server now.
      const at = clock.now();
      attempt.dispatchedAt = at;
      req.onDispatched?.(at);
      const count = (inFlight.get(host) ?? 0) + 1;
      inFlight.set(host, count);
      const nthKey = `${host} ${path}`;
      const nth = (arrivalsByPath.get(nthKey) ?? 0) + 1;
      arrivalsByPath.set(nthKey, nth);
      entry = {
        host,
        path,
        method: 'GET',
        at,
        userAgent: null,
        inFlight: count,
        status: null,
        headers: { ...req.headers },
        respondedAt: null,
        endedAt: null,
        responseHeaders: null,
      };
      log.push(entry);
      const answer = route(site, { host, path, at, wall: serverWall(), inFlight: count, nth, entry });

      const headersTimeout = req.timeoutMs ?? timeouts.headersMs;
      const latency = answer.latencyMs ?? site.latencyMs ?? defaultLatency;
      if (answer.hang || latency > headersTimeout) {
        await wait(headersTimeout);
        throw failure('HEADERS_TIMEOUT', `no response headers within ${headersTimeout} ms`);
      }
      await wait(latency);
      if (answer.fail) throw failure(answer.fail);

      const status = answer.status ?? 200;
      const headers: Record<string, string> = { 'content-type': HTML, date: httpDate(serverWall()), ...answer.headers };
      entry.status = status;
      entry.respondedAt = clock.now();
      entry.responseHeaders = headers;
      req.onResponse?.(clock.now());

      const bodyTimeout = req.timeoutMs ?? timeouts.bodyMs;
      const bodyMs = answer.bodyMs ?? site.bodyMs ?? 0;
      if (bodyMs > bodyTimeout) {
        await wait(bodyTimeout);
        throw failure('BODY_TIMEOUT', `response body stalled for ${bodyTimeout} ms`);
      }
      await wait(bodyMs);

      const type = parseContentType(headers['content-type']);
      const isHtml = type !== null && HTML_TYPES.has(type.mime);
      const location = status >= 300 && status < 400 ? (headers.location ?? null) : null;
      const raw = Buffer.from(answer.body ?? '', 'utf8');
      const base = { url, status, headers, contentType: type?.mime ?? null, location };
      attempt.outcome = 'ok';
      if (req.read === 'html' && !isHtml) {
        return { ...base, charset: null, body: null, bytes: raw.length, truncated: false, elapsedMs: clock.now() - started };
      }
      const cap = req.maxBodyBytes ?? opts.maxBodyBytes;
      const kept = raw.subarray(0, cap);
      return { ...base, charset: 'utf-8', body: kept.toString('utf8'), bytes: kept.length, truncated: raw.length > cap, elapsedMs: clock.now() - started };
    } catch (err) {
      attempt.outcome = err instanceof FetchError ? err.code : 'FETCH_FAILED';
      throw err;
    } finally {
      pending--;
      attempt.endedAt = clock.now();
      if (entry) {
        entry.endedAt = clock.now();
        inFlight.set(host, (inFlight.get(host) ?? 1) - 1);
      }
    }
  }

  const lookups: string[] = [];
  const addresses = opts.addresses === undefined ? undefined : new Map(Object.entries(opts.addresses).map(([h, a]) => [h.toLowerCase(), a]));
  const resolveHost = async (host: string): Promise<string | null> => {
    const name = new URL(`http://${host}/`).hostname;
    lookups.push(name);
    const ms = typeof opts.dnsMs === 'function' ? opts.dnsMs(name) : (opts.dnsMs ?? 0);
    await new Promise<void>((resolve) => clock.setTimer(resolve, ms));
    const address = addresses!.get(name);
    if (address === undefined)
      throw new FetchError('DNS_FAILURE', { method: 'GET', url: `http://${host}/`, detail: `${name} could not be resolved (ENOTFOUND)` });
    return address;
  };

  return {
    lookups,
    ...(addresses !== undefined && { resolveHost }),
    fetch,
    close: async () => {},
    requests: (host) => (host === undefined ? log.slice() : log.filter((e) => e.host === host)),
    arrivals: (host) => log.filter((e) => e.host === host).map((e) => e.at),
    count: (host, p) => log.filter((e) => e.host === host && (p === undefined || e.path === p)).length,
    maxInFlight: (host) => log.reduce((max, e) => (e.host === host && e.inFlight > max ? e.inFlight : max), 0),
    attempts: (host) => (host === undefined ? attemptLog.slice() : attemptLog.filter((a) => a.host === host)),
    get pending() {
      return pending;
    },
    serverWall,
  };
}
