/**
 * undici's Client and Pool, closing without making an error. undici ends
 * every `close()` with `destroy()`, and a destroy given no error makes one:
 * a ClientDestroyedError for the pool and for each of its clients, whose
 * stack the socket's own destroy then formats. A crawl closes an origin's
 * pool each time the origin has been idle for a while (fetcher.ts), and a
 * broad crawl has thousands of origins: making and formatting those errors
 * was ~1.5% of a 2,000-host crawl's CPU (BENCHMARKS.md, issue 19).
 *
 * Here a destroy without an error ends with one error made once. After a
 * close no request is left to see it; a bare `destroy()` fails what still
 * waits with it, a ClientDestroyedError as before, only not a fresh one
 * (its stack is where this module loaded). A destroy given its own error
 * is unchanged.
 */
import { Client, Pool, errors, type Dispatcher } from 'undici';

/** The end of every graceful close: made once, its stack formatted once. */
const CLOSED = new errors.ClientDestroyedError();

/**
 * `destroy`'s arguments, with the shared error where none was given (`destroy(callback)` included).
 * Typed as undici's two-argument form; a missing callback stays undefined, and undici answers a promise.
 */
function closedArgs(err: unknown, callback: unknown): [Error | null, () => void] {
  return (typeof err === 'function' ? [CLOSED, err] : [err ?? CLOSED, callback]) as [Error | null, () => void];
}

/** A Client whose close ends without a new error. */
export class QuietClient extends Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one signature for undici's four overloads
  override destroy(err?: unknown, callback?: unknown): any {
    return super.destroy(...closedArgs(err, callback));
  }
}

const quietClient = (origin: string | URL, options: object): Dispatcher => new QuietClient(origin, options);

/** A Pool whose close, and its clients', ends without a new error. Its clients are QuietClients (`options.factory` is not for it). */
export class QuietPool extends Pool {
  constructor(origin: string | URL, options: Omit<Pool.Options, 'factory'> = {}) {
    super(origin, { ...options, factory: quietClient });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one signature for undici's four overloads
  override destroy(err?: unknown, callback?: unknown): any {
    return super.destroy(...closedArgs(err, callback));
  }
}
