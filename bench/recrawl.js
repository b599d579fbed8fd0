#!/usr/bin/env node
/**
 * Benchmark 12: crawling again (`--state FILE --recrawl`).
 *
 * A site of N pages with strong ETags (fixtures/generations.js
 * `generatedSite`, ~20 KB each) is crawled once with --state; then 10% of
 * its pages change and the same state is crawled again with --recrawl.
 * Body bytes the server sent (its own log) and wall time of the re-crawl
 * against the first pass, each round a fresh state file, first pass and
 * re-crawl alternating; medians and spreads over the rounds. The rate is
 * fixed, so a pass's time is bounded by politeness: a 304 still costs its
 * request slot, and the re-crawl should take about as long as the first pass.
 *
 * Also: the bytes per page the SQLite state keeps for history (the `pages`
 * table, from SQLite's dbstat), with and without the outlinks.
 *
 *   node bench/recrawl.js [--quick] [--pages N] [--rounds N] [--rate R]
 */
import { createRequire } from 'node:module';
import { startWeb } from '../fixtures/web.js';
import { generatedSite } from '../fixtures/generations.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { median, round } from './lib/stats.js';

const HOST = 'site.localhost';

/** @param {{ quick?: boolean, pages?: number, rounds?: number, rate?: string, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const pages = Number(opts.pages ?? (opts.quick ? 150 : 400));
  const rounds = Number(opts.rounds ?? (opts.quick ? 2 : 3));
  const rate = String(opts.rate ?? '100/s');
  const log = opts.log ?? (() => {});
  const site = { pages, changedEvery: 10 };
  const web = await startWeb({ sites: { [HOST]: { robots: null, pages: generatedSite(1, site) } } });
  const scratch = scratchDir();
  const results = [];
  let perPage;
  try {
    for (let r = 0; r < rounds; r++) {
      const state = scratch.file(`state-${r}.db`);
      web.setPages(HOST, generatedSite(1, site));
      const first = await pass(web, scratch, state, rate, false);
      if (r === 0) perPage = historyBytes(state);
      web.setPages(HOST, generatedSite(2, site));
      const again = await pass(web, scratch, state, rate, true);
      results.push({ first, again });
      log(`  round ${r + 1}: first pass ${first.bodyBytes} B in ${round(first.wallMs)} ms, re-crawl ${again.bodyBytes} B in ${round(again.wallMs)} ms (${again.notModified} answered 304)`);
    }
  } finally {
    scratch.cleanup();
    await web.close();
  }
  const bench = '12. Crawling again (--recrawl)';
  const bytes = results.map((x) => x.again.bodyBytes / x.first.bodyBytes);
  const time = results.map((x) => x.again.wallMs / x.first.wallMs);
  const spread = (xs) => `${round(Math.min(...xs), 3)}–${round(Math.max(...xs), 3)}`;
  return [
    { bench, metric: `body bytes of a re-crawl with 10% changed ÷ first pass, ${pages} pages`, value: round(median(bytes), 3), target: { op: '<=', value: 0.15 },
      note: `median of ${rounds}, spread ${spread(bytes)}; ${results[0].again.notModified} of ${results[0].again.requests} requests answered 304 with no body` },
    { bench, metric: `wall time of the re-crawl ÷ first pass at ${rate}`, value: round(median(time), 2),
      note: `median of ${rounds}, spread ${spread(time)}; bounded by the host's rate: a 304 still takes its slot` },
    { bench, metric: 'history bytes per page in the SQLite state (pages table)', value: round(perPage.total, 1), unit: 'B', target: { op: '<=', value: 48 },
      note: `of which outlinks ${round(perPage.links, 1)} B (1 link a page here), ETag ${round(perPage.etag, 1)} B; row payload ${round(perPage.payload, 1)} B + b-tree cell overhead` },
  ];
}

async function pass(web, scratch, state, rate, recrawl) {
  web.reset();
  const seed = web.url(HOST, '/');
  const args = ['bin/crawl.js', '--state', state, '--rate', rate, '-q', ...(recrawl ? ['--recrawl'] : [seed])];
  const result = expectSuccess(recrawl ? 'crawl --recrawl' : 'crawl', await runNode(args, { stdoutFile: scratch.file('out.jsonl') }));
  const log = web.requests(HOST);
  return {
    bodyBytes: log.reduce((n, e) => n + e.bytes, 0),
    requests: log.length,
    notModified: log.filter((e) => e.status === 304).length,
    wallMs: result.wallMs,
  };
}

/** Bytes of the `pages` table per row (SQLite's own page accounting), and the parts of it. */
function historyBytes(path) {
  const Driver = createRequire(import.meta.url)('better-sqlite3');
  const db = new Driver(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT count(*) AS n, sum(length(links)) AS links, sum(length(etag)) AS etag FROM pages').get();
    const stat = db.prepare("SELECT sum(payload) AS payload, sum(pgsize - unused) AS used FROM dbstat WHERE name = 'pages'").get();
    return { total: stat.used / rows.n, payload: stat.payload / rows.n, links: rows.links / rows.n, etag: rows.etag / rows.n };
  } finally {
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
