#!/usr/bin/env node
/**
 * Benchmark 5: start-up, as a user waits for it: from spawning the process to
 * the first request ARRIVING at a local node:http server (the server stamps
 * the arrival on this process's clock, so the spawn and the arrival are timed
 * by one clock). Measured side by side, interleaved, N rounds:
 *
 * - `node -e 0`, spawn to exit: the floor any Node CLI pays here;
 * - "bare": a five-line node script doing one http.get to the server, spawn
 *   to arrival: the floor for any Node program that sends a request;
 * - `crawl URL` (memory store), `crawl check URL` (its first request is
 *   robots.txt), and `crawl --redis URL --crawl-id X URL` when redis-server
 *   is on PATH (a fresh crawl id per run);
 * - three Redis workers of one crawl spawned together: spawn to the first
 *   request of any of them, and to the first request of the last of them.
 *
 * Next to each wall time, the CPU time (user + system, all threads) the
 * child had used when its first request arrived, read from /proc at that
 * moment (Linux; 10 ms ticks): on a shared, loaded machine the wall time
 * mostly measures the other processes, the CPU time what the crawler does.
 *
 * Then the profile that says where the time goes: the modules each command
 * loads before its first request (bench/lib/load-trace.js), by package and
 * by folder of dist/.
 *
 * `--before DIR`: also run the crawler built in DIR (another checkout with
 * its own dist/ and node_modules), interleaved with this one, for a
 * before/after table in one run.
 *
 *   node bench/startup.js [--quick] [--runs N] [--before DIR] [--profile-only 1]
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './lib/child.js';
import { max, median, min, round } from './lib/stats.js';
import { redisServerInstalled, startRedisServer } from '../fixtures/redis-server.js';

const TRACE_HOOK = fileURLToPath(new URL('./lib/load-trace.js', import.meta.url));
/** The bare floor: what any Node program pays to send one request. */
const BARE = "require('node:http').get(process.argv[1], (r) => r.resume().on('end', () => process.exit(0)))";
/** Pages of the site the three Redis workers share: enough that each gets work. */
const SHARED_PAGES = 30;

