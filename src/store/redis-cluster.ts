/**
 * A Redis Cluster (or Valkey cluster) behind the Redis store's one
 * connection seam (`RedisConnection`). Every key of a crawl carries the hash
 * tag `{ID}`, so it lives in ONE slot: its scripts, its record list and its
 * clock are all the master of that slot, and this adapter routes everything
 * there by the crawl's meta key, including the two commands that name no
 * key: SCRIPT LOAD (a script is cached per node, so it is loaded where it
 * will run; after a failover or a resharding the store's NOSCRIPT path loads
 * it again on the slot's new master) and TIME (the claim script decides on
 * that node's clock, so the worker's offset must be measured against it,
 * not a random node's). MOVED and ASK redirects are node-redis's cluster
 * client's.
 *
 * Detected, not configured: `--redis URL` may name any node of a cluster
 * (`INFO cluster` says `cluster_enabled:1`). The other nodes are reached at
 * the addresses the cluster announces, with the URL's user, password and
 * TLS settings.
 */
import type { RedisConnection } from './redis-connection.js';

type RedisModule = typeof import('@redis/client');

/**
 * Whether the server behind a connected standalone client is a cluster node.
 * An ACL user may be refused INFO (it is in @dangerous): then it is taken
 * for a standalone server, and a cluster would answer MOVED to the first
 * command that lands on another node.
 */
export async function isClusterNode(client: { info(section: string): Promise<unknown> }): Promise<boolean> {
  let info: string;
  try {
    info = String(await client.info('cluster'));
  } catch (err) {
    if (/^NOPERM/.test(String((err as Error).message))) return false;
    throw err;
  }
  return /^cluster_enabled:1\s*$/m.test(info);
}

export interface ClusterOptions {
  url: string;
  /** Socket options every node's connection takes (TLS CA, timeouts, reconnect strategy). */
  socket: Record<string, unknown>;
  /** A key of the crawl: its slot's master answers every command. */
  routeKey: string;
  /** Options every command takes (redis-connection.ts: no per-command timeout). */
  commandOptions?: { timeout: number };
}

/** A connected-on-demand cluster client seen as one RedisConnection. */
export function openCluster(redis: RedisModule, opts: ClusterOptions): RedisConnection {
  const u = new URL(opts.url);
  const tls = u.protocol === 'rediss:';
  const cluster = redis.createCluster({
    rootNodes: [{ url: opts.url, socket: { ...opts.socket, tls } }],
    defaults: {
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      socket: { ...opts.socket, tls } as never,
      ...(opts.commandOptions && { commandOptions: opts.commandOptions }),
    },
  });
  const key = opts.routeKey;
  const send = <T>(args: string[]): Promise<T> => cluster.sendCommand<T>(key, false, args);
  return {
    get isOpen() {
      return cluster.isOpen;
    },
    connect: () => cluster.connect(),
    close: () => cluster.close(),
    destroy: () => cluster.destroy(),
    on: (event, listener) => cluster.on(event, listener),
    scriptLoad: (script) => send<string>(['SCRIPT', 'LOAD', script]),
    evalSha: (sha, options) => send<unknown>(['EVALSHA', sha, String(options.keys.length), ...options.keys, ...options.arguments]),
    time: () => send<unknown>(['TIME']),
    rPush: (k, elements) => cluster.rPush(k, elements),
    lRange: (k, start, stop) => cluster.lRange(k, start, stop),
  };
}
