/**
 * A FIFO in a growable ring buffer: `push` and `shift` are O(1) at any
 * length, and an empty one is 16 slots. The scheduler's ready list holds
 * every seeded host at the start of a broad crawl; `Array#shift` on an
 * array that large copies it each time (V8 can only trim small arrays in
 * place), which made one pass over 100,000 hosts take seconds.
 */
export class RingQueue<T> {
  private items: Array<T | undefined> = new Array<T | undefined>(16);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  /** The oldest item; callers check `length` first. */
  shift(): T {
    const item = this.items[this.head]!;
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    // Give memory back after a broad start-up burst drained.
    if (this.count === 0 && this.items.length > 1024) {
      this.items = new Array<T | undefined>(16);
      this.head = 0;
    }
    return item;
  }

  private grow(): void {
    const old = this.items;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.items = next;
    this.head = 0;
  }
}
