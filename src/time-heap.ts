/**
 * A binary min-heap of (time, key): which host wakes first. Entries are not
 * removed when a host's wake time changes; the scheduler re-checks a host when
 * it pops and ignores stale entries, which keeps every update O(log n).
 */
export class WakeHeap {
  private times: number[] = [];
  private keys: string[] = [];

  get size(): number {
    return this.times.length;
  }

  peekTime(): number {
    return this.times.length ? this.times[0]! : Infinity;
  }

  push(at: number, key: string): void {
    const t = this.times;
    const k = this.keys;
    let i = t.length;
    t.push(at);
    k.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (t[p]! <= at) break;
      t[i] = t[p]!;
      k[i] = k[p]!;
      i = p;
    }
    t[i] = at;
    k[i] = key;
  }

  pop(): { at: number; key: string } | undefined {
    const t = this.times;
    const k = this.keys;
    if (t.length === 0) return undefined;
    const top = { at: t[0]!, key: k[0]! };
    const lastT = t.pop()!;
    const lastK = k.pop()!;
    if (t.length > 0) {
      let i = 0;
      const n = t.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && t[r]! < t[l]! ? r : l;
        if (t[c]! >= lastT) break;
        t[i] = t[c]!;
        k[i] = k[c]!;
        i = c;
      }
      t[i] = lastT;
      k[i] = lastK;
    }
    return top;
  }
}
