/**
 * The Redis store's line to Redis: connecting (a cluster node detected and
 * routed, redis-cluster.ts), the scripts loaded, the clock offset's first
 * samples, and every script call with what can go wrong on the way — an
 * outage waited out (redis-outage.ts), a script Redis forgot loaded again,
 * and a crawl whose state is gone refused for good. The store
 * (redis-store.ts) keeps what the answers mean.
 *
 * Contract:
 * - `connect()` is idempotent; Redis unreachable, or connected and silent,
 *   for `connectTimeoutMs` throws one RedisStoreError naming the URL (its
 *   credentials redacted). A client given by the caller is connected if it
 *   is not yet, and never closed or destroyed here.
 * - `run(name, args)` runs a script of redis-scripts.ts by its hash, with
 *   the crawl's meta key and, once `guard(gen)` was called, the crawl's gen
 *   for every script not in UNGUARDED. A lost connection or a transient
 *   error is waited out (the call is sent again with backoff); NOSCRIPT
 *   loads the script again; any other error Redis answers is thrown.
 * - **State lost.** When a script answers CRAWL_STATE_LOST, `onStateLost`
 *   is told once, and from then on every `run` throws that same
 *   RedisStateLostError without sending anything (`lost` holds it).
 * - `close()` stops the watchdog and closes a client of its own (destroyed
 *   if closing takes over 2 s); leases still held stay in Redis and expire.
 */
import { redactUrl } from '../fetch/redact.js';
import type { StoreTimer } from './crawl-store.js';
import { SCRIPTS, scriptSource, STATE_LOST_REPLY, UNGUARDED, type ScriptName } from './redis-scripts.js';
import { isClusterNode, openCluster } from './redis-cluster.js';
import type { RedisClock } from './redis-clock.js';
import { RedisOutage } from './redis-outage.js';
import { RedisStoreError } from './redis-codec.js';

/** The few commands the store sends; node-redis's client has them all. */
export interface RedisConnection {
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  scriptLoad(script: string): Promise<string>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  time(): Promise<unknown>;
  rPush(key: string, elements: string[]): Promise<unknown>;
  lRange(key: string, start: number, stop: number): Promise<unknown>;
}

/**
 * node-redis (6.x) gives every command a 5 s timeout of its own: an
 * AbortSignal.timeout and its listeners per command, ~30 µs of CPU a page
 * in a crawl of many small scripts, and a script still running after 5 s
 * (NEW_PASS over a large crawl) would be given up and sent again while the
 * first one runs. Here a call waits for its answer; an unanswered one is
 * noticed by the outage watch (redis-outage.ts SILENT_MS) and a lost
 * connection fails it at once, so nothing is left waiting unseen.
 */
const NO_COMMAND_TIMEOUT = { timeout: 0 };

/**
 * The crawl's keys are gone from Redis (or belong to a crawl created again
 * under its id): nothing this worker holds can be trusted, and nothing may be
 * written. Not a usage error: the run stopped partway (the CLI exits 5).
 */
export class RedisStateLostError extends RedisStoreError {
  override readonly code = 'REDIS_STATE_LOST';
}

/** How to reach Redis and what to tell about it: the options the Redis store passes on to its link. */
export interface RedisConnectionOptions {
  /** `redis://host:port/db`; ignored when `client` is given. @default redis://127.0.0.1:6379 */
  url?: string;
  /** With a `rediss://` URL: the CA certificates to trust (PEM), instead of Node's bundled roots. @default Node's roots */
  ca?: string[];
  /** A client to use instead of connecting to `url` (connected on open if not yet; never closed by this store). */
  client?: RedisConnection;
  /** Names the crawl: every worker with the same id crawls the same crawl. */
  crawlId: string;
  /** Told how long each script round trip took, in seconds, by script name (metrics). @default none */
  timed?: StoreTimer;
  /** How long to fail trying to reach Redis at open before giving up. @default 5 s */
  connectTimeoutMs?: number;
  /** Connection errors and failed timer ticks (the store goes on; node-redis reconnects). @default ignored */
  onError?: (err: Error) => void;
  /** Redis stopped answering mid-crawl: calls wait and are retried with backoff. Called once per outage. */
  onLost?: (err: Error) => void;
  /** Redis answers again after an outage of `ms`. */
  onReconnected?: (ms: number) => void;
  /** The crawl's state is gone from Redis (see "State lost" above): called once; every later call throws the same error. */
  onStateLost?: (err: RedisStateLostError) => void;
}

