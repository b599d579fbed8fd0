/**
 * A robots.txt larger than the cap (issue 23): RFC 9309 §2.5 lets a crawler
 * read only the first 500 KiB or more (ours: `robots.maxSize`, 512 KiB), so
 * a rule past it is ignored. That is allowed but must not be silent: a crawl
 * warns once per origin, and `crawl check` says the file was cut. Through the
 * real CLI against a local server that logs every request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';

let server: Server;
let port = 0;
let dir = '';
let seen: Array<{ host: string; path: string }> = [];
const url = (host: string, path = '/') => `http://${host}:${port}${path}`;

/** 2 MB of comments, then the rule: past the 512 KiB cap. */
const BIG = `User-agent: *\n${'# padding padding padding padding padding padding padding padding\n'.repeat(32_000)}Disallow: /secret\n`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'robots-cap-'));
  server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    seen.push({ host, path });
    if (path === '/robots.txt') {
      if (host === 'big.localhost') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(BIG);
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /secret\n');
    }
    const body = path === '/' ? '<a href="/secret">s</a> <a href="/a">a</a> <a href="/b">b</a>' : 'leaf';
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('robots.txt past the size cap', () => {
  it('a crawl says, once per origin, that the file was cut at the cap (and only for that origin)', async () => {
    seen = [];
    const io = memoryIo(dir);
    const code = await main(['--allow-private', '--rate', 'unlimited', '--max-depth', '1', url('big.localhost'), url('small.localhost')], io);
    expect(code).toBe(0);
    // The cap is allowed by the RFC: the rule past it is not applied...
    expect(seen.filter((s) => s.host === 'big.localhost' && s.path === '/secret')).toHaveLength(1);
    expect(seen.filter((s) => s.host === 'small.localhost' && s.path === '/secret')).toHaveLength(0);
    // ...but it is said, once (the summary's notes repeat it).
    const warnings = io
      .err()
      .split('\n')
      .filter((l) => l.startsWith('crawl: warning:') && l.includes(' cap '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(url('big.localhost', '/robots.txt'));
    expect(warnings[0]).toContain('512 KiB');
    expect(io.err()).toMatch(/notes\n.*big\.localhost.*is larger than the 512 KiB cap/);
  });

  it('crawl check says the file was cut, beside "no rule matches"', async () => {
    const io = memoryIo(dir);
    const code = await main(['check', '--allow-private', url('big.localhost', '/secret')], io);
    expect(code).toBe(0);
    const out = io.out();
    expect(out).toMatch(/no rule matches/);
    expect(out).toMatch(/robots\.txt is larger than the 512 KiB cap .*rules past it are ignored/);
  });

  it('crawl check --robots-file reads the file as a crawl would, and says where it was cut', async () => {
    await writeFile(join(dir, 'big-robots.txt'), BIG);
    const io = memoryIo(dir);
    expect(await main(['check', '--robots-file', 'big-robots.txt', 'http://cut.localhost/secret'], io)).toBe(0);
    expect(io.out()).toMatch(/no rule matches/);
    expect(io.out()).toMatch(/robots\.txt is larger than the 512 KiB cap/);
  });

  it('crawl check says nothing of a cap for a file within it', async () => {
    const io = memoryIo(dir);
    await main(['check', '--allow-private', url('small.localhost', '/secret')], io);
    expect(io.out()).not.toMatch(/cap/);
  });
});
