#!/usr/bin/env node
/**
 * `npm run bench` / `npm run bench:quick`: every benchmark, one after the
 * other, against the built crawler (dist/, bin/crawl.js), then one table.
 *
 *   node bench/run.js [--quick] [--only throughput,scheduling,memory,parse,startup,loop-cpu,state,report,broad,redis,redis-memory,render,recrawl,http2,latency-backoff,soak] [--corpus DIR] (soak runs only when named)
 *
 * Writes bench/results/latest.json and bench/results/latest.md (git-ignored;
 * copy the table into BENCHMARKS.md when it changes). Exits 1 if a
 * benchmark failed to run (not when a target is missed: that is a finding).
 * Everything is local: the web is on 127.0.0.1, *.localhost names never
 * reach DNS.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './lib/cli.js';
import { machineInfo } from './lib/machine.js';
import { markdownTable, textTable, verdict } from './lib/report.js';

const BENCHMARKS = {
  startup: () => import('./startup.js'),
  parse: () => import('./parse.js'),
  memory: () => import('./memory.js'),
  scheduling: () => import('./scheduling.js'),
  throughput: () => import('./throughput.js'),
  'loop-cpu': () => import('./loop-cpu.js'),
  state: () => import('./state.js'),
  report: () => import('./report.js'),
  broad: () => import('./broad.js'),
  redis: () => import('./redis.js'),
  'redis-memory': () => import('./redis-memory.js'),
  render: () => import('./render.js'),
  recrawl: () => import('./recrawl.js'),
  http2: () => import('./http2.js'),
  'latency-backoff': () => import('./latency-backoff.js'),
  soak: () => import('./soak.js'),
};
/** Minutes long: run only when named (`--only soak`). */
const ON_REQUEST = new Set(['soak']);

const args = parseArgs(process.argv.slice(2));
const only = typeof args.only === 'string' ? args.only.split(',') : Object.keys(BENCHMARKS).filter((name) => !ON_REQUEST.has(name));
for (const name of only) {
  if (!(name in BENCHMARKS)) {
    process.stderr.write(`unknown benchmark "${name}"; choose from ${Object.keys(BENCHMARKS).join(', ')}\n`);
    process.exit(2);
  }
}
if (!existsSync(new URL('../dist/cli/cli.js', import.meta.url))) {
  process.stderr.write('dist/ is missing: run `npm run build` first (npm run bench does)\n');
  process.exit(2);
}

const machine = machineInfo();
const log = (s) => process.stderr.write(s + '\n');
log(`crawl benchmarks${args.quick ? ' (quick)' : ''} on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load ${machine.loadAverage}`);

const rows = [];
const failures = [];
const started = performance.now();
for (const name of only) {
  const t0 = performance.now();
  log(`- ${name} …`);
  try {
    const { run } = await BENCHMARKS[name]();
    rows.push(...(await run({ ...args, log })));
  } catch (err) {
    failures.push(name);
    log(`  ${name} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    rows.push({ bench: name, metric: 'failed to run', value: NaN, note: String(err instanceof Error ? err.message : err).split('\n')[0] });
  }
  log(`  ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// In the order (1. throughput … 5. start-up), whatever order they ran in.
const number = (row) => Number.parseInt(row.bench, 10) || 99;
rows.sort((a, b) => number(a) - number(b));
const totalSeconds = (performance.now() - started) / 1000;
process.stdout.write(`\n${textTable(rows)}\n\n`);
const missed = rows.filter((r) => verdict(r) === 'MISSED').length;
log(`${rows.length} figures, ${missed} target${missed === 1 ? '' : 's'} missed, ${totalSeconds.toFixed(0)} s`);

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
writeFileSync(`${resultsDir}latest.json`, JSON.stringify({ machine, quick: args.quick, seconds: totalSeconds, rows }, null, 2) + '\n');
const machineLine = `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}, undici ${machine.undici}, htmlparser2 ${machine.htmlparser2}, cheerio ${machine.cheerio}; load average at start ${machine.loadAverage}; ${machine.date}`;
writeFileSync(`${resultsDir}latest.md`, `${markdownTable(rows)}\n\nMachine: ${machineLine}. Mode: ${args.quick ? 'quick' : 'full'}, ${totalSeconds.toFixed(0)} s.\n`);
log(`wrote ${resultsDir}latest.md and latest.json`);
process.exitCode = failures.length > 0 ? 1 : 0;
