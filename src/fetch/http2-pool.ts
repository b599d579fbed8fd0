/**
 * HTTP/2 for the origins that ask for it (`http2: true` in their policy):
 * the Agent's factory for an origin's pool. Such a pool offers h2 in TLS's
 * ALPN; when the server picks it, ONE connection carries the host's
 * requests as streams, at most `streams` of them (the host's concurrency)
 * at once; when the server picks HTTP/1.1 the pool behaves like any other,
 * up to `streams` connections. Either way the scheduler above still decides
 * when each request starts: HTTP/2 changes how bytes travel, not how often
 * a host is asked.
 *
 * Why not undici's `allowH2` option alone (undici 7): a Client counts its
 * in-flight requests against `pipelining` (default 1) whatever the
 * protocol, so an h2 connection carries one stream at a time and a Pool
 * opens another connection per concurrent request (nodejs/undici#4143).
 * Setting `pipelining` up front would also turn on HTTP/1.1 pipelining for
 * servers that answer h1. So each connection's protocol is read from the
 * socket's ALPN result and the client's `pipelining` is raised to `streams`
 * only once it is known to be h2.
 *
 * undici keeps an idle h2 session open for as long as the server allows
 * (it pings it every minute); here it is closed after `idleMs` with nothing
 * in flight, as HTTP/1.1 keep-alive sockets are, so the origin's pool is
 * dropped like any idle origin's (fetcher.ts IDLE_ORIGIN_MS).
 */
import { EventEmitter } from 'node:events';
import type { Client, Dispatcher, Pool, buildConnector } from 'undici';
import { leanPool } from './lean-pool.js';
import { QuietClient } from './quiet-close.js';

/** The HTTP version a response came over, as records say it. */
export type HttpVersion = '1.1' | '2';

/** Origins remembered in {@link ProtocolLog}; the oldest is forgotten past this. */
const MAX_REMEMBERED = 4_096;

/** The protocol the latest connection to each h2-enabled origin negotiated. Bounded. */
export class ProtocolLog {
  private readonly byOrigin = new Map<string, HttpVersion>();

  note(origin: string, version: HttpVersion): void {
    this.byOrigin.delete(origin);
    this.byOrigin.set(origin, version);
    if (this.byOrigin.size > MAX_REMEMBERED) this.byOrigin.delete(this.byOrigin.keys().next().value!);
  }

  /** Undefined for an origin never connected to with h2 offered. */
  of(origin: string): HttpVersion | undefined {
    return this.byOrigin.get(origin);
  }
}

export interface Http2PoolOptions {
  /** The stream limit for an https origin that offers h2 ("https://host:port"), or null: HTTP/1.1 only. */
  streamsFor(origin: string): number | null;
  /** The connector for h2 pools; it must offer h2 in ALPN (undici's `allowH2` on buildConnector). */
  connect: buildConnector.connector;
  /** An h2 connection with nothing in flight for this long is closed. */
  idleMs: number;
  /** Where each connection's negotiated protocol is noted. */
  protocols: ProtocolLog;
}

type PoolOptions = Pool.Options & { connect?: unknown };

/** An Agent `factory`: an h2-offering dispatcher for the origins `streamsFor` names, undici's usual Pool for the rest. */
export function http2Factory(opts: Http2PoolOptions): (origin: string | URL, options: object) => Dispatcher {
  return (origin, options) => {
    const key = typeof origin === 'string' ? origin : origin.origin;
    const streams = key.startsWith('https:') ? opts.streamsFor(key) : null;
    // An origin that answered h1 last time gets the ordinary pool straight away.
    if (streams === null || opts.protocols.of(key) === '1.1')
      return leanPool(origin, { ...(options as PoolOptions), ...(streams !== null && { connections: streams }) });
    return new Http2Origin(origin, options, key, streams, opts) as unknown as Dispatcher;
  };
}

const FORWARDED = ['drain', 'connect', 'disconnect', 'connectionError'] as const;

