#!/usr/bin/env node
/**
 * Benchmark 8: `crawl report` on a big records file. Writes a synthetic
 * crawl of a million records (hundreds of hosts at their own rates, the
 * usual mix of 200s, 404s, redirects, 5xx, 429s with their Retry-After
 * pauses, transport errors, skips and robots.txt requests) to a temporary file, runs `crawl report` on it in a fresh process,
 * and reports the HTML's size against the 5 MB budget and the process's
 * peak RSS (it must not grow with the input: the file is streamed).
 *
 *   node bench/report.js [--quick] [--records N] [--hosts N]
 */
import { createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { MB, round } from './lib/stats.js';

/** A small seeded PRNG (mulberry32), so every run writes the same file. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ERRORS = ['HEADERS_TIMEOUT', 'CONNECTION_RESET', 'CONNECTION_REFUSED', 'DNS_FAILURE', 'BODY_TIMEOUT'];
const SKIPS = ['robots', 'max-depth', 'scope', 'filtered'];
const INTERVALS = [250, 500, 1000, 2000];

/**
 * `n` attempts each answered 429 after 25 ms with Retry-After `retryAfterMs`,
 * the next one sent when the pause (plus the crawler's 10 ms margin) ends.
 */
/** An instant as records write it (ISO 8601 UTC with ms). */
const iso = (ms) => new Date(ms).toISOString();

function throttled(startMs, n, retryAfterMs) {
  const starts = [];
  const throttles = [];
  let t = startMs;
  for (let i = 0; i < n; i++) {
    starts.push(t);
    const at = t + 25;
    const pausedUntil = at + retryAfterMs + 10;
    throttles.push({ at: iso(at), status: 429, retryAfterMs, pausedUntil: iso(pausedUntil) });
    t = pausedUntil + 1;
  }
  return { starts, throttles, next: t };
}

/**
 * Writes `records` JSON lines (plus one robots.txt record per host) to `file`: every host starts requests at its own
 * interval (plus a little jitter), the host whose next start is earliest goes
 * next, so starts are in time order, as a crawl writes them (roughly).
 *
 * @param {string} file
 * @param {{ records?: number, hosts?: number, seed?: number, startMs?: number }} [opts]
 * @returns {Promise<{ bytes: number, hosts: Array<{ host: string, intervalMs: number }> }>}
 */
export async function writeSyntheticRecords(file, opts = {}) {
  const total = opts.records ?? 1_000_000;
  const rnd = random(opts.seed ?? 1);
  const hostCount = opts.hosts ?? 300;
  const start = opts.startMs ?? Date.parse('2026-01-01T00:00:00.000Z');
  const hosts = Array.from({ length: hostCount }, (_, i) => ({
    host: `h${i}.example`,
    intervalMs: INTERVALS[i % INTERVALS.length],
    next: start + Math.floor(rnd() * 1000),
    n: 0,
  }));
  // A binary heap on `next`.
  const heap = hosts.slice().sort((a, b) => a.next - b.next);
  const down = (i) => {
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < heap.length && heap[l].next < heap[m].next) m = l;
      if (r < heap.length && heap[r].next < heap[m].next) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  const out = createWriteStream(file);
  let batch = '';
  let bytes = 0;
  // Each host's robots.txt first, as a crawl with --emit-robots writes it.
  for (const h of hosts) {
    batch += JSON.stringify({ type: 'robots', url: `http://${h.host}/robots.txt`, host: h.host, status: 200, startedAt: iso(h.next), elapsedMs: 30, bytes: 180 }) + '\n';
    h.next += h.intervalMs + 3;
  }
  for (let written = 0; written < total; written++) {
    const h = heap[0];
    const url = `http://${h.host}/section/${h.n % 37}/page-${h.n}.html`;
    const parent = h.n > 0 ? `http://${h.host}/section/${(h.n - 1) % 37}/page-${h.n - 1}.html` : null;
    const roll = rnd();
    let line;
    if (roll < 0.05) {
      line = { type: 'skipped', url: `${url}?s=${written}`, reason: SKIPS[written % SKIPS.length], depth: 3, parent, detail: 'synthetic' };
    } else {
      const startMs = h.next;
      const elapsedMs = Math.round(40 + -Math.log(1 - rnd()) * 160);
      const rec = { type: 'page', url, status: 200, depth: 2, parent, contentType: 'text/html', bytes: Math.round(rnd() * 120_000), title: `Page ${h.n}`, links: 12, fetchedAt: new Date(startMs).toISOString(), elapsedMs };
      if (roll < 0.09) rec.status = 404;
      // The target is the host's next URL, so most chains end in that page's record.
      else if (roll < 0.11) Object.assign(rec, { status: 301, bytes: 0, location: `http://${h.host}/section/${(h.n + 1) % 37}/page-${h.n + 1}.html` });
      else if (roll < 0.12) rec.status = 500;
      else if (roll < 0.1225) {
        // Throttled until its budget ran out: four 429s, each pausing the host for its Retry-After.
        const t = throttled(startMs, 4, 7_500);
        const last = t.starts.pop();
        Object.assign(rec, { status: 429, bytes: 0, startedAt: iso(last), fetchedAt: iso(last), attempts: 4, attemptStarts: t.starts.map(iso), throttles: t.throttles, error: { code: 'THROTTLED', message: 'still answered 429 after 3 throttle retries' } });
        h.next = t.next;
      } else if (roll < 0.125) {
        // One 429 with Retry-After: 30, then the page.
        const t = throttled(startMs, 1, 30_000);
        Object.assign(rec, { startedAt: iso(t.next), fetchedAt: iso(t.next), attempts: 2, attemptStarts: t.starts.map(iso), throttles: t.throttles });
        h.next = t.next;
      } else if (roll < 0.14) Object.assign(rec, { status: null, bytes: 0, contentType: null, title: null, links: 0, attempts: 3, error: { code: ERRORS[written % ERRORS.length], message: 'synthetic failure' } });
      line = rec;
      h.next += Math.round(h.intervalMs * (1.01 + rnd() * 0.1)) + 3;
      h.n++;
    }
    down(0);
    batch += JSON.stringify(line) + '\n';
    if (batch.length > 1 << 20) {
      bytes += Buffer.byteLength(batch);
      if (!out.write(batch)) await once(out, 'drain');
      batch = '';
    }
  }
  bytes += Buffer.byteLength(batch);
  out.end(batch);
  await once(out, 'close');
  return { bytes, hosts: hosts.map((h) => ({ host: h.host, intervalMs: h.intervalMs })) };
}

/** @param {{ quick?: boolean, records?: number, hosts?: number, bin?: string }} [opts] */
export async function run(opts = {}) {
  const records = opts.records ?? (opts.quick ? 200_000 : 1_000_000);
  const scratch = scratchDir('crawl-report-bench-');
  try {
    const input = scratch.file('pages.jsonl');
    const output = scratch.file('report.html');
    const { bytes } = await writeSyntheticRecords(input, { records, hosts: opts.hosts });
    const result = expectSuccess('crawl report', await runNode([opts.bin ?? 'bin/crawl.js', 'report', input, '-o', output, '-q']));
    const html = statSync(output).size;
    const bench = `8. Report (${records.toLocaleString('en')} records)`;
    return [
      { bench, metric: 'HTML report size', value: round(html / MB), unit: 'MB', target: { op: '<', value: 5 },
        note: `from a ${round(bytes / MB)} MB records file; self-contained (uPlot inlined)` },
      { bench, metric: 'peak RSS of `crawl report`', value: round(result.maxRssBytes / MB), unit: 'MB', target: { op: '<', value: 250 },
        note: `the file is streamed; ${round(result.wallMs / 1000)} s wall, ${round(records / (result.wallMs / 1000) / 1000)}k records/s` },
    ];
  } finally {
    scratch.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
