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
 *   node bench/loop-cpu.js [--quick] [--runs N] [--pages N]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, round } from './lib/stats.js';

const HOSTS = 5;

async function child(pages) {
  const { Crawler } = await import('../dist/crawl/crawler.js');
  const { buildSettings, validateConfig } = await import('../dist/config/settings.js');
  const { systemClock } = await import('../dist/clock.js');
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
  const sink = { write: async () => void written++, close: async () => {}, broken: false, get written() { return written; } };
  const seeds = Array.from({ length: HOSTS }, (_, i) => `http://h${i}.localhost/p/0`);
  const cpu0 = process.cpuUsage();
  await new Crawler({ settings, seeds, clock: systemClock, fetcher, sink }).run();
  const cpu = process.cpuUsage(cpu0);
  if (written !== perHost * HOSTS) throw new Error(`crawled ${written} pages, expected ${perHost * HOSTS}`);
  process.stdout.write(JSON.stringify({ pages: written, usPerPage: (cpu.user + cpu.system) / written }) + '\n');
}

/** @param {{ quick?: boolean, runs?: number, pages?: number }} [opts] */
export async function run(opts = {}) {
  const runs = Number(opts.runs ?? (opts.quick ? 3 : 7));
  const pages = Number(opts.pages ?? 50_000);
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(pages)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`loop-cpu child exited with ${r.status}: ${r.stderr}`);
    samples.push(JSON.parse(r.stdout).usPerPage);
  }
  return [
    { bench: '6. Crawl loop CPU (instant fetcher)', metric: 'CPU per page, no transport', value: round(median(samples)), unit: 'µs',
      note: `median of ${runs} fresh processes, ${pages.toLocaleString('en-US')} pages on ${HOSTS} hosts; range ${round(Math.min(...samples))}–${round(Math.max(...samples))} µs` },
  ];
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
