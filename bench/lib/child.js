/**
 * Runs one benchmarked Node child and reports how it went: exit code, wall
 * time from spawn to exit, peak RSS and CPU time (from lib/probe.js), and
 * stderr. stdout goes to a file (or nowhere), never through this process:
 * piping tens of thousands of lines into the benchmark would load the same
 * CPU that serves the local web.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROBE = fileURLToPath(new URL('./probe.js', import.meta.url));

/** A scratch directory removed by `cleanup()`. */
export function scratchDir(prefix = 'crawl-bench-') {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * @param {string[]} args node arguments (script first), run with cwd = repository root
 * @param {{ stdoutFile?: string, nodeArgs?: string[], env?: Record<string, string>, timeoutMs?: number }} [opts]
 * @returns {Promise<{ code: number | null, signal: string | null, wallMs: number, maxRssBytes: number, cpuMs: number, stderr: string }>}
 */
export async function runNode(args, opts = {}) {
  const scratch = scratchDir('crawl-probe-');
  const probeFile = scratch.file('probe.json');
  const out = opts.stdoutFile ? openSync(opts.stdoutFile, 'w') : 'ignore';
  let stderr = '';
  const started = performance.now();
  try {
    const child = spawn(process.execPath, ['--import', PROBE, ...(opts.nodeArgs ?? []), ...args], {
      cwd: ROOT,
      stdio: ['ignore', out, 'pipe'],
      env: { ...process.env, ...opts.env, CRAWL_BENCH_PROBE: probeFile },
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s) => {
      if (stderr.length < 1_000_000) stderr += s;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    const [code, signal] = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, s) => resolve([c, s]));
    });
    clearTimeout(timer);
    const wallMs = performance.now() - started;
    let probe = { maxRssBytes: NaN, userCpuMs: NaN, systemCpuMs: NaN };
    try {
      probe = JSON.parse(readFileSync(probeFile, 'utf8'));
    } catch {
      // killed before it could write: the caller sees the code/signal
    }
    return { code, signal, wallMs, maxRssBytes: probe.maxRssBytes, cpuMs: probe.userCpuMs + probe.systemCpuMs, stderr };
  } finally {
    if (typeof out === 'number') closeSync(out);
    scratch.cleanup();
  }
}

/** Throws with the child's stderr when it did not exit 0. */
export function expectSuccess(what, result) {
  if (result.code !== 0) {
    throw new Error(`${what} exited with ${result.code ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  }
  return result;
}
