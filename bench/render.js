#!/usr/bin/env node
/**
 * Benchmark: rendering. The same local client-rendered web
 * (fixtures/app-web.js, three hosts) crawled two ways at the same page
 * concurrency, each in its own process tree, timed by /usr/bin/time so the
 * browser's CPU counts too:
 *
 * - `crawl --render`, every browser request made through its host's limits
 *   (rates unlimited here, so the figure is the machinery's cost, not the
 *   politeness's), with the crawl-wide cache and default blocking;
 * - a plain Playwright loop: a breadth-first walk of the same pages with
 *   the same settle rule (load, then 0.5 s without DOM changes), the
 *   browser fetching what it likes.
 *
 * Reports rendered pages per second of each and their ratio (target ≥ 0.8),
 * CPU per rendered page, and requests made (from the server's own log).
 *
 * Then a polite crawl of shells that all load one third-party script that
 * answers 404 (the site at 2/s, the third party at 1/s): wall time ÷ the
 * politeness bound (the site's requests, one gap apart), target ≤ 1.5. The
 * failure is remembered crawl-wide (negative caching), so the script is
 * asked for once; a plain loop asks once per page and keeps no gap.
 *
 *   node bench/render.js [--quick] [--items N] [--concurrency N]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';
import { appSites } from '../fixtures/app-web.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BROWSER = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const SETTLE_QUIET_MS = 500;

/** Runs `node args…` under /usr/bin/time: wall seconds, CPU seconds (user + system, the whole process tree as reaped), peak RSS of the largest process. */
function timed(args) {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', 'TIME %e %U %S %M', process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => {
      const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
      if (code !== 0 || !m) return reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`));
      resolve({ wallS: Number(m[1]), cpuS: Number(m[2]) + Number(m[3]), maxRssKiB: Number(m[4]), stdout });
    });
  });
}

/** The plain loop, run as its own process: `node bench/render.js --loop SEED CONCURRENCY`. */
async function plainLoop(seed, concurrency) {
  const { chromium } = await import('playwright-core');
  const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  const browser = await chromium.launch({ executablePath: BROWSER, args });
  const context = await browser.newContext();
  const origin = new URL(seed).origin;
  const seen = new Set([seed]);
  const queue = [seed];
  let pages = 0;
  const worker = async () => {
    for (;;) {
      const url = queue.shift();
      if (url === undefined) {
        if (active === 0) return;
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      active++;
      const page = await context.newPage();
      try {
        await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
        await page.evaluate(`new Promise((resolve) => { let t; const done = () => { o.disconnect(); resolve(); }; const o = new MutationObserver(() => { clearTimeout(t); t = setTimeout(done, ${SETTLE_QUIET_MS}); }); o.observe(document, { subtree: true, childList: true, attributes: true, characterData: true }); t = setTimeout(done, ${SETTLE_QUIET_MS}); })`);
        const links = await page.evaluate('[...document.querySelectorAll("a[href]")].map((a) => a.href)');
        pages++;
        for (const link of links) {
          const u = new URL(link);
          u.hash = '';
          if (u.origin === origin && !seen.has(u.href)) {
            seen.add(u.href);
            queue.push(u.href);
          }
        }
      } finally {
        await page.close();
        active--;
      }
    }
  };
  let active = 0;
  await Promise.all(Array.from({ length: concurrency }, worker));
  await browser.close();
  process.stdout.write(JSON.stringify({ pages }) + '\n');
}

/** @param {{ quick?: boolean, items?: number, concurrency?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  if (!existsSync(BROWSER)) throw new Error(`no browser at ${BROWSER} (apt-get install chromium, or set CRAWL_BROWSER)`);
  const items = Number(opts.items ?? (opts.quick ? 12 : 40));
  const concurrency = Number(opts.concurrency ?? 4);
  const log = opts.log ?? (() => {});
  const web = await startWeb({ sites: appSites({ items }) });
  try {
    const seed = web.url('app.localhost', '/');
    web.reset?.();
    const before = web.requests().length;
    const crawl = await timed(['bin/crawl.js', '-q', '--render', '--browser', BROWSER, '--allow-private', '--rate', 'unlimited', '--host-concurrency', String(concurrency),
      '-c', String(concurrency * 4), '--render-concurrency', String(concurrency), seed]);
    const crawlPages = crawl.stdout.split('\n').filter((l) => l.includes('"type":"page"') && l.includes('"rendered":true')).length;
    const crawlRequests = web.requests().length - before;
    log(`  crawl --render: ${crawlPages} pages in ${crawl.wallS} s, ${crawl.cpuS.toFixed(1)} s CPU, ${crawlRequests} requests`);
    const mid = web.requests().length;
    const loop = await timed([fileURLToPath(import.meta.url), '--loop', seed, String(concurrency)]);
    const loopPages = JSON.parse(loop.stdout.trim().split('\n').at(-1)).pages;
    const loopRequests = web.requests().length - mid;
    log(`  plain Playwright loop: ${loopPages} pages in ${loop.wallS} s, ${loop.cpuS.toFixed(1)} s CPU, ${loopRequests} requests`);
    const bench = '11. Rendering';
    const crawlRate = crawlPages / crawl.wallS;
    const loopRate = loopPages / loop.wallS;
    return [
      { bench, metric: `rendered pages/s, \`crawl --render\` ÷ a plain Playwright loop (${concurrency} pages at once, ${crawlPages} pages)`, value: Math.round((crawlRate / loopRate) * 100) / 100, unit: '×',
        target: { op: '>=', value: 0.8 }, note: `${crawlRate.toFixed(2)} vs ${loopRate.toFixed(2)} pages/s, wall time from spawn (browser start included)` },
      { bench, metric: 'CPU per rendered page, crawl (process tree)', value: Math.round((crawl.cpuS / crawlPages) * 1000), unit: 'ms', note: `plain loop: ${Math.round((loop.cpuS / loopPages) * 1000)} ms` },
      { bench, metric: 'requests made for the crawl', value: crawlRequests, unit: '', note: `plain loop: ${loopRequests} for ${loopPages} pages (robots.txt included for the crawl)` },
      ...(await failingScript({ pages: opts.quick ? 16 : 40, concurrency, log })),
    ];
  } finally {
    await web.close();
  }
}

