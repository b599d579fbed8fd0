/**
 * The digest of a response body, as records carry it (`digest`) and the
 * store keeps it per page: SHA-256 of the body's bytes with any
 * Content-Encoding undone (so a gzip and an identity answer of the same page
 * agree), before any charset decoding, written the way WARC writes digests:
 * `sha256:` and RFC 4648 base32 (upper case, padded: 56 characters).
 *
 * `digestBytes` and `digestText` convert between that text and its 32 raw
 * bytes, which is how a store keeps it compactly.
 */
import crypto from 'node:crypto';
import { base32 } from './base32.js';

const PREFIX = 'sha256:';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** One-shot hashing (Node 20.12+, 21.7+): no Hash object a page. Older Nodes stream it. */
const hashOnce = typeof crypto.hash === 'function' ? (bytes: Uint8Array) => crypto.hash('sha256', bytes, 'buffer') : undefined;

/** `sha256:BASE32` of the body bytes. */
export function bodyDigest(bytes: Uint8Array): string {
  return PREFIX + base32(hashOnce !== undefined ? hashOnce(bytes) : crypto.createHash('sha256').update(bytes).digest());
}

/** Each base32 character's value by char code, either case (-1: not base32). */
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) {
  VALUES[ALPHABET.charCodeAt(i)] = i;
  VALUES[ALPHABET.toLowerCase().charCodeAt(i)] = i;
}
const EQUALS = 0x3d;

/**
 * The 32 bytes a `sha256:BASE32` digest names; undefined for any other text
 * (another algorithm, a typo). Read by char code, with no copy of the text:
 * a --state crawl calls it once a page.
 */
export function digestBytes(digest: string): Buffer | undefined {
  if (!digest.startsWith(PREFIX)) return undefined;
  let end = digest.length;
  while (end > PREFIX.length && digest.charCodeAt(end - 1) === EQUALS) end--;
  if (end - PREFIX.length !== 52) return undefined;
  const out = Buffer.allocUnsafe(32);
  let bits = 0;
  let value = 0;
  let at = 0;
  for (let i = PREFIX.length; i < end; i++) {
    const code = digest.charCodeAt(i);
    const v = code < 128 ? VALUES[code] : -1;
    if (v < 0) return undefined;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out[at++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  return out;
}

/** The text form of 32 raw digest bytes. */
export function digestText(bytes: Uint8Array): string {
  return PREFIX + base32(bytes);
}
