/**
 * --warc FILE.warc.gz: the crawl's requests and responses as a WARC 1.1
 * file (records: warc-record.ts), each record compressed as its own gzip
 * member, so the file is one valid multi-member gzip stream that readers
 * (warcio, pywb) can also seek into by record offset.
 *
 * Contract:
 * - The file is written as `FILE.partial` and renamed to FILE by `close()`
 *   (also after a stop: every record in it is whole). After a crash
 *   `FILE.partial` is left, possibly ending in a torn record.
 * - Records are written in the order `write()` is called; a request and its
 *   response are adjacent. `write()` resolves with the byte offset of the
 *   response record's gzip member once both are on disk.
 * - A WARC file is never overwritten. A new crawl refuses a FILE (or
 *   FILE.partial) that exists (OUTPUT_EXISTS). A resumed crawl (--state)
 *   never appends to one either: the run writes FILE-1.warc.gz (then -2, …),
 *   and says so. WARC collections are routinely several files; replay tools
 *   take them together.
 * - A write failure rejects this and every later write with an OutputError
 *   (IO_FAILED when the disk is full or the like); the crawl stops.
 */
import { promises as fsp } from 'node:fs';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { describeFsError, OutputError, writeFailure } from '../output/sink.js';
import { exchangeRecords, warcinfoRecord, type ExchangeInput } from './warc-record.js';
import { WARC_SUFFIX } from './open-archive.js';

const gzip = promisify(zlib.gzip);

export interface WarcOpenOptions {
  /** Absolute path of the file to write. */
  path: string;
  /** As the user wrote it, for messages. */
  label: string;
  /** The option's name in messages. @default "--warc" */
  name?: string;
  /** A resumed crawl: an existing file is not overwritten; a new serial name is chosen. */
  resumed: boolean;
  /** ISO date of the warcinfo record. */
  date: string;
  /** `name: value` lines of the warcinfo record. */
  info: Array<[string, string]>;
}

export class WarcWriter {
  private size = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: OutputError | undefined;
  private closed = false;

  private constructor(
    /** Where the file ends up (may be a serial name on a resume). */
    readonly path: string,
    /** The option and the file as the user wrote it, for messages: `--warc site.warc.gz`. */
    private readonly label: string,
    private readonly handle: fsp.FileHandle,
    private readonly warcinfoId: string,
  ) {}

  /** Opens `<path>.partial` and writes the warcinfo record. Throws OutputError when the file cannot be written. */
  static async open(opts: WarcOpenOptions): Promise<WarcWriter> {
    const path = opts.resumed ? await freshName(opts.path) : opts.path;
    const name = opts.name ?? '--warc';
    if (!opts.resumed) {
      // A WARC is an archive, often the only copy of what a site served: never overwritten.
      const held = (await isFile(path)) ? opts.label : (await isFile(`${path}.partial`)) ? `${opts.label}.partial` : undefined;
      if (held !== undefined) {
        throw new OutputError('OUTPUT_EXISTS', `${name} ${held} already exists (a WARC file is never overwritten): remove it or give another name`);
      }
    }
    const label = `${name} ${path === opts.path ? opts.label : basename(path)}`;
    let handle: fsp.FileHandle;
    try {
      if ((await fsp.stat(path).catch(() => undefined))?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      handle = await fsp.open(`${path}.partial`, 'w');
    } catch (err) {
      throw new OutputError('OUTPUT_UNWRITABLE', `cannot write ${name} ${opts.label}: ${describeFsError(err)}`, { cause: err });
    }
    const info = warcinfoRecord({ filename: basename(path), date: opts.date, info: opts.info });
    const writer = new WarcWriter(path, label, handle, info.id);
    await writer.append([info.parts]);
    return writer;
  }

  /** Writes one exchange's request and response records; resolves with the response record's offset. */
  async write(input: Omit<ExchangeInput, 'warcinfoId'>): Promise<number> {
    const { request, response } = exchangeRecords({ ...input, warcinfoId: this.warcinfoId });
    const offsets = await this.append([request, response]);
    return offsets[1];
  }

  /** Waits for every write, closes the file and renames it into place. Throws the first write failure. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail.catch(() => {});
    await this.handle.close().catch(() => {});
    if (this.failure) throw this.failure;
    try {
      await fsp.rename(`${this.path}.partial`, this.path);
    } catch (err) {
      throw this.failed(err);
    }
  }

  /** Closes the file without renaming it (a failed crawl): `.partial` stays for inspection. */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail.catch(() => {});
    await this.handle.close().catch(() => {});
  }

  /** Compresses each record (off the main thread), then writes them in call order; resolves with their offsets. */
  private append(records: Buffer[][]): Promise<number[]> {
    const members = Promise.all(records.map((parts) => gzip(Buffer.concat(parts))));
    const done = this.tail.then(async () => {
      if (this.failure) throw this.failure;
      const compressed = await members;
      const offsets: number[] = [];
      try {
        for (const member of compressed) {
          offsets.push(this.size);
          for (let at = 0; at < member.length;) at += (await this.handle.write(member, at, member.length - at)).bytesWritten;
          this.size += member.length;
        }
      } catch (err) {
        this.failure ??= this.failed(err);
        throw this.failure;
      }
      return offsets;
    });
    this.tail = done.catch(() => {});
    return done;
  }

  private failed(err: unknown): OutputError {
    return writeFailure(this.label, err);
  }
}

async function isFile(path: string): Promise<boolean> {
  return (await fsp.stat(path).catch(() => undefined))?.isFile() === true;
}

/** `path` when neither it nor its `.partial` exists, else the first free `STEM-N.warc.gz`. */
async function freshName(path: string): Promise<string> {
  const exists = async (p: string) =>
    (await fsp.stat(p).catch(() => undefined)) !== undefined || (await fsp.stat(`${p}.partial`).catch(() => undefined)) !== undefined;
  if (!(await exists(path))) return path;
  const stem = path.slice(0, -WARC_SUFFIX.length);
  for (let n = 1; ; n++) {
    const candidate = `${stem}-${n}${WARC_SUFFIX}`;
    if (!(await exists(candidate))) return candidate;
  }
}
