import { describe, expect, it } from 'vitest';
import { Scheduler, type Job, type TakeResult, type WorkSource } from '../../src/schedule/scheduler.js';
import type { LimiterPolicy } from '../../src/politeness/host-limiter.js';
import { FakeClock } from '../support/fake-clock.js';

/** Hosts with N queued items; each job "takes" `serviceMs` of fake time. Records start times per host. */
function setup(hosts: Record<string, { items: number; policy: Partial<LimiterPolicy> }>, opts: { concurrency: number; serviceMs: number }) {
  const clock = new FakeClock(0);
  const remaining = new Map(Object.entries(hosts).map(([k, v]) => [k, v.items]));
  const starts = new Map<string, number[]>(Object.keys(hosts).map((k) => [k, []]));
  let running = 0;
  let maxRunning = 0;
  const source: WorkSource = {
    hasWork: (key) => (remaining.get(key) ?? 0) > 0,
    take: (key): TakeResult => {
      const n = remaining.get(key) ?? 0;
      if (n === 0) return null;
      remaining.set(key, n - 1);
      const job: Job = () =>
        new Promise<void>((resolve) => {
          starts.get(key)!.push(clock.now());
          running++;
          maxRunning = Math.max(maxRunning, running);
          clock.setTimer(() => {
            running--;
            resolve();
          }, opts.serviceMs);
        });
      return job;
    },
  };
  const scheduler = new Scheduler({
    clock,
    concurrency: opts.concurrency,
    policyFor: (key) => ({ intervalMs: 0, windows: [], concurrency: 1, jitterMs: 0, ...hosts[key].policy }),
    source,
  });
  for (const key of Object.keys(hosts)) scheduler.wake(key);
  return { clock, scheduler, starts, remaining, maxRunning: () => maxRunning };
}

async function runUntilDone(env: ReturnType<typeof setup>, limitMs: number, stepMs = 1) {
  while (env.clock.now() < limitMs) {
    await env.clock.advanceAsync(stepMs, stepMs);
    const left = [...env.remaining.values()].reduce((a, b) => a + b, 0);
    if (left === 0 && env.scheduler.inFlight === 0) return env.clock.now();
  }
  throw new Error('did not finish');
}

