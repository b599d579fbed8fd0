#!/usr/bin/env node
/**
 * Benchmark: HTTP/2 against HTTP/1.1 over TLS. A local TLS web of a few
 * hosts (one `node:http2` secure server per host, HTTP/1.1 allowed, a
 * self-signed certificate made by openssl), crawled whole by `crawl` with
 * and without `--http2`, the two runs interleaved (A B A B …) so both see
 * the same machine load. Rates are unlimited and each host allows 8 at once,
 * so the figure is the transport's cost, not the politeness's.
 *
 * Reports, medians over the repetitions with their spread: CPU per page of
 * the crawler process (user + system), pages per second, and from the
 * servers' own counts the TLS connections opened and how many of them
 * resumed an earlier session.
 *
 *   node bench/http2.js [--quick] [--hosts N] [--pages N] [--reps N]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { median, min, max, round } from './lib/stats.js';

/** Page `i` of `pages`: ~8 KB of text and 20 links further along the host's ring. */
function page(i, pages) {
  const links = Array.from({ length: 20 }, (_, k) => `<li><a href="/p/${(i * 7 + k * 13 + 1) % pages}">page ${k}</a></li>`).join('');
  const text = `<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(140)}</p>`;
  return `<!doctype html><html><head><title>page ${i}</title></head><body><h1>page ${i}</h1><ul>${links}</ul>${text}</body></html>`;
}

/** One h2 server (HTTP/1.1 allowed) per host; counts TLS connections and resumed sessions. */
async function startHosts(hosts, pages, key, cert) {
  const counts = { connections: 0, resumed: 0, h2Requests: 0, h1Requests: 0 };
  const bodies = Array.from({ length: pages }, (_, i) => page(i, pages));
  const servers = await Promise.all(
    Array.from({ length: hosts }, async () => {
      const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, (req, res) => {
        if (req.httpVersion === '2.0') counts.h2Requests++;
        else counts.h1Requests++;
        if (req.url === '/robots.txt') return void res.writeHead(404).end();
        const m = /^\/(?:p\/(\d+))?$/.exec(req.url ?? '');
        const body = m ? bodies[Number(m[1] ?? 0)] : undefined;
        if (body === undefined) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      });
      server.on('secureConnection', (socket) => {
        counts.connections++;
        if (socket.isSessionReused()) counts.resumed++;
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  // Names, not 127.0.0.1 on several ports: TLS sessions are cached per server name, as on the real web.
  const seeds = servers.map((s, i) => `https://${hostName(i)}:${s.address().port}/`);
  return {
    seeds,
    counts,
    close: () => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))),
  };
}

/** `*.localhost` names resolve to 127.0.0.1 in the crawler without DNS. */
const hostName = (i) => `h${i}.localhost`;

const spread = (xs, digits = 3) => `${round(min(xs), digits)}–${round(max(xs), digits)}`;

export async function run(opts = {}) {
  const hosts = Number(opts.hosts ?? 4);
  const pages = Number(opts.pages ?? (opts.quick ? 150 : 500));
  const reps = Number(opts.reps ?? (opts.quick ? 3 : 5));
  const log = opts.log ?? (() => {});
  const scratch = scratchDir('crawl-h2-');
  const names = Array.from({ length: hosts }, (_, i) => `DNS:${hostName(i)}`).join(',');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', `subjectAltName=${names}`, '-keyout', scratch.file('key.pem'), '-out', scratch.file('cert.pem'),
  ], { stdio: 'ignore' });
  const [key, cert] = [readFileSync(scratch.file('key.pem')), readFileSync(scratch.file('cert.pem'))];
  const sides = { h1: [], h2: [] };
  try {
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, the order alternating, so a load spike on the shared machine hits both sides alike.
      for (const side of rep % 2 === 0 ? ['h1', 'h2'] : ['h2', 'h1']) {
        // Fresh servers for each run: a node:http2 server that has served an h2 crawl then served
        // HTTP/1.1 a connection per ~2 requests (seen here: 1,018 connections instead of 32).
        const web = await startHosts(hosts, pages, key, cert);
        try {
        const out = scratch.file(`${side}-${rep}.jsonl`);
        const args = ['bin/crawl.js', '-q', '--rate', 'unlimited', '--host-concurrency', '8', '-c', String(8 * hosts), '--ca', path.join(scratch.dir, 'cert.pem'),
          ...(side === 'h2' ? ['--http2'] : []), ...web.seeds];
        const result = expectSuccess(`crawl (${side})`, await runNode(args, { stdoutFile: out }));
        const lines = readFileSync(out, 'utf8').split('\n').filter((l) => l.includes('"type":"page"'));
        const ok = lines.filter((l) => l.includes('"status":200')).length;
        const wrongProtocol = side === 'h2' ? web.counts.h1Requests : web.counts.h2Requests;
        if (ok !== hosts * (pages + 1) || wrongProtocol !== 0) throw new Error(`${side}: ${ok} of ${hosts * (pages + 1)} pages (the seed and /p/0 to /p/N-1), ${wrongProtocol} requests over the other protocol`);
        const row = { cpuPerPage: result.cpuMs / ok, pagesPerS: ok / (result.wallMs / 1000), connections: web.counts.connections, resumed: web.counts.resumed };
        sides[side].push(row);
        log(`  ${side} rep ${rep + 1}: ${ok} pages, ${round(result.wallMs / 1000)} s, CPU ${round(row.cpuPerPage)} ms/page, ${row.connections} connections (${row.resumed} resumed)`);
        } finally {
          await web.close();
        }
      }
    }
  } finally {
    scratch.cleanup();
  }
  const bench = '13. HTTP/2';
  const of = (side, field) => sides[side].map((r) => r[field]);
  const ratio = (field) => sides.h2.map((r, i) => r[field] / sides.h1[i][field]);
  const setting = `${hosts} TLS hosts × ${pages} pages, 8 at once per host, rates unlimited, ${reps} interleaved runs each`;
  return [
    { bench, metric: 'CPU per page, --http2 ÷ HTTP/1.1 (crawler process)', value: round(median(ratio('cpuPerPage'))), unit: '×',
      note: `${round(median(of('h2', 'cpuPerPage')))} vs ${round(median(of('h1', 'cpuPerPage')))} ms/page (medians; ratio spread ${spread(ratio('cpuPerPage'))}); ${setting}` },
    { bench, metric: 'pages/s, --http2 ÷ HTTP/1.1', value: round(median(ratio('pagesPerS'))), unit: '×',
      note: `${round(median(of('h2', 'pagesPerS')))} vs ${round(median(of('h1', 'pagesPerS')))} pages/s (spread ${spread(ratio('pagesPerS'))}), wall time from spawn` },
    { bench, metric: 'TLS connections opened, --http2', value: median(of('h2', 'connections')), unit: '', target: { op: '<=', value: hosts },
      note: `HTTP/1.1: ${median(of('h1', 'connections'))} (spread ${spread(of('h1', 'connections'))}), of which ${median(of('h1', 'resumed'))} resumed a TLS session` },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
