#!/usr/bin/env node
/**
 * Benchmark 6: the crawl loop's own CPU per page. The real Crawler (store,
 * scheduler, host records, robots off, link extraction, records) is driven
 * in-process by an instant fetcher that answers every URL at once with a small
 * generated page, so no transport or server shares the measurement. Each run
 * is a fresh child process; the median is reported. This is the number to
 * compare before and after a change to the loop, the store or the scheduler:
 * the end-to-end throughput benchmark swings with whatever else the machine
 * is doing, this one much less.
 *
 *   node bench/loop-cpu.js [--quick] [--runs N] [--pages N] [--store memory|sqlite] [--base DIR] [--handler]
 *
 * --store sqlite: the crawl keeps its state in an SQLite file (`--state`),
 * as the CLI opens it; the difference to the memory store is the durable
 * store's own cost per page, without a server's noise. Its records also go
 * to the file's record log, as the CLI's do. --base DIR: also run
 * another build's dist (DIR/dist), alternating with this one. --handler:
 * also run this build with a page handler (issue 45), alternating: `noop`
 * (returns at once: the handler step's own cost) and `push` (pushes one
 * item per page read from its record, which the sink counts apart).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, round } from './lib/stats.js';

const HOSTS = 5;

/** The handlers --handler measures: the step's own cost, and one item per page. */
const HANDLERS = {
  noop: () => {},
  push: (page, ctx) => ctx.push({ title: page.record.title }),
};

async function child(pages, storeKind, root, handlerKind) {
  const dist = root ? `${root}/dist` : '../dist';
  const { Crawler } = await import(`${dist}/crawl/crawler.js`);
  const { buildSettings, validateConfig } = await import(`${dist}/config/settings.js`);
  const { systemClock } = await import(`${dist}/clock.js`);
  const perHost = Math.ceil(pages / HOSTS);
  const settings = buildSettings(validateConfig({ defaults: { rate: 'unlimited', concurrency: 64 }, robots: { enabled: false } }, 'bench'), { concurrency: '64' });
  const body = (n) => {
    let links = '';
    for (let k = 1; k <= 5; k++) if (n * 5 + k < perHost) links += `<a href="/p/${n * 5 + k}">next</a> `;
    return `<html><head><title>Page ${n}</title></head><body><a href="/p/0">home</a> ${links}</body></html>`;
  };
  const fetcher = {
    async fetch(url, req) {
      const now = systemClock.now();
      req.onDispatched?.(now);
      req.onResponse?.(now);
      const html = body(Number(url.slice(url.indexOf('/p/') + 3)));
      return { url, status: 200, headers: { 'content-type': 'text/html' }, contentType: 'text/html', charset: 'utf-8', body: html, bytes: html.length, truncated: false, location: null, elapsedMs: 0 };
    },
    async close() {},
  };
  let written = 0;
  let items = 0;
  const sink = {
    write: async (r) => void (r.type === 'item' ? items++ : written++),
    close: async () => {},
    broken: false,
    get written() {
      return written;
    },
  };
  const handler = handlerKind ? { handler: { handle: HANDLERS[handlerKind], timeoutMs: 30_000, concurrency: 64, errors: 'record' } } : {};
  const seeds = Array.from({ length: HOSTS }, (_, i) => `http://h${i}.localhost/p/0`);
  let store;
  let dir;
  if (storeKind === 'sqlite') {
    const { SqliteStore } = await import(`${dist}/store/sqlite-store.js`);
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    dir = mkdtempSync(`${tmpdir()}/loop-cpu-`);
    store = new SqliteStore(`${dir}/state.db`, { now: () => systemClock.now() });
  }
  // As the CLI does with --state: every record also goes to the file's record log (for `crawl report --state`).
  const routed = store ? (await import(`${dist}/report/record-routes.js`)).routeRecords(sink, { log: store.recordLog() }).sink : sink;
  const cpu0 = process.cpuUsage();
  await new Crawler({ settings, seeds, clock: systemClock, fetcher, sink: routed, ...(store && { store }), ...handler }).run();
  const cpu = process.cpuUsage(cpu0);
  if (store) {
    store.close();
    (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
  }
  if (written !== perHost * HOSTS) throw new Error(`crawled ${written} pages, expected ${perHost * HOSTS}`);
  if (handlerKind === 'push' && items !== written) throw new Error(`${items} items for ${written} pages`);
  process.stdout.write(JSON.stringify({ pages: written, usPerPage: (cpu.user + cpu.system) / written }) + '\n');
}

/** @param {{ quick?: boolean, runs?: number, pages?: number, store?: string, base?: string, handler?: boolean }} [opts] */
export async function run(opts = {}) {
  const runs = Number(opts.runs ?? (opts.quick ? 3 : 7));
  const pages = Number(opts.pages ?? 50_000);
  const storeKind = opts.store ?? 'memory';
  const base = opts.base === undefined ? null : String(opts.base).replace(/\/$/, '');
  const once = (root, handlerKind) => {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(pages), storeKind, root ?? '', handlerKind ?? ''], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`loop-cpu child exited with ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout).usPerPage;
  };
  const samples = [];
  const baseSamples = [];
  const handlerSamples = { noop: [], push: [] };
  for (let i = 0; i < runs; i++) {
    if (base) baseSamples.push(once(base));
    samples.push(once(null));
    if (opts.handler) for (const kind of Object.keys(handlerSamples)) handlerSamples[kind].push(once(null, kind));
  }
  const bench = `6. Crawl loop CPU (instant fetcher${storeKind === 'memory' ? '' : `, ${storeKind} store`})`;
  const range = (s) => `${round(Math.min(...s))}–${round(Math.max(...s))} µs`;
  const rows = [
    { bench, metric: 'CPU per page, no transport', value: round(median(samples)), unit: 'µs',
      note: `median of ${runs} fresh processes, ${pages.toLocaleString('en-US')} pages on ${HOSTS} hosts; range ${range(samples)}` },
  ];
  if (base) {
    rows.push({ bench, metric: 'base build, CPU per page', value: round(median(baseSamples)), unit: 'µs', note: `alternating with this build; range ${range(baseSamples)}` });
  }
  if (opts.handler) {
    for (const [kind, s] of Object.entries(handlerSamples)) {
      const ratio = median(s) / median(samples);
      rows.push({
        bench,
        metric: `with a ${kind} page handler, CPU per page`,
        value: round(median(s)),
        unit: 'µs',
        note: `${round(ratio, 3)}× without (target ≤ 1.10); alternating; range ${range(s)}`,
      });
    }
  }
  return rows;
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]), process.argv[4] ?? 'memory', process.argv[5] || undefined, process.argv[6] || undefined);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
