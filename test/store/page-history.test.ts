import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base32 } from '../../src/fetch/base32.js';
import { bodyDigest, digestBytes, digestText } from '../../src/fetch/body-digest.js';
import { decodeIds, encodeIds, MemoryHistory } from '../../src/store/page-history.js';

describe('body digest', () => {
  it('is sha256 in base32, as WARC writes digests, and converts to its 32 bytes and back', () => {
    const body = Buffer.from('<!doctype html><title>x</title>');
    const digest = bodyDigest(body);
    expect(digest).toMatch(/^sha256:[A-Z2-7]{52}====$/);
    const bytes = digestBytes(digest)!;
    expect(bytes.equals(createHash('sha256').update(body).digest())).toBe(true);
    expect(digestText(bytes)).toBe(digest);
    // Lower case and no padding read the same; anything else is not ours.
    expect(digestBytes(`sha256:${digest.slice(7).replace(/=+$/, '').toLowerCase()}`)!.equals(bytes)).toBe(true);
    expect(digestBytes('sha1:ABC')).toBeUndefined();
    expect(digestBytes('sha256:ABC')).toBeUndefined();
    // A character outside the alphabet anywhere, ASCII or not, and padding inside the text.
    for (const bad of ['1', '=', 'é', '\u017f']) expect(digestBytes(`sha256:${digest.slice(7, 30)}${bad}${digest.slice(31)}`)).toBeUndefined();
  });
});

describe('base32', () => {
  it("writes RFC 4648's test vectors", () => {
    const vectors = { '': '', f: 'MY======', fo: 'MZXQ====', foo: 'MZXW6===', foob: 'MZXW6YQ=', fooba: 'MZXW6YTB', foobar: 'MZXW6YTBOI======' };
    for (const [text, expected] of Object.entries(vectors)) expect(base32(Buffer.from(text))).toBe(expected);
  });

  it('reads back to the same bytes as a digest of any 32 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        expect(digestBytes(digestText(bytes))!.equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('outlink ids', () => {
  it('round-trip as a set, nearby ids in one byte each, large ids intact', () => {
    const ids = [5, 3, 1000, 4, 5, 2 ** 40 + 7];
    expect(decodeIds(encodeIds(ids))).toEqual([3, 4, 5, 1000, 2 ** 40 + 7]);
    expect(encodeIds([100, 101, 102, 103]).length).toBe(1 + 3);
    expect(decodeIds(encodeIds([]))).toEqual([]);
  });

  it('round-trip any list of ids as its sorted distinct ids', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })), { maxLength: 40 }), (ids) => {
        expect(decodeIds(encodeIds(ids))).toEqual([...new Set(ids)].sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });
});

describe('memory history', () => {
  it('keeps its own copies', () => {
    const h = new MemoryHistory();
    const page = { status: 200, fetchedAt: 1 };
    const links = ['http://a/1'];
    h.put('http://a/', page, links);
    page.status = 500;
    links.push('http://a/2');
    expect(h.get('http://a/')).toEqual({ status: 200, fetchedAt: 1 });
    expect(h.outlinks('http://a/')).toEqual(['http://a/1']);
  });
});
