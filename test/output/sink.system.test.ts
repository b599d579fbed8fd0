import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BATCH_BYTES, createJsonLinesSink, openOutput, OutputError } from '../../src/output/sink.js';
import type { PageRecord, SkipRecord } from '../../src/types.js';

function page(n: number, extra: Partial<PageRecord> = {}): PageRecord {
  return {
    type: 'page',
    url: `http://127.0.0.1/p/${n}`,
    host: '127.0.0.1',
    status: 200,
    depth: 1,
    parent: null,
    contentType: 'text/html',
    bytes: 10,
    title: `page ${n}`,
    links: 0,
    fetchedAt: '2026-01-01T00:00:00.000Z',
    elapsedMs: 5,
    ...extra,
  };
}

/** A Writable that records each chunk and lets the test decide when each write completes. */
function manualWritable(highWaterMark: number) {
  const chunks: string[] = [];
  const callbacks: Array<(err?: Error | null) => void> = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      callbacks.push(cb);
    },
  });
  const releaseOne = (): boolean => {
    const cb = callbacks.shift();
    cb?.();
    return cb !== undefined;
  };
  return { stream, chunks, callbacks, releaseOne };
}

const flushMicrotasks = () => new Promise((r) => setImmediate(r));

describe('createJsonLinesSink', () => {
  it('writes each record as one line, the lines of one event-loop turn in one write call, and they parse back', async () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _e, cb) {
        chunks.push(chunk.toString('utf8'));
        cb();
      },
    });
    const sink = createJsonLinesSink(stream);
    const records = [
      page(1, { title: 'line\nbreak and "quotes" and \u2028 and ünïcödé' }),
      { type: 'skipped', url: 'http://127.0.0.1/x', reason: 'robots', depth: 2, parent: 'http://127.0.0.1/' } satisfies SkipRecord,
      page(3, { status: null, error: { code: 'CONNECTION_REFUSED', message: 'connect ECONNREFUSED' } }),
    ];
    for (const r of records) await sink.write(r);
    expect(chunks).toEqual([]); // gathered until the end of the turn
    await flushMicrotasks();
    expect(chunks).toHaveLength(1);
    await sink.write(page(4));
    await sink.close();

    expect(chunks).toHaveLength(2);
    const lines = chunks.join('').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual([...records, page(4)]);
    expect(sink.written).toBe(4);
    expect(sink.broken).toBe(false);
    // stdout must never be ended by the sink.
    expect(stream.writableEnded).toBe(false);
  });

  it('writes at once past BATCH_BYTES, never splitting a line across write calls', async () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _e, cb) {
        chunks.push(chunk.toString('utf8'));
        cb();
      },
    });
    const sink = createJsonLinesSink(stream);
    const title = 'x'.repeat(10_000);
    const count = Math.ceil((3 * BATCH_BYTES) / title.length);
    for (let i = 0; i < count; i++) await sink.write(page(i, { title }));
    // Still the same turn: the size limit alone made these write calls.
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    await sink.close();
    for (const c of chunks) {
      expect(c.endsWith('\n')).toBe(true);
      expect(c.length).toBeLessThan(BATCH_BYTES + title.length + 1000);
    }
    expect(
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).url),
    ).toEqual(Array.from({ length: count }, (_, i) => page(i).url));
    expect(sink.written).toBe(count);
  });

  it('keeps write() pending until the stream drains, and loses nothing', async () => {
    const w = manualWritable(1);
    const sink = createJsonLinesSink(w.stream);
    await sink.write(page(1)); // room in the stream: resolves at once
    await flushMicrotasks(); // the turn ends: the line goes to the stream, which is now full
    expect(w.chunks).toHaveLength(1);
    let resolved = false;
    const p = sink.write(page(2)).then(() => {
      resolved = true;
    });
    await flushMicrotasks();
    expect(resolved).toBe(false);
    let released = 0;
    while (!resolved) {
      released += w.releaseOne() ? 1 : 0;
      await flushMicrotasks();
    }
    await p;
    expect(released).toBe(2); // only once both lines left the stream's buffer

    // Many writers at once (as concurrent workers would): order is kept, every record arrives.
    const writes = Array.from({ length: 50 }, (_, i) => sink.write(page(i + 3)));
    let closed = false;
    const closing = sink.close().then(() => {
      closed = true;
    });
    while (!closed) {
      w.releaseOne();
      await flushMicrotasks();
    }
    await Promise.all(writes);
    await closing;
    const urls = w.chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).url);
    expect(urls).toEqual(Array.from({ length: 52 }, (_, i) => page(i + 1).url));
    expect(sink.written).toBe(52);
  });

  it('close() waits for the write callbacks of everything written', async () => {
    const w = manualWritable(1 << 20);
    const sink = createJsonLinesSink(w.stream);
    await sink.write(page(1));
    await flushMicrotasks();
    await sink.write(page(2));
    await flushMicrotasks(); // two write calls, the second queued behind the first
    let closed = false;
    const c = sink.close().then(() => {
      closed = true;
    });
    await flushMicrotasks();
    expect(closed).toBe(false);
    w.releaseOne();
    await flushMicrotasks();
    expect(closed).toBe(false);
    w.releaseOne();
    await c;
    expect(w.chunks).toHaveLength(2);
    expect(sink.written).toBe(2);
  });

  it('close() writes lines still gathered in this turn', async () => {
    const w = manualWritable(1 << 20);
    const sink = createJsonLinesSink(w.stream);
    await sink.write(page(1));
    const c = sink.close();
    expect(w.chunks).toHaveLength(1);
    w.releaseOne();
    await c;
    expect(sink.written).toBe(1);
  });

  it('treats EPIPE as a broken pipe: no throw, broken, one notice, later writes are no-ops', async () => {
    let calls = 0;
    const stream = new Writable({
      write(_chunk, _e, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const sink = createJsonLinesSink(stream, { onBrokenPipe: () => calls++ });
    await sink.write(page(1));
    await flushMicrotasks();
    expect(sink.broken).toBe(true);
    await sink.write(page(2));
    await sink.write(page(3));
    await sink.close();
    expect(calls).toBe(1);
    expect(sink.written).toBe(0);
  });

  it('treats a destroyed stream as a broken pipe', async () => {
    const onBrokenPipe = vi.fn();
    const w = manualWritable(16);
    const sink = createJsonLinesSink(w.stream, { onBrokenPipe });
    w.stream.destroy();
    await sink.write(page(1));
    await sink.write(page(2));
    expect(sink.broken).toBe(true);
    expect(onBrokenPipe).toHaveBeenCalledTimes(1);
    await expect(sink.close()).resolves.toBeUndefined();
  });

  it('releases writers waiting for drain when the pipe breaks meanwhile', async () => {
    const w = manualWritable(1);
    const sink = createJsonLinesSink(w.stream);
    const pending = sink.write(page(1));
    await flushMicrotasks();
    w.callbacks.shift()!(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await expect(pending).resolves.toBeUndefined();
    expect(sink.broken).toBe(true);
  });

  it('ends quietly when a real reader process exits early (crawl | head -c 1)', async () => {
    // The child reads one chunk and exits, like `head -c 1`: our end of the pipe then gets EPIPE.
    const child = spawn(process.execPath, ['-e', "process.stdin.once('data', () => process.exit(0))"], {
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const onBrokenPipe = vi.fn();
    const sink = createJsonLinesSink(child.stdin, { onBrokenPipe });
    const big = 'x'.repeat(4096);
    let n = 0;
    const deadline = Date.now() + 10_000;
    while (!sink.broken && Date.now() < deadline) {
      await sink.write(page(n++, { title: big }));
      if (n % 64 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    await sink.close();
    expect(sink.broken).toBe(true);
    expect(onBrokenPipe).toHaveBeenCalledTimes(1);
    // Further writes after the break neither throw nor notify again.
    await sink.write(page(n));
    expect(onBrokenPipe).toHaveBeenCalledTimes(1);
  });

  it('confirmed() resolves only once the records written so far are through the stream (their write callbacks ran), and rejects with its failure', async () => {
    const callbacks: Array<(err?: Error | null) => void> = [];
    const stream = new Writable({
      write(_chunk, _e, cb) {
        callbacks.push(cb);
      },
    });
    const sink = createJsonLinesSink(stream);
    await sink.write(page(1));
    let confirmed = false;
    const first = sink.confirmed!().then(() => (confirmed = true));
    await flushMicrotasks();
    expect(callbacks).toHaveLength(1); // the batch went out at the end of the turn
    expect(confirmed).toBe(false);
    callbacks.shift()!();
    await first;
    expect(confirmed).toBe(true);
    await sink.write(page(2));
    const second = sink.confirmed!();
    await flushMicrotasks();
    callbacks.shift()!(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    await expect(second).rejects.toMatchObject({ code: 'IO_FAILED' });
  });

  it('queuedBytes says where the next record starts, in bytes (multi-byte text too), before the stream confirms it', async () => {
    const { stream, releaseOne } = manualWritable(1 << 20);
    const sink = createJsonLinesSink(stream);
    const records = [page(1), page(2, { title: 'ünïcødé ✓ 页面' })];
    const starts: number[] = [];
    for (const r of records) {
      starts.push(sink.queuedBytes!);
      await sink.write(r);
    }
    const lines = records.map((r) => Buffer.from(JSON.stringify(r) + '\n'));
    expect(starts).toEqual([0, lines[0].length]);
    expect(sink.queuedBytes).toBe(lines[0].length + lines[1].length);
    expect(sink.confirmedBytes).toBe(0);
    await flushMicrotasks();
    releaseOne();
    expect(sink.confirmedBytes).toBe(sink.queuedBytes);
  });

  it('rejects with IO_FAILED, in words, when the disk is full (not a broken pipe)', async () => {
    const onBrokenPipe = vi.fn();
    const stream = new Writable({
      write(_chunk, _e, cb) {
        cb(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
      },
    });
    const sink = createJsonLinesSink(stream, { onBrokenPipe, label: 'output to out.jsonl' });
    // The failing write itself may or may not see the error (it can arrive later
    // in the callback); every write after it must.
    await sink.write(page(1)).catch(() => {});
    await flushMicrotasks();
    const err = await sink.write(page(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputError);
    expect((err as OutputError).code).toBe('IO_FAILED');
    expect((err as OutputError).message).toBe('cannot write output to out.jsonl: the disk is full');
    await expect(sink.close()).rejects.toMatchObject({ code: 'IO_FAILED' });
    expect(onBrokenPipe).not.toHaveBeenCalled();
    expect(sink.broken).toBe(false);
  });
});

describe('openOutput', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'crawl-output-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses the given stdout stream for "-" and for no target', async () => {
    for (const target of ['-', undefined]) {
      const chunks: string[] = [];
      const stdout = new Writable({
        write(c: Buffer, _e, cb) {
          chunks.push(c.toString());
          cb();
        },
      });
      const sink = await openOutput(target, { stdout });
      await sink.write(page(1));
      await sink.close();
      expect(chunks).toEqual([JSON.stringify(page(1)) + '\n']);
      expect(stdout.writableEnded).toBe(false);
    }
  });

  it('writes to <path>.partial and renames it into place on close', async () => {
    const path = join(dir, 'out.jsonl');
    writeFileSync(path, 'previous run\n');
    const sink = await openOutput(path);
    expect(existsSync(`${path}.partial`)).toBe(true);
    for (let i = 0; i < 100; i++) await sink.write(page(i));
    // Until close, the target still holds the old, complete file.
    expect(readFileSync(path, 'utf8')).toBe('previous run\n');
    await sink.close();
    expect(existsSync(`${path}.partial`)).toBe(false);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l).url)).toEqual(Array.from({ length: 100 }, (_, i) => page(i).url));
    expect(sink.written).toBe(100);
  });

  it('produces a complete file when closed after an interruption with nothing written', async () => {
    const path = join(dir, 'empty.jsonl');
    const sink = await openOutput(path);
    await sink.close();
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  // A record after close was dropped silently, and its confirmation resolved: a --state crawl then completed
  // its URL with the record in no file (a stop met inside a store call did exactly that).
  it('refuses a record written after close, so that nobody takes it as written', async () => {
    const path = join(dir, 'late.jsonl');
    const sink = await openOutput(path);
    await sink.write(page(1));
    await sink.close();
    await expect(sink.write(page(2))).rejects.toMatchObject({ code: 'OUTPUT_WRITE_FAILED', message: expect.stringMatching(/came after it was closed/) });
    expect(readFileSync(path, 'utf8')).toBe(JSON.stringify(page(1)) + '\n');
  });

  it('keeps <path>.partial when the caller says the output is not complete', async () => {
    const path = join(dir, 'out.jsonl');
    const sink = await openOutput(path, { keepPartial: () => true });
    await sink.write(page(1));
    await sink.close();
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(`${path}.partial`, 'utf8')).toBe(JSON.stringify(page(1)) + '\n');
  });

  it('appends to an earlier run, cutting a torn last line off into <path>.torn', async () => {
    const path = join(dir, 'out.jsonl');
    writeFileSync(`${path}.partial`, JSON.stringify(page(1)) + '\n{"type":"pa');
    const repairs: string[] = [];
    const sink = await openOutput(path, { append: true, onRepair: (m) => repairs.push(m) });
    await sink.write(page(2));
    await sink.close();
    expect(readFileSync(path, 'utf8')).toBe([page(1), page(2)].map((p) => JSON.stringify(p) + '\n').join(''));
    expect(readFileSync(`${path}.torn`, 'utf8')).toBe('{"type":"pa');
    expect(repairs).toHaveLength(1);
    expect(repairs[0]).toMatch(/torn line \(11 bytes/);
    // A finished earlier run (renamed into place) is appended to as well, and needs no repair.
    const again = await openOutput(path, { append: true, onRepair: (m) => repairs.push(m) });
    // Counted from the file's start, as the state file's output mark is.
    expect(again.queuedBytes).toBe(readFileSync(`${path}.partial`).length);
    await again.write(page(3));
    await again.close();
    expect(
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).url),
    ).toEqual([page(1).url, page(2).url, page(3).url]);
    expect(repairs).toHaveLength(1);
  });

  // Regression: the records after the mark were dropped by cutting the file, then writing the kept ones back;
  // a kill -9 between the two lost every kept record (done pages, never fetched again).
  it('finishes a reconcile a crash cut short, from its journal, before repairing a torn tail', async () => {
    const path = join(dir, 'out.jsonl');
    const head = JSON.stringify(page(1)) + '\n';
    const kept = [page(3), page(4)].map((p) => JSON.stringify(p) + '\n').join('');
    // As a crash leaves it: the journal in place, the file cut at the mark and half the kept lines back.
    writeFileSync(`${path}.reconcile`, `${JSON.stringify({ from: head.length, bytes: Buffer.byteLength(kept) })}\n${kept}`);
    writeFileSync(`${path}.partial`, head + kept.slice(0, 30));
    const repairs: string[] = [];
    const sink = await openOutput(path, { append: true, onRepair: (m) => repairs.push(m), reconcile: { from: head.length, keep: () => true } });
    await sink.write(page(5));
    await sink.close();
    expect(readFileSync(path, 'utf8')).toBe(head + kept + JSON.stringify(page(5)) + '\n');
    expect(existsSync(`${path}.reconcile`)).toBe(false);
    expect(existsSync(`${path}.torn`)).toBe(false);
    expect(repairs).toEqual([expect.stringMatching(/interrupted by a crash itself/)]);
    // A journal whose file was removed by hand since: nothing to finish, and the crawl starts a new file.
    const gone = join(dir, 'gone.jsonl');
    writeFileSync(`${gone}.reconcile`, `${JSON.stringify({ from: 0, bytes: 0 })}\n`);
    const fresh = await openOutput(gone, { append: true, keepPartial: () => true });
    await fresh.write(page(6));
    await fresh.close();
    expect(readFileSync(`${gone}.partial`, 'utf8')).toBe(JSON.stringify(page(6)) + '\n');
    expect(existsSync(`${gone}.reconcile`)).toBe(false);
  });

  it('a reconcile killed after any one of its file-system steps, then run again, keeps exactly the lines it keeps', async () => {
    const head = JSON.stringify(page(0)) + '\n';
    const tail = Array.from({ length: 40 }, (_, i) => JSON.stringify(page(i + 1)) + '\n');
    const expected = head + tail.filter((_, i) => i % 2 === 1).join('');
    const child = `
      const { openOutput } = await import(${JSON.stringify(new URL('../../dist/output/sink.js', import.meta.url).href)});
      const sink = await openOutput(process.argv[1], { append: true, keepPartial: () => true,
        reconcile: { from: Number(process.argv[2]), keep: (l) => Number(JSON.parse(l).url.split('/').pop()) % 2 === 0 } });
      await sink.close();`;
    const preload = new URL('../../fixtures/crash-at.js', import.meta.url).href;
    const runOnce = (file: string, crashAt: number) =>
      new Promise<number | null>((resolve) => {
        const p = spawn(process.execPath, ['--import', preload, '--input-type=module', '-e', child, file, String(head.length)], {
          stdio: 'ignore',
          env: { ...process.env, CRASH_AT_FS_OP: String(crashAt) },
        });
        p.on('close', (code) => resolve(code));
      });
    // Killed after its 1st, 2nd, … file-system call (a few at once, each on its own copy), until a run
    // has fewer calls than that and ends by itself; each crashed copy is then opened again to the end.
    const crashAfter = async (n: number): Promise<boolean> => {
      const file = join(dir, `out-${n}.jsonl`);
      writeFileSync(`${file}.partial`, head + tail.join(''));
      if ((await runOnce(file, n)) === 0) return false;
      expect(await runOnce(file, 0), `after a crash at step ${n}`).toBe(0);
      expect(readFileSync(`${file}.partial`, 'utf8') === expected, `after a crash at step ${n}`).toBe(true);
      expect(existsSync(`${file}.reconcile`)).toBe(false);
      return true;
    };
    let crashes = 0;
    for (let n = 1; n < 100; n += 4) {
      const crashed = await Promise.all([n, n + 1, n + 2, n + 3].map(crashAfter));
      crashes += crashed.filter(Boolean).length;
      if (!crashed.every(Boolean)) break;
    }
    expect(crashes).toBeGreaterThan(5);
  }, 60_000);

  // Regression: the atomic rename replaced whatever -o named; as root, -o /dev/full became a regular file.
  it('writes through a symlink, a FIFO or a device instead of replacing it', async () => {
    const { symlinkSync, lstatSync, statSync } = await import('node:fs');
    const real = join(dir, 'real.jsonl');
    writeFileSync(real, '');
    const link = join(dir, 'link.jsonl');
    symlinkSync(real, link);
    const viaLink = await openOutput(link);
    await viaLink.write(page(1));
    await viaLink.close();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe(JSON.stringify(page(1)) + '\n');
    expect(existsSync(`${link}.partial`)).toBe(false);

    const devNull = await openOutput('/dev/null');
    await devNull.write(page(2));
    await devNull.close();
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);

    const fifo = join(dir, 'fifo');
    await new Promise<void>((resolve, reject) => spawn('mkfifo', [fifo]).on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`)))));
    const reader = spawn('cat', [fifo]);
    let got = '';
    reader.stdout.on('data', (c: Buffer) => (got += c.toString()));
    const closed = new Promise((r) => reader.on('close', r));
    const viaFifo = await openOutput(fifo);
    await viaFifo.write(page(3));
    await viaFifo.close();
    await closed;
    expect(got).toBe(JSON.stringify(page(3)) + '\n');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('reports a missing directory as OUTPUT_UNWRITABLE with a one-line message naming the path', async () => {
    const path = join(dir, 'no', 'such', 'dir', 'out.jsonl');
    const err = await openOutput(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputError);
    expect((err as OutputError).code).toBe('OUTPUT_UNWRITABLE');
    expect((err as OutputError).message).toBe(`cannot write output to ${path}: directory does not exist`);
  });

  it('reports a directory target as OUTPUT_UNWRITABLE', async () => {
    await expect(openOutput(dir)).rejects.toMatchObject({
      code: 'OUTPUT_UNWRITABLE',
      message: `cannot write output to ${dir}: is a directory`,
    });
  });

  it.skipIf(process.platform === 'win32' || process.getuid?.() === 0)('reports a read-only directory as permission denied', async () => {
    const { chmodSync } = await import('node:fs');
    chmodSync(dir, 0o500);
    try {
      const path = join(dir, 'out.jsonl');
      await expect(openOutput(path)).rejects.toMatchObject({
        code: 'OUTPUT_UNWRITABLE',
        message: `cannot write output to ${path}: permission denied`,
      });
    } finally {
      chmodSync(dir, 0o700);
    }
  });
});
