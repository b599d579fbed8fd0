/**
 * A binary min-heap of (time, item). The scheduler files hosts by wake time
 * and never removes an entry when a host's time changes: it re-checks a host
 * when it pops and ignores stale entries, which keeps every update O(log n).
 */
export class TimeHeap<T> {
  private times: number[] = [];
  private items: T[] = [];

  get size(): number {
    return this.times.length;
  }

  peekTime(): number {
    return this.times.length ? this.times[0] : Infinity;
  }

  push(at: number, item: T): void {
    const t = this.times;
    const k = this.items;
    let i = t.length;
    t.push(at);
    k.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (t[p] <= at) break;
      t[i] = t[p]!;
      k[i] = k[p]!;
      i = p;
    }
    t[i] = at;
    k[i] = item;
  }

  pop(): { at: number; item: T } | undefined {
    const t = this.times;
    const k = this.items;
    if (t.length === 0) return undefined;
    const top = { at: t[0], item: k[0] };
    const lastT = t.pop()!;
    const lastK = k.pop()!;
    if (t.length > 0) {
      let i = 0;
      const n = t.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && t[r] < t[l] ? r : l;
        if (t[c] >= lastT) break;
        t[i] = t[c]!;
        k[i] = k[c]!;
        i = c;
      }
      t[i] = lastT;
      k[i] = lastK;
    }
    return top;
  }

  /** Removes and returns the items `pred` picks, in no particular order; the rest keep their times. O(n log n). */
  removeWhere(pred: (item: T) => boolean): T[] {
    const times = this.times;
    const items = this.items;
    this.times = [];
    this.items = [];
    const out: T[] = [];
    for (let i = 0; i < items.length; i++) {
      if (pred(items[i])) out.push(items[i]);
      else this.push(times[i], items[i]);
    }
    return out;
  }

  /** Removes and returns every item, in no particular order. */
  drain(): T[] {
    const out = this.items;
    this.items = [];
    this.times = [];
    return out;
  }
}
