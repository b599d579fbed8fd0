/**
 * `--metrics` (issue 21): Prometheus series scraped over real HTTP from a
 * real crawl of a local web. The counters must say what the crawl's own
 * summary, its records and the servers' request logs say; per-host series
 * stay bounded; the endpoint ends with the crawl; an unusable port is one
 * line and exit 2 before any request.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { createCrawlSession } from '../../src/api/crawl-session.js';
import { buildSettings } from '../../src/config/settings.js';
import { createCrawlMetrics, statusClass } from '../../src/output/metrics.js';
import { openMetricsEndpoint, parseMetricsAddress } from '../../src/output/metrics-endpoint.js';
import { statsToJson } from '../../src/output/summary.js';
import type { RecordSink } from '../../src/output/sink.js';
import type { OutputRecord, PageRecord } from '../../src/types.js';
import { redisServerMissing, startRedisServer } from '../support/redis-server.js';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { parseScrape, scrapeValue, type Scrape } from '../support/scrape.js';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';

let web: Web | undefined;
let dir = '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-metrics-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Eight small hosts, one of which throttles with Retry-After, one 404 seed. */
async function startTestWeb(): Promise<{ web: Web; seeds: string[] }> {
  const sites: Record<string, object> = {
    'main.localhost': { generate: { pages: 12, linksPerPage: 2 } },
    'strict.localhost': { generate: { pages: 4, linksPerPage: 1 }, limit: { perSecond: 2, status: 429, retryAfter: '1', mode: 'gap' } },
  };
  for (let i = 0; i < 6; i++) sites[`h${i}.localhost`] = { generate: { pages: 1 + i, linksPerPage: 1 } };
  const w = await startWeb({ sites });
  const seeds = [...Object.keys(sites).map((h) => w.url(h, '/')), w.url('main.localhost', '/missing')];
  return { web: w, seeds };
}

const scrape = async (url: string): Promise<Scrape> => {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(await res.text());
};

describe('metrics of a real crawl', () => {
  it('counters match the summary, the records and what the servers saw; per-host series bounded', async () => {
    const started = await startTestWeb();
    web = started.web;
    const metrics = createCrawlMetrics({ topHosts: 3 });
    const endpoint = await openMetricsEndpoint(parseMetricsAddress('0'), metrics);
    const records: OutputRecord[] = [];
    const sink: RecordSink = {
      write: async (r) => void records.push(r),
      close: async () => {},
      broken: false,
      get written() {
        return records.length;
      },
    };
    try {
      // Before the crawl is attached, everything reads zero.
      expect(scrapeValue(await scrape(endpoint.url), 'crawl_requests_in_flight')).toBe(0);
      const settings = buildSettings(undefined, { rate: '20/s', hostConcurrency: '2' });
      const session = createCrawlSession({ settings, seeds: started.seeds, sink });
      metrics.attach(session);
      const stats = await session.run();
      const summary = statsToJson(stats);
      const m = await scrape(endpoint.url);
      const pages = records.filter((r): r is PageRecord => r.type === 'page');
      const served = web.requests();

      // Pages: by status class, equal to the summary and to the records written.
      const byClass: Record<string, number> = {};
      for (const p of pages) byClass[statusClass(p.status ?? 'error')] = (byClass[statusClass(p.status ?? 'error')] ?? 0) + 1;
      expect(m.byLabel('crawl_pages_total', 'status_class')).toEqual(byClass);
      expect(m.sum('crawl_pages_total')).toBe(summary.pages);
      expect(byClass['4xx']).toBe(1); // the /missing seed
      expect(m.byLabel('crawl_responses_total', 'status')).toEqual(summary.pagesByStatus);

      // Requests: every one the servers saw, robots.txt included, and split as they were.
      expect(m.sum('crawl_requests_total')).toBe(served.length);
      expect(m.get('crawl_requests_total', { kind: 'robots' })).toBe(served.filter((r) => r.path === '/robots.txt').length);
      expect(summary.requests).toBe(served.length);

      // Throttling: each 429 the strict host sent, each with its Retry-After.
      const refused = served.filter((r) => r.status === 429).length;
      expect(refused).toBeGreaterThan(0);
      expect(scrapeValue(m, 'crawl_throttles_total')).toBe(refused);
      expect(scrapeValue(m, 'crawl_retry_after_pauses_total')).toBe(refused);
      expect(summary.throttles).toBe(refused);

      expect(scrapeValue(m, 'crawl_body_bytes_total')).toBe(pages.reduce((a, p) => a + (p.bytes ?? 0), 0));
      expect(m.sum('crawl_errors_total')).toBe(Object.values(summary.errorsByCode).reduce((a, b) => a + b, 0));
      expect(m.sum('crawl_skipped_total')).toBe(Object.values(summary.skippedByReason).reduce((a, b) => a + b, 0));

      // The crawl is over: nothing in flight or queued, no host active.
      expect(scrapeValue(m, 'crawl_requests_in_flight')).toBe(0);
      expect(scrapeValue(m, 'crawl_urls_queued')).toBe(0);
      expect(m.get('crawl_hosts', { state: 'active' })).toBe(0);

      // Eight hosts crawled, three with series of their own: the three with most requests, each exact.
      const hosts = m.byLabel('crawl_host_requests_total', 'host');
      expect(Object.keys(hosts)).toHaveLength(3);
      const perHost = summary.hosts.map((h) => ({ host: h.host, requests: h.requests })).sort((a, b) => b.requests - a.requests);
      expect(summary.hosts.length).toBe(8);
      for (const [host, n] of Object.entries(hosts)) {
        expect(n).toBe(served.filter((r) => `${r.host}:${web!.port}` === host).length);
        expect(n).toBeGreaterThanOrEqual(perHost[2].requests);
      }
      expect(Object.keys(hosts)).toContain(`main.localhost:${web.port}`);
      // Rendering does not exist in this crawl: its series are absent, not zero.
      expect(m.names()).not.toContain('crawl_rendered_pages_total');
    } finally {
      await endpoint.close();
    }
  }, 60_000);
});