export interface RedisLinkOptions extends RedisConnectionOptions {
  /** `crawl:{ID}:`: every key of the crawl starts with it. */
  prefix: string;
  /** The clock offset to sample at connect. */
  clock: RedisClock;
  now: () => number;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

export class RedisLink {
  /** Connected through a cluster client (the URL named a cluster node). */
  cluster = false;
  /** Set when Redis no longer holds this crawl: every `run` throws it. */
  lost: RedisStateLostError | null = null;
  private client: RedisConnection | null;
  private readonly ownsClient: boolean;
  private readonly metaKey: string;
  private readonly shas = new Map<ScriptName, string>();
  /** Riding out a Redis that stops answering (redis-outage.ts). */
  private readonly outage: RedisOutage;
  /** node-redis's class for errors Redis answered (as opposed to a lost connection). */
  private replyError: (new (...args: never[]) => Error) | null = null;
  /** The crawl's gen (see redis-scripts.ts), once open knows it. */
  private gen: string | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private connected = false;
  private closed = false;

  constructor(private readonly opts: RedisLinkOptions) {
    this.client = opts.client ?? null;
    this.ownsClient = !opts.client;
    this.metaKey = `${opts.prefix}meta`;
    this.outage = new RedisOutage({
      closed: () => this.closed,
      isReply: (err) => this.replyError !== null && err instanceof this.replyError,
      onLost: opts.onLost,
      onReconnected: opts.onReconnected,
    });
  }

