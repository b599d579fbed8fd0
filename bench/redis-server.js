/**
 * A throwaway redis-server for the Redis benchmarks (the same recipe as
 * test/support/redis-server.ts): a free port of 127.0.0.1, no persistence,
 * its working directory a temp dir removed when it stops.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Throws one clear line when redis-server is not installed. */
export function requireRedisServer() {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) throw new Error('redis-server is not installed (apt-get install redis-server): the Redis benchmarks need it');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForPong(port, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} before answering`);
    const pong = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const done = (ok) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(500, () => done(false));
      socket.once('error', () => done(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    });
    if (pong) return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** @returns {Promise<{ url: string, port: number, pid: number, stop(): Promise<void> }>} */
export async function startRedisServer(timeoutMs = 5_000) {
  requireRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'crawl-bench-redis-'));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d.toString()));
    try {
      await waitForPong(port, child, timeoutMs);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < 3) continue;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${err.message}${stderr ? `: ${stderr.trim()}` : ''}`);
    }
    const stop = async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    };
    return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid, stop };
  }
}