/** Shells of one host, each loading a third-party script that answers 404; the first links every other page (built by script). */
function failingScriptSites(pages) {
  const links = Array.from({ length: pages - 1 }, (_, i) => `<a href="/p/${i + 1}">${i + 1}</a>`).join(' ');
  const shell = (n) =>
    `<title>Shop ${n}</title><div id="app"></div><script src="{{origin:third.localhost}}/widget.js"></script>` +
    `<script>document.getElementById('app').innerHTML = '${n === 0 ? links : `item ${n}`}';</script>`;
  const sitePages = {};
  for (let n = 0; n < pages; n++) sitePages[`/p/${n}`] = shell(n);
  return {
    'shop.localhost': { robots: 'User-agent: *\nDisallow:\n', pages: sitePages },
    'third.localhost': { robots: 'User-agent: *\nDisallow:\n', pages: {} },
  };
}

/**
 * The shared failing script: a polite crawl's wall time against its
 * politeness bound, and what a plain loop does. The shop host runs at 2/s,
 * the third-party host at 1/s (a CDN asks less of a crawler than a site
 * does): the bound is the shop's own requests, one gap apart, since a crawl
 * that remembers the 404 asks the third host twice (robots.txt, the script).
 */
export async function failingScript({ pages, concurrency, log }) {
  const rate = 2;
  const web = await startWeb({ sites: failingScriptSites(pages) });
  const dir = await mkdtemp(join(tmpdir(), 'bench-failing-'));
  try {
    const config = join(dir, 'c.json');
    await writeFile(config, JSON.stringify({ domains: { 'third.localhost': { rate: '1/s' } } }));
    const seed = web.url('shop.localhost', '/p/0');
    const crawl = await timed(['bin/crawl.js', '-q', '--config', config, '--render', '--browser', BROWSER, '--allow-private', '--rate', `${rate}/s`, '--render-concurrency', String(concurrency), seed]);
    const rendered = crawl.stdout.split('\n').filter((l) => l.includes('"rendered":true')).length;
    const bound = (web.requests('shop.localhost').length - 1) / rate;
    const widget = web.count('third.localhost', '/widget.js');
    log(`  failing shared script, crawl --render (shop 2/s, third party 1/s): ${rendered} pages in ${crawl.wallS} s (bound ${bound} s), /widget.js asked ${widget}×`);
    const mid = web.requests().length;
    const loop = await timed([fileURLToPath(import.meta.url), '--loop', seed, String(concurrency)]);
    const loopLog = web.requests().slice(mid).filter((e) => e.host === 'shop.localhost');
    let minGap = Infinity;
    for (let i = 1; i < loopLog.length; i++) minGap = Math.min(minGap, loopLog[i].at - loopLog[i - 1].at);
    const loopWidget = web.requests().slice(mid).filter((e) => e.path === '/widget.js').length;
    log(`  plain Playwright loop: ${loop.wallS} s, /widget.js asked ${loopWidget}×, smallest gap on shop.localhost ${minGap.toFixed(1)} ms`);
    const bench = '11. Rendering';
    return [
      { bench, metric: `wall time ÷ politeness bound, ${pages} shells sharing a 404 script`, value: Math.round((crawl.wallS / bound) * 100) / 100, unit: '×',
        target: { op: '<=', value: 1.5 }, note: `${crawl.wallS} s for a bound of ${bound} s; the script asked ${widget}× (plain loop: ${(loop.wallS / bound).toFixed(2)}×, asked ${loopWidget}×, smallest gap ${minGap.toFixed(1)} ms where ${1000 / rate} is due)` },
    ];
  } finally {
    await web.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--loop') {
  await plainLoop(process.argv[3], Number(process.argv[4]));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  const args = parseArgs(process.argv.slice(2));
  printRows(await run({ ...args, log: (s) => process.stderr.write(s + '\n') }));
}
