/**
 * A strict reader for .warc.gz files, for tests: splits the file into its
 * gzip members by parsing each member's header and inflating its deflate
 * stream (so a member boundary is found, not assumed), then parses each
 * member as exactly one WARC record. Anything unexpected throws.
 */
import { inflateRawSync } from 'node:zlib';

export interface WarcRecordRead {
  /** Byte offset of the record's gzip member in the file. */
  offset: number;
  version: string;
  /** Header names as written; lookups via `header()`. */
  headers: Array<[string, string]>;
  header(name: string): string | undefined;
  block: Buffer;
}

/** One gzip member at `at`: its decompressed bytes and where the next member starts. */
function gzipMember(file: Buffer, at: number): { data: Buffer; next: number } {
  if (file[at] !== 0x1f || file[at + 1] !== 0x8b || file[at + 2] !== 8) throw new Error(`no gzip member at offset ${at}`);
  const flags = file[at + 3];
  let pos = at + 10;
  if (flags & 4) pos += 2 + file.readUInt16LE(pos); // FEXTRA
  if (flags & 8) pos = file.indexOf(0, pos) + 1; // FNAME
  if (flags & 16) pos = file.indexOf(0, pos) + 1; // FCOMMENT
  if (flags & 2) pos += 2; // FHCRC
  const { buffer: data, engine } = inflateRawSync(file.subarray(pos), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  const end = pos + engine.bytesWritten;
  const size = file.readUInt32LE(end + 4);
  if (size !== data.length % 2 ** 32) throw new Error(`gzip member at ${at}: ISIZE ${size} but ${data.length} bytes inflated`);
  return { data, next: end + 8 };
}

function parseRecord(data: Buffer, offset: number): WarcRecordRead {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) throw new Error(`record at ${offset}: no end of WARC headers`);
  const lines = data.subarray(0, headEnd).toString('utf8').split('\r\n');
  const version = lines.shift()!;
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`record at ${offset}: bad header line ${JSON.stringify(line)}`);
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  const header = (name: string) => headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
  const length = Number(header('Content-Length'));
  const block = data.subarray(headEnd + 4, headEnd + 4 + length);
  if (block.length !== length) throw new Error(`record at ${offset}: Content-Length ${length} but ${block.length} bytes`);
  const rest = data.subarray(headEnd + 4 + length);
  if (rest.toString('latin1') !== '\r\n\r\n')
    throw new Error(`record at ${offset}: expected CRLF CRLF after the block, got ${JSON.stringify(rest.toString('latin1').slice(0, 20))}`);
  return { offset, version, headers, header, block };
}

/** Every record of a .warc.gz file, one per gzip member, in order. */
export function readWarc(file: Buffer): WarcRecordRead[] {
  const records: WarcRecordRead[] = [];
  for (let at = 0; at < file.length;) {
    const { data, next } = gzipMember(file, at);
    records.push(parseRecord(data, at));
    at = next;
  }
  return records;
}

/** An HTTP message block: its head lines and its body. */
export function splitHttp(block: Buffer): { startLine: string; headers: Array<[string, string]>; body: Buffer } {
  const end = block.indexOf('\r\n\r\n');
  const lines = block.subarray(0, end).toString('latin1').split('\r\n');
  const startLine = lines.shift()!;
  const headers = lines.map((l): [string, string] => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
  return { startLine, headers, body: block.subarray(end + 4) };
}
