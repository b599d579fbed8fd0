/**
 * Preloaded into a benchmarked crawl (`--import ./bench/lib/send-log.js`):
 * records when undici actually writes each request's headers to a socket,
 * from undici's own diagnostics channel, and saves the list to the file named
 * by CRAWL_BENCH_SEND_LOG on exit. Set against the server's arrival log, it
 * tells a crawler that sent too early from a server that read too late.
 */
import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';

const target = process.env.CRAWL_BENCH_SEND_LOG;
if (target) {
  const sent = [];
  dc.subscribe('undici:client:sendHeaders', ({ request }) => {
    sent.push({ at: performance.timeOrigin + performance.now(), origin: request.origin, path: request.path });
  });
  process.on('exit', () => writeFileSync(target, JSON.stringify(sent)));
}
