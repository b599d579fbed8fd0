/**
 * The N items with the largest keys seen so far, in O(N) memory: a min-heap
 * whose root is the smallest item kept, replaced when a larger one comes.
 * Among equal keys the earlier item stays (a report of a million records
 * shows the first of equally slow pages, not an arbitrary one).
 */
export class TopN<T> {
  private readonly heap: Array<{ key: number; seq: number; item: T }> = [];
  private seq = 0;

  constructor(private readonly n: number) {}

  get size(): number {
    return this.heap.length;
  }

  /** Whether an item with this key would be kept (lets callers skip building it). */
  accepts(key: number): boolean {
    return this.n > 0 && (this.heap.length < this.n || key > this.heap[0].key);
  }

  add(key: number, item: T): void {
    if (!this.accepts(key)) return;
    const node = { key, seq: this.seq++, item };
    if (this.heap.length < this.n) {
      this.heap.push(node);
      this.up(this.heap.length - 1);
    } else {
      this.heap[0] = node;
      this.down(0);
    }
  }

  /** Largest key first; equal keys in arrival order. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => b.key - a.key || a.seq - b.seq).map((h) => h.item);
  }

  // "Smaller" = lower key, or equal key and later arrival (evicted first).
  private less(i: number, j: number): boolean {
    const a = this.heap[i];
    const b = this.heap[j];
    return a.key < b.key || (a.key === b.key && a.seq > b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.heap[i];
    this.heap[i] = this.heap[j]!;
    this.heap[j] = t;
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) return;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.heap.length && this.less(l, m)) m = l;
      if (r < this.heap.length && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