/** Waits for the "metrics at URL" line a spawned crawl prints. */
async function metricsUrl(run: ReturnType<typeof startCrawl>, stderr: () => string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const m = /metrics at (http:\/\/\S+)/.exec(stderr());
    if (m) return m[1];
    await sleep(25);
  }
  run.child.kill('SIGKILL');
  throw new Error(`no "metrics at" line: ${stderr()}`);
}

function captureStderr(run: ReturnType<typeof startCrawl>): () => string {
  let text = '';
  run.child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  return () => text;
}

describe('crawl --metrics (the binary)', () => {
  it('serves while the crawl runs, times SQLite commits, and stops with the crawl', async () => {
    web = await startWeb({ sites: { 'slow.localhost': { generate: { pages: 30, linksPerPage: 2 } } } });
    const run = startCrawl(['--metrics', '127.0.0.1:0', '--state', 'c.db', '--rate', '10/s', '-o', 'out.jsonl', web.url('slow.localhost', '/')], dir);
    const stderr = captureStderr(run);
    const url = await metricsUrl(run, stderr);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // Mid-crawl: pages counted, a request in flight or a host waiting, commits timed.
    for (let i = 0; i < 100 && scrapeValue(await scrape(url), 'crawl_pages_total', true) < 5; i++) await sleep(100);
    const mid = await scrape(url);
    expect(mid.sum('crawl_pages_total')).toBeGreaterThanOrEqual(5);
    expect(mid.get('crawl_store_call_duration_seconds_count', { store: 'sqlite', op: 'commit' })).toBeGreaterThan(0);
    expect((await fetch(url.replace('/metrics', '/'))).status).toBe(404);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    // The endpoint went with the crawl.
    await expect(fetch(url)).rejects.toThrow();
  }, 60_000);

  it('a port in use is one line and exit 2, before any request', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 3, linksPerPage: 1 } } } });
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const done = await startCrawl(['--metrics', String(port), '-o', 'out.jsonl', web.url('a.localhost', '/')], dir).done;
      expect(done.code).toBe(2);
      expect(done.stderr).toBe(`crawl: --metrics 127.0.0.1:${port}: cannot listen: the port is already in use\n`);
      expect(web.requests()).toHaveLength(0);
    } finally {
      taken.close();
    }
  }, 15_000);

  it('a bad address or --metrics-hosts is one line and exit 2', async () => {
    for (const [args, line] of [
      [['--metrics', 'nope'], 'crawl: --metrics expects [HOST:]PORT, e.g. 9464 or 0.0.0.0:9464 (port 0 to 65535), got "nope"\n'],
      [['--metrics', '70000'], 'crawl: --metrics expects [HOST:]PORT, e.g. 9464 or 0.0.0.0:9464 (port 0 to 65535), got "70000"\n'],
      [['--metrics-hosts', '3'], 'crawl: --metrics-hosts goes with --metrics [HOST:]PORT\n'],
      [['--metrics', '0', '--metrics-hosts', '-1'], /^crawl: --metrics-hosts: .*\n$/],
    ] as const) {
      const io = memoryIo(dir);
      expect(await main([...args, 'http://a.localhost:9/'], io), io.err()).toBe(2);
      if (typeof line === 'string') expect(io.err()).toBe(line);
      else expect(io.err()).toMatch(line);
    }
  });
});

