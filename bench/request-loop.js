#!/usr/bin/env node
/**
 * The ceiling for benchmarks 1 and 9: a plain request loop. It fetches a
 * list of URLs at a fixed concurrency and reads each body as text, with no
 * parsing, no frontier, no politeness and no output: whatever the crawler
 * reaches is compared with what this reaches against the same local web.
 *
 *   node bench/request-loop.js URL_LIST_FILE CONCURRENCY [undici|http]
 *
 * `undici` (the default) uses undici's `request()` on one Agent, the
 * crawler's own transport; `http` uses node:http with a keep-alive Agent,
 * the "bare node:http loop" issue 19 states its targets against.
 * Prints one JSON line: { requests, ok, wallMs }.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Agent, request } from 'undici';

const [file, concurrencyArg, client = 'undici'] = process.argv.slice(2);
const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const concurrency = Number(concurrencyArg ?? 64);
if (client !== 'undici' && client !== 'http') {
  process.stderr.write(`request-loop: client must be undici or http, got ${client}\n`);
  process.exit(2);
}

// The crawler resolves *.localhost to 127.0.0.1 itself; so does this loop,
// and with the same pool size per origin as the crawler's fetcher.
const lookup = (hostname, options, callback) =>
  process.nextTick(() => (options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)));
const agent = new Agent({ connections: 64, connect: { lookup } });
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, lookup });

/** One GET with node:http, the body read as text. */
function httpGet(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: httpAgent, headers: { 'user-agent': 'crawl-bench-loop' } }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

let next = 0;
let ok = 0;
async function worker() {
  while (next < urls.length) {
    const url = urls[next++];
    if (client === 'http') {
      const res = await httpGet(url);
      if (res.status === 200) ok++;
      continue;
    }
    const res = await request(url, { dispatcher: agent, headers: { 'user-agent': 'crawl-bench-loop' } });
    await res.body.text();
    if (res.statusCode === 200) ok++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const wallMs = performance.now() - started;
await agent.close();
httpAgent.destroy();
process.stdout.write(JSON.stringify({ requests: urls.length, ok, wallMs }) + '\n');
