#!/usr/bin/env node
/**
 * Issue 45: what a page handler costs a real crawl. The real binary crawls a
 * local web of 5 generated hosts (4,000 pages each, no politeness limit)
 * with and without `--handler` (one that pushes one item per page, read
 * from its record), alternating, and the crawl process's own CPU (user +
 * system, /usr/bin/time) per page is compared; the median of the rounds.
 * bench/loop-cpu.js --handler measures the same step against the crawl loop
 * alone (an instant fetcher), the strictest ratio.
 *
 *   node bench/handler-cpu.js [--rounds N]
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';
import { scratchDir } from './lib/child.js';
import { median, round } from './lib/stats.js';

const HOSTS = ['h1.localhost', 'h2.localhost', 'h3.localhost', 'h4.localhost', 'h5.localhost'];
const PAGES = 4_000;
const bin = fileURLToPath(new URL('../bin/crawl.js', import.meta.url));

/** @param {{ rounds?: number }} [opts] */
export async function run(opts = {}) {
  const rounds = Number(opts.rounds ?? 4);
  const web = await startWeb({ sites: Object.fromEntries(HOSTS.map((h) => [h, { generate: { pages: PAGES, linksPerPage: 10 } }])) });
  const scratch = scratchDir();
  const handler = scratch.file('push.mjs');
  writeFileSync(handler, 'export function handle(page, ctx) { ctx.push({ title: page.record.title }); }\n');
  const seeds = HOSTS.map((h) => web.url(h, '/p/0'));
  const cpuPerPage = (extra) =>
    new Promise((resolve, reject) => {
      const args = ['-f', '%U %S', process.execPath, bin, '-q', '--rate', 'unlimited', '--host-concurrency', '16', '-c', '64', '--max-depth', '1000', ...extra, ...seeds];
      const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) return reject(new Error(`crawl exited with ${code}: ${err}`));
        const [user, sys] = err.trim().split('\n').at(-1).split(' ').map(Number);
        resolve(((user + sys) * 1e6) / (PAGES * HOSTS.length));
      });
    });
  const none = [];
  const push = [];
  try {
    for (let i = 0; i < rounds; i++) {
      none.push(await cpuPerPage([]));
      push.push(await cpuPerPage(['--handler', handler]));
    }
  } finally {
    await web.close();
    scratch.cleanup();
  }
  const bench = 'Page handler, real crawl (5 hosts, 20,000 pages)';
  const ratio = median(push) / median(none);
  return [
    { bench, metric: 'CPU per page, no handler', value: round(median(none)), unit: 'µs', note: `median of ${rounds}, the crawl process (start-up included)` },
    { bench, metric: 'CPU per page, a handler pushing an item', value: round(median(push)), unit: 'µs', note: `${round(ratio, 3)}× without (target ≤ 1.10); alternating` },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
