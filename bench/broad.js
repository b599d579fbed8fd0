#!/usr/bin/env node
/**
 * Benchmark 8: broad crawls (issue 13). A web of N hosts (`h{i}.localhost`,
 * all played by the one local server), 10 pages each (`/` and `/p/0…8`, ~10
 * links a page, a few to two other hosts), every root a seed from a seeds
 * file, crawled politely at 5/s per host with global concurrency 256: the
 * sum of the hosts' rates (N × 5/s) is above what this machine can serve, so
 * the crawl is CPU-bound and its per-host costs show. Against it, in the same
 * run and alternating with it, a plain request loop (request-loop.js) over
 * the same page URLs in round-robin order (page p of every host, then p + 1),
 * at the same concurrency.
 *
 * Pages per second are over the span the SERVER saw, first page request to
 * last; robots.txt requests (one per host, which the loop does not make) are
 * not counted as pages but their cost is in the crawl's CPU per page. Every
 * crawl must fetch every page once with status 200, or the benchmark fails.
 *
 * Then start-up at scale: 100,000 seeds from a file to the first request
 * the server sees (the crawl stops at --max-pages; every seed must get
 * exactly one record, and every page fetched must be 200 and fetched once).
 *
 *   node bench/broad.js [--quick] [--hosts 2000,20000 (0: none)] [--rounds N] [--startup-seeds 100000 (0: none)] [--client undici|http]
 *
 * --client: the plain loop's client (request-loop.js): undici, the crawler's
 * transport (default), or node:http, issue 19's bare loop.
 *   BROAD_CPU_PROF=DIR node bench/broad.js …   # also write a CPU profile of each crawl into DIR
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { duplicates, startWeb } from '../fixtures/web.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { runLoop, serverSpan } from './lib/loop.js';
import { MB, max, median, round } from './lib/stats.js';

const CONCURRENCY = 256;
const RATE = '5/s';
const PAGES = 9; // /p/0 … /p/8, plus the root: 10 pages a host
const PAGE_PATH = /^\/(p\/\d+)?$/;
const now = () => performance.timeOrigin + performance.now();

const hostName = (i) => `h${i}.localhost`;

function sitesFor(n) {
  const sites = {};
  for (let i = 0; i < n; i++) {
    sites[hostName(i)] = { generate: { pages: PAGES, linksPerPage: 10, seed: i + 1, crossHosts: [hostName((i + 1) % n), hostName((i + 7) % n)] } };
  }
  return sites;
}

/** @param {{ quick?: boolean, hosts?: string | number, rounds?: number, startupSeeds?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const log = opts.log ?? (() => {});
  const counts = opts.hosts !== undefined ? String(opts.hosts).split(',').map(Number).filter((n) => n > 0) : opts.quick ? [2_000] : [2_000, 20_000];
  const rows = [];
  const startups = [];
  for (const n of counts) {
    const rounds = opts.rounds ?? (n <= 5_000 ? 2 : 1);
    const r = await broadRun(n, rounds, log, opts.client ?? 'undici');
    rows.push(...r.rows);
    startups.push({ n, ms: r.startupMs });
  }
  const seedCount = opts.startupSeeds ?? 100_000;
  if (seedCount > 0) {
    const s = await startupRun(seedCount, log);
    startups.push({ n: seedCount, ms: s.startupMs });
    rows.push({ bench: `9. Broad (${seedCount.toLocaleString('en')} seeds)`, metric: 'seeds file to first request', value: round(s.startupMs / 1000, 2), unit: 's',
      target: { op: '<', value: 2 }, note: `spawn to the first request the server saw; peak RSS ${round(s.maxRssBytes / MB)} MB with ${seedCount.toLocaleString('en')} hosts known and queued (stopped at --max-pages ${s.maxPages})` });
  }
  if (startups.length > 1) {
    rows.push({ bench: '9. Broad', metric: 'spawn to first request against hosts', value: startups.map((s) => `${round(s.ms / 1000, 2)} s`).join(' / '),
      note: startups.map((s) => `${s.n.toLocaleString('en')} hosts`).join(' / ') });
  }
  return rows;
}

async function broadRun(n, rounds, log, client) {
  const web = await startWeb({ sites: sitesFor(n) });
  const scratch = scratchDir();
  try {
    const seeds = [];
    for (let i = 0; i < n; i++) seeds.push(web.url(hostName(i), '/'));
    writeFileSync(scratch.file('seeds.txt'), seeds.join('\n') + '\n');
    // Round-robin: page p of every host, then page p + 1.
    const urls = [...seeds];
    for (let p = 0; p < PAGES; p++) for (let i = 0; i < n; i++) urls.push(web.url(hostName(i), `/p/${p}`));
    writeFileSync(scratch.file('urls.txt'), urls.join('\n'));
    const total = urls.length;

    const loops = [];
    const crawls = [];
    for (let r = 0; r < rounds; r++) {
      loops.push(await runLoop(web, scratch, total, CONCURRENCY, PAGE_PATH, client));
      log(`  ${n} hosts, round ${r + 1}: loop ${round(loops.at(-1).pagesPerSec)} req/s, ${round(loops.at(-1).cpuUsPerPage)} µs/page, peak RSS ${round(loops.at(-1).maxRssBytes / MB)} MB`);
      crawls.push(await runCrawl(web, scratch, n, total));
      const c = crawls.at(-1);
      log(`  ${n} hosts, round ${r + 1}: crawl ${round(c.pagesPerSec)} pages/s, ${round(c.cpuUsPerPage)} µs/page, peak RSS ${round(c.maxRssBytes / MB)} MB, first request ${round(c.startupMs)} ms after spawn, robots.txt ${c.robots}`);
    }
    const bench = `9. Broad (${n.toLocaleString('en')} hosts × 10 pages)`;
    const crawlRate = median(crawls.map((c) => c.pagesPerSec));
    const loopRate = median(loops.map((l) => l.pagesPerSec));
    const crawlCpu = median(crawls.map((c) => c.cpuUsPerPage));
    const loopCpu = median(loops.map((l) => l.cpuUsPerPage));
    const crawlRss = max(crawls.map((c) => c.maxRssBytes));
    const loopRss = max(loops.map((l) => l.maxRssBytes));
    const startupMs = median(crawls.map((c) => c.startupMs));
    const each = rounds > 1 ? `median of ${rounds}` : 'one round';
    return {
      startupMs,
      rows: [
        { bench, metric: `crawl ÷ round-robin ${client} loop, pages/s`, value: round(crawlRate / loopRate, 2), target: { op: '>=', value: 0.85 },
          note: `crawl ${round(crawlRate)} pages/s, loop ${round(loopRate)} req/s; ${each}, --rate ${RATE} per host, concurrency ${CONCURRENCY}` },
        { bench, metric: 'CPU per page, crawl ÷ loop', value: round(crawlCpu / loopCpu, 2),
          note: `crawl ${round(crawlCpu)} µs, loop ${round(loopCpu)} µs (user + system, whole process; the crawl's includes ${n.toLocaleString('en')} robots.txt requests)` },
        { bench, metric: 'peak RSS, crawl ÷ loop', value: round(crawlRss / loopRss, 2), target: { op: '<=', value: 1.5 },
          note: `crawl ${round(crawlRss / MB)} MB, loop ${round(loopRss / MB)} MB; (crawl − loop) ÷ hosts = ${round((crawlRss - loopRss) / n / 1024)} KB` },
        { bench, metric: 'spawn to first request', value: round(startupMs), unit: 'ms', note: `${n.toLocaleString('en')} seeds from a file` },
      ],
    };
  } finally {
    scratch.cleanup();
    await web.close();
  }
}


function firstArrival(web) {
  let first = Infinity;
  for (const e of web.requests()) first = Math.min(first, e.at);
  return first;
}


/** Every page 200 exactly once, as the server saw it and as the records say. */
function checkPages(web, outFile, expected) {
  let ok = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) {
    if (line.startsWith('{"type":"page"') && line.includes('"status":200,')) ok++;
  }
  const log = web.requests();
  const dupes = duplicates(log);
  if (dupes.length > 0) throw new Error(`crawl fetched ${dupes.length} URLs more than once, e.g. ${JSON.stringify(dupes[0])}`);
  const pages = log.filter((e) => PAGE_PATH.test(e.path));
  const bad = pages.find((e) => e.status !== 200);
  if (bad) throw new Error(`crawl: ${bad.host}${bad.path} answered ${bad.status}`);
  if (expected !== undefined && (ok !== expected || pages.length !== expected)) {
    throw new Error(`crawl: ${ok} page records with status 200 and ${pages.length} page requests, expected ${expected}`);
  }
  return { ok, robots: log.length - pages.length };
}

