/**
 * The plain request loop (request-loop.js) as the benchmarks run it against
 * their web, measured the way the crawl is: pages over the span the server
 * saw, first page request to last.
 */
import { readFileSync } from 'node:fs';
import { expectSuccess, runNode } from './child.js';

/** Pages per second over the span between the first and last request whose path matches `pagePath`. */
export function serverSpan(web, pagePath) {
  // A loop, not Math.min(...times): a broad crawl's hundreds of thousands of times would overflow the stack.
  let pages = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const e of web.requests()) {
    if (!pagePath.test(e.path)) continue;
    pages++;
    lo = Math.min(lo, e.at);
    hi = Math.max(hi, e.at);
  }
  return { pages, spanMs: hi - lo };
}

/**
 * Runs request-loop.js over scratch's urls.txt at `concurrency`; every URL must answer 200.
 * `client`: 'undici' (the crawler's transport) or 'http' (node:http).
 */
export async function runLoop(web, scratch, total, concurrency, pagePath, client = 'undici') {
  web.reset();
  const outFile = scratch.file('loop.json');
  const result = expectSuccess('request loop', await runNode(['bench/request-loop.js', scratch.file('urls.txt'), String(concurrency), client], { stdoutFile: outFile }));
  const summary = JSON.parse(readFileSync(outFile, 'utf8'));
  if (summary.ok !== total) throw new Error(`request loop: ${summary.ok} of ${total} answered 200`);
  const { pages, spanMs } = serverSpan(web, pagePath);
  return { pagesPerSec: (pages / spanMs) * 1000, cpuUsPerPage: (result.cpuMs * 1000) / pages, maxRssBytes: result.maxRssBytes };
}
