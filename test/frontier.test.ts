import { describe, expect, it } from 'vitest';
import { MemoryFrontier } from '../src/frontier.js';
import { SeenSet, fingerprint } from '../src/seen-set.js';

describe('SeenSet', () => {
  it('adds once, remembers across growth, and never forgets', () => {
    const s = new SeenSet(4);
    let added = 0;
    let again = 0;
    for (let i = 0; i < 50_000; i++) if (s.add(`http://h${i % 97}.test/p/${i}`)) added++;
    for (let i = 0; i < 50_000; i++) if (s.add(`http://h${i % 97}.test/p/${i}`)) again++;
    expect([added, again]).toEqual([50_000, 0]);
    expect(s.size).toBe(50_000);
    expect(s.has('http://h0.test/p/0')).toBe(true);
    expect(s.has('http://h0.test/p/50001')).toBe(false);
  });

  it('stays within 16 bytes per URL', () => {
    const s = new SeenSet();
    for (let i = 0; i < 100_000; i++) s.add(`http://example.test/${i}`);
    expect(s.byteLength / s.size).toBeLessThanOrEqual(16 * 1.5); // right after a doubling it may hold 1.5x
  });

  it('fingerprints are 53-bit, nonzero and spread', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const fp = fingerprint(`u${i}`);
      expect(Number.isSafeInteger(fp)).toBe(true);
      expect(fp).toBeGreaterThan(0);
      seen.add(fp);
    }
    expect(seen.size).toBe(10_000);
  });
});

describe('MemoryFrontier', () => {
  const entry = (url: string) => ({ url, depth: 0, parent: null, hops: 0, attempt: 0 });

  it('keeps one FIFO per host and counts totals', () => {
    const f = new MemoryFrontier();
    f.push('a', entry('a1'));
    f.push('b', entry('b1'));
    f.push('a', entry('a2'));
    expect(f.size()).toBe(3);
    expect(f.size('a')).toBe(2);
    expect(f.shift('a')!.url).toBe('a1');
    f.unshift('a', entry('a0'));
    expect(f.peek('a')!.url).toBe('a0');
    expect([...f.hosts()].sort()).toEqual(['a', 'b']);
    expect(f.drain('a').map((e) => e.url)).toEqual(['a0', 'a2']);
    expect(f.size()).toBe(1);
    expect(f.shift('a')).toBeUndefined();
  });

  it('survives long queues without losing order (head compaction)', () => {
    const f = new MemoryFrontier();
    for (let i = 0; i < 5000; i++) f.push('h', entry(`u${i}`));
    for (let i = 0; i < 5000; i++) expect(f.shift('h')!.url).toBe(`u${i}`);
    expect(f.size()).toBe(0);
  });

  it('dedupes on markSeen', () => {
    const f = new MemoryFrontier();
    expect(f.markSeen('http://a/')).toBe(true);
    expect(f.markSeen('http://a/')).toBe(false);
    expect(f.isSeen('http://a/')).toBe(true);
    expect(f.seenCount()).toBe(1);
  });
});
