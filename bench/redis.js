#!/usr/bin/env node
/**
 * Benchmark 10: one crawl shared by several worker processes through Redis
 * (`--redis URL --crawl-id ID`), against the memory store in the same run.
 *
 * - Throughput: a generated web of many hosts, no politeness limit, crawled
 *   by 1, 2 and 3 real worker processes (bin/crawl.js --redis, one
 *   throwaway redis-server) and by one memory-store process, alternating
 *   within each round. Aggregate pages/s over the span the SERVER saw; CPU
 *   per page summed over the workers; Redis's own CPU per page (INFO cpu)
 *   and, from INFO commandstats, what the record log's RPUSHes cost Redis
 *   per page (the log `crawl report --redis` reads).
 * - Politeness-bound efficiency: benchmark 2's web (one slow host, 30 fast
 *   ones), ideal wall time (the slow host's 40 pages at 4/s = 10 s) ÷ actual
 *   (first spawn to last exit), one memory-store process against 3 Redis
 *   workers; target: 3 workers ≥ 0.9 of the single process. The server's
 *   log must show no gap shorter than 1/rate and no page fetched twice.
 *
 *   node bench/redis.js [--quick] [--pages-per-host N] [--rounds N]
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { duplicates, startWeb } from '../fixtures/web.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { serverSpan } from './lib/loop.js';
import { median, round } from './lib/stats.js';
import { redisUsage } from './lib/redis-usage.js';
import { startRedisServer } from '../fixtures/redis-server.js';

const HOSTS = Array.from({ length: 20 }, (_, i) => `h${String(i + 1).padStart(2, '0')}.localhost`);
const CONCURRENCY = 64;
const PAGE_PATH = /^\/p\/\d+$/;
const SEND_LOG = fileURLToPath(new URL('../fixtures/send-log.js', import.meta.url));
const SLOW = { host: 'slow.localhost', pages: 40, perSecond: 4 };
const FAST = { count: 30, pages: 15, perSecond: 30 };

/** @param {{ quick?: boolean, pagesPerHost?: number, rounds?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const pagesPerHost = Number(opts.pagesPerHost ?? (opts.quick ? 250 : 1_000));
  const rounds = Number(opts.rounds ?? 2);
  const log = opts.log ?? (() => {});
  const redis = await startRedisServer();
  const admin = createClient({ url: redis.url });
  await admin.connect();
  const scratch = scratchDir();
  try {
    const total = pagesPerHost * HOSTS.length;
    const sites = {};
    for (const host of HOSTS) sites[host] = { generate: { pages: pagesPerHost, linksPerPage: 10, crossHosts: HOSTS.filter((h) => h !== host).slice(0, 3) } };
    const web = await startWeb({ sites });
    const runs = { memory: [], 1: [], 2: [], 3: [] };
    try {
      for (let r = 0; r < rounds; r++) {
        runs.memory.push(await crawlOnce(web, scratch, total, 0));
        for (const n of [1, 2, 3]) runs[n].push(await crawlOnce(web, scratch, total, n, redis, admin));
        log(`  round ${r + 1}: memory ${round(runs.memory.at(-1).pagesPerSec)} pages/s; Redis ${[1, 2, 3].map((n) => `${n} worker${n > 1 ? 's' : ''} ${round(runs[n].at(-1).pagesPerSec)}`).join(', ')} pages/s`);
      }
    } finally {
      await web.close();
    }
    const efficiency = { single: [], three: [] };
    for (let r = 0; r < rounds; r++) {
      efficiency.single.push(await politeOnce(scratch, 0));
      efficiency.three.push(await politeOnce(scratch, 3, redis, admin));
      const e1 = efficiency.single.at(-1);
      const e3 = efficiency.three.at(-1);
      log(
        `  round ${r + 1}: efficiency (ideal ÷ actual wall) 1 process ${round(e1.efficiency, 3)}, 3 Redis workers ${round(e3.efficiency, 3)}; ` +
          `arrival gaps under 1/rate ${e1.short} and ${e3.short}, tightest ${round(e1.tightest, 3)} and ${round(e3.tightest, 3)} × 1/rate; ` +
          `as written ${e1.writtenShort} and ${e3.writtenShort}, tightest ${round(e1.writtenTightest, 3)} and ${round(e3.writtenTightest, 3)}`,
      );
    }

    const bench = `10. Redis, shared crawl (${total.toLocaleString('en')} pages, ${HOSTS.length} hosts)`;
    const rate = (k) => median(runs[k].map((c) => c.pagesPerSec));
    const cpu = (k) => median(runs[k].map((c) => c.cpuUsPerPage));
    const each = (k, f) => runs[k].map((c) => round(f(c))).join(', ');
    const rows = [];
    for (const n of [1, 2, 3]) {
      rows.push({ bench, metric: `${n} Redis worker${n > 1 ? 's' : ''} ÷ memory store, aggregate pages/s`, value: round(rate(n) / rate('memory'), 2),
        note: `${round(rate(n))} against ${round(rate('memory'))} pages/s (runs: ${each(n, (c) => c.pagesPerSec)} against ${each('memory', (c) => c.pagesPerSec)}); worker CPU ${round(cpu(n))} µs a page against ${round(cpu('memory'))}; median of ${rounds}; 2 shared cores` });
    }
    const redisCpu = median([1, 2, 3].flatMap((n) => runs[n].map((c) => c.redisCpuUsPerPage)));
    const logUs = median([1, 2, 3].flatMap((n) => runs[n].map((c) => c.logUsPerPage)));
    const scriptUs = median([1, 2, 3].flatMap((n) => runs[n].map((c) => c.scriptUsPerPage)));
    rows.push(
      { bench, metric: 'cost of Redis per page: worker CPU, 1 Redis worker − memory store', value: round(cpu(1) - cpu('memory')), unit: 'µs',
        note: `${round(cpu(1))} against ${round(cpu('memory'))} µs (user + system of the crawl process)` },
      { bench, metric: 'cost of Redis per page: redis-server CPU', value: round(redisCpu), unit: 'µs',
        note: `INFO cpu, over every Redis run; scripts ${round(scriptUs)} µs a page by INFO commandstats` },
      { bench, metric: 'record log (crawl report --redis): Redis time per page', value: round(logUs, 2), unit: 'µs',
        note: `RPUSH calls by INFO commandstats; ${round(median([1, 2, 3].flatMap((n) => runs[n].map((c) => c.rpushPerPage))), 2)} RPUSH a page (a completion sends what is buffered)` },
    );
    const eff = (k) => median(efficiency[k].map((e) => e.efficiency));
    rows.push(
      { bench: '10. Redis, politeness-bound (1 slow + 30 fast hosts)', metric: '3 Redis workers ÷ 1 process, efficiency (ideal ÷ actual wall time)', value: round(eff('three') / eff('single'), 3), target: { op: '>=', value: 0.9 },
        note: `efficiency ${round(eff('three'), 3)} (runs ${efficiency.three.map((e) => round(e.efficiency, 3)).join(', ')}) against ${round(eff('single'), 3)} (${efficiency.single.map((e) => round(e.efficiency, 3)).join(', ')}); ideal ${SLOW.pages / SLOW.perSecond} s; median of ${rounds}` },
      { bench: '10. Redis, politeness-bound (1 slow + 30 fast hosts)', metric: 'gaps shorter than 1/rate as the workers wrote them, 3 workers', value: Math.max(...efficiency.three.map((e) => e.writtenShort)), target: { op: '<=', value: 0 },
        note: `worst of ${rounds} runs; tightest ${round(Math.min(...efficiency.three.map((e) => e.writtenTightest)), 3)} × 1/rate (1 process: ${round(Math.min(...efficiency.single.map((e) => e.writtenTightest)), 3)}); undici's sendHeaders in each worker, one machine clock` },
      { bench: '10. Redis, politeness-bound (1 slow + 30 fast hosts)', metric: 'gaps shorter than 1/rate as the server saw them, 3 workers', value: Math.max(...efficiency.three.map((e) => e.short)), target: { op: '<=', value: 0 },
        note: `worst of ${rounds} runs; tightest ${round(Math.min(...efficiency.three.map((e) => e.tightest)), 3)} × 1/rate (1 process: ${round(Math.min(...efficiency.single.map((e) => e.tightest)), 3)}); a gap short here but not as written is the server reading late` },
    );
    return rows;
  } finally {
    scratch.cleanup();
    await admin.quit().catch(() => {});
    await redis.stop();
  }
}

/**
 * Starts `n` workers of one new crawl (0: one memory-store process); resolves when all have exited 0.
 * With `sendLogs`, each process writes when it wrote each request (send-log.js) to `sent-wI.json`.
 */
