import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuietClient, QuietPool } from '../../src/fetch/quiet-close.js';

describe('QuietPool and QuietClient', () => {
  let server: http.Server;
  let origin: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => setImmediate(() => res.end(req.url)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** The error each pool's connection was closed with, as its 'disconnect' event gives it, after one request and a close. */
  async function closedWith(make: () => Pool | QuietClient, count: number): Promise<unknown[]> {
    const seen: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const pool = make();
      pool.on('disconnect', (_origin: unknown, _targets: unknown, err: unknown) => seen.push(err));
      expect(await (await pool.request({ path: `/${i}`, method: 'GET' })).body.text()).toBe(`/${i}`);
      await pool.close();
      expect(pool.destroyed).toBe(true);
    }
    return seen;
  }

  it('close their connections with one error made once, where undici makes one a close', async () => {
    for (const make of [() => new QuietPool(origin, { connections: 2 }), () => new QuietClient(origin)]) {
      const errs = await closedWith(make, 3);
      expect(errs).toHaveLength(3);
      for (const err of errs) expect(err).toBeInstanceOf(errors.ClientDestroyedError);
      expect(new Set(errs).size).toBe(1);
    }
    // What they save: undici's own pool makes a new error for each.
    expect(new Set(await closedWith(() => new Pool(origin, { connections: 2 }), 3)).size).toBe(3);
  });

  it('send what waits before closing, and fail what waits when destroyed, with the error given or a ClientDestroyedError', async () => {
    const closing = new QuietPool(origin, { connections: 1 });
    const sent = Array.from({ length: 3 }, (_, i) => closing.request({ path: `/c${i}`, method: 'GET' }).then((r) => r.body.text()));
    await closing.close();
    expect(await Promise.all(sent)).toEqual(['/c0', '/c1', '/c2']);

    const given = new Error('stop');
    for (const [pool, err, expected] of [
      [new QuietPool(origin, { connections: 1 }), given, given],
      [new QuietClient(origin), given, given],
      [new QuietPool(origin, { connections: 1 }), undefined, errors.ClientDestroyedError],
    ] as const) {
      const waiting = Array.from({ length: 3 }, (_, i) =>
        pool.request({ path: `/d${i}`, method: 'GET' }).then(
          () => 'ok',
          (e: unknown) => e,
        ),
      );
      await (err === undefined ? pool.destroy() : pool.destroy(err));
      for (const outcome of await Promise.all(waiting)) {
        if (expected instanceof Error) expect(outcome).toBe(expected);
        else expect(outcome).toBeInstanceOf(expected);
      }
    }
  });
});
