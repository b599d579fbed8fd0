#!/usr/bin/env node
/**
 * Benchmark: a server that slows down is given room. One local host whose
 * response time grows with its arrival rate — idle time ÷ (1 − load), load
 * being the arrivals of the last second over what it can take a second (its
 * capacity), as a queue behaves near saturation — crawled whole by `crawl`
 * at a configured rate close to that capacity, with the latency signal on
 * (the default) and off (`--no-latency-backoff`).
 *
 * Everything is measured on the server's side: its idle response time (a
 * few requests far apart before each crawl), and each request's time from
 * arrival to its response headers during the crawl. Reports p50 and p95 of
 * the latter against the idle time, over the whole crawl and after its
 * first 10 s (the time a crawl takes to learn the host's baseline), and the
 * pages crawled, which must be all of them either way.
 *
 *   node bench/latency-backoff.js [--quick] [--pages N] [--rate N] [--capacity N] [--idle-ms N]
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { round } from './lib/stats.js';

/** Page `i`: links to the next page (so every page is reachable) and three others. */
function page(i, pages) {
  const targets = [i + 1, (i * 7 + 3) % pages, (i * 13 + 5) % pages, (i * 31 + 11) % pages].filter((t) => t < pages);
  const links = targets.map((t) => `<li><a href="/p/${t}">page ${t}</a></li>`).join('');
  return `<!doctype html><html><head><title>page ${i}</title></head><body><h1>page ${i}</h1><ul>${links}</ul></body></html>`;
}

/** The loaded server: answers after idleMs ÷ (1 − load); `times` holds each answer's arrival and response time. */
async function startServer({ pages, capacity, idleMs }) {
  const bodies = Array.from({ length: pages }, (_, i) => page(i, pages));
  const state = { arrivals: [], times: [] };
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const { arrivals } = state;
    arrivals.push(at);
    while (arrivals[0] <= at - 1000) arrivals.shift();
    const load = Math.min(0.95, arrivals.length / capacity);
    setTimeout(
      () => {
        state.times.push({ at, ms: performance.now() - at });
        const m = /^\/(?:p\/(\d+))?$/.exec(req.url ?? '');
        const body = m ? (m[1] === undefined ? page(0, pages).replace('page 0</h1>', 'home</h1>') : bodies[Number(m[1])]) : undefined;
        if (body === undefined) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      },
      idleMs / (1 - load),
    );
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    state,
    reset() {
      state.arrivals = [];
      state.times = [];
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The server's idle response time: the median of a few requests a second apart. */
async function idleTime(web) {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await fetch(`http://127.0.0.1:${web.port}/p/0`).then((r) => r.arrayBuffer());
  }
  const ms = web.state.times.map((t) => t.ms).sort((a, b) => a - b);
  web.reset();
  return ms[ms.length >> 1];
}

const quantile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

export async function run(opts = {}) {
  const pages = Number(opts.pages ?? (opts.quick ? 150 : 250));
  const rate = Number(opts.rate ?? 10);
  const capacity = Number(opts.capacity ?? 12);
  const idleMs = Number(opts.idleMs ?? 20);
  const log = opts.log ?? (() => {});
  const scratch = scratchDir('crawl-latency-');
  const sides = {};
  try {
    for (const side of ['off', 'on']) {
      const web = await startServer({ pages, capacity, idleMs });
      try {
        const idle = await idleTime(web);
        const out = scratch.file(`${side}.jsonl`);
        const args = [
          'bin/crawl.js',
          '-q',
          '--rate',
          `${rate}/s`,
          '--host-concurrency',
          '4',
          ...(side === 'off' ? ['--no-latency-backoff'] : []),
          `http://slow.localhost:${web.port}/`,
        ];
        const result = expectSuccess(`crawl (latency backoff ${side})`, await runNode(args, { stdoutFile: out }));
        const ok = readFileSync(out, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"type":"page"') && l.includes('"status":200')).length;
        if (ok !== pages + 1) throw new Error(`latency backoff ${side}: ${ok} of ${pages + 1} pages crawled`);
        const start = web.state.times.reduce((a, t) => Math.min(a, t.at), Infinity);
        const all = web.state.times.map((t) => t.ms).sort((a, b) => a - b);
        const steady = web.state.times
          .filter((t) => t.at >= start + 10_000)
          .map((t) => t.ms)
          .sort((a, b) => a - b);
        const row = {
          idle,
          ok,
          wallS: result.wallMs / 1000,
          p50: quantile(all, 0.5),
          p95: quantile(all, 0.95),
          steadyP50: quantile(steady, 0.5),
          steadyP95: quantile(steady, 0.95),
        };
        sides[side] = row;
        log(
          `  ${side}: ${ok} pages in ${round(row.wallS, 1)} s; idle ${round(idle, 1)} ms; server p50 ${round(row.p50, 1)} ms, p95 ${round(row.p95, 1)} ms; after 10 s p50 ${round(row.steadyP50, 1)} ms, p95 ${round(row.steadyP95, 1)} ms`,
        );
      } finally {
        await web.close();
      }
    }
  } finally {
    scratch.cleanup();
  }
  const bench = '15. Latency backoff';
  const setting = `one host, ${pages + 1} pages, --rate ${rate}/s, 4 at once; the server answers in idle ÷ (1 − arrivals last second ÷ ${capacity})`;
  const x = (side, field) => round(sides[side][field] / sides[side].idle, 2);
  const note = (side) =>
    `${round(sides[side].steadyP50, 1)} ms vs ${round(sides[side].idle, 1)} ms idle; p95 ${x(side, 'steadyP95')}×; whole crawl p50 ${x(side, 'p50')}×, p95 ${x(side, 'p95')}×; ${sides[side].ok} pages in ${round(sides[side].wallS, 1)} s`;
  return [
    {
      bench,
      metric: 'server p50 ÷ idle after 10 s, latency backoff on',
      value: x('on', 'steadyP50'),
      unit: '×',
      target: { op: '<=', value: 2 },
      note: `${note('on')}; ${setting}`,
    },
    { bench, metric: 'server p50 ÷ idle after 10 s, --no-latency-backoff', value: x('off', 'steadyP50'), unit: '×', note: note('off') },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
