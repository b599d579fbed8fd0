/**
 * The record sink: JSON lines on stdout or in a file, with backpressure.
 *
 * Contract:
 * - Every record is one `JSON.stringify(record) + "\n"`. Lines written in the
 *   same event-loop turn are joined and handed to the stream in one `write`
 *   call (at most BATCH_BYTES, plus one line, per call), so a line is never
 *   split or interleaved with another. One write per record cost a system
 *   call each (stdout on a file or pipe is synchronous) and was a tenth of
 *   the crawler's CPU time at thousands of pages a second.
 * - `write()` resolves at once while the stream accepts data and otherwise only
 *   after `'drain'`; the crawler awaits it, which is how a slow consumer slows
 *   the crawl down instead of filling memory. Lines waiting for the end of
 *   the turn are bounded by BATCH_BYTES.
 * - A reader that went away (`crawl … | head -1`) is not an error: the sink
 *   turns `broken`, tells the caller once, and every later write is a no-op.
 *   Any other write failure (disk full, …) rejects with an `OutputError`.
 * - A file target is written to `<path>.partial` and renamed on `close()`, so
 *   `<path>` only ever holds whole records.
 */
import { constants as fsConstants, promises as fsp, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import type { OutputRecord } from '../types.js';
import { writeAll, writeFileWhole } from './output-targets.js';

/**
 * OUTPUT_UNWRITABLE: a target refused before the crawl (exit 2);
 * OUTPUT_EXISTS: a file that is never overwritten (a WARC) already exists (exit 2);
 * IO_FAILED: the machine refused a write mid-crawl: disk full, read-only, permission (exit 4);
 * OUTPUT_WRITE_FAILED: any other write failure.
 */
export type OutputErrorCode = 'OUTPUT_UNWRITABLE' | 'OUTPUT_EXISTS' | 'IO_FAILED' | 'OUTPUT_WRITE_FAILED';

/** A failure of the output target itself. The message is one line and names the path. */
export class OutputError extends Error {
  override readonly name = 'OutputError';
  constructor(
    readonly code: OutputErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface RecordSink {
  /**
   * Queues one record; resolves when the stream can take more (see module
   * contract). Dropped silently once the sink is broken (the reader left);
   * rejected once it is closing: a record after close is a bug, never
   * confirmed, so the URL it belongs to is not completed.
   */
  write(record: OutputRecord): Promise<void>;
  /** Resolves once everything written is flushed (and, for a file, renamed into place). */
  close(): Promise<void>;
  /** True once the reader has gone away; writes are then silently dropped. */
  readonly broken: boolean;
  /** Records the stream confirmed (write callback without error). Exact after `close()`. */
  readonly written: number;
  /**
   * Resolves once every record written so far is confirmed (its write
   * callback ran without error); rejects with the sink's failure. A crawl
   * whose state outlives it completes a URL only then, so a record lost to
   * a full disk is fetched again on resume. Absent: `write()` is enough.
   */
  confirmed?(): Promise<void>;
  /**
   * Bytes of the target the stream has confirmed, whole lines only; for an
   * `--output` file, from the file's start (what earlier runs wrote
   * included). Absent where bytes are not counted.
   */
  readonly confirmedBytes?: number;
  /**
   * Bytes of the target handed to `write` so far (confirmed or not), whole
   * lines, counted as `confirmedBytes` is: where the next record will start.
   */
  readonly queuedBytes?: number;
}

/**
 * A sink in front of `inner`: `write` and `close` replaced where given,
 * `broken` and `written` always `inner`'s (what the reader got).
 */
export function wrapSink(inner: RecordSink, over: { write?: (record: OutputRecord) => Promise<void>; close?: () => Promise<void> }): RecordSink {
  return {
    write: over.write ?? ((record) => inner.write(record)),
    close: over.close ?? (() => inner.close()),
    ...(inner.confirmed && { confirmed: () => inner.confirmed!() }),
    get broken() {
      return inner.broken;
    },
    get written() {
      return inner.written;
    },
  };
}

export interface JsonLinesSinkOptions {
  /**
   * Called once, the first time the reader is found gone (EPIPE, destroyed
   * stream). The CLI uses it to stop the crawl quietly.
   */
  onBrokenPipe?: () => void;
  /**
   * Whether `close()` ends the stream and waits for it to close. Never set it
   * for process.stdout: ending stdout would break anything printed after us.
   * @default false
   */
  end?: boolean;
  /** Names the target in error messages. @default "output" */
  label?: string;
  /**
   * Called once when a write fails (not for a reader gone), with the bytes
   * the stream confirmed before it: a file target cuts itself back to them,
   * so it ends with the last whole confirmed record.
   */
  onFailure?: (confirmedBytes: number) => void;
}

/** Error codes meaning "nobody is reading any more", as opposed to a real failure. */
const READER_GONE = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END', 'ECONNRESET']);

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Lines gathered before a write call is made without waiting for the end of the turn. */
export const BATCH_BYTES = 64 * 1024;

export function createJsonLinesSink(stream: NodeJS.WritableStream, opts: JsonLinesSinkOptions = {}): RecordSink {
  const label = opts.label ?? 'output';
  let broken = false;
  let failure: OutputError | undefined;
  let written = 0;
  let pending = 0; // write calls whose callback has not run yet
  let needDrain = false; // the stream's last write returned false and 'drain' has not come yet
  let batch = '';
  let batchRecords = 0;
  let batchBytes = 0; // UTF-8 bytes of `batch`, counted line by line as it grows
  let flushTimer: NodeJS.Immediate | undefined;
  let closing: Promise<void> | undefined;
  // Whoever waits for 'drain' or for the last callback; settled on drain, flush, break or failure.
  let drainWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  let flushWaiters: Array<() => void> = [];
  // Write calls are numbered; their callbacks run in order (a stream's writes are serial).
  let callsMade = 0;
  let callsDone = 0;
  let confirmedBytes = 0;
  let queuedBytes = 0;
  let confirmWaiters: Array<{ upTo: number; resolve: () => void; reject: (e: Error) => void }> = [];
  const settleConfirmed = (): void => {
    if (confirmWaiters.length === 0) return;
    const waiting = confirmWaiters;
    confirmWaiters = [];
    for (const w of waiting) {
      if (failure) w.reject(failure);
      else if (broken || w.upTo <= callsDone) w.resolve();
      else confirmWaiters.push(w);
    }
  };

  const settleDrain = (): void => {
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const w of waiters) {
      if (failure) w.reject(failure);
      else w.resolve();
    }
  };
  const settleFlush = (): void => {
    if (pending > 0 && !broken && !failure) return;
    const waiters = flushWaiters;
    flushWaiters = [];
    for (const w of waiters) w();
  };

  const onError = (err: unknown): void => {
    if (broken || failure) return;
    if (READER_GONE.has(errorCode(err) ?? '')) {
      broken = true;
      opts.onBrokenPipe?.();
    } else {
      failure = writeFailure(label, err);
      opts.onFailure?.(confirmedBytes);
    }
    batch = ''; // nobody will read it
    batchRecords = 0;
    batchBytes = 0;
    settleDrain();
    settleFlush();
    settleConfirmed();
  };
  const onDrain = (): void => {
    needDrain = false;
    settleDrain();
  };

  // Without an 'error' listener an EPIPE becomes an uncaught exception with a
  // stack trace. The listener stays after close(): a late EPIPE must stay quiet.
  stream.on('error', onError);
  stream.on('drain', onDrain);

  const isDestroyed = (): boolean => (stream as Partial<Writable>).destroyed === true;

  /** Hands the gathered lines to the stream in one write call. */
  const flush = (): void => {
    if (flushTimer !== undefined) clearImmediate(flushTimer);
    flushTimer = undefined;
    if (batch === '' || broken || failure) return;
    if (isDestroyed()) {
      onError(Object.assign(new Error('stream destroyed'), { code: 'ERR_STREAM_DESTROYED' }));
      return;
    }
    const chunk = batch;
    const records = batchRecords;
    const bytes = batchBytes;
    batch = '';
    batchRecords = 0;
    batchBytes = 0;
    pending++;
    callsMade++;
    const accepted = stream.write(chunk, (err?: Error | null) => {
      pending--;
      callsDone++;
      if (err) onError(err);
      else {
        written += records;
        confirmedBytes += bytes;
      }
      settleFlush();
      settleConfirmed();
    });
    if (!accepted && !broken && !failure) needDrain = true;
  };

  return {
    get broken() {
      return broken;
    },
    get written() {
      return written;
    },
    get confirmedBytes() {
      return confirmedBytes;
    },
    get queuedBytes() {
      return queuedBytes;
    },

    confirmed() {
      if (failure) return Promise.reject(failure);
      // Lines still gathering go out at the end of this turn, as the next write call.
      const upTo = callsMade + (batch === '' ? 0 : 1);
      if (broken || upTo <= callsDone) return Promise.resolve();
      return new Promise<void>((resolve, reject) => confirmWaiters.push({ upTo, resolve, reject }));
    },

    write(record) {
      if (failure) return Promise.reject(failure);
      if (broken) return Promise.resolve();
      // Never dropped silently: a caller completing a URL once its record is confirmed must not complete this one.
      if (closing) return Promise.reject(new OutputError('OUTPUT_WRITE_FAILED', `cannot write ${label}: a record came after it was closed`));
      if (isDestroyed()) {
        onError(Object.assign(new Error('stream destroyed'), { code: 'ERR_STREAM_DESTROYED' }));
        return Promise.resolve();
      }
      const line = JSON.stringify(record) + '\n';
      const bytes = Buffer.byteLength(line);
      queuedBytes += bytes;
      batchBytes += bytes;
      batch += line;
      batchRecords++;
      if (batch.length >= BATCH_BYTES) flush();
      else flushTimer ??= setImmediate(flush);
      // The callback may already have run (synchronously failing streams).
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the stream's own error, passed on
      if (failure) return Promise.reject(failure);
      if (!needDrain || broken) return Promise.resolve();
      return new Promise<void>((resolve, reject) => drainWaiters.push({ resolve, reject }));
    },

    close() {
      closing ??= (async () => {
        flush();
        if (!broken && !failure && pending > 0) await new Promise<void>((r) => flushWaiters.push(r));
        stream.removeListener('drain', onDrain);
        if (opts.end && !broken && !failure) await endStream(stream);
        if (failure) throw failure;
      })();
      return closing;
    },
  };
}

/** Ends a stream and waits until its resource (file descriptor) is released. */
function endStream(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    // 'close' follows 'finish' once the fd is closed; an error also ends here
    // because the sink's own error listener records it.
    stream.once('close', () => resolve());
    stream.end();
  });
}

