/**
 * WARC 1.1 records as bytes (ISO 28500:2017; the IIPC's
 * warc-specifications), before compression: a `warcinfo` record that
 * describes the file, and a `request` + `response` pair per fetched URL
 * (`request` + `revisit` for a re-crawl's unchanged page).
 * Pure apart from fresh record ids; warc-writer.ts compresses and writes.
 *
 * The response record's block is the HTTP response as received, head and
 * body, with two honest deviations the client makes unavoidable (see
 * fetch/capture.ts): the head is rebuilt from the parsed status line and
 * header lines (version always HTTP/1.1), and the body comes without its
 * chunked framing, so a `Transfer-Encoding` header is written as
 * `X-Archive-Orig-Transfer-Encoding` (the prefix pywb uses for original
 * headers) to keep replay tools from de-chunking a plain body. The body
 * keeps its Content-Encoding, as WARC expects (the payload digest is over
 * the entity as transferred). A body cut at --max-body is marked
 * `WARC-Truncated: length`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ResponseCapture } from '../fetch/capture.js';

const CRLF = '\r\n';
const RECORD_END = Buffer.from('\r\n\r\n');

import { base32 } from '../fetch/base32.js';

export { base32 };

/** `sha1:BASE32` of some bytes, the form WARC-Block-Digest and WARC-Payload-Digest take. */
export function sha1Digest(...parts: Uint8Array[]): string {
  const hash = createHash('sha1');
  for (const part of parts) hash.update(part);
  return `sha1:${base32(hash.digest())}`;
}

/** `<urn:uuid:…>`, a new WARC-Record-ID. */
export function newRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** One record: WARC header lines, then the block in parts (not copied together), then the end marker. */
export function record(fields: Array<[string, string]>, block: Buffer[]): Buffer[] {
  const length = block.reduce((n, b) => n + b.length, 0);
  let head = `WARC/1.1${CRLF}`;
  for (const [name, value] of fields) head += `${name}: ${value}${CRLF}`;
  head += `Content-Length: ${length}${CRLF}${CRLF}`;
  return [Buffer.from(head, 'utf8'), ...block, RECORD_END];
}

export interface WarcinfoOptions {
  /** The file's own name (WARC-Filename). */
  filename: string;
  /** ISO date of the record. */
  date: string;
  /** `name: value` lines describing the crawl (software, user agent, robots policy, …). */
  info: Array<[string, string]>;
}

export function warcinfoRecord(opts: WarcinfoOptions): { id: string; parts: Buffer[] } {
  const id = newRecordId();
  const body = Buffer.from(opts.info.map(([k, v]) => `${k}: ${oneLine(v)}${CRLF}`).join(''), 'utf8');
  const fields: Array<[string, string]> = [
    ['WARC-Type', 'warcinfo'],
    ['WARC-Date', opts.date],
    ['WARC-Filename', oneLine(opts.filename)],
    ['WARC-Record-ID', id],
    ['Content-Type', 'application/warc-fields'],
    ['WARC-Block-Digest', sha1Digest(body)],
  ];
  return { id, parts: record(fields, [body]) };
}

export interface ExchangeInput {
  /** The URL requested, without credentials. */
  url: string;
  /** ISO date of the request (WARC-Date of both records). */
  date: string;
  status: number;
  capture: ResponseCapture;
  /** The warcinfo record these belong to. */
  warcinfoId: string;
  /**
   * An answer that repeats what an earlier pass archived (a re-crawl's
   * `unchanged` page): written as a `revisit` record instead of a response.
   * @default none: a response record
   */
  revisit?: Revisit;
}

/**
 * A WARC 1.1 revisit (§6.7.2, as Heritrix and browsertrix write them): a 304
 * is `server-not-modified`; a 2xx whose payload digest equals the last
 * pass's is `identical-payload-digest`, its block the response head only
 * (`WARC-Truncated: length`), its payload digest the one of the body it did
 * not repeat. Both name the original by `WARC-Refers-To-Target-URI` (the
 * same URL) and `WARC-Refers-To-Date` (when the last pass fetched it).
 */
export interface Revisit {
  profile: 'server-not-modified' | 'identical-payload-digest';
  /** ISO date of the original capture. */
  refersToDate: string;
}

export const REVISIT_PROFILES = {
  'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;

/** The HTTP response head as it goes into the record (see the module header). */
export function responseHead(status: number, capture: ResponseCapture): string {
  let head = `HTTP/1.1 ${status}${capture.statusText === '' ? '' : ` ${capture.statusText}`}${CRLF}`;
  for (const [name, value] of capture.rawHeaders) {
    head += `${name.toLowerCase() === 'transfer-encoding' ? `X-Archive-Orig-${name}` : name}: ${value}${CRLF}`;
  }
  return head + CRLF;
}

/** The request and response records of one exchange; `responseId` is what the request's WARC-Concurrent-To names. */
export function exchangeRecords(input: ExchangeInput): { responseId: string; request: Buffer[]; response: Buffer[] } {
  const { capture } = input;
  const responseId = newRecordId();
  const head = Buffer.from(responseHead(input.status, capture), 'latin1');
  const revisit = input.revisit;
  const responseFields: Array<[string, string]> = revisit
    ? [
        ['WARC-Type', 'revisit'],
        ['WARC-Record-ID', responseId],
        ['WARC-Date', input.date],
        ['WARC-Target-URI', input.url],
        ['WARC-Warcinfo-ID', input.warcinfoId],
        ['WARC-Profile', REVISIT_PROFILES[revisit.profile]],
        ['WARC-Refers-To-Target-URI', input.url],
        ['WARC-Refers-To-Date', revisit.refersToDate],
        ['Content-Type', 'application/http;msgtype=response'],
        ['WARC-Block-Digest', sha1Digest(head)],
        ...(revisit.profile === 'identical-payload-digest'
          ? ([
              ['WARC-Payload-Digest', sha1Digest(capture.wire)],
              ['WARC-Truncated', 'length'],
            ] as Array<[string, string]>)
          : []),
      ]
    : [
        ['WARC-Type', 'response'],
        ['WARC-Record-ID', responseId],
        ['WARC-Date', input.date],
        ['WARC-Target-URI', input.url],
        ['WARC-Warcinfo-ID', input.warcinfoId],
        ['Content-Type', 'application/http;msgtype=response'],
        ['WARC-Block-Digest', sha1Digest(head, capture.wire)],
        ['WARC-Payload-Digest', sha1Digest(capture.wire)],
      ];
  if (capture.wireTruncated && !revisit) responseFields.push(['WARC-Truncated', 'length']);
  const requestBlock = Buffer.from(capture.requestHead, 'latin1');
  const requestFields: Array<[string, string]> = [
    ['WARC-Type', 'request'],
    ['WARC-Record-ID', newRecordId()],
    ['WARC-Date', input.date],
    ['WARC-Target-URI', input.url],
    ['WARC-Warcinfo-ID', input.warcinfoId],
    ['WARC-Concurrent-To', responseId],
    ['Content-Type', 'application/http;msgtype=request'],
    ['WARC-Block-Digest', sha1Digest(requestBlock)],
  ];
  return { responseId, request: record(requestFields, [requestBlock]), response: record(responseFields, revisit ? [head] : [head, capture.wire]) };
}

/** A header value on one line (a file name or user agent never breaks the record). */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
