import { describe, expect, it } from 'vitest';
import { MemoryFrontier, type FrontierEntry } from '../../src/store/memory-frontier.js';
import { SeenSet, fingerprint } from '../../src/util/seen-set.js';
import { seededRandom } from '../support/seeded-random.js';

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

  it('stays within 16 bytes per URL at every size past its initial capacity', () => {
    const s = new SeenSet();
    let worst = 0;
    for (let i = 0; i < 300_000; i++) {
      s.add(`http://example.test/${i}`);
      if (s.size >= 1024) worst = Math.max(worst, s.byteLength / s.size);
    }
    expect(s.size).toBe(300_000);
    expect(worst).toBeLessThanOrEqual(16);
    expect(worst).toBeGreaterThan(15); // right after a growth it is half full: the bound is tight, not slack
  });

  it('with ids, answers each key its id across growth, 0 for one added without, and stays within 24 bytes per URL', () => {
    const s = new SeenSet(4, { ids: true });
    let worst = 0;
    for (let i = 1; i <= 100_000; i++) {
      s.addFingerprint(fingerprint(`http://example.test/${i}`), i % 10 === 0 ? 0 : i);
      if (s.size >= 1024) worst = Math.max(worst, s.byteLength / s.size);
    }
    for (let i = 1; i <= 100_000; i += 7) expect(s.idOf(`http://example.test/${i}`)).toBe(i % 10 === 0 ? 0 : i);
    expect(s.idOf('http://example.test/0')).toBeUndefined();
    // A present key without an id learns one; one with an id keeps it; an id past 32 bits is not kept.
    expect(s.addFingerprint(fingerprint('http://example.test/10'), 77)).toBe(false);
    expect(s.idOf('http://example.test/10')).toBe(77);
    s.addFingerprint(fingerprint('http://example.test/11'), 78);
    expect(s.idOf('http://example.test/11')).toBe(11);
    s.addFingerprint(fingerprint('http://example.test/big'), 2 ** 33);
    expect(s.idOf('http://example.test/big')).toBe(0);
    expect(worst).toBeLessThanOrEqual(24);
    // Without ids, a present key answers 0.
    const plain = new SeenSet();
    plain.add('x');
    expect([plain.idOf('x'), plain.idOf('y')]).toEqual([0, undefined]);
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

describe('MemoryFrontier storage', () => {
  it('gives back equal entries in FIFO order through any mix of push, unshift, shift, peek and drain', () => {
    const f = new MemoryFrontier();
    const model = new Map<string, FrontierEntry[]>();
    const random = seededRandom(3);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    let n = 0;
    const makeEntry = (): FrontierEntry => {
      const e: FrontierEntry = {
        url: `http://h.test/${n++}`,
        depth: pick([0, 1, 7, 255, 256, 70_000, 2 ** 28 - 1, 2 ** 28, 2 ** 40]),
        parent: pick([null, 'http://h.test/parent']),
        hops: pick([0, 3, 255, 256]),
        attempt: pick([0, 1, 254, 1000]),
      };
      const throttles = pick([undefined, undefined, 0, 2, 254, 255, 9999]);
      if (throttles !== undefined) e.throttles = throttles;
      return e;
    };
    for (let step = 0; step < 30_000; step++) {
      const key = pick(['a', 'b', 'c']);
      const q = model.get(key) ?? [];
      model.set(key, q);
      const op = random();
      if (op < 0.5) {
        const e = makeEntry();
        f.push(key, e);
        q.push(e);
      } else if (op < 0.6) {
        const e = makeEntry();
        f.unshift(key, e);
        q.unshift(e);
      } else if (op < 0.95) {
        expect(f.peek(key)).toEqual(q[0]);
        expect(f.shift(key)).toEqual(q.shift());
      } else if (op < 0.96) {
        expect(f.drain(key)).toEqual(q.splice(0));
      }
      expect(f.size(key)).toBe(q.length);
    }
    let total = 0;
    for (const q of model.values()) total += q.length;
    expect(f.size()).toBe(total);
  });

  it('keeps "throttles" absent when it was never set', () => {
    const f = new MemoryFrontier();
    f.push('h', { url: 'http://h/', depth: 1, parent: null, hops: 0, attempt: 0 });
    expect(Object.keys(f.shift('h')!)).not.toContain('throttles');
  });

  it('never hands out the pushed object itself', () => {
    const f = new MemoryFrontier();
    const e: FrontierEntry = { url: 'http://h/', depth: 2 ** 40, parent: null, hops: 0, attempt: 0 };
    f.push('h', e);
    e.attempt = 5;
    const out = f.shift('h')!;
    expect(out).not.toBe(e);
    expect(out.attempt).toBe(0);
  });
});
