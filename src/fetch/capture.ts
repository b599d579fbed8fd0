/**
 * What an archive (--save-dir, --warc) needs of one exchange, beyond what a
 * record needs: the body whatever its type, the response head as received
 * and the body bytes as they came off the connection. The fetcher fills one
 * in only for a request that asks (`FetchRequest.capture`), so a crawl that
 * archives nothing pays nothing: no copy of the body, no header list.
 *
 * What is exact and what is rebuilt: undici hands a dispatch handler the
 * status code, the reason phrase and the header lines as received (names in
 * their case, in order, repeats kept), and the body with its chunked framing
 * already undone but its Content-Encoding still applied. The request head is
 * rebuilt from what undici writes (request line, `host`, `connection`, then
 * our headers in order), and the HTTP version is always HTTP/1.1, the only
 * one undici's client speaks.
 */

/** One exchange as an archive keeps it. */
export interface ResponseCapture {
  /** The request head as sent, `GET /path HTTP/1.1\r\n…\r\n\r\n` (rebuilt, see the module header). */
  requestHead: string;
  /** The reason phrase of the status line, as received ("" when the server sent none). */
  statusText: string;
  /** Response header lines as received: names in their own case, in order, repeats kept. */
  rawHeaders: Array<[name: string, value: string]>;
  /** The body after undoing Content-Encoding, not charset-decoded: what --save-dir saves. Cut at the body cap. */
  body: Buffer;
  /** The body as it came off the connection (chunked framing undone, Content-Encoding kept): what a WARC holds. */
  wire: Buffer;
  /** `wire` is not the whole body: the body was cut at the cap, or the copy itself reached it. */
  wireTruncated: boolean;
}

/** undici's raw header list (name, value, name, value, …) as pairs of latin1 strings, as HTTP/1.1 defines octets. */
export function headerPairs(raw: readonly Buffer[] | null | undefined): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  if (!raw) return pairs;
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i].toString('latin1'), raw[i + 1].toString('latin1')]);
  return pairs;
}

/**
 * The request head undici writes for a GET on a pooled keep-alive socket
 * (lib/dispatcher/client-h1.js `writeH1`): request line, `host` (the URL's
 * host, default port dropped), `connection: keep-alive`, then our headers.
 */
export function requestHead(target: URL, headers: Record<string, string>): string {
  let head = `GET ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\nconnection: keep-alive\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  return `${head}\r\n`;
}
