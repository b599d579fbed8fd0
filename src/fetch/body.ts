/**
 * Reading a response body: undo its Content-Encoding and keep at most
 * `maxBytes` of the DECODED bytes.
 *
 * Memory contract: a decompression bomb never costs more than the cap plus
 * about one chunk. Node's zlib streams stop inflating when their readable side
 * is full, every stage here is pulled (never flowing), and reading stops at
 * the cap and destroys the source, which makes undici drop the socket rather
 * than reuse a connection that still has unread bytes on it.
 */
import { Duplex, pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { CONTENT_DECODING_CODE } from './fetch-error.js';

/** Raised for an unsupported Content-Encoding or bytes a decoder rejects; classifies as DECODE_ERROR. */
export class ContentDecodingError extends Error {
  override readonly name = 'ContentDecodingError';
  readonly code = CONTENT_DECODING_CODE;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// Like browsers and undici's fetch: a gzip/deflate stream cut short yields what
// was decoded instead of failing; corrupt bytes still fail.
const ZLIB_LENIENT = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_LENIENT = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

/**
 * HTTP "deflate" is meant to be zlib-wrapped (RFC 9110), but some servers send
 * raw DEFLATE. The first two bytes tell them apart: a zlib header has
 * compression method 8 and a CMF/FLG pair divisible by 31.
 */
function looksLikeZlibHeader(cmf: number, flg: number | undefined): boolean {
  if ((cmf & 0x0f) !== 8) return false;
  return flg === undefined || ((cmf << 8) | flg) % 31 === 0;
}

type DecoderFactory = (head: Buffer) => Transform;

const FACTORIES: Record<string, DecoderFactory> = {
  gzip: () => zlib.createGunzip(ZLIB_LENIENT),
  'x-gzip': () => zlib.createGunzip(ZLIB_LENIENT),
  deflate: (head) => (looksLikeZlibHeader(head[0], head[1]) ? zlib.createInflate(ZLIB_LENIENT) : zlib.createInflateRaw(ZLIB_LENIENT)),
  br: () => zlib.createBrotliDecompress(BROTLI_LENIENT),
};

/**
 * One decoding stage. Wraps a zlib stream so that (1) the decoder can be picked
 * from the first bytes (deflate vs raw deflate), (2) an empty body decodes to
 * nothing instead of "unexpected end of file", and (3) every decoder failure
 * surfaces as a ContentDecodingError. Output is pulled from the inner stream
 * only when our reader wants more, so backpressure reaches the inflater.
 */
class DecodingStream extends Duplex {
  private inner: Transform | null = null;
  private head: Buffer | null = null;
  private wantsData = false;

  constructor(
    private readonly encoding: string,
    private readonly factory: DecoderFactory,
  ) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.inner === null) {
      // Need two bytes to recognise a zlib header; a 1-byte first chunk waits for more.
      const head = this.head === null ? chunk : Buffer.concat([this.head, chunk]);
      if (head.length < 2) {
        this.head = head;
        done();
        return;
      }
      this.head = null;
      this.start(head);
      this.inner!.write(head, done);
      return;
    }
    this.inner.write(chunk, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.inner === null && this.head !== null) this.start(this.head);
    if (this.inner === null) {
      this.push(null); // empty body
    } else {
      this.inner.end();
    }
    done();
  }

  override _read(): void {
    this.wantsData = true;
    this.pump();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.inner?.destroy();
    done(err);
  }

  private start(head: Buffer): void {
    const inner = this.factory(head);
    this.inner = inner;
    inner.on('readable', () => this.pump());
    inner.on('end', () => this.push(null));
    inner.on('error', (cause: Error) => {
      this.destroy(new ContentDecodingError(`invalid ${this.encoding} content: ${cause.message}`, { cause }));
    });
  }

  private pump(): void {
    if (this.inner === null) return;
    while (this.wantsData) {
      const chunk = this.inner.read() as Buffer | null;
      if (chunk === null) return;
      this.wantsData = this.push(chunk);
    }
  }
}

/**
 * The decoding stages for a Content-Encoding header, outermost coding first
 * (codings are listed in the order they were applied, so we undo them in
 * reverse). Throws ContentDecodingError for a coding we cannot undo.
 */
export function createDecoders(contentEncoding: string | null | undefined): Duplex[] {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  return codings.reverse().map((coding) => {
    const factory = FACTORIES[coding];
    if (!factory) throw new ContentDecodingError(`unsupported content-encoding "${coding}"`);
    return new DecodingStream(coding, factory);
  });
}

/**
 * Destroys a body we stop reading. undici's body turns a plain destroy() into
 * an 'error' event (RequestAbortedError), which would be uncaught without a
 * listener; the abort is intended, so it is swallowed.
 */
function abandon(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

export interface CappedBody {
  /** Decoded bytes, at most the cap. */
  data: Buffer;
  /** More decoded bytes existed beyond the cap; they were not read. */
  truncated: boolean;
}

/**
 * Reads `body` through its content decoders, keeping at most `maxBytes` decoded
 * bytes. A body of exactly `maxBytes` is not truncated. On truncation or error
 * the whole chain, the source included, is destroyed.
 */
export async function readDecodedBody(body: Readable, contentEncoding: string | null | undefined, maxBytes: number): Promise<CappedBody> {
  let decoders: Duplex[];
  try {
    decoders = createDecoders(contentEncoding);
  } catch (err) {
    abandon(body);
    throw err;
  }
  const output: Readable = decoders.at(-1) ?? body;
  if (decoders.length > 0) {
    // Errors reach the consumer through `output`, which pipeline destroys with the first error.
    pipeline([body, ...decoders], () => {});
  }

  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    for await (const chunk of output as AsyncIterable<Buffer>) {
      const room = maxBytes - total;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        total = maxBytes;
        truncated = true;
        break; // leaving the loop destroys `output`; pipeline then tears down the rest
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  } finally {
    if (!body.destroyed && !body.readableEnded) abandon(body);
  }
  return { data: Buffer.concat(chunks, total), truncated };
}
