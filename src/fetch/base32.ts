/**
 * RFC 4648 base32, as WARC and our records write digests (`sha1:…`,
 * `sha256:…`). Its own module so the per-page body digest does not load the
 * WARC writer's code into every crawl.
 */

const CODES = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 'latin1');
const PAD = 0x3d; // '='

/** RFC 4648 base32 (upper case, padded to a multiple of 8 characters), as WARC digests are written. */
export function base32(bytes: Uint8Array): string {
  const chars = Math.ceil((bytes.length * 8) / 5);
  // Character codes into one buffer, read once as latin1: a page's digest costs no string concatenation.
  const out = Buffer.allocUnsafe(Math.ceil(chars / 8) * 8);
  let at = 0;
  let bits = 0;
  let value = 0;
  for (let i = 0; i < bytes.length; i++) {
    value = ((value << 8) | bytes[i]) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      out[at++] = CODES[(value >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
  }
  if (bits > 0) out[at++] = CODES[(value << (5 - bits)) & 31]!;
  out.fill(PAD, at);
  return out.toString('latin1');
}