export interface OpenOutputOptions {
  /** See {@link JsonLinesSinkOptions.onBrokenPipe}. */
  onBrokenPipe?: () => void;
  /** The stream used for "-" or no target. @default process.stdout */
  stdout?: NodeJS.WritableStream;
  /**
   * A resumed crawl: append to what an earlier run wrote (`<path>.partial`,
   * else `<path>`) instead of starting the file over. A last line torn by a
   * crash is cut off and moved to `<path>.torn`. @default false
   */
  append?: boolean;
  /** Told once, in words, when a torn last line was moved aside. */
  onRepair?: (message: string) => void;
  /** Asked at close: true keeps `<path>.partial` (the crawl is not done) instead of renaming it. @default never */
  keepPartial?: () => boolean;
  /**
   * With `append`: the records after byte `from` may belong to pages whose
   * completion a crash lost (they are fetched, and written, again): each
   * line there is kept only if `keep` says so, so no record appears twice.
   * Told to `onRepair` when lines are dropped. @default nothing checked
   */
  reconcile?: { from: number; keep: (line: string) => boolean };
}

/**
 * Keeps, of the lines after byte `from` of `path`, those `keep` accepts;
 * returns how many were dropped. The file ends with whole lines here (its
 * torn tail was already moved aside).
 *
 * Crash-safe: cutting the file and writing the kept lines back are two
 * steps, and a `kill -9` between them lost every kept record (the records
 * of pages the state holds as done, never fetched again). So the kept lines
 * are first written to `journal` (whole: written aside, then renamed), and
 * the journal is removed only once the file holds them; the next open
 * finishes the job from it (`replayReconcile`) before anything else.
 */