async function runCrawl(web, scratch, n, total) {
  web.reset();
  const outFile = scratch.file('crawl.jsonl');
  const args = ['bin/crawl.js', '--rate', RATE, '-c', String(CONCURRENCY), '-q', '--seeds-file', scratch.file('seeds.txt')];
  const spawnedAt = now();
  const result = expectSuccess('crawl', await runNode(args, { stdoutFile: outFile, nodeArgs: profileArgs(`broad-${n}`) }));
  const { robots } = checkPages(web, outFile, total);
  if (robots !== n) throw new Error(`crawl: ${robots} robots.txt requests for ${n} hosts`);
  const { pages, spanMs } = serverSpan(web, PAGE_PATH);
  return { pagesPerSec: (pages / spanMs) * 1000, cpuUsPerPage: (result.cpuMs * 1000) / pages, maxRssBytes: result.maxRssBytes, startupMs: firstArrival(web) - spawnedAt, robots };
}

/** BROAD_CPU_PROF=DIR: profile each crawl into DIR (node --cpu-prof). */
function profileArgs(name) {
  const dir = process.env.BROAD_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `${name}-${Date.now()}.cpuprofile`] : [];
}

async function startupRun(n, log) {
  const maxPages = 2_000;
  const web = await startWeb({ sites: sitesFor(n) });
  const scratch = scratchDir();
  try {
    const seeds = [];
    for (let i = 0; i < n; i++) seeds.push(web.url(hostName(i), '/'));
    writeFileSync(scratch.file('seeds.txt'), seeds.join('\n') + '\n');
    const outFile = scratch.file('crawl.jsonl');
    const args = ['bin/crawl.js', '--rate', RATE, '-c', String(CONCURRENCY), '-q', '--max-pages', String(maxPages), '--seeds-file', scratch.file('seeds.txt')];
    const spawnedAt = now();
    const result = expectSuccess('crawl', await runNode(args, { stdoutFile: outFile, nodeArgs: profileArgs(`startup-${n}`) }));
    const startupMs = firstArrival(web) - spawnedAt;
    const { ok } = checkPages(web, outFile);
    // Every seed gets exactly one record: fetched, or skipped at max-pages.
    const records = new Map();
    for (const line of readFileSync(outFile, 'utf8').split('\n')) {
      if (line === '') continue;
      const r = JSON.parse(line);
      if (r.depth === 0) records.set(r.url, (records.get(r.url) ?? 0) + 1);
    }
    const missing = seeds.filter((s) => records.get(s) !== 1);
    if (missing.length > 0) throw new Error(`${missing.length} seeds without exactly one record, e.g. ${missing[0]} (${records.get(missing[0]) ?? 0})`);
    if (ok === 0 || ok > maxPages) throw new Error(`start-up crawl fetched ${ok} pages with status 200 (cap ${maxPages})`);
    log(`  ${n} seeds: first request ${round(startupMs)} ms after spawn, ${ok} pages, peak RSS ${round(result.maxRssBytes / MB)} MB, wall ${round(result.wallMs)} ms`);
    return { startupMs, maxRssBytes: result.maxRssBytes, maxPages };
  } finally {
    scratch.cleanup();
    await web.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
