/**
 * A real, throwaway redis-server for one test file: on a free port of
 * 127.0.0.1, no persistence, its working directory a temp dir removed after.
 * `redisServerMissing` tells a suite to skip (with its reason) when the
 * binary is not installed; CI's .ci/run installs it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
/** Why the Redis tests cannot run here, or undefined when they can. */
const notInstalled = Boolean(found.error) || found.status !== 0;
/**
 * Under .ci/run (CRAWL_REQUIRE_SERVICES=1, after it installed redis-server)
 * nothing is skipped: a missing server makes startRedisServer fail with a
 * clear message.
 */
export const redisServerMissing: string | undefined =
  notInstalled && process.env.CRAWL_REQUIRE_SERVICES !== '1' ? 'redis-server is not installed (apt-get install redis-server; .ci/run does it): the Redis store tests are skipped' : undefined;

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Freezes the server (SIGSTOP): its sockets stay open, nothing answers — a hung or partitioned Redis. */
  pause(): void;
  resume(): void;
}

/** A port nobody listens on now: bind 127.0.0.1:0, note the port, close. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the server answers PING with PONG; rejects after `timeoutMs`. */
async function waitForPong(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} before answering`);
    const pong = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const done = (ok: boolean) => {
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

export async function startRedisServer(timeoutMs = 5_000): Promise<RedisServer> {
  if (notInstalled) throw new Error('redis-server is not installed, and CRAWL_REQUIRE_SERVICES=1 says the Redis tests must run: apt-get install redis-server');
  const dir = await mkdtemp(join(tmpdir(), 'crawl-redis-'));
  // Another process may take the port between our probe and redis-server's bind: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await waitForPong(port, child, timeoutMs);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < 3) continue;
      await rm(dir, { recursive: true, force: true });
      throw new Error(`${(err as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`);
    }
    const stop = async (): Promise<void> => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    };
    return { url: `redis://127.0.0.1:${port}`, port, stop, pause: () => child.kill('SIGSTOP'), resume: () => child.kill('SIGCONT') };
  }
}