async function workers(n, scratch, args, redis, sendLogs = false) {
  // A durable crawl appends to its -o file: each run starts with none.
  for (let i = 0; i < 3; i++) for (const suffix of ['', '.partial']) rmSync(scratch.file(`w${i}.jsonl${suffix}`), { force: true });
  const opts = (i) => (sendLogs ? { nodeArgs: ['--import', SEND_LOG], env: { CRAWL_BENCH_SEND_LOG: scratch.file(`sent-w${i}.json`) } } : {});
  if (n === 0) return [expectSuccess('crawl', await runNode(['bin/crawl.js', ...args, '-o', scratch.file('w0.jsonl')], opts(0)))];
  const crawlId = `bench-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const started = Array.from({ length: n }, (_, i) =>
    runNode(['bin/crawl.js', '--redis', redis.url, '--crawl-id', crawlId, '--worker', `w${i}`, ...args, '-o', scratch.file(`w${i}.jsonl`)], opts(i)),
  );
  return (await Promise.all(started)).map((r, i) => expectSuccess(`worker ${i}`, r));
}

/** Gaps between a host's starts shorter than 1/rate, and the tightest as a fraction of 1/rate, over `[host, at]` pairs. */
function shortGaps(starts) {
  const byHost = new Map();
  for (const [host, at] of starts) byHost.set(host, [...(byHost.get(host) ?? []), at]);
  let short = 0;
  let tightest = Infinity;
  for (const [host, times] of byHost) {
    const required = 1000 / (host === SLOW.host ? SLOW.perSecond : FAST.perSecond);
    times.sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      const ratio = (times[i] - times[i - 1]) / required;
      if (ratio < 1) short++;
      tightest = Math.min(tightest, ratio);
    }
  }
  return { short, tightest };
}

function pagesWritten(scratch, n) {
  let ok = 0;
  for (let i = 0; i < Math.max(1, n); i++) {
    for (const line of readFileSync(scratch.file(`w${i}.jsonl`), 'utf8').split('\n')) if (line.startsWith('{"type":"page"') && line.includes('"status":200,')) ok++;
  }
  return ok;
}

async function crawlOnce(web, scratch, total, n, redis, admin) {
  web.reset();
  if (admin) await admin.flushAll();
  const before = admin ? await redisUsage(admin) : null;
  const args = ['--rate', 'unlimited', '--host-concurrency', '16', '-c', String(CONCURRENCY), '--scope', 'host', '-q', ...HOSTS.map((h) => web.url(h, '/p/0'))];
  const results = await workers(n, scratch, args, redis);
  const after = admin ? await redisUsage(admin) : null;
  const ok = pagesWritten(scratch, n);
  const what = n === 0 ? 'memory store' : `${n} Redis worker(s)`;
  if (ok !== total) throw new Error(`${what}: ${ok} of ${total} pages fetched with status 200`);
  const dupes = duplicates(web.requests()).filter((d) => PAGE_PATH.test(d.path));
  if (dupes.length > 0) throw new Error(`${what} fetched ${dupes.length} pages more than once, e.g. ${JSON.stringify(dupes[0])}`);
  const { pages, spanMs } = serverSpan(web, PAGE_PATH);
  const out = { pagesPerSec: (pages / spanMs) * 1000, cpuUsPerPage: (results.reduce((s, r) => s + r.cpuMs, 0) * 1000) / pages };
  if (before && after) {
    out.redisCpuUsPerPage = (after.cpuUs - before.cpuUs) / pages;
    out.logUsPerPage = (after.rpush.usec - before.rpush.usec) / pages;
    out.rpushPerPage = (after.rpush.calls - before.rpush.calls) / pages;
    out.scriptUsPerPage = (after.evalsha.usec - before.evalsha.usec) / pages;
  }
  return out;
}

/** Benchmark 2's web, crawled by one memory-store process (n = 0) or `n` Redis workers. */
async function politeOnce(scratch, n, redis, admin) {
  const fastHosts = Array.from({ length: FAST.count }, (_, i) => `fast${String(i + 1).padStart(2, '0')}.localhost`);
  const sites = { [SLOW.host]: { generate: { pages: SLOW.pages, linksPerPage: 10 } } };
  for (const host of fastHosts) sites[host] = { generate: { pages: FAST.pages, linksPerPage: 10 } };
  const web = await startWeb({ sites });
  try {
    if (admin) await admin.flushAll();
    const config = { concurrency: 8, scope: 'host', defaults: { rate: `${FAST.perSecond}/s`, concurrency: 2 }, domains: { [SLOW.host]: { rate: `${SLOW.perSecond}/s` } } };
    writeFileSync(scratch.file('config.json'), JSON.stringify(config));
    const seeds = [SLOW.host, ...fastHosts].map((h) => web.url(h, '/p/0'));
    const t0 = performance.now();
    await workers(n, scratch, ['--config', scratch.file('config.json'), '-q', ...seeds], redis, true);
    const wallMs = performance.now() - t0;
    const expected = SLOW.pages + FAST.count * FAST.pages;
    const ok = pagesWritten(scratch, n);
    if (ok !== expected) throw new Error(`politeness run with ${n} worker(s): ${ok} of ${expected} pages`);
    if (duplicates(web.requests()).length > 0) throw new Error(`politeness run with ${n} worker(s) fetched a URL twice`);
    // The server's arrivals, and the workers' own writes (one machine, one clock): a gap short at the
    // server only is the server reading a request late, one short in the writes would be the crawl's.
    const { short, tightest } = shortGaps(web.requests().map((e) => [e.host, e.at]));
    const sent = [];
    for (let i = 0; i < Math.max(1, n); i++) {
      for (const e of JSON.parse(readFileSync(scratch.file(`sent-w${i}.json`), 'utf8'))) sent.push([new URL(e.origin).hostname, e.at]);
    }
    if (sent.length !== web.requests().length) throw new Error(`politeness run with ${n} worker(s): ${sent.length} writes logged for ${web.requests().length} requests`);
    const written = shortGaps(sent);
    return { efficiency: ((SLOW.pages / SLOW.perSecond) * 1000) / wallMs, short, tightest, writtenShort: written.short, writtenTightest: written.tightest };
  } finally {
    await web.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
