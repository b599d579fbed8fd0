/**
 * One HTTP exchange as an undici dispatch handler: the request's dispatch and
 * response-head moments reported through hooks, the head as a promise, then
 * the body either skipped (drained for socket reuse, or cut off) or read up
 * to a cap, straight from the parser's chunks or, when it is compressed,
 * through a Readable into body.ts's decoders. fetcher.ts drives one per
 * request; why it uses a handler of its own rather than undici's `request`
 * is in fetcher.ts's header.
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { readDecodedBody } from './body.js';
import { headerPairs, type ResponseCapture } from './capture.js';

/** Response headers as undici hands them to a dispatch handler. */
export type IncomingHttpHeaders = Record<string, string | string[] | undefined>;

/**
 * A skipped body up to this size is drained so its socket can be reused (a
 * new connection costs more than a few KB); larger ones are cut off at once.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * undici waits one full event-loop turn (a setImmediate) after a response ends
 * before it marks the socket free. A caller that fetches the same origin again
 * straight away would otherwise find the socket "busy" and make the pool open
 * a second connection; yielding one turn here lets the keep-alive socket be
 * reused.
 */
function afterSocketRelease(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface ResponseHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/**
 * One request/response as an undici dispatch handler, turned into promises:
 * `head` settles with status and headers; then the caller either skips the
 * body or reads it, capped. Every failure after the caller stops listening
 * (an abort we caused, a late socket error) is swallowed here.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly head: Promise<ResponseHead>;
  private settleHead!: { resolve: (h: ResponseHead) => void; reject: (e: unknown) => void };
  private controller: Dispatcher.DispatchController | null = null;
  private dispatched = false;
  /** Set once: the reason the exchange was given up (abort, cap reached, error). */
  private stopped: unknown = undefined;
  private isStopped = false;
  private ended = false;
  private failure: unknown = undefined;
  private failed = false;
  // Body, while nobody consumes it yet (chunks arrive right after the head).
  private chunks: Buffer[] = [];
  /** Set by the consumer: called on every chunk / at the end / on error. */
  private sink: BodySink | null = null;
  /** With `capture`: the head as received, and the encoded body's wire copy (capture.ts). */
  private rawHead: { statusText: string; rawHeaders: Buffer[] | null } | null = null;
  private wire: Buffer[] | null = null;
  private wireBytes = 0;
  private wireCut = false;

  /**
   * @param cap decoded body bytes readBody keeps; the rest is not read.
   * @param hooks `dispatched` and `responded` called at most once: `dispatched` once the request is
   *   written to a socket (a microtask after undici's start, so after its write), `responded` when
   *   the final (non-1xx) head arrives;
   *   `data` on every body chunk (the body's idle deadline).
   */
  constructor(
    private readonly cap: number,
    private readonly hooks: { dispatched?: () => void; responded?: () => void; data?: () => void },
    /** Keep what `captured()` hands out (capture.ts). @default false */
    private readonly capture = false,
  ) {
    this.head = new Promise((resolve, reject) => (this.settleHead = { resolve, reject }));
    this.head.catch(() => {}); // a failure before anyone awaits is reported when they do
  }

  /** The request was handed to a socket (written, or being written). */
  get wasDispatched(): boolean {
    return this.dispatched;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.isStopped) {
      // Aborted while queued for a socket: nothing is written.
      controller.abort(asError(this.stopped));
      return;
    }
    if (this.dispatched) return; // undici may restart a request; dispatch is reported once
    this.dispatched = true;
    // Reported once undici has written the request, which it does right after this returns, in the
    // same turn: the time the hook takes is then after the write, never before it. (Taken here, a
    // start was reported before the write by however long the hook's own work took — a limiter, a
    // host save, a shared store's call — and on a loaded machine the next worker's request, a gap
    // after the reported start, was written a few ms less than a gap after the real one.)
    queueMicrotask(() => this.hooks.dispatched?.());
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders, statusText?: string): void {
    this.controller = controller;
    if (status < 200) return; // 1xx informational: the real head follows
    if (this.capture) this.keepHead(controller, headers, statusText);
    this.hooks.responded?.();
    this.settleHead.resolve({ status, headers });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.isStopped) return;
    if (this.wire !== null && !this.wireCut) this.keepWire(chunk);
    this.hooks.data?.();
    if (this.sink === null) this.chunks.push(chunk);
    else this.sink.data(chunk, controller);
  }

  onResponseEnd(): void {
    this.ended = true;
    this.sink?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.failure = this.isStopped ? this.stopped : err;
    this.settleHead.reject(this.failure);
    this.sink?.error(this.failure);
  }

  private keepHead(controller: Dispatcher.DispatchController, headers: IncomingHttpHeaders, statusText: string | undefined): void {
    // undici's unwrapping controller carries the header lines as received.
    this.rawHead = { statusText: statusText ?? '', rawHeaders: (controller as { rawHeaders?: Buffer[] | null }).rawHeaders ?? null };
    const coding = String(headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase();
    // An encoded body is decoded on the way in, so its wire copy is kept apart; otherwise the two are the same bytes.
    if (coding !== '' && coding !== 'identity') this.wire = [];
  }

  /** Copies an encoded body's bytes as they come, up to the cap. */
  private keepWire(chunk: Buffer): void {
    const room = this.cap - this.wireBytes;
    if (chunk.length > room) {
      this.wireCut = true;
      if (room <= 0) return;
      chunk = chunk.subarray(0, room);
    }
    this.wire!.push(chunk);
    this.wireBytes += chunk.length;
  }

  /**
   * What an archive keeps of this exchange, once its body has been read
   * (`body`: decoded, cut at the cap when `truncated`). Only with `capture`.
   */
  captured(body: Buffer, truncated: boolean, requestHead: string): ResponseCapture {
    const head = this.rawHead ?? { statusText: '', rawHeaders: null };
    // A decoded body cut at the cap left the rest of the encoded one unread, unless all of it had arrived.
    const wire = this.wire === null ? body : Buffer.concat(this.wire, this.wireBytes);
    const wireTruncated = this.wire === null ? truncated : this.wireCut || (truncated && !this.ended);
    return { requestHead, statusText: head.statusText, rawHeaders: headerPairs(head.rawHeaders), body, wire, wireTruncated };
  }

  /** Stops the exchange: no more data is wanted; the socket is dropped if it is mid-response. */
  abandon(reason: unknown): void {
    if (this.isStopped) return;
    this.isStopped = true;
    this.stopped = reason;
    this.chunks = [];
    if (!this.ended && !this.failed) {
      this.controller?.abort(asError(reason));
      // Not yet on a socket: fail now rather than when one frees up.
      if (this.controller === null) this.onResponseError(undefined, asError(reason));
    }
  }

  /**
   * Waits out a body we do not want. A small one is drained so its keep-alive
   * socket can be reused (a new connection costs more than a few KB); a large
   * or unknown-length one beyond DRAIN_LIMIT_BYTES is cut off.
   */
  skipBody(contentLength: number): Promise<void> {
    if (contentLength > DRAIN_LIMIT_BYTES) {
      this.abandon(new Error('body not wanted'));
      return Promise.resolve();
    }
    return this.consume({
      limit: DRAIN_LIMIT_BYTES,
      keep: false,
    }).then(() => undefined);
  }

  /** The decoded body, at most `cap` bytes. */
  readBody(contentEncoding: string | undefined): Promise<{ data: Buffer; truncated: boolean }> {
    const encoded = (contentEncoding ?? '').trim() !== '' && contentEncoding!.trim().toLowerCase() !== 'identity';
    if (!encoded) return this.consume({ limit: this.cap, keep: true });
    // The decoders' stream plumbing takes the turns undici needs to free the socket.
    return readDecodedBody(this.stream(), contentEncoding, this.cap);
  }

  /**
   * Collects (or just counts) the raw body up to `limit` bytes. Past the
   * limit the exchange is abandoned, which closes the socket instead of
   * downloading the rest; a body of exactly `limit` bytes is not truncated.
   */
  private consume(opts: { limit: number; keep: boolean }): Promise<{ data: Buffer; truncated: boolean }> {
    return new Promise((resolve, reject) => {
      const kept: Buffer[] = [];
      let total = 0;
      const finish = async (truncated: boolean) => {
        if (!truncated) await afterSocketRelease();
        resolve({ data: opts.keep ? Buffer.concat(kept, total) : EMPTY, truncated });
      };
      const take = (chunk: Buffer): boolean => {
        const room = opts.limit - total;
        if (chunk.length > room) {
          if (opts.keep && room > 0) kept.push(chunk.subarray(0, room));
          total = opts.limit;
          void finish(true); // settles first: abandoning makes undici report an error we caused
          this.abandon(new Error('body cap reached'));
          return false;
        }
        total += chunk.length;
        if (opts.keep) kept.push(chunk);
        return true;
      };
      for (const chunk of this.chunks) if (!take(chunk)) return;
      this.chunks = [];
      if (this.failed) return reject(this.failure);
      if (this.ended) return void finish(false);
      this.sink = { data: (chunk) => void take(chunk), end: () => void finish(false), error: reject };
    });
  }

  /** The body as a Readable that pauses the socket when it is not read (for the decoders). */
  private stream(): Readable {
    const readable = new Readable({
      read: () => this.controller?.resume(),
      destroy: (err, done) => {
        if (!this.ended) this.abandon(err ?? new Error('body abandoned'));
        done(err);
      },
    });
    for (const chunk of this.chunks) readable.push(chunk);
    this.chunks = [];
    if (this.failed) readable.destroy(asError(this.failure));
    else if (this.ended) readable.push(null);
    else {
      this.sink = {
        data: (chunk, controller) => {
          if (!readable.push(chunk)) controller.pause();
        },
        end: () => readable.push(null),
        error: (err) => readable.destroy(asError(err)),
      };
    }
    return readable;
  }
}

interface BodySink {
  data(chunk: Buffer, controller: Dispatcher.DispatchController): void;
  end(): void;
  error(err: unknown): void;
}

function asError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === 'string' ? reason : reason === undefined ? 'aborted' : (JSON.stringify(reason) ?? 'aborted'));
}
