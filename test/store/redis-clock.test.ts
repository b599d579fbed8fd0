import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedisClock, STEP_GUARD_MS } from '../../src/store/redis-clock.js';

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

  it("sees Redis's clock jump ahead at the next answer: the offset follows at once, and starts granted in the next minute wait the jump out", () => {
    const clock = new RedisClock();
    clock.sample(1_002, 0, 4); // rtt 4: offset 1,000 (±2)
    expect(clock.stepHold(10)).toBe(0);
    // 10 s later Redis reads 500 ms later than our clock allows (its offset, ±2 ms, 10 ms of age).
    clock.sample(11_502, 10_000, 10_004);
    expect(clock.offsetMs).toBe(1_500); // not the aged best: a start converted now is on Redis's new scale
    expect(clock.stepHold(10_004)).toBe(500 - 2 - 2 - 10); // less what the best allowed: half its round trip, 10 s of age, and its own read within it
    expect(clock.stepHold(10_004 + STEP_GUARD_MS - 1)).toBeGreaterThan(480);
    expect(clock.stepHold(10_004 + STEP_GUARD_MS)).toBe(0);
    // A jump of an hour holds a start a minute at most.
    clock.sample(3_600_000 + 80_000, 78_000, 78_004);
    expect(clock.stepHold(78_004)).toBe(STEP_GUARD_MS);
  });

  it('follows a jump back at once, and holds nothing for it', () => {
    const clock = new RedisClock();
    clock.sample(1_002, 0, 4);
    clock.sample(10_502, 10_000, 10_004); // 500 ms earlier than the best allows
    expect(clock.offsetMs).toBe(500);
    expect(clock.stepHold(10_004)).toBe(0);
    expect(clock.toRedis(20_000)).toBe(20_500);
  });

  it('lets a jump back take back as much of an earlier jump ahead', () => {
    const clock = new RedisClock();
    clock.sample(1_002, 0, 4);
    clock.sample(1_502, 100, 104); // 400 ahead: 398 less the half round trip and its own read
    expect(clock.stepHold(104)).toBeCloseTo(396, 0);
    clock.sample(1_302, 200, 204); // 300 back of the new offset (1,400): 100 of the jump remains
    expect(clock.stepHold(204)).toBeCloseTo(100, 0); // a jump back is measured short, so what remains is never less
    clock.sample(1_002, 300, 304); // all of it back, and more
    expect(clock.stepHold(304)).toBe(0);
  });

  it('never takes honest samples for a step, however slow their round trips and whenever Redis read its clock', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e12, max: 1e12, noNaN: true }),
        fc.array(
          fc.record({
            wait: fc.double({ min: 0, max: 120_000, noNaN: true }),
            rtt: fc.double({ min: 0, max: 500, noNaN: true }),
            readAt: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          {
            minLength: 1,
            maxLength: 40,
          },
        ),
        (offset, calls) => {
          const clock = new RedisClock();
          let t = 1_000;
          for (const { wait, rtt, readAt } of calls) {
            t += wait;
            // Redis reads its clock somewhere between the send and the answer; its rate is ours within 100 ppm.
            const drift = (t - 1_000) * 1e-4;
            clock.sample(t + rtt * readAt + offset + drift, t, t + rtt);
            t += rtt;
            expect(clock.stepHold(t)).toBe(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