async function reconcileTail(path: string, journal: string, from: number, keep: (line: string) => boolean): Promise<number> {
  const handle = await fsp.open(path, 'r+');
  try {
    const size = (await handle.stat()).size;
    if (from >= size || from < 0) return 0;
    const tail = Buffer.alloc(size - from);
    await handle.read(tail, 0, tail.length, from);
    const lines = tail.toString('utf8').split('\n');
    lines.pop(); // after the last newline
    const kept = lines.filter((line) => keep(line));
    if (kept.length === lines.length) return 0;
    const text = Buffer.from(kept.length > 0 ? kept.join('\n') + '\n' : '');
    await writeFileWhole(journal, Buffer.concat([Buffer.from(`${JSON.stringify({ from, bytes: text.length })}\n`), text]), {
      aside: `${journal}.tmp`,
      sync: true,
    });
    await cutAndWrite(handle, from, text);
    await fsp.rm(journal, { force: true });
    return lines.length - kept.length;
  } finally {
    await handle.close();
  }
}

/** Cuts the file at `from` and writes `text` there, on disk before it returns. */
async function cutAndWrite(handle: fsp.FileHandle, from: number, text: Buffer): Promise<void> {
  await handle.truncate(from);
  await writeAll(handle, text, from);
  await handle.sync();
}

