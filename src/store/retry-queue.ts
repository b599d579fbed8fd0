/**
 * Work that may not start before a given time (a URL waiting out its retry
 * backoff). One timer, armed for the earliest item; due items are handed back
 * to `onDue`, which puts them in the frontier so they pay their host's gap
 * again like any other request.
 */
import type { Clock, Timer } from '../clock.js';
import { TimeHeap } from './time-heap.js';

export class RetryQueue<T> {
  private readonly heap = new TimeHeap<T>();
  private timer: Timer | null = null;
  private timerAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (item: T) => void,
  ) {}

  get size(): number {
    return this.heap.size;
  }

  add(item: T, dueAt: number): void {
    this.heap.push(dueAt, item);
    this.arm();
  }

  /** Removes everything still waiting (a stopped crawl reports them). */
  drain(): T[] {
    this.disarm();
    return this.heap.drain();
  }

  private fire = (): void => {
    this.timer = null;
    this.timerAt = Infinity;
    const now = this.clock.now();
    while (this.heap.peekTime() <= now) this.onDue(this.heap.pop()!.item);
    this.arm();
  };

  private arm(): void {
    const next = this.heap.peekTime();
    if (next === Infinity || next >= this.timerAt) return;
    this.disarm();
    this.timerAt = next;
    this.timer = this.clock.setTimer(this.fire, Math.max(0, next - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }
}
