/** Which workers may join a signed (or unsigned) shared crawl, and what a refused one is told. */
import { describe, expect, it } from 'vitest';
import { isRotation, signingKeyRefusal, type WorkerKey } from '../../src/store/crawl-signing-key.js';

const CRAWL = 'Redis crawl "shop"';
const A: WorkerKey = { file: 'keys/a.jwk', thumbprint: 'AAAA' };
const B: WorkerKey = { file: 'keys/b.jwk', thumbprint: 'BBBB' };
const C: WorkerKey = { file: 'keys/c.jwk', thumbprint: 'CCCC' };

describe('signingKeyRefusal', () => {
  it.each([
    ['no key kept yet (a new crawl, or one made before keys were kept), no key', undefined, []],
    ['no key kept yet, a key', undefined, [A]],
    ['unsigned, no key', '', []],
    ["signed with A, A's worker", 'AAAA', [A]],
    ['signed with A, a rotation to B (B, then A)', 'AAAA', [B, A]],
    ['signed with B after the rotation, a worker given both', 'BBBB', [B, A]],
  ] as const)('lets a worker join: %s', (_, kept, keys) => {
    expect(signingKeyRefusal(CRAWL, kept, keys)).toBeUndefined();
  });

  it.each([
    [
      'unsigned, a key',
      '',
      [A],
      'Redis crawl "shop" is not signed, and this worker would sign with --sign-key keys/a.jwk: join it without --sign-key, or sign another crawl',
    ],
    ['signed, no key', 'AAAA', [], 'Redis crawl "shop" is signed with key AAAA, and this worker has no --sign-key: give it that key'],
    [
      'signed with A, B',
      'AAAA',
      [B],
      `Redis crawl "shop" is signed with key AAAA, not with --sign-key keys/b.jwk (BBBB): give the crawl's key (to rotate: the new key, then the crawl's)`,
    ],
    [
      'signed with B after a rotation, the old key A alone',
      'BBBB',
      [A],
      `Redis crawl "shop" is signed with key BBBB, not with --sign-key keys/a.jwk (AAAA): give the crawl's key (to rotate: the new key, then the crawl's)`,
    ],
    [
      'signed with A, neither of two',
      'AAAA',
      [B, C],
      `Redis crawl "shop" is signed with key AAAA, not with --sign-key keys/b.jwk (BBBB) and keys/c.jwk (CCCC): give the crawl's key (to rotate: the new key, then the crawl's)`,
    ],
  ] as const)('refuses, in one line: %s', (_, kept, keys, line) => {
    expect(signingKeyRefusal(CRAWL, kept, keys)).toBe(line);
  });
});

describe('isRotation', () => {
  it('is a worker given the new key, then the one the crawl is signed with', () => {
    expect(isRotation('AAAA', [B, A])).toBe(true);
    expect(isRotation('BBBB', [B, A])).toBe(false); // already moved
    expect(isRotation('AAAA', [A])).toBe(false);
    expect(isRotation(undefined, [B, A])).toBe(false);
    expect(isRotation('', [])).toBe(false);
  });
});