describe('Scheduler', () => {
  it('does not let a slow host listed first block fast hosts (no slot held while waiting)', async () => {
    const hosts: Record<string, { items: number; policy: Partial<LimiterPolicy> }> = {
      slow: { items: 10, policy: { intervalMs: 1000 } },
    };
    for (let i = 0; i < 10; i++) hosts[`fast${i}`] = { items: 10, policy: { intervalMs: 100 } };
    const env = setup(hosts, { concurrency: 2, serviceMs: 5 });
    const end = await runUntilDone(env, 60_000, 5);
    // Lower bound: slow host needs 9 gaps of ~1013 ms.
    expect(end).toBeLessThan(9 * 1013 * 1.05 + 50);
    for (let i = 0; i < 10; i++) {
      const s = env.starts.get(`fast${i}`)!;
      expect(s).toHaveLength(10);
      expect(s.at(-1)!).toBeLessThan(2000); // fast hosts finish long before the slow one
    }
  });

  it('throughput approaches the sum of host rates however work is ordered', async () => {
    const hosts: Record<string, { items: number; policy: Partial<LimiterPolicy> }> = {};
    for (let i = 0; i < 20; i++) hosts[`h${i}`] = { items: 20, policy: { intervalMs: 200 } };
    const env = setup(hosts, { concurrency: 4, serviceMs: 10 });
    const end = await runUntilDone(env, 60_000, 5);
    const bound = 19 * 200; // 20 starts a host at 5/s
    expect(end / bound).toBeLessThan(1.1);
  });

  it('keeps every gap and concurrency limit per host', async () => {
    const env = setup(
      {
        a: { items: 30, policy: { intervalMs: 50, concurrency: 1 } },
        b: { items: 30, policy: { intervalMs: 0, concurrency: 3 } },
      },
      { concurrency: 8, serviceMs: 40 },
    );
    await runUntilDone(env, 60_000);
    const a = env.starts.get('a')!;
    for (let i = 1; i < a.length; i++) expect(a[i] - a[i - 1]).toBeGreaterThanOrEqual(50);
    expect(env.maxRunning()).toBeLessThanOrEqual(4); // a: 1 + b: 3
  });

  it('never exceeds the global concurrency', async () => {
    const hosts: Record<string, { items: number; policy: Partial<LimiterPolicy> }> = {};
    for (let i = 0; i < 10; i++) hosts[`h${i}`] = { items: 5, policy: { concurrency: 5 } };
    const env = setup(hosts, { concurrency: 3, serviceMs: 10 });
    await runUntilDone(env, 10_000);
    expect(env.maxRunning()).toBe(3);
  });

  it('runs submitted jobs (robots.txt) before source work and through the host gap', async () => {
    const env = setup({ a: { items: 2, policy: { intervalMs: 100 } } }, { concurrency: 2, serviceMs: 1 });
    const order: string[] = [];
    env.scheduler.submit('a', async () => {
      order.push(`robots@${env.clock.now()}`);
    });
    await runUntilDone(env, 5_000);
    expect(order).toEqual(['robots@0']);
    expect(env.starts.get('a')![0]).toBeGreaterThanOrEqual(100);
  });

  it('a pause set through the limiter holds the host until it ends', async () => {
    const env = setup({ a: { items: 3, policy: {} } }, { concurrency: 1, serviceMs: 1 });
    env.scheduler.limiter('a').pauseUntil(3_000);
    env.scheduler.wake('a');
    await runUntilDone(env, 10_000, 10);
    expect(env.starts.get('a')![0]).toBeGreaterThanOrEqual(3_000);
  });
});

describe('Scheduler jobs', () => {
  it('counts submitted jobs until each starts, across hosts and through a pause', async () => {
    const env = setup({ a: { items: 0, policy: {} }, b: { items: 0, policy: {} } }, { concurrency: 4, serviceMs: 1 });
    env.scheduler.limiter('b').pauseUntil(1_000);
    const ran: string[] = [];
    env.scheduler.submit('a', async () => void ran.push('a1'));
    env.scheduler.submit('a', async () => void ran.push('a2'));
    env.scheduler.submit('b', async () => void ran.push('b1'));
    expect(env.scheduler.pendingJobs).toBe(3);
    await env.clock.advanceAsync(10, 1);
    expect(ran).toEqual(['a1', 'a2']);
    expect(env.scheduler.pendingJobs).toBe(1); // b is paused
    await env.clock.advanceAsync(1_100, 10);
    expect(ran).toEqual(['a1', 'a2', 'b1']);
    expect(env.scheduler.pendingJobs).toBe(0);
  });

  // Issue 42, item 9: a timed-out page's browser requests took their host's gaps (52 × 206 ms idle on a 5/s host).
  it('drops a job no longer wanted when its host is ready: it takes no start, and the next wanted job keeps the first gap', async () => {
    const env = setup({ a: { items: 0, policy: { intervalMs: 1_000 } } }, { concurrency: 4, serviceMs: 1 });
    const ran: string[] = [];
    let pageWaits = true;
    const dropped: string[] = [];
    env.scheduler.submit('a', async () => void ran.push(`first@${env.clock.now()}`));
    for (let i = 0; i < 5; i++) {
      env.scheduler.submit(
        'a',
        async (ctx) => {
          // A dropped job is told nothing: it must not send.
          ctx.onDispatched(env.clock.now());
          dropped.push(`abandoned${i}`);
        },
        () => pageWaits,
      );
    }
    env.scheduler.submit(
      'a',
      async () => void ran.push(`wanted@${env.clock.now()}`),
      () => true,
    );
    await env.clock.advanceAsync(10, 1);
    pageWaits = false; // the page timed out
    await env.clock.advanceAsync(3_000, 10);
    expect(ran).toHaveLength(2);
    // One gap (1,000 ms and the limiter's margin) after the first, not six.
    const wantedAt = Number(ran[1].split('@')[1]);
    expect(wantedAt).toBeGreaterThanOrEqual(1_000);
    expect(wantedAt).toBeLessThan(1_100);
    expect(dropped).toHaveLength(5); // each was called once, to settle whoever waits on it
    expect(env.scheduler.pendingJobs).toBe(0);
  });

  it('a job that throws or rejects frees its slot and the host goes on', async () => {
    const env = setup({ a: { items: 1, policy: { concurrency: 1 } } }, { concurrency: 1, serviceMs: 1 });
    const throwing: Job = () => {
      throw new Error('sync');
    };
    env.scheduler.submit('a', throwing);
    env.scheduler.submit('a', async () => {
      throw new Error('async');
    });
    await runUntilDone(env, 1_000);
    expect(env.starts.get('a')).toHaveLength(1);
    expect(env.scheduler.inFlight).toBe(0);
    expect(env.scheduler.pendingJobs).toBe(0);
    expect(env.scheduler.limiter('a').inFlight).toBe(0);
  });

  it('starts a job in the same turn the host becomes ready (nothing queued behind a slot)', async () => {
    const env = setup({ a: { items: 0, policy: {} } }, { concurrency: 1, serviceMs: 1 });
    let started = false;
    env.scheduler.submit('a', async () => {
      started = true;
    });
    await Promise.resolve(); // the pump runs in a microtask, the job inside it
    expect(started).toBe(true);
    expect(env.scheduler.inFlight).toBe(1);
  });
});

