/**
 * A proxy's answer to CONNECT, as data. undici's ProxyAgent turns any answer
 * but 200 into a RequestAbortedError (code UND_ERR_ABORTED), which reads like
 * a request the crawl cancelled itself; the status (407: the proxy wants
 * credentials; 403: its rules refuse the target; 502: it could not reach it)
 * is only in the message. The client ProxyAgent opens tunnels with is made
 * here instead, so a refused tunnel fails with its own code and the status as
 * a number: fetch-error.ts classifies it as PROXY_ERROR.
 */
import { Pool, type Dispatcher } from 'undici';

/** The transport code of a refused tunnel (fetch-error.ts maps it to PROXY_ERROR). */
export const PROXY_STATUS_CODE = 'ERR_CRAWL_PROXY_STATUS';

/** The proxy answered CONNECT with something other than 200. */
export class ProxyTunnelError extends Error {
  override readonly name = 'ProxyTunnelError';
  readonly code = PROXY_STATUS_CODE;

  constructor(readonly status: number) {
    super(`the proxy answered ${status} to CONNECT${status === 407 ? ' (Proxy Authentication Required: the proxy URL needs a user name and password)' : ''}`);
  }
}

/** What a FetchError of code PROXY_ERROR says after "failed: ": the refused tunnel's message, found in `err`'s cause chain. */
export function describeProxyStatus(err: unknown): string | undefined {
  for (let current = err, depth = 0; typeof current === 'object' && current !== null && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof ProxyTunnelError) return current.message;
  }
  return undefined;
}

/**
 * ProxyAgent's `clientFactory`: a Pool to the proxy whose `connect()` (the
 * CONNECT request, awaited as a promise by ProxyAgent) rejects with a
 * ProxyTunnelError on any answer but 200, after closing that socket, as
 * ProxyAgent itself would.
 */
export function tunnelClientFactory(origin: URL, opts: object): Dispatcher {
  const pool = new Pool(origin, opts);
  // Bound, not wrapped: undici may call it with a callback as well, which a wrapper would drop.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  const connect = pool.connect.bind(pool) as (options: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData>;
  const checked = async (options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
    const answer = await connect(options);
    if (answer.statusCode !== 200) {
      answer.socket.on('error', () => {}).destroy();
      throw new ProxyTunnelError(answer.statusCode);
    }
    return answer;
  };
  // Both of connect()'s forms, though ProxyAgent awaits the promise one.
  const both = (options: Dispatcher.ConnectOptions, callback?: (err: Error | null, data: Dispatcher.ConnectData | null) => void) => {
    if (typeof callback !== 'function') return checked(options);
    checked(options).then(
      (data) => callback(null, data),
      (err: Error) => callback(err, null),
    );
  };
  pool.connect = both as Pool['connect'];
  return pool;
}
