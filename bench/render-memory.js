#!/usr/bin/env node
/**
 * Memory of a rendered crawl: `crawl --render` over the client-rendered web
 * of fixtures/app-web.js (2 × items + 1 pages), sampling once a second the
 * memory of the crawl's whole process tree (node + Chromium's processes:
 * the sum of their PSS, from /proc/PID/smaps_rollup). Prints the peak, and the RSS after warm-up (the first quarter of
 * the run) at the middle and at the end, and the slope of memory against
 * pages after warm-up (least squares), so growth shows.
 *
 *   node bench/render-memory.js [--items N] [--concurrency N]
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';
import { appSites } from '../fixtures/app-web.js';
import { parseArgs } from './lib/cli.js';

const args = parseArgs(process.argv.slice(2));
const items = Number(args.items ?? 100);
const concurrency = Number(args.concurrency ?? 4);
const browser = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const page = 4096;

/** pid → parent pid and RSS bytes, for every process. */
function processes() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(name), { ppid: Number(fields[1]), rss: Number(fields[21]) * page });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Proportional set size: shared pages split between the processes that share them (a sum of RSS counts Chromium's shared memory once per process). */
function pss(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function treeRss(root) {
  const all = processes();
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    total += pss(pid);
    for (const [child, p] of all) if (p.ppid === pid) stack.push(child);
  }
  return total;
}

const web = await startWeb({ sites: appSites({ items }) });
const bin = fileURLToPath(new URL('../bin/crawl.js', import.meta.url));
const started = Date.now();
const child = spawn(process.execPath, [bin, '-q', '--render', '--browser', browser, '--allow-private', '--rate', 'unlimited', '--host-concurrency', String(concurrency), '--render-concurrency', String(concurrency), web.url('app.localhost', '/')], { stdio: ['ignore', 'pipe', 'inherit'] });
let pages = 0;
child.stdout.on('data', (c) => (pages += String(c).split('\n').filter((l) => l.includes('"rendered":true')).length));
const samples = [];
const timer = setInterval(() => samples.push({ s: (Date.now() - started) / 1000, pages, rss: treeRss(child.pid) }), 1000);
await new Promise((resolve) => child.on('close', resolve));
clearInterval(timer);
await web.close();
const mb = (b) => `${Math.round(b / 1024 / 1024)} MB`;
const after = samples.filter((x) => x.pages >= pages / 4);
const peak = Math.max(...samples.map((x) => x.rss));
const at = (f) => after[Math.min(after.length - 1, Math.floor(after.length * f))];
process.stdout.write(`${pages} pages rendered in ${((Date.now() - started) / 1000).toFixed(1)} s, ${concurrency} at once\n`);
process.stdout.write(`crawl + browser memory (sum of PSS): peak ${mb(peak)}; after warm-up: ${mb(at(0).rss)} at ${at(0).pages} pages, ${mb(at(0.5).rss)} at ${at(0.5).pages}, ${mb(at(0.95).rss)} at ${at(0.95).pages}\n`);
process.stdout.write(`per render slot (peak ÷ ${concurrency}): ${mb(peak / concurrency)}\n`);
// Flat or growing: the least-squares slope of memory against pages rendered, after warm-up.
const n = after.length;
const mx = after.reduce((a, x) => a + x.pages, 0) / n;
const my = after.reduce((a, x) => a + x.rss, 0) / n;
const slope = after.reduce((a, x) => a + (x.pages - mx) * (x.rss - my), 0) / Math.max(1, after.reduce((a, x) => a + (x.pages - mx) ** 2, 0));
process.stdout.write(`slope after warm-up: ${(slope * 1000 / 1024 / 1024).toFixed(1)} MB per 1,000 pages rendered (${n} samples)\n`);
