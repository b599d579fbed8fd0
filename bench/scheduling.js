#!/usr/bin/env node
/**
 * Benchmark 2: scheduling efficiency. One slow host (40 pages at 4/s) is
 * listed first, then 30 fast hosts (15 pages at 30/s each). A crawler that
 * waited on the slow host while holding its slots would finish the fast
 * hosts late and the whole crawl later still; one that only ever takes a
 * slot for a host that may start now finishes when the slow host's own
 * schedule allows: the politeness lower bound, max over hosts of pages/rate.
 *
 * Every request counts against its host, robots.txt included, so the slow
 * host's 41 requests need 40 gaps of 250 ms: exactly the 10 s bound. The
 * server checks the gaps it saw against each host's rate.
 *
 *   node bench/scheduling.js [--concurrency 8]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { round } from './lib/stats.js';

const SEND_LOG = fileURLToPath(new URL('../fixtures/send-log.js', import.meta.url));

const SLOW = { host: 'slow.localhost', pages: 40, perSecond: 4 };
const FAST = { count: 30, pages: 15, perSecond: 30 };

/** @param {{ concurrency?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const concurrency = opts.concurrency ?? 8;
  const fastHosts = Array.from({ length: FAST.count }, (_, i) => `fast${String(i + 1).padStart(2, '0')}.localhost`);
  const sites = { [SLOW.host]: { generate: { pages: SLOW.pages, linksPerPage: 10 } } };
  for (const host of fastHosts) sites[host] = { generate: { pages: FAST.pages, linksPerPage: 10 } };
  const web = await startWeb({ sites });
  const scratch = scratchDir();
  try {
    const config = {
      concurrency,
      scope: 'host',
      defaults: { rate: `${FAST.perSecond}/s`, concurrency: 2 },
      domains: { [SLOW.host]: { rate: `${SLOW.perSecond}/s` } },
    };
    writeFileSync(scratch.file('config.json'), JSON.stringify(config));
    const seeds = [SLOW.host, ...fastHosts].map((h) => web.url(h, '/p/0'));
    const outFile = scratch.file('out.jsonl');
    const sendLog = scratch.file('sent.json');
    const result = expectSuccess('crawl', await runNode(['bin/crawl.js', '--config', scratch.file('config.json'), '-q', ...seeds], {
      stdoutFile: outFile,
      nodeArgs: ['--import', SEND_LOG],
      env: { CRAWL_BENCH_SEND_LOG: sendLog },
    }));

    const pages = readFileSync(outFile, 'utf8').split('\n').filter((l) => l.startsWith('{"type":"page"') && l.includes('"status":200,')).length;
    const expected = SLOW.pages + FAST.count * FAST.pages;
    if (pages !== expected) throw new Error(`crawl fetched ${pages} of ${expected} pages`);

    const log = web.requests();
    const first = Math.min(...log.map((e) => e.at));
    const lastOf = (host) => Math.max(...log.filter((e) => e.host === host).map((e) => e.at));
    const lastFast = Math.max(...fastHosts.map(lastOf)) - first;
    const crawlSpan = lastOf(SLOW.host) - first;
    const bound = (SLOW.pages / SLOW.perSecond) * 1000;
    const fastBound = (FAST.pages / FAST.perSecond) * 1000;
    const rateOf = (host) => (host === SLOW.host ? SLOW.perSecond : FAST.perSecond);
    const arrived = tightestGaps(log.map((e) => ({ host: e.host, at: e.at, path: e.path })), rateOf);
    const sent = tightestGaps(
      JSON.parse(readFileSync(sendLog, 'utf8')).map((e) => ({ host: new URL(e.origin).hostname, at: e.at, path: e.path })),
      rateOf,
    );
    opts.log?.(`  wall ${round(result.wallMs)} ms, slow host span ${round(crawlSpan)} ms, last fast host at ${round(lastFast)} ms`);

    const bench = '2. Scheduling (1 slow + 30 fast hosts)';
    return [
      { bench, metric: 'wall time ÷ politeness lower bound', value: round(result.wallMs / bound, 3), target: { op: '<=', value: 1.1 },
        note: `${round(result.wallMs / 1000)} s spawn to exit, bound ${bound / 1000} s (${SLOW.pages} pages at ${SLOW.perSecond}/s); global concurrency ${concurrency}` },
      { bench, metric: 'first to last request of the slow host ÷ bound', value: round(crawlSpan / bound, 3),
        note: `${round(crawlSpan / 1000)} s; its 41 requests (robots.txt included) need 40 gaps of ${1000 / SLOW.perSecond} ms` },
      { bench, metric: 'last fast host finished, after the first request', value: round(lastFast / 1000, 2), unit: 's',
        note: `each fast host alone needs ${fastBound / 1000} s (${FAST.pages} pages at ${FAST.perSecond}/s)` },
      { bench, metric: 'gaps shorter than 1/rate, as the crawler sent them', value: sent.short, target: { op: '<=', value: 0 },
        note: `tightest send gap ${round(sent.worst.ratio, 3)} × 1/rate (undici diagnostics channel, in the crawler process)` },
      { bench, metric: 'gaps shorter than 1/rate, as the server saw them arrive', value: arrived.short,
        note: `of ${arrived.gaps}; tightest ${round(arrived.worst.ratio, 3)} × 1/rate, ${arrived.worst.host} ${arrived.worst.from} → ${arrived.worst.to}` },
      ...(await highRate(opts)),
    ];
  } finally {
    scratch.cleanup();
    await web.close();
  }
}

/**
 * One host at a high rate (200/s, 2 at a time): how close to its rate the
 * crawl runs, judged as the crawler wrote its requests. A flat 3 ms margin
 * on every gap once held 200/s to ~107 pages/s; timers of 1 ms resolution
 * keep it near 122 (7 ms gaps). This floor was a test's timing assertion
 * until a loaded CI machine measured 108.5; a rate is a benchmark's finding.
 */
