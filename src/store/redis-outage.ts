/**
 * Riding out a Redis that stops answering, for the Redis store: a call is
 * sent again with backoff until Redis answers (node-redis reconnects
 * meanwhile), so the crawl pauses instead of failing.
 *
 * Contract:
 * - `untilAnswered(send, first?)` waits for `send`'s answer (`first`: a send
 *   already under way), sending again after 100 ms, 200 ms, … (at most 5 s)
 *   while the connection is lost or Redis answers a transient error
 *   (TRANSIENT_REPLY); any other error Redis answers is thrown, and so is
 *   every error once the store is closed.
 * - The outage is told once when it begins (`onLost`: the first failed call,
 *   or `watch` finding a call unanswered for SILENT_MS — a stopped server
 *   keeps its sockets open) and once when Redis answers again
 *   (`onReconnected`, with how long it lasted).
 * - `watch` is the store's watchdog tick (once a second).
 */

/**
 * Errors Redis answers while it cannot serve yet, waited out like a lost
 * connection: LOADING (restarted, reading its AOF or RDB back), BUSY (a
 * script ran long), MASTERDOWN, TRYAGAIN and CLUSTERDOWN (a failover or
 * resharding under way). Any other error Redis answers is thrown.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/;
/** A call unanswered this long is reported as Redis lost. */
const SILENT_MS = 5_000;

export interface RedisOutageOptions {
  /** The store was closed: nothing is sent again. */
  closed(): boolean;
  /** An error Redis itself answered (node-redis's ErrorReply), as opposed to a lost connection. */
  isReply(err: unknown): boolean;
  /** Redis stopped answering (said once per outage). @default none */
  onLost?: (err: Error) => void;
  /** Redis answers again after `ms` ms. @default none */
  onReconnected?: (ms: number) => void;
}

export class RedisOutage {
  /** Calls waiting for an answer: call number → when sent (epoch ms), oldest first. */
  private readonly calls = new Map<number, number>();
  private callSeq = 0;
  /** Since when (epoch ms) Redis has not answered; null while it does. */
  private lostSince: number | null = null;

  constructor(private readonly opts: RedisOutageOptions) {}

  async untilAnswered<T>(send: () => Promise<T>, first?: Promise<T>): Promise<T> {
    let pending = first ?? send();
    for (let attempt = 0; ; attempt++) {
      const call = ++this.callSeq;
      this.calls.set(call, Date.now());
      try {
        const reply = await pending;
        if (this.lostSince !== null) this.reconnected();
        return reply;
      } catch (err) {
        if (this.opts.closed() || (this.opts.isReply(err) && !TRANSIENT_REPLY.test((err as Error).message))) throw err;
        if (this.lostSince === null) {
          this.lostSince = Date.now();
          this.opts.onLost?.(err as Error);
        }
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5_000)));
        pending = send();
      } finally {
        this.calls.delete(call);
      }
    }
  }

  /** A call unanswered for SILENT_MS means Redis is gone or stuck: said once. */
  watch(): void {
    if (this.lostSince !== null) return;
    const oldest = this.calls.values().next().value;
    if (oldest !== undefined && Date.now() - oldest > SILENT_MS) {
      this.lostSince = oldest;
      this.opts.onLost?.(new Error(`no answer for ${Math.round((Date.now() - oldest) / 1000)}s`));
    }
  }

  private reconnected(): void {
    const ms = Date.now() - this.lostSince!;
    this.lostSince = null;
    this.opts.onReconnected?.(ms);
  }
}
