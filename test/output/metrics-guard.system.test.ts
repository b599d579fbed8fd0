/**
 * The `--metrics` endpoint answers only to its own name and does not let a
 * client hold sockets (issue 42, item 13): a page in a browser on the same
 * machine could read it through DNS rebinding (a name of its own resolving
 * to 127.0.0.1: the request then carries that name as Host), and 900
 * half-sent requests were held for 12 s and more.
 */
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrawlMetrics } from '../../src/output/metrics.js';
import { hostAllowed, openMetricsEndpoint, parseMetricsAddress, type MetricsEndpoint } from '../../src/output/metrics-endpoint.js';

/** A GET of /metrics with the Host header given: its status. */
function get(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics endpoint', () => {
  let endpoint: MetricsEndpoint;
  let port: number;
  beforeAll(async () => {
    endpoint = await openMetricsEndpoint(parseMetricsAddress('127.0.0.1:0'), createCrawlMetrics({ topHosts: 3 }));
    port = Number(new URL(endpoint.url).port);
  });
  afterAll(() => endpoint?.close());

  it.each([
    ['127.0.0.1:9464', '127.0.0.1', true],
    ['localhost:9464', '127.0.0.1', true],
    ['[::1]:9464', '::1', true],
    ['metrics.internal:9464', 'metrics.internal', true],
    ['rebound.attacker.example:9464', '127.0.0.1', false],
    ['localhost.attacker.example', '127.0.0.1', false],
    [undefined, '127.0.0.1', false],
  ])('Host %j on an endpoint given %j: allowed %s', (header, given, allowed) => {
    expect(hostAllowed(header, given)).toBe(allowed);
  });

  it('answers its own address and localhost, and 421 to any other name', async () => {
    expect(await get(port, `127.0.0.1:${port}`)).toBe(200);
    expect(await get(port, `localhost:${port}`)).toBe(200);
    expect(await get(port, `rebound.attacker.example:${port}`)).toBe(421);
  });

  it('closes a connection whose request headers never finish, within seconds', async () => {
    const sockets: Socket[] = [];
    const closedAt: number[] = [];
    const start = Date.now();
    for (let i = 0; i < 20; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.resume(); // read what the server says (its 408), or 'close' never comes
      socket.on('close', () => closedAt.push(Date.now() - start));
      socket.write(`GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      sockets.push(socket);
    }
    // HEADERS_TIMEOUT_MS is 5 s, checked every second; Node's default held them 60 s.
    for (let waited = 0; closedAt.length < sockets.length && waited < 15_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    for (const socket of sockets) socket.destroy();
    expect(closedAt).toHaveLength(20);
    expect(Math.max(...closedAt)).toBeLessThan(9_000);
  }, 20_000);
});
