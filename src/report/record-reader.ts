/**
 * Reads a JSON-lines records file as a stream, one line at a time, so a
 * file of any size is read in constant memory: each line is parsed, handed
 * on, and dropped. Lines are split on raw bytes and capped (MAX_LINE_BYTES):
 * a file with no newlines (a binary, a giant JSON document) cannot make one
 * line fill the memory.
 *
 * A file whose first non-blank line is not a crawl record is refused (it is
 * most likely the wrong file); later bad lines (a last line torn by a crash)
 * are counted and skipped.
 */
import type { HostKeyMode } from '../config/settings-types.js';
import { viewRecord, type RecordView } from './record-view.js';

export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** The input cannot be read, or is not a records file. The message is one line and names the file. */
export class ReportInputError extends Error {
  override readonly name = 'ReportInputError';
  readonly code = 'REPORT_INPUT_INVALID';
}

export interface ReadHandlers {
  record(view: RecordView): void;
  badLine(lineNumber: number): void;
}

const NEWLINE = 0x0a;

export async function readRecords(
  input: AsyncIterable<Buffer | string>,
  label: string,
  handlers: ReadHandlers,
  mode: HostKeyMode = 'host',
): Promise<{ records: number; lines: number }> {
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  let oversized = false;
  let lineNumber = 0;
  let records = 0;
  let sawContent = false;

  const line = (buf: Buffer): void => {
    lineNumber++;
    if (oversized) {
      oversized = false;
      if (!sawContent) throw new ReportInputError(`${label}: line ${lineNumber} is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB: not a crawl records file`);
      sawContent = true;
      handlers.badLine(lineNumber);
      return;
    }
    let text = buf.toString('utf8');
    if (lineNumber === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return;
    let view: RecordView | null = null;
    try {
      view = viewRecord(JSON.parse(text), mode);
    } catch {
      view = null;
    }
    if (view === null) {
      if (!sawContent) {
        throw new ReportInputError(
          `${label}: line ${lineNumber} is not a crawl record (expected JSON lines with "type": "page" or "skipped", as crawl writes them)`,
        );
      }
      handlers.badLine(lineNumber);
      return;
    }
    sawContent = true;
    records++;
    handlers.record(view);
  };

  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let nl = buf.indexOf(NEWLINE, from); nl !== -1; nl = buf.indexOf(NEWLINE, from)) {
      const part = buf.subarray(from, nl);
      if (pieces.length === 0) line(part);
      else {
        if (!oversized) pieces.push(part);
        line(Buffer.concat(pieces));
      }
      pieces = [];
      pieceBytes = 0;
      from = nl + 1;
    }
    if (from < buf.length && !oversized) {
      pieces.push(buf.subarray(from));
      pieceBytes += buf.length - from;
      if (pieceBytes > MAX_LINE_BYTES) {
        oversized = true;
        pieces = [];
        pieceBytes = 0;
      }
    }
  }
  if (pieces.length > 0 || oversized) line(Buffer.concat(pieces));
  if (records === 0) throw new ReportInputError(`${label}: no crawl records in it`);
  return { records, lines: lineNumber };
}
