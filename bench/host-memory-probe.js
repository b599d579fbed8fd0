#!/usr/bin/env node
/**
 * What one idle host costs (issue 13: ≤ 2 KB with nothing queued), measured
 * in its own process:
 *
 *   node --expose-gc bench/host-memory-probe.js state N
 *     N hosts, each having run one request through the real Scheduler and
 *     HostTable (limiter with a gap, robots-style internal job first), then
 *     idle: heap bytes per host still held, before and after the sweep.
 *   node --expose-gc bench/host-memory-probe.js pool N
 *     N origins (`h{i}.localhost` on a local server), one request each
 *     through the real fetcher: heap + array buffers and RSS per origin
 *     while the idle keep-alive pools are open, and once they have closed.
 *
 * Prints one JSON line.
 */
import http from 'node:http';
import { createFetcher } from '../dist/fetch/fetcher.js';
import { Scheduler } from '../dist/schedule/scheduler.js';
import { HostTable } from '../dist/politeness/host-state.js';
import { systemClock } from '../dist/clock.js';

const [mode, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 10_000);
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

function heapBytes() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (mode === 'state') {
  // One policy object for every host, as the policy resolver hands out for hosts matching the same entry.
  const policy = { intervalMs: 200, windows: [], concurrency: 2, jitterMs: 0 };
  const before = heapBytes();
  const hosts = new HostTable({ policyFor: () => policy });
  let done = 0;
  const scheduler = new Scheduler({
    clock: systemClock,
    concurrency: 256,
    hosts,
    source: { hasWork: () => false, take: () => null },
  });
  for (let i = 0; i < count; i++) {
    scheduler.submit(`h${i}.example`, async (ctx) => {
      ctx.onDispatched(systemClock.now());
      ctx.onResponse(systemClock.now());
      done++;
    });
  }
  while (done < count) await sleep(5);
  await sleep(50);
  const idle = heapBytes();
  hosts.sweep(systemClock.now() + 1000, () => false);
  const swept = heapBytes();
  process.stdout.write(JSON.stringify({ mode, count, idleBytesPerHost: (idle - before) / count, sweptBytesPerHost: (swept - before) / count, recordsLeft: hosts.size }) + '\n');
} else if (mode === 'pool') {
  const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/x">x</a>'));
  server.keepAliveTimeout = 60_000; // the server keeps its side open: what the client keeps is measured
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  const fetcher = createFetcher({ userAgent: 'probe', timeouts: { connectMs: 5000, headersMs: 5000, bodyMs: 5000 }, maxBodyBytes: 1 << 20, clock: systemClock });
  await fetcher.fetch(`http://warm.localhost:${port}/`, { read: 'html' });
  await sleep(100);
  const before = heapBytes();
  const rssBefore = process.memoryUsage().rss;
  for (let start = 0; start < count; start += 200) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + 200); i++) batch.push(fetcher.fetch(`http://h${i}.localhost:${port}/`, { read: 'html' }));
    await Promise.all(batch);
  }
  await sleep(100);
  const open = heapBytes();
  const rssOpen = process.memoryUsage().rss;
  const waitMs = Number(process.env.PROBE_IDLE_WAIT_MS ?? 6000);
  await sleep(waitMs);
  const closed = heapBytes();
  const rssClosed = process.memoryUsage().rss;
  process.stdout.write(JSON.stringify({
    mode, count,
    openBytesPerOrigin: (open - before) / count,
    openRssPerOrigin: (rssOpen - rssBefore) / count,
    [`after${waitMs}msBytesPerOrigin`]: (closed - before) / count,
    [`after${waitMs}msRssPerOrigin`]: (rssClosed - rssBefore) / count,
  }) + '\n');
  await fetcher.close();
  server.closeAllConnections();
  server.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
