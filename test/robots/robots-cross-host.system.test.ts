/**
 * robots.txt redirected to another host (issue 24): RFC 9309 §2.3.1.2 asks
 * crawlers to follow at least five consecutive redirects "even across
 * authorities", and the rules found apply to the host first asked. Only a
 * longer chain (or a loop, which never ends) counts as unavailable, read as
 * allow-all. Through the real CLI (crawl and `crawl check`) against one local
 * server that logs every request; names under .localhost all reach
 * 127.0.0.1, so it plays every host, told apart by the Host header.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import type { RobotsFetchRecord } from '../../src/types.js';
import { memoryIo } from '../support/memory-io.js';
import { parseRecords } from '../support/crawl-harness.js';

let server: Server;
let port = 0;
let dir = '';
let seen: Array<{ host: string; path: string }> = [];
const url = (host: string, path = '/') => `http://${host}:${port}${path}`;

/** Each host's robots.txt: a redirect (to a host and path; the port is known once the server listens) or a body. */
const ROBOTS: Record<string, { to: [host: string, path: string] } | { body: string }> = {
  // apex → www, the common case
  'apex.localhost': { to: ['www.apex.localhost', '/robots.txt'] },
  'www.apex.localhost': { body: 'User-agent: *\nDisallow: /secret\n' },
  // five hops across hosts, then the file: followed
  'five.localhost': { to: ['h1.localhost', '/r'] },
  'h1.localhost': { to: ['h2.localhost', '/r'] },
  'h2.localhost': { to: ['h3.localhost', '/r'] },
  'h3.localhost': { to: ['h4.localhost', '/r'] },
  'h4.localhost': { to: ['files.localhost', '/five.txt'] },
  // six hops: more than five, unavailable (allow all)
  'six.localhost': { to: ['s1.localhost', '/r'] },
  's1.localhost': { to: ['s2.localhost', '/r'] },
  's2.localhost': { to: ['s3.localhost', '/r'] },
  's3.localhost': { to: ['s4.localhost', '/r'] },
  's4.localhost': { to: ['s5.localhost', '/r'] },
  's5.localhost': { to: ['files.localhost', '/six.txt'] },
  // a loop between two hosts
  'loop.localhost': { to: ['ping.localhost', '/r'] },
  'ping.localhost': { to: ['pong.localhost', '/r'] },
  'pong.localhost': { to: ['ping.localhost', '/r'] },
};

const DISALLOW_SECRET = 'User-agent: *\nDisallow: /secret\n';

function answer(host: string, path: string): { status: number; headers?: Record<string, string>; body?: string } {
  const robots = ROBOTS[host];
  // Every hop of a chain is at /r on its host (or /robots.txt on the first).
  if (robots && (path === '/robots.txt' || path === '/r')) {
    return 'to' in robots
      ? { status: 301, headers: { location: url(...robots.to) } }
      : { status: 200, headers: { 'content-type': 'text/plain' }, body: robots.body };
  }
  if (host === 'files.localhost') return { status: 200, headers: { 'content-type': 'text/plain' }, body: DISALLOW_SECRET };
  if (path === '/robots.txt') return { status: 404 };
  if (path === '/') return { status: 200, headers: { 'content-type': 'text/html' }, body: '<a href="/secret">s</a> <a href="/open">o</a>' };
  return { status: 200, headers: { 'content-type': 'text/html' }, body: 'leaf' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'robots-cross-host-'));
  server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    seen.push({ host, path });
    const a = answer(host, path);
    res.writeHead(a.status, a.headers);
    res.end(a.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function run(args: string[]) {
  seen = [];
  const io = memoryIo(dir);
  const code = await main(['--allow-private', '--rate', 'unlimited', '--max-depth', '1', '--emit-skipped', '--emit-robots', ...args], io);
  const lines = io
    .out()
    .split('\n')
    .filter((l) => l !== '');
  return { code, err: io.err(), ...parseRecords(lines), seen };
}

const hits = (host: string, path?: string) => seen.filter((s) => s.host === host && (path === undefined || s.path === path));

describe('robots.txt redirected to another host (RFC 9309 §2.3.1.2)', () => {
  it('follows apex → www and applies the rules found there to the apex: /secret is never fetched', async () => {
    const r = await run([url('apex.localhost')]);
    expect(r.code).toBe(0);
    expect(hits('apex.localhost', '/secret')).toHaveLength(0);
    expect(hits('apex.localhost', '/open')).toHaveLength(1);
    expect(r.skipped).toContainEqual(expect.objectContaining({ url: url('apex.localhost', '/secret'), reason: 'robots' }));
    // The hop is a request to www, paced by www's limits, and made once.
    expect(hits('www.apex.localhost')).toEqual([{ host: 'www.apex.localhost', path: '/robots.txt' }]);
    const robots = r.records.filter((x): x is RobotsFetchRecord => x.type === 'robots');
    expect(robots.map((x) => [x.url, x.host, x.status])).toEqual([
      [url('apex.localhost', '/robots.txt'), `apex.localhost:${port}`, 301],
      [url('www.apex.localhost', '/robots.txt'), `www.apex.localhost:${port}`, 200],
    ]);
    expect(r.err).not.toMatch(/out of scope/);
  });

  it('follows five consecutive redirects across hosts', async () => {
    const r = await run([url('five.localhost')]);
    expect(r.code).toBe(0);
    expect(hits('files.localhost', '/five.txt')).toHaveLength(1);
    expect(hits('five.localhost', '/secret')).toHaveLength(0);
    expect(r.skipped).toContainEqual(expect.objectContaining({ url: url('five.localhost', '/secret'), reason: 'robots' }));
  });

  it('reads a sixth redirect as unavailable (allow all) without requesting its target', async () => {
    const r = await run([url('six.localhost')]);
    expect(r.code).toBe(0);
    expect(hits('files.localhost')).toHaveLength(0);
    expect(hits('six.localhost', '/secret')).toHaveLength(1);
  });

  it('reads a redirect loop as unavailable, asking each URL of the loop once', async () => {
    const r = await run([url('loop.localhost')]);
    expect(r.code).toBe(0);
    expect(hits('ping.localhost')).toHaveLength(1);
    expect(hits('pong.localhost')).toHaveLength(1);
    expect(hits('loop.localhost', '/secret')).toHaveLength(1);
  });

  it('crawl check follows the same chain and names the rule', async () => {
    seen = [];
    const io = memoryIo(dir);
    const code = await main(['check', '--allow-private', url('apex.localhost', '/secret')], io);
    expect(io.err()).toBe('');
    expect(code).not.toBe(0);
    expect(io.out()).toMatch(/Disallow: \/secret/);
    expect(io.out()).toContain(url('www.apex.localhost', '/robots.txt'));
    expect(hits('www.apex.localhost', '/robots.txt')).toHaveLength(1);
  });
});