describe('metrics in the config file', () => {
  const config = async (fields: Record<string, unknown>) => {
    await writeFile(join(dir, 'c.json'), JSON.stringify(fields));
    return ['--config', 'c.json'];
  };

  it('serves as --metrics does; the flag overrides it', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 3, linksPerPage: 1 } } } });
    const io = memoryIo(dir);
    expect(
      await main([...(await config({ metrics: '127.0.0.1:0', metricsHosts: 2 })), '--rate', '50/s', '-o', 'out.jsonl', web.url('a.localhost', '/')], io),
      io.err(),
    ).toBe(0);
    expect(io.err()).toMatch(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/);
    // A port in use named by the file is the file's problem; the flag then wins over it.
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const busy = memoryIo(dir);
      expect(await main([...(await config({ metrics: String(port) })), web.url('a.localhost', '/')], busy)).toBe(2);
      expect(busy.err()).toBe(`crawl: c.json: metrics 127.0.0.1:${port}: cannot listen: the port is already in use\n`);
      const flag = memoryIo(dir);
      expect(
        await main(
          [...(await config({ metrics: String(port) })), '--metrics', '127.0.0.1:0', '--rate', '50/s', '-o', 'out.jsonl', web.url('a.localhost', '/')],
          flag,
        ),
        flag.err(),
      ).toBe(0);
    } finally {
      taken.close();
    }
  });

  it('a bad address or metricsHosts alone is one line naming the field, exit 2', async () => {
    for (const [fields, line] of [
      [{ metrics: 'nope' }, /^crawl: .*c\.json: metrics: expects \[HOST:\]PORT, e\.g\. 9464 or 0\.0\.0\.0:9464 \(port 0 to 65535\), got "nope"\n$/],
      [{ metrics: '9464', metricsHosts: 5000 }, /^crawl: .*c\.json: metricsHosts: .*1000.*\n$/],
      [{ metricsHosts: 3 }, /^crawl: c\.json: metricsHosts goes with metrics \("\[HOST:\]PORT"\)\n$/],
    ] as const) {
      const io = memoryIo(dir);
      expect(await main([...(await config(fields)), 'http://a.localhost:9/'], io), io.err()).toBe(2);
      expect(io.err()).toMatch(line);
    }
  });
});

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'crawl --metrics with --redis', () => {
  it('each worker serves its own series, with Redis round trips timed', async () => {
    const redis = await startRedisServer();
    web = await startWeb({ sites: { 'r.localhost': { generate: { pages: 20, linksPerPage: 2 } } } });
    const run = startCrawl(
      ['--metrics', '0', '--redis', redis.url, '--crawl-id', 'metrics-test', '--rate', '10/s', '-o', 'out.jsonl', web.url('r.localhost', '/')],
      dir,
    );
    try {
      const url = await metricsUrl(run, captureStderr(run));
      for (let i = 0; i < 100 && scrapeValue(await scrape(url), 'crawl_pages_total', true) < 3; i++) await sleep(100);
      const m = await scrape(url);
      expect(m.get('crawl_store_call_duration_seconds_count', { store: 'redis', op: 'claim' })).toBeGreaterThan(0);
      const done = await run.done;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      await redis.stop();
    }
  }, 60_000);
});