describe('Scheduler host state', () => {
  it('forgets idle hosts and recreates them lazily with a fresh, equivalent limiter', async () => {
    const hosts: Record<string, { items: number; policy: Partial<LimiterPolicy> }> = {};
    for (let i = 0; i < 50; i++) hosts[`h${i}`] = { items: 1, policy: { intervalMs: 100 } };
    const env = setup(hosts, { concurrency: 8, serviceMs: 1 });
    await runUntilDone(env, 5_000, 10);
    expect(env.scheduler.hostsSnapshot()).toHaveLength(50);
    await env.clock.advanceAsync(31_000, 1_000); // past the sweep interval, every gap long elapsed
    env.scheduler.submit('h0', async () => {}); // any activity runs the sweep
    await env.clock.advanceAsync(10, 1);
    expect(env.scheduler.hostsSnapshot().map((h) => h.key)).toEqual(['h0']);
  });

  it("hands each answer's time to first byte to its own host, timed from the request's write", async () => {
    const clock = new FakeClock(0);
    const seen: Array<[string, number]> = [];
    const source: WorkSource = { hasWork: () => false, take: () => null };
    const scheduler = new Scheduler({
      clock,
      concurrency: 4,
      policyFor: () => ({ intervalMs: 0, windows: [], concurrency: 2, jitterMs: 0 }),
      source,
      responded: (key, ttfbMs) => seen.push([key, ttfbMs]),
    });
    // A page's job on its host, and a browser's request for a script on another host, submitted by the same page.
    const job =
      (connectMs: number, latencyMs: number): Job =>
      (ctx) =>
        new Promise<void>((resolve) => {
          clock.setTimer(() => {
            ctx.onDispatched(clock.now());
            clock.setTimer(() => {
              ctx.onResponse(clock.now());
              resolve();
            }, latencyMs);
          }, connectMs);
        });
    scheduler.submit('page.test', job(500, 40));
    scheduler.submit('cdn.test', job(0, 7));
    await clock.advanceAsync(1000, 1);
    expect(seen).toEqual([
      ['cdn.test', 7],
      ['page.test', 40],
    ]);
  });
});