/**
 * One origin's requests: on one client offering h2 until its connection
 * says which protocol the server chose; h2 keeps them all there (`streams`
 * at once), h1 sends later requests to an ordinary pool of `streams - 1`
 * connections beside it. A Pool cannot do this by itself: it opens another
 * connection for every request that arrives while the first is still
 * connecting, before anyone knows the server multiplexes.
 * The Agent sees one dispatcher (what it calls: dispatch, close, destroy,
 * destroyed, and the events of both).
 */
class Http2Origin extends EventEmitter {
  private readonly first: Client;
  private h1: Pool | null = null;
  private version: HttpVersion | undefined;

  constructor(
    private readonly origin: string | URL,
    private readonly options: PoolOptions,
    key: string,
    private readonly streams: number,
    opts: Http2PoolOptions,
  ) {
    super();
    this.first = h2Client(origin, options, key, streams, opts, (version) => (this.version = version));
    this.forward(this.first);
  }

  private forward(dispatcher: Client | Pool): void {
    for (const event of FORWARDED) (dispatcher as EventEmitter).on(event, (...args: unknown[]) => this.emit(event, ...args));
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.version !== '1.1' || this.streams === 1) return this.first.dispatch(options, handler);
    if (this.h1 === null) {
      this.h1 = leanPool(this.origin, { ...this.options, connections: this.streams - 1 });
      this.forward(this.h1);
    }
    return this.h1.dispatch(options, handler);
  }

  close(): Promise<void> {
    return Promise.all([this.first.close(), this.h1?.close()]).then(() => undefined);
  }

  destroy(err?: Error | null): Promise<void> {
    return Promise.all([this.first.destroy(err ?? null), this.h1?.destroy(err ?? null)]).then(() => undefined);
  }

  get destroyed(): boolean {
    return this.first.destroyed;
  }
}

/** One connection that becomes a `streams`-wide h2 session if the server chooses h2, else an ordinary keep-alive socket. */
function h2Client(
  origin: string | URL,
  options: Client.Options,
  key: string,
  streams: number,
  opts: Http2PoolOptions,
  learned: (v: HttpVersion) => void,
): Client {
  let negotiated: HttpVersion = '1.1';
  const connect: buildConnector.connector = (connectOptions, callback) =>
    opts.connect(connectOptions, (err, socket) => {
      if (socket) {
        negotiated = (socket as { alpnProtocol?: string | false }).alpnProtocol === 'h2' ? '2' : '1.1';
        opts.protocols.note(key, negotiated);
        if (negotiated === '2') closeWhenIdle(socket, client, opts.idleMs);
      }
      (callback as (e: Error | null, s: typeof socket) => void)(err, socket);
    });
  // Requests that arrive while it connects queue here (`pipelining` is what undici counts them
  // against); nothing is written before the 'connect' below has set the real value, so an h1
  // server is never sent pipelined requests.
  // Closed without a new error, like the HTTP/1.1 pools (quiet-close.ts).
  const client = new QuietClient(origin, { ...options, connect, allowH2: true, maxConcurrentStreams: streams, pipelining: streams });
  // 'connect' comes after undici has set up the protocol and before it sends anything queued.
  client.on('connect', () => {
    client.pipelining = negotiated === '2' ? streams : 1;
    learned(negotiated);
  });
  return client;
}

/** Closes an h2 connection once `client` has had nothing queued or in flight for `idleMs`. */
function closeWhenIdle(socket: { destroy(err: Error): void; once(event: 'close', fn: () => void): void }, client: Client, idleMs: number): void {
  let busyAt = Date.now();
  const timer = setInterval(
    () => {
      const now = Date.now();
      if (client.stats.size > 0) busyAt = now;
      // With an error: undici's h2 session close handler reads it, and throws on a socket destroyed without one (undici 7.30).
      else if (now - busyAt >= idleMs) socket.destroy(new IdleSessionError());
    },
    Math.max(50, idleMs / 4),
  );
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}

/** The reason an idle h2 connection is closed with; no request is in flight then. */
class IdleSessionError extends Error {
  readonly code = 'IDLE_SESSION_CLOSED';
  constructor() {
    super('idle HTTP/2 connection closed');
  }
}
