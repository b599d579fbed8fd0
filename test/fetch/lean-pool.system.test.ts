import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLean, leanPool } from '../../src/fetch/lean-pool.js';
import { requireBuilt } from '../support/spawn-crawl.js';

const run = promisify(execFile);

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

  // Measured in a process of its own: this worker's heap also holds what other test files left, and a
  // collection of that between the two readings took ~2.5 KB a pool off one measurement.
  it('costs a fraction of a plain Pool while idle', async () => {
    await requireBuilt();
    const script = `
      import { Pool } from 'undici';
      import { leanPool } from ${JSON.stringify(new URL('../../dist/fetch/lean-pool.js', import.meta.url).href)};
      const heapOf = (make) => {
        gc();
        const before = process.memoryUsage().heapUsed;
        const pools = Array.from({ length: 1000 }, make);
        gc();
        const bytes = (process.memoryUsage().heapUsed - before) / pools.length;
        for (const p of pools) void p.destroy();
        return bytes;
      };
      const origin = 'http://127.0.0.1:9';
      const plain = heapOf(() => new Pool(origin, { connections: 2 }));
      const lean = heapOf(() => leanPool(origin, { connections: 2 }));
      process.stdout.write(JSON.stringify({ plain, lean }));
    `;
    const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    const { plain, lean } = JSON.parse(stdout) as { plain: number; lean: number };
    // A plain pool's 2,048-slot queue alone is 16 KB.
    expect(plain).toBeGreaterThan(16_000);
    expect(lean).toBeLessThan(plain - 14_000);
  });
});
