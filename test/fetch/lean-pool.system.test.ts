import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { isLean, leanPool } from '../../src/fetch/lean-pool.js';

describe('leanPool', () => {
  let server: http.Server;
  let origin: string;
  let open = 0;
  let maxOpen = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      setImmediate(() => {
        open--;
        res.end(req.url);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('queues more requests than its first buffer held, in order, on its connections only', async () => {
    const pool = leanPool(origin, { connections: 2 });
    expect(isLean(pool)).toBe(true);
    maxOpen = 0;
    const n = 3_000;
    const answers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await pool.request({ path: `/${i}`, method: 'GET' });
        return res.body.text();
      }),
    );
    expect(answers).toEqual(Array.from({ length: n }, (_, i) => `/${i}`));
    expect(maxOpen).toBeLessThanOrEqual(2);
    await pool.close();
  });

  it('closes only once what waits is sent, and fails what waits when destroyed', async () => {
    const closing = leanPool(origin, { connections: 1 });
    const sent = Array.from({ length: 5 }, (_, i) => closing.request({ path: `/c${i}`, method: 'GET' }).then((r) => r.body.text()));
    await closing.close();
    expect(await Promise.all(sent)).toEqual(['/c0', '/c1', '/c2', '/c3', '/c4']);

    const destroyed = leanPool(origin, { connections: 1 });
    const waiting = Array.from({ length: 5 }, (_, i) =>
      destroyed.request({ path: `/d${i}`, method: 'GET' }).then(
        () => 'ok',
        () => 'failed',
      ),
    );
    await destroyed.destroy();
    expect(await Promise.all(waiting)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
  });

  it('costs a fraction of a plain Pool while idle', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heapOf = (make: () => Pool): number => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const pools = Array.from({ length: 500 }, make);
      gc();
      const bytes = (process.memoryUsage().heapUsed - before) / pools.length;
      for (const p of pools) void p.destroy();
      return bytes;
    };
    const plain = heapOf(() => new Pool(origin, { connections: 2 }));
    const lean = heapOf(() => leanPool(origin, { connections: 2 }));
    // A plain pool's 2,048-slot queue alone is 16 KB.
    expect(plain).toBeGreaterThan(16_000);
    expect(lean).toBeLessThan(plain - 14_000);
  });
});
