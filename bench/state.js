#!/usr/bin/env node
/**
 * Benchmark 7: the durable store (`--state FILE`).
 *
 * - Throughput with --state ÷ memory-only: the same generated web as
 *   benchmark 1, crawled by the real binary both ways, alternating, pages per
 *   second over the span the server saw.
 * - Resume with a 1,000,000-URL frontier: a state file holding a million
 *   queued URLs (built through the store itself), resumed by the real binary
 *   with --max-pages 200; time from spawn to the first request the server
 *   sees, and the process's peak RSS.
 *
 *   node bench/state.js [--quick] [--pages-per-host N] [--rounds N] [--frontier N (0: no resume)] [--base DIR]
 *
 * --base DIR: also crawl with --state using another build's binary
 * (DIR/bin/crawl.js) in the same rounds, interleaved, for a before/after.
 */
import { readFileSync } from 'node:fs';
import { startWeb } from '../fixtures/web.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { MB, median, round } from './lib/stats.js';

const HOSTS = ['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => `${h}.localhost`);
const CONCURRENCY = 64;
const PAGE_PATH = /^\/p\/\d+$/;

/** @param {{ quick?: boolean, pagesPerHost?: number, rounds?: number, frontier?: number, base?: string, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const base = opts.base === undefined ? null : `${String(opts.base).replace(/\/$/, '')}/bin/crawl.js`;
  const pagesPerHost = Number(opts.pagesPerHost ?? (opts.quick ? 2_000 : 10_000));
  const rounds = Number(opts.rounds ?? (opts.quick ? 2 : 3));
  const frontier = Number(opts.frontier ?? (opts.quick ? 200_000 : 1_000_000));
  const log = opts.log ?? (() => {});
  const total = pagesPerHost * HOSTS.length;
  const sites = {};
  for (const host of HOSTS) sites[host] = { generate: { pages: pagesPerHost, linksPerPage: 10, crossHosts: HOSTS.filter((h) => h !== host) } };
  const web = await startWeb({ sites });
  const scratch = scratchDir();
  try {
    const memory = [];
    const durable = [];
    const bases = [];
    const each = (c) => `${round(c.pagesPerSec)} pages/s ${round(c.cpuUsPerPage)} µs`;
    for (let r = 0; r < rounds; r++) {
      memory.push(await crawlOnce(web, scratch, total, null));
      if (base) bases.push(await crawlOnce(web, scratch, total, scratch.file(`base-${r}.db`), base));
      durable.push(await crawlOnce(web, scratch, total, scratch.file(`state-${r}.db`)));
      log(`  round ${r + 1}: memory ${each(memory.at(-1))}, ${base ? `base --state ${each(bases.at(-1))}, ` : ''}--state ${each(durable.at(-1))} (peak RSS ${round(durable.at(-1).maxRssBytes / MB)} MB)`);
    }
    const bench = '7. Durable store (--state)';
    const mem = median(memory.map((c) => c.pagesPerSec));
    const dur = median(durable.map((c) => c.pagesPerSec));
    const ratios = (runs) => runs.map((c, i) => round(c.pagesPerSec / memory[i].pagesPerSec, 2)).join(', ');
    const rows = [];
    if (base) {
      rows.push({ bench, metric: 'base build: throughput with --state ÷ memory only', value: round(median(bases.map((c) => c.pagesPerSec)) / mem, 2),
        note: `each round: ${ratios(bases)}; CPU per page ${round(median(bases.map((c) => c.cpuUsPerPage)))} µs` });
    }
    rows.push({ bench, metric: 'this build, each round: --state ÷ memory only', value: ratios(durable), note: `CPU per page ${durable.map((c) => round(c.cpuUsPerPage)).join(', ')} vs ${memory.map((c) => round(c.cpuUsPerPage)).join(', ')} µs` });
    if (frontier === 0) return rows;
    const resume = await resumeBig(web, scratch, frontier, log);
    return [
      ...rows,
      { bench, metric: `throughput with --state ÷ memory only, ${total.toLocaleString('en')} pages`, value: round(dur / mem, 2), target: { op: '>=', value: 0.8 },
        note: `--state ${round(dur)} pages/s, memory ${round(mem)} pages/s; median of ${rounds}; CPU per page ${round(median(durable.map((c) => c.cpuUsPerPage)))} vs ${round(median(memory.map((c) => c.cpuUsPerPage)))} µs` },
      { bench, metric: `resume with ${frontier.toLocaleString('en')} queued URLs: spawn to first request`, value: round(resume.firstRequestMs / 1000, 2), unit: 's', target: { op: '<', value: 2 },
        note: `state file ${round(resume.fileBytes / MB)} MB; built in ${round(resume.buildMs / 1000)} s` },
      { bench, metric: `peak RSS resuming ${frontier.toLocaleString('en')} queued URLs`, value: round(resume.maxRssBytes / MB), unit: 'MB', target: { op: '<=', value: 200 },
        note: 'the crawl fetches 200 pages of it, then stops at --max-pages' },
    ];
  } finally {
    scratch.cleanup();
    await web.close();
  }
}

async function crawlOnce(web, scratch, total, statePath, bin = 'bin/crawl.js') {
  web.reset();
  const outFile = scratch.file('crawl.jsonl');
  const seeds = HOSTS.map((h) => web.url(h, '/p/0'));
  const args = [bin, '--rate', 'unlimited', '--host-concurrency', String(CONCURRENCY), '-c', String(CONCURRENCY), '--scope', 'host', '-q', ...(statePath ? ['--state', statePath] : []), ...seeds];
  const result = expectSuccess('crawl', await runNode(args, { stdoutFile: outFile }));
  let ok = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) if (line.startsWith('{"type":"page"') && line.includes('"status":200,')) ok++;
  if (ok !== total) throw new Error(`crawl${statePath ? ' --state' : ''}: ${ok} of ${total} pages fetched with status 200`);
  const times = web.requests().filter((e) => PAGE_PATH.test(e.path)).map((e) => e.at);
  const spanMs = Math.max(...times) - Math.min(...times);
  return { pagesPerSec: (times.length / spanMs) * 1000, cpuUsPerPage: (result.cpuMs * 1000) / times.length, maxRssBytes: result.maxRssBytes };
}

/** Builds a state file with `n` queued URLs through the store, then resumes it with the real binary. */
async function resumeBig(web, scratch, n, log) {
  const { SqliteStore } = await import('../dist/store/sqlite-store.js');
  const path = scratch.file('big.db');
  const t0 = performance.now();
  const store = new SqliteStore(path);
  const seeds = HOSTS.map((h) => web.url(h, '/'));
  store.open({ seeds, configFingerprint: 'bench' });
  for (let i = 0; i < n; i++) {
    const host = HOSTS[i % HOSTS.length];
    const url = `${web.origin(host)}/q/${i}/a-longer-path-like-real-sites-have?page=${i}`;
    store.add(url, `${host}:${web.port}`, { url, depth: 1, parent: seeds[0], hops: 0, attempt: 0 });
  }
  store.close();
  const buildMs = performance.now() - t0;
  const { size: fileBytes } = await import('node:fs').then((fs) => fs.statSync(path));
  log(`  built a ${n.toLocaleString('en')}-URL state file (${round(fileBytes / MB)} MB) in ${round(buildMs / 1000)} s`);
  web.reset();
  const spawnedAt = performance.timeOrigin + performance.now();
  const result = expectSuccess('resume', await runNode(['bin/crawl.js', '--state', path, '--max-pages', '200', '--rate', 'unlimited', '-c', '16', '-q'], { stdoutFile: scratch.file('resume.jsonl') }));
  const first = Math.min(...web.requests().map((e) => e.at));
  return { firstRequestMs: first - spawnedAt, maxRssBytes: result.maxRssBytes, buildMs, fileBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