/** A local web that stamps each request's arrival and lets a run wait for the first one. */
async function arrivalServer() {
  let waiters = [];
  const server = createServer((req, res) => {
    const at = performance.now();
    const worker = req.headers['x-bench-worker'];
    for (const w of waiters) w({ at, url: req.url, worker });
    if (req.url === '/robots.txt') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('');
      return;
    }
    const m = /^\/shared\/(\d+)$/.exec(req.url ?? '');
    const links = m && Number(m[1]) === 0 ? Array.from({ length: SHARED_PAGES }, (_, i) => `<a href="/shared/${i + 1}">${i + 1}</a>`).join('') : '';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body><p>start-up</p>${links}</body></html>`);
  });
  server.keepAliveTimeout = 1;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    /** Calls `fn` on every arrival until the returned function is called. */
    watch(fn) {
      waiters.push(fn);
      return () => (waiters = waiters.filter((w) => w !== fn));
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** CPU ms (user + system) process `pid` has used so far, from /proc; NaN where there is no /proc. */
function cpuMsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100;
const HAVE_PROC = existsSync('/proc/self/stat');

/** Spawns node with `args` in `cwd`; resolves when it exits, with its code and stderr. */
function launch(args, cwd, env = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s) => (stderr += s));
  const exited = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr, exitMs: performance.now() - started }));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  exited.finally(() => clearTimeout(timer));
  return { started, exited, pid: child.pid };
}

/** Spawn to exit of `node -e 0` (its CPU time is not read: it is gone by then). */
async function timeExit(args) {
  const r = await launch(args, ROOT).exited;
  if (r.code !== 0) throw new Error(`node ${args.join(' ')} exited with ${r.code}: ${r.stderr}`);
  return { ms: r.exitMs, cpuMs: NaN };
}

/** Spawn to the first request arriving; waits for the process to exit before resolving. */
async function timeFirstArrival(server, what, args, cwd, okCodes = [0]) {
  let first;
  let cpuMs = NaN;
  let pid;
  const stop = server.watch((a) => {
    if (first) return;
    first = a;
    if (pid !== undefined) cpuMs = cpuMsOf(pid);
  });
  const run = launch(args, cwd);
  pid = run.pid;
  const r = await run.exited;
  stop();
  if (!okCodes.includes(r.code)) throw new Error(`${what} exited with ${r.code}: ${r.stderr.slice(-2000)}`);
  if (!first) throw new Error(`${what} sent no request: ${r.stderr.slice(-2000)}`);
  return { ms: first.at - run.started, cpuMs };
}

/**
 * When every worker's first request came, over the runs where all three sent
 * one: on a slow machine the first workers can finish the 31 pages before the
 * last one is up (a run without all three is NaN, and would make the median NaN).
 */
function everyWorker(all) {
  const seen = all.filter(Number.isFinite);
  if (seen.length === 0) return `in no run did all three workers send a request (the others finished the ${SHARED_PAGES + 1} pages first)`;
  const runs = seen.length === all.length ? '' : ` in ${seen.length} of ${all.length} runs (in the others the first workers finished the ${SHARED_PAGES + 1} pages first)`;
  return `every worker's first request by ${round(median(seen))} ms (${spread(seen)})${runs}`;
}

/** Three workers of one Redis crawl spawned together: to the first request of any, and of the last to start. */
async function timeThreeWorkers(server, crawlBin, cwd, redisUrl, id) {
  const firstOf = new Map();
  const stop = server.watch((a) => {
    if (a.worker && !firstOf.has(a.worker)) firstOf.set(a.worker, a.at);
  });
  const runs = ['w1', 'w2', 'w3'].map((w) =>
    launch([crawlBin, '-q', '--rate', 'unlimited', '--redis', redisUrl, '--crawl-id', id, '--worker', w, '--header', `X-Bench-Worker: ${w}`, `${server.base}/shared/0`], cwd),
  );
  const results = await Promise.all(runs.map((r) => r.exited));
  stop();
  for (const r of results) if (r.code !== 0) throw new Error(`a Redis worker exited with ${r.code}: ${r.stderr.slice(-2000)}`);
  const started = Math.min(...runs.map((r) => r.started));
  const firsts = [...firstOf.values()].map((t) => t - started);
  if (firsts.length === 0) throw new Error('no Redis worker sent a request');
  return { any: Math.min(...firsts), all: firsts.length === 3 ? Math.max(...firsts) : NaN, exit: Math.max(...results.map((r) => r.exitMs)) };
}

/** The modules `args` loads before its first request: counts by package and by dist/ folder. */
async function loadProfile(server, args, cwd, okCodes = [0]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'crawl-load-trace-'));
  const file = path.join(dir, 'trace.txt');
  try {
    const r = await launch(['--import', TRACE_HOOK, ...args], cwd, { CRAWL_LOAD_TRACE: file }).exited;
    if (!okCodes.includes(r.code)) throw new Error(`traced ${args.join(' ')} exited with ${r.code}: ${r.stderr.slice(-2000)}`);
    const lines = readFileSync(file, 'utf8').split('\n');
    const end = lines.indexOf('--- first request');
    const before = (end === -1 ? lines : lines.slice(0, end)).filter(Boolean).map((l) => l.replace(/^(esm|cjs) (file:\/\/)?/, ''));
    const groups = new Map();
    for (const file of before) {
      const nm = file.lastIndexOf('node_modules/');
      let group;
      if (nm !== -1) {
        const parts = file.slice(nm + 'node_modules/'.length).split('/');
        group = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
      } else {
        const dist = /\/dist\/(.+)$/.exec(file);
        group = dist ? (dist[1].includes('/') ? `${dist[1].split('/')[0]}/` : dist[1]) : path.basename(file);
      }
      groups.set(group, (groups.get(group) ?? 0) + 1);
    }
    const ours = [...groups].filter(([g]) => g.endsWith('/') || g.endsWith('.js')).reduce((n, [, c]) => n + c, 0);
    return { total: before.length, ours, groups: [...groups].sort((a, b) => b[1] - a[1]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmtGroups = (groups) => groups.map(([g, n]) => `${g} ${n}`).join(', ');
const spread = (xs) => `${round(min(xs))}–${round(max(xs))}`;

/** @param {{ quick?: boolean, runs?: number, before?: string, profileOnly?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const runs = opts.runs ?? (opts.quick ? 7 : 21);
  const log = opts.log ?? (() => {});
  const server = await arrivalServer();
  const redis = redisServerInstalled() ? await startRedisServer() : undefined;
  const sides = [{ name: 'after', root: ROOT }];
  if (opts.before) sides.unshift({ name: 'before', root: path.resolve(String(opts.before)) });
  let crawlId = 0;
  const nextId = () => `startup-${process.pid}-${++crawlId}`;
  const page = `${server.base}/page`;
  try {
    /** One figure per case and side; each case is run once per round, in this order, every round. */
    const cases = [
      { name: 'node -e 0', side: 'floor', time: () => timeExit(['-e', '0']) },
      { name: 'bare', side: 'floor', time: () => timeFirstArrival(server, 'bare', ['-e', BARE, page], ROOT) },
    ];
    for (const side of sides) {
      const bin = path.join(side.root, 'bin/crawl.js');
      cases.push(
        { name: 'crawl URL', side: side.name, args: () => [bin, '-q', page] },
        { name: 'crawl check URL', side: side.name, args: () => [bin, 'check', page] },
      );
      if (redis) cases.push({ name: 'crawl --redis URL', side: side.name, args: () => [bin, '-q', '--redis', redis.url, '--crawl-id', nextId(), page] });
    }
    for (const c of cases) {
      c.samples = [];
      c.cpu = [];
      c.time ??= () => timeFirstArrival(server, `${c.side} ${c.name}`, c.args(), ROOT);
    }
    const profiles = [];
    for (const side of sides) {
      const bin = path.join(side.root, 'bin/crawl.js');
      for (const [name, args] of [['crawl URL', [bin, '-q', page]], ['crawl check URL', [bin, 'check', page]]]) {
        profiles.push({ side: side.name, name, ...(await loadProfile(server, args, ROOT)) });
      }
      if (redis) profiles.push({ side: side.name, name: 'crawl --redis URL', ...(await loadProfile(server, [bin, '-q', '--redis', redis.url, '--crawl-id', nextId(), page], ROOT)) });
    }
    for (const p of profiles) log(`  ${p.side} ${p.name}: ${p.total} modules before the first request (${p.ours} ours): ${fmtGroups(p.groups)}`);
    if (!opts.profileOnly) {
      for (const c of cases) await c.time(); // warm the file cache
      for (let i = 0; i < runs; i++) {
        for (const c of cases) {
          const { ms, cpuMs } = await c.time();
          c.samples.push(ms);
          c.cpu.push(cpuMs);
        }
      }
    }
    const workers = [];
    if (redis && !opts.profileOnly) {
      for (const side of sides) workers.push({ side: side.name, bin: path.join(side.root, 'bin/crawl.js'), any: [], all: [], exit: [] });
      const rounds = Math.max(3, Math.round(runs / 3));
      for (let i = 0; i < rounds; i++) {
        for (const w of workers) {
          const r = await timeThreeWorkers(server, w.bin, ROOT, redis.url, nextId());
          w.any.push(r.any);
          w.all.push(r.all);
          w.exit.push(r.exit);
        }
      }
    }
    return rows(cases, workers, profiles, runs, sides.length > 1);
  } finally {
    await redis?.stop();
    await server.close();
  }
}

function rows(cases, workers, profiles, runs, paired) {
  const bench = '5. Start-up';
  const out = [];
  const floor = cases.find((c) => c.name === 'node -e 0');
  const bare = cases.find((c) => c.name === 'bare');
  if (floor.samples.length > 0) {
    const node = median(floor.samples);
    out.push({ bench, metric: '`node -e 0`, spawn to exit (the floor)', value: round(node), unit: 'ms', note: `median of ${runs}, ${spread(floor.samples)}` });
    out.push({ bench, metric: 'bare `http.get` script, spawn to first request', value: round(median(bare.samples)), unit: 'ms', note: `median of ${runs}, ${spread(bare.samples)}${HAVE_PROC ? `; CPU by then ${round(median(bare.cpu))} ms (${spread(bare.cpu)})` : ''}` });
    for (const c of cases.filter((x) => x.side !== 'floor')) {
      const ms = median(c.samples);
      // The over-floor figure of each round, paired with that round's floor: the medians of differences.
      const over = c.samples.map((s, i) => s - floor.samples[i]);
      const prof = profiles.find((p) => p.side === c.side && p.name === c.name);
      const target = c.name === 'crawl --redis URL' ? { op: '<=', value: 500 } : { op: '<=', value: 150 };
      const value = c.name === 'crawl --redis URL' ? round(ms) : round(median(over));
      out.push({
        bench,
        metric: `${paired ? `${c.side}: ` : ''}\`${c.name}\`, ${c.name === 'crawl --redis URL' ? 'spawn to first request' : 'spawn to first request, over `node -e 0`'}`,
        value,
        unit: 'ms',
        target,
        note: `median of ${runs}; spawn to first request ${round(ms)} ms (${spread(c.samples)}), over node -e 0 ${round(median(over))} ms (${spread(over)})${prof ? `; ${prof.total} files loaded before it, ${prof.ours} of ours` : ''}`,
      });
      if (HAVE_PROC) {
        out.push({
          bench,
          metric: `${paired ? `${c.side}: ` : ''}\`${c.name}\`, CPU used by its first request, over the bare script's`,
          value: round(median(c.cpu) - median(bare.cpu)),
          unit: 'ms',
          note: `median of ${runs}; ${round(median(c.cpu))} ms (${spread(c.cpu)}), the bare script ${round(median(bare.cpu))} ms; user + system, all threads, from /proc`,
        });
      }
    }
  }
  for (const w of workers) {
    out.push({
      bench,
      metric: `${paired ? `${w.side}: ` : ''}three \`--redis\` workers spawned together, to the first request`,
      value: round(median(w.any)),
      unit: 'ms',
      note: `median of ${w.any.length}, ${spread(w.any)}; ${everyWorker(w.all)}; all exited by ${round(median(w.exit))} ms (${SHARED_PAGES + 1} pages)`,
    });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