/**
 * A reconcile a crash interrupted (its journal is still there): cuts `path`
 * where it did and writes the kept lines again. True if there was one. A
 * journal is renamed into place whole, so one that does not read is not
 * ours: it is removed, the file left alone.
 */
async function replayReconcile(path: string, journal: string): Promise<boolean> {
  await fsp.rm(`${journal}.tmp`, { force: true }); // a journal a crash cut short: the file was not touched yet
  const data = await fsp.readFile(journal).catch((err: unknown) => (errorCode(err) === 'ENOENT' ? undefined : Promise.reject(err)));
  if (data === undefined) return false;
  const nl = data.indexOf(0x0a);
  const text = data.subarray(nl + 1);
  let from: number | undefined;
  try {
    const head = JSON.parse(data.subarray(0, Math.max(nl, 0)).toString('utf8')) as { from?: unknown; bytes?: unknown };
    if (typeof head.from === 'number' && head.bytes === text.length) from = head.from;
  } catch {
    // Not one of ours: written whole, a journal always reads.
  }
  let replayed = false;
  if (from !== undefined) {
    // The file itself gone (removed by hand since): nothing to finish.
    const handle = await fsp.open(path, 'r+').catch((err: unknown) => (errorCode(err) === 'ENOENT' ? undefined : Promise.reject(err)));
    if (handle !== undefined) {
      try {
        await cutAndWrite(handle, from, text);
        replayed = true;
      } finally {
        await handle.close();
      }
    }
  }
  await fsp.rm(journal, { force: true });
  return replayed;
}

/** Writes straight into a target that is not a plain file (a symlink, FIFO, device), with no .partial and no rename. */
async function openThrough(target: string, opts: OpenOutputOptions, unwritable: (reason: string, cause?: unknown) => OutputError): Promise<RecordSink> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(target, fsConstants.O_WRONLY | (opts.append ? fsConstants.O_APPEND : 0));
  } catch (err) {
    throw unwritable(describeFsError(err), err);
  }
  return createJsonLinesSink(handle.createWriteStream(), { end: true, label: `output to ${target}` });
}

/**
 * Makes `partial` end with a whole line: a crash can leave its last record
 * half-written. The torn tail is appended to `torn`; returns its byte length.
 */
async function repairTornTail(partial: string, torn: string): Promise<number> {
  const handle = await fsp.open(partial, 'r+');
  try {
    const { size } = await handle.stat();
    if (size === 0) return 0;
    // Records are one line each; read back far enough to find the last newline.
    let end = size;
    for (let chunk = 64 * 1024; ; chunk *= 4) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      await handle.read(buf, 0, buf.length, start);
      const nl = buf.lastIndexOf(0x0a);
      if (nl === buf.length - 1) return 0;
      if (nl >= 0 || start === 0) {
        end = nl >= 0 ? start + nl + 1 : 0;
        await fsp.appendFile(torn, buf.subarray(end - start));
        await handle.truncate(end);
        return size - end;
      }
    }
  } finally {
    await handle.close();
  }
}

/**
 * Errno codes meaning the machine refused a write (full, read-only, no
 * permission): the environment, not a bug. A write failing with one of them
 * mid-crawl is an `IO_FAILED` error (the CLI exits 4).
 */
const ENVIRONMENT_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EFBIG']);

/** A write to `what` (an option and its file: `--warc site.warc.gz`) failed: IO_FAILED when the machine refused it, else OUTPUT_WRITE_FAILED. */
export function writeFailure(what: string, err: unknown): OutputError {
  const code = ENVIRONMENT_ERRNO.has(errorCode(err) ?? '') ? 'IO_FAILED' : 'OUTPUT_WRITE_FAILED';
  return new OutputError(code, `cannot write ${what}: ${describeFsError(err)}`, { cause: err });
}