async function highRate(opts) {
  const HIGH = { host: 'fast.localhost', pages: 300, perSecond: 200 };
  const web = await startWeb({ sites: { [HIGH.host]: { robots: null, generate: { pages: HIGH.pages - 1, linksPerPage: 2 } } } });
  const scratch = scratchDir();
  try {
    writeFileSync(scratch.file('fast.json'), JSON.stringify({ domains: { [HIGH.host]: { rate: `${HIGH.perSecond}/s`, concurrency: 2 } } }));
    const sendLog = scratch.file('sent.json');
    expectSuccess('crawl', await runNode(['bin/crawl.js', '--config', scratch.file('fast.json'), '-q', web.url(HIGH.host, '/')], {
      stdoutFile: scratch.file('out.jsonl'),
      nodeArgs: ['--import', SEND_LOG],
      env: { CRAWL_BENCH_SEND_LOG: sendLog },
    }));
    const at = JSON.parse(readFileSync(sendLog, 'utf8')).map((e) => e.at).sort((a, b) => a - b);
    if (at.length < HIGH.pages) throw new Error(`crawl sent ${at.length} of ${HIGH.pages} requests`);
    const perSecond = ((at.length - 1) / (at[at.length - 1] - at[0])) * 1000;
    const sent = tightestGaps(at.map((t) => ({ host: HIGH.host, at: t, path: '' })), () => HIGH.perSecond);
    opts.log?.(`  ${HIGH.perSecond}/s host: ${round(perSecond)} requests/s as sent, tightest gap ${round(sent.worst.ratio, 3)} × 1/rate`);
    const bench = '2. Scheduling (one host at 200/s)';
    return [
      { bench, metric: 'requests per second as sent ÷ the rate', value: round(perSecond / HIGH.perSecond, 3), target: { op: '>=', value: 0.55 },
        note: `${round(perSecond)}/s for ${HIGH.perSecond}/s, ${at.length} requests, 2 at a time; was 0.47–0.53 with a flat 3 ms margin per gap` },
      { bench, metric: 'gaps shorter than 1/rate, as the crawler sent them', value: sent.short, target: { op: '<=', value: 0 },
        note: `tightest ${round(sent.worst.ratio, 3)} × 1/rate` },
    ];
  } finally {
    scratch.cleanup();
    await web.close();
  }
}

/**
 * Per host, consecutive events closer together than 1/rate: how many, and
 * the tightest gap as a fraction of 1/rate (1 = exactly on the limit).
 */
function tightestGaps(events, rateOf) {
  const byHost = new Map();
  for (const e of events) {
    if (!byHost.has(e.host)) byHost.set(e.host, []);
    byHost.get(e.host).push(e);
  }
  let short = 0;
  let gaps = 0;
  let worst = { ratio: Infinity, host: '', from: '', to: '' };
  for (const [host, list] of byHost) {
    const required = 1000 / rateOf(host);
    list.sort((a, b) => a.at - b.at);
    for (let i = 1; i < list.length; i++) {
      gaps++;
      const ratio = (list[i].at - list[i - 1].at) / required;
      if (ratio < 1) short++;
      if (ratio < worst.ratio) worst = { ratio, host, from: list[i - 1].path, to: list[i].path };
    }
  }
  return { short, gaps, worst };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
