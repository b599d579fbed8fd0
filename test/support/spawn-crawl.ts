/**
 * The real binary as a child process, for tests that must really stop,
 * kill or run several crawls at once (--state, --redis). `dist/` must be
 * built (npm test builds it); `requireBuilt` says so in one line if not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'crawl.js');

export interface CrawlRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** How to start it beyond its arguments: Node's own flags (`--import` a preload) and environment additions. */
export interface StartOptions {
  nodeArgs?: readonly string[];
  env?: Record<string, string>;
}

/** Starts `crawl ...args` in `cwd`; `done` resolves when it has exited and its streams closed. */
export function startCrawl(args: readonly string[], cwd: string, opts: StartOptions = {}): { child: ChildProcess; done: Promise<CrawlRun> } {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), bin, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.env && { env: { ...process.env, ...opts.env } }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CrawlRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/** Rejects with one clear line when dist/ has not been built. */
export async function requireBuilt(): Promise<void> {
  await readFile(join(root, 'dist', 'cli', 'cli.js')).catch(() => {
    throw new Error('dist/ is missing: run `npm run build` (npm test does it)');
  });
}

/** A JSON-lines file or stream's records (every line must parse: a torn line fails the test). */
export function jsonLines<T = Record<string, unknown>>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/**
 * A worker's `-o` file, or '' when it wrote none: a shared-crawl worker that
 * starts after the others finished finds the crawl done and opens no output
 * (which a loaded machine makes possible in any multi-worker test).
 */
export async function outputOf(path: string): Promise<string> {
  return readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : Promise.reject(err)));
}

const sendLogPreload = join(root, 'fixtures', 'send-log.js');

/** One request as undici wrote it (fixtures/send-log.js): when (ms on the machine's monotonic clock), where, and by which process. */
export interface SentRequest {
  at: number;
  origin: string;
  path: string;
  pid: number;
}

/**
 * When each crawl started with `opts` wrote each request to its socket
 * (fixtures/send-log.js, appended as written, so a process killed with
 * kill -9 keeps its log), on the machine's one monotonic clock: the politeness itself,
 * where a server's arrival log can also show its own late reads.
 */
export function sendLog(path: string): { opts: StartOptions; written: () => Promise<SentRequest[]> } {
  return {
    opts: { nodeArgs: ['--import', sendLogPreload], env: { CRAWL_SEND_LOG_LINES: path } },
    written: async () => jsonLines<SentRequest>(await readFile(path, 'utf8').catch(() => '')),
  };
}

/**
 * Crash test: starts `crawl ...args` up to `runs` times, each killed with
 * SIGKILL at a random moment (`random() * maxDelayMs`) once `web` has seen
 * `after` more requests (or 20 s passed); stops early when a run finishes
 * first. Resolves with how many runs were killed.
 */
export async function killAtRandom(
  args: readonly string[],
  cwd: string,
  web: { requests(): readonly unknown[] },
  opts: { runs: number; after: number; maxDelayMs: number; random: () => number },
): Promise<number> {
  let kills = 0;
  for (let i = 0; i < opts.runs; i++) {
    const { child, done } = startCrawl(args, cwd);
    const before = web.requests().length;
    const deadline = Date.now() + 20_000;
    while (web.requests().length < before + opts.after && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, opts.random() * opts.maxDelayMs));
    child.kill('SIGKILL');
    const r = await done;
    if (r.code === 0) break;
    kills++;
  }
  return kills;
}