/** Why a path cannot be written, in words; the code stays in `cause`. */
export function describeFsError(err: unknown): string {
  switch (errorCode(err)) {
    case 'ENOENT': {
      // Under a directory that exists, ENOENT means it takes no new entries (/proc, /sys).
      const path = (err as { path?: unknown }).path;
      const parent = typeof path === 'string' ? dirname(path) : undefined;
      if (parent !== undefined && parent !== path && isDirectory(parent)) return `nothing can be created in ${parent}`;
      return 'directory does not exist';
    }
    case 'ENOSPC':
      return 'the disk is full';
    case 'EDQUOT':
      return 'the disk quota is exhausted';
    case 'EIO':
      return 'an I/O error';
    case 'EFBIG':
      return 'the file is too large';
    case 'ENOTDIR':
      return 'a parent is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'EISDIR':
      return 'is a directory';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Opens the record sink for `--output`: "-" or undefined is stdout, anything
 * else a file path. The file is created (as `<path>.partial`) before the crawl
 * starts, so a bad path fails fast with `OUTPUT_UNWRITABLE`.
 */
export async function openOutput(target: string | undefined, opts: OpenOutputOptions = {}): Promise<RecordSink> {
  if (target === undefined || target === '-') {
    return createJsonLinesSink(opts.stdout ?? process.stdout, { onBrokenPipe: opts.onBrokenPipe, label: 'stdout' });
  }
  const unwritable = (reason: string, cause?: unknown): OutputError =>
    new OutputError('OUTPUT_UNWRITABLE', `cannot write output to ${target}: ${reason}`, { cause });

  const existing = await fsp.stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw unwritable('is a directory');
  const link = await fsp.lstat(target).catch(() => undefined);
  // A symlink, FIFO, device or socket is the user's chosen destination, not a file
  // to replace: write through it (renaming over it would destroy it; as root,
  // `-o /dev/full` turned the device into a regular file).
  if (link?.isSymbolicLink() || (existing !== undefined && !existing.isFile())) return openThrough(target, opts, unwritable);

  const partial = `${target}.partial`;
  // The lines a reconcile keeps, until they are back in the file (reconcileTail).
  const journal = `${target}.reconcile`;
  let handle: fsp.FileHandle;
  try {
    // A fresh run starts the file over: a journal left from an earlier crawl's crash is void.
    if (!opts.append) await fsp.rm(journal, { force: true });
    if (opts.append) {
      const hasPartial = await fsp.stat(partial).then(
        () => true,
        () => false,
      );
      if (!hasPartial && existing?.isFile()) await fsp.rename(target, partial);
      // First a reconcile a crash cut short: the file may end mid-way through the lines it was writing back.
      if (await replayReconcile(partial, journal))
        opts.onRepair?.(`${partial}: finished removing the records a crash left after the state's last commit (interrupted by a crash itself)`);
      const tornBytes = await repairTornTail(partial, `${target}.torn`).catch((err: unknown) => (errorCode(err) === 'ENOENT' ? 0 : Promise.reject(err)));
      if (tornBytes > 0)
        opts.onRepair?.(
          `${partial} ended in a torn line (${tornBytes} bytes, from a crash); moved it to ${target}.torn and appending after the last whole record`,
        );
      const check = opts.reconcile;
      const dropped =
        check === undefined
          ? 0
          : await reconcileTail(partial, journal, check.from, check.keep).catch((err: unknown) => (errorCode(err) === 'ENOENT' ? 0 : Promise.reject(err)));
      if (dropped > 0)
        opts.onRepair?.(
          `${partial}: ${dropped} record(s) written just before a crash belong to pages the state file had not yet recorded as done; removed, as those pages are fetched and written again`,
        );
    }
    handle = await fsp.open(partial, fsConstants.O_WRONLY | fsConstants.O_CREAT | (opts.append ? fsConstants.O_APPEND : fsConstants.O_TRUNC));
  } catch (err) {
    throw unwritable(describeFsError(err), err);
  }
  // Where this run's records start: a failed write cuts the file back to its last whole confirmed record.
  const startSize = opts.append ? (await handle.stat()).size : 0;
  const stream = handle.createWriteStream();
  const sink = createJsonLinesSink(stream, {
    end: true,
    label: `output to ${target}`,
    onFailure: (confirmedBytes) => {
      // Truncating needs no free space; a resumed crawl then appends after whole records only.
      cutBack = fsp.truncate(partial, startSize + confirmedBytes).catch(() => {});
    },
  });
  let cutBack: Promise<void> = Promise.resolve();

  let finishing: Promise<void> | undefined;
  return {
    get broken() {
      return sink.broken;
    },
    get written() {
      return sink.written;
    },
    get confirmedBytes() {
      return startSize + (sink.confirmedBytes ?? 0);
    },
    get queuedBytes() {
      return startSize + (sink.queuedBytes ?? 0);
    },
    write: (record) => sink.write(record),
    confirmed: () =>
      sink.confirmed!().catch(async (err: unknown) => {
        await cutBack;
        throw err;
      }),
    close() {
      finishing ??= (async () => {
        // On failure close() rejects and the .partial stays for inspection;
        // the target name never receives a file that may end mid-line.
        await sink.close().catch(async (err: unknown) => {
          await cutBack;
          throw err;
        });
        if (opts.keepPartial?.()) return;
        try {
          await fsp.rename(partial, target);
        } catch (err) {
          throw writeFailure(`output to ${target} (renaming ${partial})`, err);
        }
      })();
      return finishing;
    },
  };
}
