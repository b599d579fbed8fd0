import { describe, expect, it } from 'vitest';
import { RetryQueue } from '../src/store/retry-queue.js';
import { FakeClock } from './support/fake-clock.js';

describe('RetryQueue', () => {
  it('hands items back in due order, not before their time, with one timer', () => {
    const clock = new FakeClock(0);
    const due: Array<[string, number]> = [];
    const q = new RetryQueue<string>(clock, (item) => due.push([item, clock.now()]));
    q.add('c', 300);
    q.add('a', 100);
    q.add('b', 200);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(99);
    expect(due).toEqual([]);
    clock.advance(250);
    expect(due).toEqual([['a', 100], ['b', 200], ['c', 300]]);
    expect(q.size).toBe(0);
  });

  it('drains what is still waiting and cancels its timer', () => {
    const clock = new FakeClock(0);
    const q = new RetryQueue<number>(clock, () => {
      throw new Error('must not fire');
    });
    q.add(1, 50);
    q.add(2, 10);
    expect(q.drain().sort()).toEqual([1, 2]);
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(100);
  });
});
