#!/usr/bin/env node
/**
 * What 100,000 known hosts with queued URLs cost (issue 13: they must fit in
 * 500 MB). The real CLI (dist/) reads N seeds from a file, one per host
 * (`h{i}.localhost`, all played by one minimal local server: robots.txt 404,
 * every page a tiny HTML page without links), crawls at --rate 5/s per host
 * with -c 256 and stops at --max-pages, as the start-up run of broad.js
 * does. The crawl process is sampled from inside (lib/memory-sampler.js):
 * peak RSS and heap and when they came, and optionally a heap snapshot.
 *
 *   node bench/queued-hosts-probe.js [--hosts 100000] [--max-pages 2000] [--rounds 1]
 *       [--snapshot-at MS | --snapshot-at-heap MB] [--snapshot-file F]
 *           # a heap snapshot MS after spawn, or once the heap reaches MB,
 *           # summed by constructor per host (bench/heap-summary.js)
 *
 * Prints one JSON line per round: peak RSS, bytes per queued host (peak RSS
 * less a crawl of 1 seed's, ÷ N), peak heap, the first request's time after
 * spawn, wall time, pages fetched, robots.txt requests seen by the server.
 */
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runNode, scratchDir, expectSuccess } from './lib/child.js';
import { parseArgs } from './lib/cli.js';
import { summarize } from './heap-summary.js';

const SAMPLER = fileURLToPath(new URL('./lib/memory-sampler.js', import.meta.url));
const MB = 1024 * 1024;
const now = () => performance.timeOrigin + performance.now();

async function startServer() {
  let first = Infinity;
  let robots = 0;
  let pages = 0;
  const server = http.createServer((req, res) => {
    if (first === Infinity) first = now();
    if (req.url === '/robots.txt') {
      robots++;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no');
    } else {
      pages++;
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>t</title><p>x</p>');
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    reset: () => ((first = Infinity), (robots = 0), (pages = 0)),
    seen: () => ({ first, robots, pages }),
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  };
}

async function crawlOnce(server, scratch, n, maxPages, snapshot) {
  const seeds = [];
  for (let i = 0; i < n; i++) seeds.push(`http://h${i}.localhost:${server.port}/`);
  writeFileSync(scratch.file('seeds.txt'), seeds.join('\n') + '\n');
  const memFile = scratch.file('memory.json');
  const outFile = scratch.file('out.jsonl');
  server.reset();
  const env = { PROBE_MEMORY_FILE: memFile };
  if (snapshot) Object.assign(env, { PROBE_SNAPSHOT_AT_MS: String(snapshot.atMs ?? Infinity), PROBE_SNAPSHOT_AT_HEAP_MB: String(snapshot.atHeapMB ?? Infinity), PROBE_SNAPSHOT_FILE: snapshot.file });
  const args = ['bin/crawl.js', '--rate', '5/s', '-c', '256', '-q', '--max-pages', String(maxPages), '--seeds-file', scratch.file('seeds.txt')];
  const spawnedAt = now();
  const result = expectSuccess('crawl', await runNode(args, { stdoutFile: outFile, nodeArgs: ['--import', SAMPLER], env }));
  const mem = JSON.parse(readFileSync(memFile, 'utf8'));
  const seen = server.seen();
  let records = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) if (line !== '') records++;
  if (records !== n) throw new Error(`${records} records for ${n} seeds`);
  return { mem, result, seen, firstRequestMs: seen.first - spawnedAt };
}

export async function probe({ hosts = 100_000, maxPages = 2_000, rounds = 1, snapshotAt, snapshotAtHeap, snapshotFile, log = () => {} } = {}) {
  const server = await startServer();
  const scratch = scratchDir('queued-hosts-');
  const out = [];
  try {
    // The baseline: the same process crawling one host.
    const base = await crawlOnce(server, scratch, 1, 1);
    for (let r = 0; r < rounds; r++) {
      const snapshot = snapshotAt === undefined && snapshotAtHeap === undefined ? undefined : { atMs: snapshotAt, atHeapMB: snapshotAtHeap, file: snapshotFile ?? scratch.file('crawl.heapsnapshot') };
      const { mem, result, seen, firstRequestMs } = await crawlOnce(server, scratch, hosts, maxPages, snapshot);
      const row = {
        hosts, maxPages,
        peakRssMB: Math.round(result.maxRssBytes / MB),
        peakRssAtMs: mem.rssAtMs,
        bytesPerHost: Math.round((result.maxRssBytes - base.result.maxRssBytes) / hosts),
        peakHeapMB: Math.round(mem.heapUsed / MB),
        peakHeapAtMs: mem.heapAtMs,
        heapBytesPerHost: Math.round((mem.heapUsed - base.mem.heapUsed) / hosts),
        baselineRssMB: Math.round(base.result.maxRssBytes / MB),
        firstRequestMs: Math.round(firstRequestMs),
        wallMs: Math.round(result.wallMs),
        cpuMs: Math.round(result.cpuMs),
        pages: seen.pages,
        robots: seen.robots,
        timeline: mem.timeline.filter((_, i) => i % 4 === 0).map((t) => `${(t.at / 1000).toFixed(1)}s:${Math.round(t.rss / MB)}/${Math.round(t.heapUsed / MB)}`).join(' '),
      };
      if (snapshot && mem.snapshot) {
        row.snapshot = { ...mem.snapshot, file: snapshot.file };
        const s = summarize(snapshot.file);
        row.snapshot.heapBytesPerHost = Math.round(s.total / hosts);
        row.snapshot.top = s.groups.slice(0, 25).map((g) => `${(g.bytes / hosts).toFixed(0)} B ${g.label.slice(0, 60)} (${g.count})`);
      }
      log(JSON.stringify(row));
      out.push(row);
    }
  } finally {
    scratch.cleanup();
    await server.close();
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs(process.argv.slice(2));
  await probe({ ...args, log: (s) => process.stdout.write(s + '\n') });
}
