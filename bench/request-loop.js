#!/usr/bin/env node
/**
 * The ceiling for benchmark 1: a plain undici request loop. It fetches a
 * list of URLs at a fixed concurrency and reads each body as text, with no
 * parsing, no frontier, no politeness and no output: whatever the crawler
 * reaches is compared with what this reaches against the same local web.
 *
 *   node bench/request-loop.js URL_LIST_FILE CONCURRENCY
 *
 * Prints one JSON line: { requests, ok, wallMs }.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const [file, concurrencyArg] = process.argv.slice(2);
const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const concurrency = Number(concurrencyArg ?? 64);

// The crawler resolves *.localhost to 127.0.0.1 itself; so does this loop,
// and with the same pool size per origin as the crawler's fetcher.
const lookup = (hostname, options, callback) =>
  process.nextTick(() => (options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)));
const agent = new Agent({ connections: 64, connect: { lookup } });

let next = 0;
let ok = 0;
async function worker() {
  while (next < urls.length) {
    const url = urls[next++];
    const res = await request(url, { dispatcher: agent, headers: { 'user-agent': 'crawl-bench-loop' } });
    await res.body.text();
    if (res.statusCode === 200) ok++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const wallMs = performance.now() - started;
await agent.close();
process.stdout.write(JSON.stringify({ requests: urls.length, ok, wallMs }) + '\n');
