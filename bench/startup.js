#!/usr/bin/env node
/**
 * Benchmark 5: start-up. Wall time of `crawl --version`, spawn to exit, next
 * to `node -e 0` (the floor any Node CLI pays on this machine), runs
 * interleaved so both see the same machine.
 *
 *   node bench/startup.js [--quick] [--runs N]
 */
import { spawnSync } from 'node:child_process';
import { ROOT } from './lib/child.js';
import { median, round } from './lib/stats.js';

function timeRun(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

/** @param {{ quick?: boolean, runs?: number }} [opts] */
export async function run(opts = {}) {
  const runs = opts.runs ?? (opts.quick ? 10 : 30);
  const crawl = [];
  const node = [];
  timeRun(['bin/crawl.js', '--version']); // warm the file cache
  for (let i = 0; i < runs; i++) {
    const r = timeRun(['bin/crawl.js', '--version']);
    if (!/^\d+\.\d+\.\d+/.test(r.stdout)) throw new Error(`crawl --version printed ${JSON.stringify(r.stdout)}`);
    crawl.push(r.ms);
    node.push(timeRun(['-e', '0']).ms);
  }
  const bench = '5. Start-up';
  return [
    { bench, metric: '`crawl --version`, spawn to exit', value: round(median(crawl)), unit: 'ms', target: { op: '<', value: 150 },
      note: `median of ${runs}; \`node -e 0\` takes ${round(median(node))} ms here, so the CLI adds ${round(median(crawl) - median(node))} ms` },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
