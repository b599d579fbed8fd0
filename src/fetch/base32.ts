/**
 * RFC 4648 base32, as WARC and our records write digests (`sha1:…`,
 * `sha256:…`). Its own module so the per-page body digest does not load the
 * WARC writer's code into every crawl.
 */

/** RFC 4648 base32 (upper case, no padding needed for 20-byte SHA-1s), as WARC digests are written. */
export function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}
