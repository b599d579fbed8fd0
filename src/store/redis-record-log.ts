/**
 * The record log of a crawl shared through Redis (`crawl report --redis`):
 * every worker's records in one list, `P records`, as JSON.
 *
 * Contract:
 * - `append` buffers a record; the buffer goes out as one RPUSH per LOG_BATCH
 *   records, or after LOG_FLUSH_MS, or at once with `send` (the store calls
 *   it before a completion, on the same connection, so a URL's record
 *   reaches Redis before its completion does). Sends are retried with the
 *   store's backoff while Redis is lost (`untilAnswered`), in order.
 * - The writer is never awaited unless LOG_HIGH_WATER records are sent and
 *   unacknowledged: then `append` answers a promise, so a Redis that does
 *   not keep up slows the writer instead of growing the buffer.
 * - Once the crawl's state is lost (`lost()`), buffered records are dropped:
 *   the list went with the crawl.
 * - `flush` sends what is buffered and waits for every send, at most
 *   FLUSH_LIMIT_MS (a lost Redis must not hold a worker's exit); what was not
 *   acknowledged by then is reported through `onError`.
 * - `read` yields every record of the crawl in order, this worker's own
 *   included (sent first), LOG_READ_BATCH per LRANGE.
 */
import { RedisStoreError } from './redis-codec.js';

/** Records per RPUSH of the record log, at most. */
const LOG_BATCH = 500;
/** Records wait at most this long for a batch (unless a `complete` sends them sooner). */
const LOG_FLUSH_MS = 50;
/** Records sent and not yet acknowledged past which `append` makes the writer wait. */
const LOG_HIGH_WATER = 20_000;
/** Records read per LRANGE. */
const LOG_READ_BATCH = 2_000;
/** How long `flush` waits for unacknowledged sends. */
const FLUSH_LIMIT_MS = 10_000;

export interface RedisRecordLogOptions {
  /** The list's key, `crawl:{ID}:records`. */
  key: string;
  /** The store's connection (throws when it is not open). */
  connection(): { rPush(key: string, elements: string[]): Promise<unknown>; lRange(key: string, start: number, stop: number): Promise<unknown> };
  /** The store's retry loop: resends with backoff while Redis does not answer, reporting the outage. */
  untilAnswered<T>(send: () => Promise<T>, first?: Promise<T>): Promise<T>;
  /** The crawl's state is gone from Redis. */
  lost(): boolean;
  onError(err: Error): void;
}

export class RedisRecordLog {
  /** Records not sent yet (JSON), the flush timer, sends in order, and how many are unacknowledged. */
  private buffer: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(private readonly opts: RedisRecordLogOptions) {}

  append(record: object): Promise<void> | undefined {
    this.buffer.push(JSON.stringify(record));
    if (this.buffer.length >= LOG_BATCH) this.send();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.send(), LOG_FLUSH_MS);
      this.timer.unref();
    }
    return this.pending > LOG_HIGH_WATER ? this.chain : undefined;
  }

  /** Sends the buffered records now (one RPUSH); the send is retried with backoff while Redis is lost. */
  send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return;
    if (this.opts.lost()) {
      // Nowhere to keep them: the crawl's list went with its state.
      this.buffer = [];
      return;
    }
    const batch = this.buffer;
    this.buffer = [];
    this.pending += batch.length;
    const { key } = this.opts;
    // Sent now, not when the chain gets to it: a URL's record reaches Redis before its completion does.
    const first = this.opts.connection().rPush(key, batch);
    first.catch(() => {}); // handled (retried) in the chain
    this.chain = this.chain.then(async () => {
      try {
        await this.opts.untilAnswered(() => this.opts.connection().rPush(key, batch), first);
      } catch (err) {
        this.opts.onError(new RedisStoreError(`${batch.length} record(s) not kept for the report: ${(err as Error).message}`, { cause: err }));
      } finally {
        this.pending -= batch.length;
      }
    });
  }

  /** Sends what is buffered and waits for every send (at most FLUSH_LIMIT_MS). */
  async flush(): Promise<void> {
    if (this.buffer.length === 0 && this.pending === 0) return;
    this.send();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_LIMIT_MS)));
    await Promise.race([this.chain, gaveUp]);
    clearTimeout(timer);
    if (this.pending > 0) this.opts.onError(new RedisStoreError(`${this.pending} record(s) not kept for the report: Redis did not answer`));
  }

  /** Every record of the crawl, in order (this worker's own sent first). */
  async *read(): AsyncGenerator<unknown> {
    this.send();
    await this.chain;
    for (let from = 0; ; from += LOG_READ_BATCH) {
      const batch = (await this.opts.connection().lRange(this.opts.key, from, from + LOG_READ_BATCH - 1)) as unknown[];
      for (const json of batch) yield JSON.parse(String(json)) as unknown;
      if (batch.length < LOG_READ_BATCH) return;
    }
  }
}
