import { describe, expect, it } from 'vitest';
import { RedisClock } from '../../src/store/redis-clock.js';

describe('RedisClock', () => {
  it('keeps the sample with the shortest round trip, and a better recent one replaces an older best', () => {
    const clock = new RedisClock();
    clock.sample(10_050, 0, 100); // rtt 100: offset 10,000
    expect(clock.offsetMs).toBe(10_000);
    clock.sample(20_210, 10_150, 10_250); // rtt 100, 10 s later: ages the best by 10 ms, so it wins
    expect(clock.offsetMs).toBe(10_010);
    clock.sample(20_400, 10_300, 10_500); // rtt 200: worse, ignored
    expect(clock.offsetMs).toBe(10_010);
    clock.sample(30_302, 20_300, 20_304); // rtt 4: wins
    expect(clock.offsetMs).toBe(10_000);
    clock.sample(NaN, 0, 1); // not a time: ignored
    expect(clock.offsetMs).toBe(10_000);
  });

  it('converts both ways, erring late by half the best round trip towards this clock', () => {
    const clock = new RedisClock();
    clock.sample(5_010, 0, 20);
    expect(clock.toRedis(100)).toBe(5_100);
    expect(clock.toLocal(5_100)).toBe(110);
  });

  it('never puts a start earlier on Redis than its claim plus the time since the claim was sent', () => {
    const clock = new RedisClock();
    clock.sample(1_000, 0, 0); // offset 1,000
    // Redis reserved the start at 2,000 (its clock) for a call sent at 500 (ours): 100 ms later it is at least 2,100.
    expect(clock.startToRedis({ reservedAt: 2_000, claimSentAt: 500 }, 600)).toBe(2_100);
    // The offset says later still: the later one wins.
    expect(clock.startToRedis({ reservedAt: 1_000, claimSentAt: 500 }, 600)).toBe(1_600);
    // No claim, or a time before it was sent: the offset alone.
    expect(clock.startToRedis(undefined, 600)).toBe(1_600);
    expect(clock.startToRedis({ reservedAt: 9_000, claimSentAt: 700 }, 600)).toBe(1_600);
  });
});
