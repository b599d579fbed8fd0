#!/usr/bin/env node
/**
 * Benchmark 14: soak. One long crawl against a local web at an unlimited
 * rate, sampled from inside the crawl process (lib/memory-sampler.js) and
 * from the server's own arrival log:
 *
 * - `--state FILE`, 1,000,000 pages by default: RSS after warm-up (the first
 *   10% of pages) should be flat; reported as the slope of a least-squares
 *   line through RSS against pages served, in MB per 100,000 pages. Also the
 *   state file's bytes per page (with its -wal) and throughput over the first
 *   and the last tenth of the pages.
 * - `--redis URL`, one worker, 200,000 pages by default (when redis-server
 *   is installed): the same figures, with Redis's own memory per page.
 *
 * Long (minutes): not part of the default `npm run bench`; run it with
 * `node bench/run.js --only soak` or `node bench/soak.js [--pages N]
 * [--redis-pages N] [--quick]`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';
import { redisServerInstalled, startRedisServer } from '../fixtures/redis-server.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { MB, round } from './lib/stats.js';

const SAMPLER = fileURLToPath(new URL('./lib/memory-sampler.js', import.meta.url));
const HOSTS = ['s1', 's2', 's3', 's4'].map((h) => `${h}.localhost`);
const CONCURRENCY = 32;
const PAGE_PATH = /^\/p\/\d+$/;

/** @param {{ quick?: boolean, pages?: number, redisPages?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const pages = Number(opts.pages ?? (opts.quick ? 100_000 : 1_000_000));
  const redisPages = Number(opts.redisPages ?? (opts.quick ? 40_000 : 200_000));
  const log = opts.log ?? (() => {});
  const bench = '14. Soak';
  const rows = [];
  const scratch = scratchDir('crawl-soak-');
  try {
    const state = await soak({ pages, scratch, log, target: (file) => ['--state', file] });
    rows.push(...describe(bench, '--state', pages, state, `state file ${round(state.storeBytes / pages)} B per page`));
    if (redisServerInstalled()) {
      const redis = await startRedisServer();
      try {
        const shared = await soak({ pages: redisPages, scratch, log, target: () => ['--redis', redis.url, '--crawl-id', 'soak'], redis });
        rows.push(...describe(bench, '--redis (1 worker)', redisPages, shared, `Redis used_memory ${round(shared.storeBytes / redisPages)} B per page`));
      } finally {
        await redis.stop();
      }
    } else {
      log('  redis-server not installed: the --redis soak is skipped');
    }
    return rows;
  } finally {
    scratch.cleanup();
  }
}

function describe(bench, how, pages, r, storeNote) {
  const n = pages.toLocaleString('en');
  return [
    { bench, metric: `${how}, ${n} pages: RSS slope after warm-up`, value: round(r.slopeMbPer100k, 1), unit: 'MB per 100k pages', target: { op: '<=', value: 5 },
      note: `RSS ${round(r.rssAfterWarmupMb)} MB after the first 10%, ${round(r.rssEndMb)} MB at the end, peak ${round(r.peakRssMb)} MB; ${storeNote}` },
    { bench, metric: `${how}, ${n} pages: throughput over the last tenth ÷ the first`, value: round(r.lastTenth / r.firstTenth, 2), target: { op: '>=', value: 0.8 },
      note: `${round(r.firstTenth)} pages/s at the start, ${round(r.lastTenth)} at the end; ${round(r.wallS)} s in all; CPU ${round(r.cpuUsPerPage)} µs per page` },
  ];
}

async function soak({ pages, scratch, log, target, redis }) {
  const perHost = Math.ceil(pages / HOSTS.length);
  const sites = {};
  for (const host of HOSTS) sites[host] = { generate: { pages: perHost, linksPerPage: 4 } };
  const web = await startWeb({ sites });
  const memFile = scratch.file(`soak-mem-${pages}.json`);
  const stateFile = scratch.file(`soak-${pages}.db`);
  try {
    const seeds = HOSTS.map((h) => web.url(h, '/p/0'));
    // Every page of a host is wanted: its default cap (100,000 URLs per host) would end a 1,000,000-page soak at 400,000.
    const args = ['bin/crawl.js', '--rate', 'unlimited', '--host-concurrency', String(CONCURRENCY), '-c', String(CONCURRENCY), '--scope', 'host', '--max-pages-per-host', String(perHost + 1), '-q', ...target(stateFile), ...seeds];
    log(`  crawling ${pages.toLocaleString('en')} pages with ${target(stateFile)[0]} …`);
    const spawnedAt = performance.timeOrigin + performance.now();
    const result = expectSuccess('crawl', await runNode(args, { nodeArgs: ['--import', SAMPLER], env: { PROBE_MEMORY_FILE: memFile, PROBE_SAMPLE_MS: '200' }, timeoutMs: 3 * 3600_000 }));
    const arrivals = web.requests().filter((e) => PAGE_PATH.test(e.path)).map((e) => e.at).sort((a, b) => a - b);
    if (arrivals.length < pages * 0.99) throw new Error(`the crawl fetched ${arrivals.length} of ${pages} pages`);
    const mem = JSON.parse(readFileSync(memFile, 'utf8'));
    // Pages served by each sample's time (the sampler's clock starts with the child, a few ms after spawn).
    const servedBy = (t) => {
      let lo = 0;
      let hi = arrivals.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (arrivals[mid] <= t) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const warm = arrivals.length / 10;
    const points = mem.timeline.map((s) => ({ pages: servedBy(spawnedAt + s.at), rssMb: s.rss / MB })).filter((p) => p.pages >= warm);
    const tenth = Math.floor(arrivals.length / 10);
    const rate = (from, to) => ((to - from) / (arrivals[to - 1] - arrivals[from])) * 1000;
    let storeBytes = 0;
    if (redis) {
      const { createClient } = await import('redis');
      const client = createClient({ url: redis.url });
      await client.connect();
      const info = await client.info('memory');
      await client.quit();
      storeBytes = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
    } else {
      for (const f of [stateFile, `${stateFile}-wal`]) if (existsSync(f)) storeBytes += statSync(f).size;
    }
    return {
      slopeMbPer100k: slope(points) * 100_000,
      rssAfterWarmupMb: points[0]?.rssMb ?? NaN,
      rssEndMb: points.at(-1)?.rssMb ?? NaN,
      peakRssMb: mem.rss / MB,
      firstTenth: rate(0, tenth),
      lastTenth: rate(arrivals.length - tenth, arrivals.length),
      wallS: result.wallMs / 1000,
      cpuUsPerPage: (result.cpuMs * 1000) / arrivals.length,
      storeBytes,
    };
  } finally {
    await web.close();
  }
}

/** Least-squares slope of rssMb over pages. */
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p.pages, 0) / n;
  const my = points.reduce((s, p) => s + p.rssMb, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.pages - mx) * (p.rssMb - my);
    den += (p.pages - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
