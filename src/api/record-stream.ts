/**
 * A RecordSink that a `for await` loop reads from: the crawler writes, the
 * consumer pulls.
 *
 * Contract:
 * - Records come out in the order they were written.
 * - `write()` resolves at once while fewer than `highWaterMark` records wait,
 *   and otherwise only once the consumer has pulled enough of them. The
 *   crawler awaits its writes before starting more work, so a consumer that
 *   stops pulling slows the crawl down instead of growing this buffer.
 * - `close()` ends the stream: the consumer gets what is left, then `done`.
 *   `fail(error)` does the same, but the last pull rejects with `error`.
 * - `cancel()` is the consumer leaving (`break`, `return()`): buffered records
 *   are dropped, every waiting writer is released, later writes are no-ops
 *   (`broken` is true, as for a closed pipe) and `onCancel` runs once.
 */
import type { RecordSink } from '../output/sink.js';
import type { OutputRecord } from '../types.js';

export interface RecordStreamOptions {
  /**
   * Records held before `write()` starts to wait for the consumer.
   * @default 32
   */
  highWaterMark?: number;
  /** Called once when the consumer cancels, so the producer can stop. */
  onCancel?: () => void;
}

export interface RecordStream extends RecordSink {
  /** The consumer's side: the next record, or done once closed and drained. */
  next(): Promise<IteratorResult<OutputRecord, undefined>>;
  /** Ends the stream with an error, thrown to the consumer after what is buffered. */
  fail(error: unknown): void;
  /** The consumer is gone: drop everything, release writers, call `onCancel`. */
  cancel(): void;
  /** Records waiting for the consumer. */
  readonly buffered: number;
}

export const DEFAULT_HIGH_WATER_MARK = 32;

const DONE: IteratorResult<OutputRecord, undefined> = Object.freeze({ done: true, value: undefined });

export function createRecordStream(opts: RecordStreamOptions = {}): RecordStream {
  const highWaterMark = opts.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
  const buffer: OutputRecord[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let cancelled = false;
  let delivered = 0;
  // At most one pull waits at a time in a `for await`, but a caller may call next() twice.
  let readers: Array<{ resolve: (r: IteratorResult<OutputRecord, undefined>) => void; reject: (e: unknown) => void }> = [];
  let writers: Array<() => void> = [];

  const releaseWriters = (): void => {
    if (!cancelled && buffer.length >= highWaterMark) return;
    const waiting = writers;
    writers = [];
    for (const w of waiting) w();
  };

  /** Settles waiting readers once the stream has ended and nothing is buffered. */
  const settleReaders = (): void => {
    while (readers.length > 0 && buffer.length > 0) {
      delivered++;
      readers.shift()!.resolve({ done: false, value: buffer.shift()! });
    }
    if (!ended && !cancelled) return;
    const waiting = readers;
    readers = [];
    for (const r of waiting) {
      if (failure && !cancelled) r.reject(failure.error);
      else r.resolve(DONE);
    }
    // A stream that failed throws once; later pulls just end, like a generator.
    if (waiting.length > 0) failure = undefined;
  };

  return {
    get broken() {
      return cancelled;
    },
    get written() {
      return delivered;
    },
    get buffered() {
      return buffer.length;
    },

    write(record) {
      if (cancelled || ended) return Promise.resolve();
      buffer.push(record);
      settleReaders();
      if (buffer.length <= highWaterMark) return Promise.resolve();
      return new Promise<void>((resolve) => writers.push(resolve));
    },

    close() {
      ended = true;
      settleReaders();
      return Promise.resolve();
    },

    fail(error) {
      if (ended || cancelled) return;
      failure = { error };
      ended = true;
      settleReaders();
    },

    cancel() {
      if (cancelled) return;
      cancelled = true;
      buffer.length = 0;
      releaseWriters();
      settleReaders();
      opts.onCancel?.();
    },

    next() {
      if (buffer.length > 0) {
        const value = buffer.shift()!;
        delivered++;
        releaseWriters();
        return Promise.resolve({ done: false, value });
      }
      if (cancelled || ended) {
        if (failure && !cancelled) {
          const { error } = failure;
          failure = undefined;
          return Promise.reject(error);
        }
        return Promise.resolve(DONE);
      }
      return new Promise((resolve, reject) => readers.push({ resolve, reject }));
    },
  };
}
