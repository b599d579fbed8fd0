#!/usr/bin/env node
/**
 * Benchmark 1 (raw throughput) and 3a (peak RSS of a large crawl).
 *
 * A local web of a few generated hosts (~10 links a page, a tenth of them to
 * the other hosts) is crawled by the real binary with no politeness limit,
 * and the same URL list is fetched by a plain undici loop (request-loop.js)
 * at the same concurrency. Both run as children against the one server in
 * this process, alternating, so they share whatever the machine is doing.
 * Throughput is pages over the span the SERVER saw, first request to last:
 * start-up is benchmark 5's business, and the server is the neutral clock.
 *
 *   node bench/throughput.js [--quick] [--pages-per-host N] [--hosts N] [--rounds N]
 *                            [--clients undici,http] [--base DIR] [--sign]
 *
 * --clients: which plain loops to run each round (request-loop.js: undici,
 * the crawler's transport, and/or node:http, issue 19's bare loop); the
 * ratios are to the first. --base DIR: also crawl with another build's
 * binary (DIR/bin/crawl.js, e.g. a worktree of main built with tsc) in the
 * same rounds, interleaved, for a before/after in one run. --sign: also
 * crawl with every request signed (--sign-key, a key made by `crawl keys
 * new`) in the same rounds, interleaved: what Web Bot Auth costs a page.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { duplicates, startWeb } from '../fixtures/web.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { runLoop, serverSpan } from './lib/loop.js';
import { MB, max, median, round } from './lib/stats.js';

const CONCURRENCY = 64;
const PAGE_PATH = /^\/p\/\d+$/;

/** @param {{ quick?: boolean, pagesPerHost?: number, hosts?: number, rounds?: number, clients?: string, base?: string, sign?: boolean, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const HOSTS = Array.from({ length: Number(opts.hosts ?? 5) }, (_, i) => `h${i + 1}.localhost`);
  const clients = String(opts.clients ?? 'undici').split(',');
  const base = opts.base === undefined ? null : `${String(opts.base).replace(/\/$/, '')}/bin/crawl.js`;
  const pagesPerHost = opts.pagesPerHost ?? (opts.quick ? 2_000 : 10_000);
  const rounds = opts.rounds ?? (opts.quick ? 2 : 3);
  const log = opts.log ?? (() => {});
  const total = pagesPerHost * HOSTS.length;

  const sites = {};
  for (const host of HOSTS) {
    sites[host] = { generate: { pages: pagesPerHost, linksPerPage: 10, crossHosts: HOSTS.filter((h) => h !== host) } };
  }
  const web = await startWeb({ sites });
  const scratch = scratchDir();
  try {
    const urls = [];
    for (let p = 0; p < pagesPerHost; p++) for (const host of HOSTS) urls.push(web.url(host, `/p/${p}`));
    writeFileSync(scratch.file('urls.txt'), urls.join('\n'));

    const loopsBy = Object.fromEntries(clients.map((c) => [c, []]));
    const crawls = [];
    const bases = [];
    const signed = [];
    const signArgs = [];
    if (opts.sign) {
      expectSuccess('keys new', await runNode(['bin/crawl.js', 'keys', 'new', scratch.file('key')], {}));
      signArgs.push('--sign-key', scratch.file('key/private.jwk'), '--signature-agent', 'https://bot.example.com');
    }
    const seeds = HOSTS.map((h) => web.url(h, '/p/0'));
    const each = (c) => `${round(c.pagesPerSec)}/s ${round(c.cpuUsPerPage)} µs`;
    for (let r = 0; r < rounds; r++) {
      for (const client of clients) {
        loopsBy[client].push(await runLoop(web, scratch, total, CONCURRENCY, PAGE_PATH, client));
        log(`  round ${r + 1}: ${client} loop ${each(loopsBy[client].at(-1))}`);
      }
      if (base) {
        bases.push(await runCrawl(web, scratch, total, seeds, base));
        log(`  round ${r + 1}: base crawl ${each(bases.at(-1))}, peak RSS ${round(bases.at(-1).maxRssBytes / MB)} MB`);
      }
      crawls.push(await runCrawl(web, scratch, total, seeds));
      log(`  round ${r + 1}: crawl ${each(crawls.at(-1))}, peak RSS ${round(crawls.at(-1).maxRssBytes / MB)} MB`);
      if (opts.sign) {
        signed.push(await runCrawl(web, scratch, total, seeds, 'bin/crawl.js', signArgs));
        log(`  round ${r + 1}: signed crawl ${each(signed.at(-1))}`);
      }
    }

    const loops = loopsBy[clients[0]];
    const crawlRate = median(crawls.map((c) => c.pagesPerSec));
    const loopRate = median(loops.map((l) => l.pagesPerSec));
    const crawlCpu = median(crawls.map((c) => c.cpuUsPerPage));
    const loopCpu = median(loops.map((l) => l.cpuUsPerPage));
    const bench = `1. Throughput (${total.toLocaleString('en')} pages)`;
    const sizeNote = total === 50_000 ? '' : ' (the target is stated for 50,000 pages)';
    const extra = [];
    for (const client of clients.slice(1)) {
      const l = loopsBy[client];
      extra.push({ bench, metric: `crawl ÷ ${client} loop: pages/s, CPU per page`, value: `${round(crawlRate / median(l.map((x) => x.pagesPerSec)), 2)}, ${round(crawlCpu / median(l.map((x) => x.cpuUsPerPage)), 2)}`,
        note: `${client} loop ${round(median(l.map((x) => x.pagesPerSec)))} req/s, ${round(median(l.map((x) => x.cpuUsPerPage)))} µs` });
    }
    if (base) {
      extra.push({ bench, metric: 'this build ÷ base build: pages/s, CPU per page', value: `${round(crawlRate / median(bases.map((c) => c.pagesPerSec)), 2)}, ${round(crawlCpu / median(bases.map((c) => c.cpuUsPerPage)), 2)}`,
        note: `base ${round(median(bases.map((c) => c.pagesPerSec)))} pages/s, ${round(median(bases.map((c) => c.cpuUsPerPage)))} µs (${bases.map((c) => round(c.cpuUsPerPage)).join(', ')}); this ${crawls.map((c) => round(c.cpuUsPerPage)).join(', ')} µs` });
    }
    if (opts.sign) {
      const signedCpu = median(signed.map((c) => c.cpuUsPerPage));
      extra.push({ bench, metric: 'signed ÷ unsigned crawl: CPU per page', value: round(signedCpu / crawlCpu, 2), target: { op: '<=', value: 1.15 },
        note: `signed ${signed.map((c) => round(c.cpuUsPerPage)).join(', ')} µs, unsigned ${crawls.map((c) => round(c.cpuUsPerPage)).join(', ')} µs; pages/s ${round(median(signed.map((c) => c.pagesPerSec)))} vs ${round(crawlRate)}` });
    }
    return [
      ...extra,
      { bench, metric: `crawl ÷ plain ${clients[0]} loop, pages/s`, value: round(crawlRate / loopRate, 2), target: { op: '>=', value: 0.7 },
        note: `crawl ${round(crawlRate)} pages/s, ${clients[0]} loop ${round(loopRate)} req/s; median of ${rounds}, concurrency ${CONCURRENCY}, ${HOSTS.length} hosts` },
      { bench, metric: `CPU per page, crawl ÷ ${clients[0]} loop`, value: round(crawlCpu / loopCpu, 2),
        note: `crawl ${round(crawlCpu)} µs, loop ${round(loopCpu)} µs (user + system, whole process)` },
      { bench: `3. Memory`, metric: `peak RSS of the ${total.toLocaleString('en')}-page crawl${sizeNote}`, value: round(max(crawls.map((c) => c.maxRssBytes)) / MB), unit: 'MB',
        target: { op: '<=', value: 250 }, note: `plain loop: ${round(max(loops.map((l) => l.maxRssBytes)) / MB)} MB` },
    ];
  } finally {
    scratch.cleanup();
    await web.close();
  }
}



async function runCrawl(web, scratch, total, seeds, bin = 'bin/crawl.js', more = []) {
  web.reset();
  const outFile = scratch.file('crawl.jsonl');
  const args = [bin, '--rate', 'unlimited', '--host-concurrency', String(CONCURRENCY), '-c', String(CONCURRENCY),
    '--scope', 'host', '-q', ...more, ...seeds];
  const result = expectSuccess('crawl', await runNode(args, { stdoutFile: outFile }));
  let ok = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) {
    if (line.startsWith('{"type":"page"') && line.includes('"status":200,')) ok++;
  }
  if (ok !== total) throw new Error(`crawl: ${ok} of ${total} pages fetched with status 200`);
  const dupes = duplicates(web.requests());
  if (dupes.length > 0) throw new Error(`crawl fetched ${dupes.length} URLs more than once, e.g. ${JSON.stringify(dupes[0])}`);
  const { pages, spanMs } = serverSpan(web, PAGE_PATH);
  return { pagesPerSec: (pages / spanMs) * 1000, cpuUsPerPage: (result.cpuMs * 1000) / pages, maxRssBytes: result.maxRssBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