  /** A client exists (given, or made by `connect`). */
  get opened(): boolean {
    return this.client !== null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** From now on every guarded script checks that the crawl is still `gen`. */
  guard(gen: string): void {
    this.gen = gen;
    this.watchdog ??= setInterval(() => this.outage.watch(), 1_000);
    this.watchdog.unref();
  }

  /** Sends `send` until Redis answers (redis-outage.ts); for calls that are not scripts. */
  untilAnswered<T>(send: () => Promise<T>, first?: Promise<T>): Promise<T> {
    return this.outage.untilAnswered(send, first);
  }

  connection(): RedisConnection {
    if (!this.client) throw new RedisStoreError('the Redis store is not open');
    return this.client;
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    // The client alone: the `redis` package adds the modules' commands (JSON, search, Bloom, time series), 250 more files this store never calls.
    // CommonJS: its exports object is the default export, unbundled (Node) and bundled (esbuild's chunk) alike.
    const redis = (await import('@redis/client')).default;
    this.replyError = redis.ErrorReply;
    let ready = false;
    const url = this.opts.url ?? DEFAULT_URL;
    const socket = {
      ...(this.opts.ca ? { ca: this.opts.ca } : {}),
      connectTimeout: this.opts.connectTimeoutMs ?? 5_000,
      // Unreachable at open: fail at once. Lost later: retry with backoff (commands wait meanwhile).
      reconnectStrategy: (retries: number, cause: Error) => (ready ? Math.min(50 * 2 ** retries, 2_000) : cause),
    };
    if (!this.client) {
      const client = redis.createClient({ url, socket, commandOptions: NO_COMMAND_TIMEOUT });
      client.on('ready', () => (ready = true));
      this.client = client;
    }
    let client = this.client;
    const onError = (err: Error) => this.opts.onError?.(err);
    client.on('error', onError);
    const limitMs = this.opts.connectTimeoutMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    // A server that accepts the connection and never answers (stopped, overloaded) must not hang the start either.
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${limitMs / 1000}s`)), limitMs);
    });
    const setUp = async (): Promise<void> => {
      if (!client.isOpen) await client.connect();
      // A cluster node: the same crawl through a cluster client (redis-cluster.ts).
      if (this.ownsClient && (await isClusterNode(client as unknown as { info(section: string): Promise<unknown> }))) {
        await client.close();
        client = this.client = openCluster(redis, { url, socket, routeKey: this.metaKey, commandOptions: NO_COMMAND_TIMEOUT });
        client.on('error', onError);
        await client.connect();
        ready = true;
        this.cluster = true;
      }
      for (const name of Object.keys(SCRIPTS) as ScriptName[]) this.shas.set(name, await client.scriptLoad(scriptSource(name)));
      // The clock offset: the best of a few samples.
      for (let i = 0; i < 5; i++) {
        const t0 = this.opts.now();
        const [sec, usec] = (await client.time()) as [string, string];
        this.opts.clock.sample(Number(sec) * 1000 + Number(usec) / 1000, t0, this.opts.now());
      }
    };
    try {
      await Promise.race([setUp(), silent]);
      clearTimeout(timer);
      this.connected = true;
    } catch (err) {
      clearTimeout(timer);
      if (this.ownsClient) client.destroy();
      throw new RedisStoreError(`cannot use Redis at ${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Runs a script by its hash, loading it again if Redis forgot it (restarted,
   * SCRIPT FLUSH). A lost connection is waited out: the call is sent again
   * with backoff until Redis answers (node-redis reconnects meanwhile), so
   * the crawl pauses instead of failing — every lease it could not renew
   * meanwhile expires and goes back to the queue, which is what keeps other
   * workers going. An error Redis itself answered is thrown.
   */
  async run(name: ScriptName, args: string[]): Promise<unknown[]> {
    if (this.lost) throw this.lost;
    const { prefix } = this.opts;
    const guarded = this.gen !== null && !UNGUARDED.has(name);
    const options = { keys: [this.metaKey], arguments: [guarded ? `${prefix}\n${this.gen}` : prefix, ...args] };
    const evalOnce = async (): Promise<unknown[]> => {
      const client = this.connection();
      try {
        return (await client.evalSha(this.shas.get(name)!, options)) as unknown[];
      } catch (err) {
        if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
        this.shas.set(name, await client.scriptLoad(scriptSource(name)));
        return (await client.evalSha(this.shas.get(name)!, options)) as unknown[];
      }
    };
    try {
      const timed = this.opts.timed;
      if (!timed) return await this.outage.untilAnswered(evalOnce);
      const began = performance.now();
      const answer = await this.outage.untilAnswered(evalOnce);
      timed(name, (performance.now() - began) / 1000);
      return answer;
    } catch (err) {
      const message = String((err as Error).message);
      if (message.startsWith(STATE_LOST_REPLY)) throw this.stateLost(message.endsWith('replaced'));
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    const client = this.client;
    if (!client || !this.ownsClient || !client.isOpen) return;
    let timeout: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), 2_000)));
    const done = await Promise.race([
      client.close().then(
        () => 'closed' as const,
        () => 'failed' as const,
      ),
      gaveUp,
    ]);
    clearTimeout(timeout);
    if (done !== 'closed') client.destroy();
  }

  /** Redis no longer holds this crawl: remembered, said once, and the error every later call throws. */
  private stateLost(replaced: boolean): RedisStateLostError {
    if (this.lost) return this.lost;
    const where = redactUrl(this.opts.url ?? DEFAULT_URL);
    const why = replaced
      ? 'another crawl was created under its id since'
      : 'its keys were lost: Redis restarted without persistence, was flushed, evicted them or failed over to an empty replica';
    this.lost = new RedisStateLostError(
      `the shared state of Redis crawl "${this.opts.crawlId}" is gone from Redis at ${where} (${why}); this worker stopped and the crawl did NOT finish: start it again under a new --crawl-id (nothing of this one is left to resume)`,
    );
    this.opts.onStateLost?.(this.lost);
    return this.lost;
  }
}
