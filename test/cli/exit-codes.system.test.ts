/**
 * Exit codes: 3 when nothing could be reached (every seed failed), 143 on
 * SIGTERM (130 on SIGINT), and requests the crawl aborted itself are not
 * counted as pages fetched.
 */
import net from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { crawlExitCode } from '../../src/cli/exit-code.js';
import { countPage, countSkip, createStats, formatSummary, statsToJson, type CrawlStats } from '../../src/output/summary.js';
import type { PageRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { memoryIo } from '../support/memory-io.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const page = (status: number | null, code?: string): PageRecord => ({
  type: 'page',
  url: 'http://a.test/',
  host: 'a.test',
  status,
  depth: 0,
  parent: null,
  contentType: null,
  bytes: 0,
  title: null,
  links: 0,
  fetchedAt: '2026-01-01T00:00:00.000Z',
  elapsedMs: 1,
  ...(code && { error: { code: code as 'ABORTED', message: code } }),
});

function stats(fill: (s: CrawlStats) => void): CrawlStats {
  const s = createStats(new FakeClock());
  fill(s);
  return s;
}

async function refusedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

describe('crawlExitCode', () => {
  const table: Array<[string, CrawlStats, Parameters<typeof crawlExitCode>[1], number]> = [
    ['a page answered', stats((s) => countPage(s, page(200))), {}, 0],
    ['a 404 is an answer, not a failure', stats((s) => countPage(s, page(404))), {}, 0],
    ['every seed refused', stats((s) => countPage(s, page(null, 'CONNECTION_REFUSED'))), {}, 3],
    ['robots.txt 5xx for every seed', stats((s) => countSkip(s, 'robots-unavailable', 'a.test')), {}, 3],
    ['one answered, one failed', stats((s) => (countPage(s, page(200)), countPage(s, page(null, 'DNS_FAILURE')))), {}, 0],
    ['all disallowed by robots.txt', stats((s) => countSkip(s, 'robots', 'a.test')), {}, 0],
    ['nothing reached before --max-time', stats((s) => countPage(s, page(null, 'CONNECT_TIMEOUT'))), { timedOut: true }, 0],
    ['SIGINT', stats(() => {}), { signal: 'SIGINT' }, 130],
    ['SIGTERM', stats(() => {}), { signal: 'SIGTERM' }, 143],
  ];
  for (const [name, s, end, code] of table) it(name, () => expect(crawlExitCode(s, end)).toBe(code));
});

describe('aborted requests', () => {
  it('are counted apart, not as pages or errors', () => {
    const s = stats((st) => (countPage(st, page(200)), countPage(st, page(null, 'ABORTED'))));
    expect(statsToJson(s)).toMatchObject({ pages: 1, aborted: 1, errorsByCode: {}, pagesByStatus: { '200': 1 } });
    expect(s.perHost.get('a.test')!.fetched).toBe(1);
    expect(formatSummary(s)).toMatch(/1 page .*0 errors, 0 skipped, 1 aborted/);
  });

  it('a crawl aborted by a second Ctrl-C writes ABORTED records but counts no page', async () => {
    web = await startWeb({ sites: { 'a.localhost': { robots: { status: 404 }, pages: { '/': { hang: true } } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-exit-'));
    const io = memoryIo(dir);
    const done = main(['-q', '--stats', join(dir, 'stats.json'), web.url('a.localhost', '/')], io);
    while (web.count('a.localhost', '/') === 0) await new Promise((r) => setTimeout(r, 20));
    io.signals.emit('SIGINT');
    io.signals.emit('SIGINT');
    expect(await done).toBe(130);
    expect(JSON.parse(io.out().trim())).toMatchObject({ status: null, error: { code: 'ABORTED' } });
    expect(JSON.parse(await readFile(join(dir, 'stats.json'), 'utf8'))).toMatchObject({ pages: 0, aborted: 1, pagesByStatus: {}, errorsByCode: {} });
  });
});

describe('the crawl command', () => {
  it('exits 3 when every seed failed (refused, DNS failure: no HTTP answer at all)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-exit-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ robots: { unavailableRetries: 0 }, defaults: { retries: 0 } }));
    const io = memoryIo(dir);
    expect(await main(['--config', 'c.json', `http://127.0.0.1:${await refusedPort()}/`, 'http://no-such-host.invalid/'], io)).toBe(3);
    const records = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PageRecord);
    expect(records.map((r) => r.error?.code).sort()).toEqual(['CONNECTION_REFUSED', 'DNS_FAILURE']);
    expect(io.err()).toMatch(/nothing could be reached: no URL got an HTTP answer \(exit 3\)/);
  });

  it('exits 0 when one seed answered', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'ok' } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-exit-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ robots: { unavailableRetries: 0 }, defaults: { retries: 0 } }));
    const io = memoryIo(dir);
    expect(await main(['-q', '--config', 'c.json', `http://127.0.0.1:${await refusedPort()}/`, web.url('a.localhost', '/')], io)).toBe(0);
  });

  it('exits 143 on SIGTERM (130 is SIGINT)', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 200, linksPerPage: 3 } } } });
    const io = memoryIo(process.cwd());
    const done = main(['-q', '--rate', '20/s', web.url('a.localhost', '/')], io);
    while (web.count('a.localhost') < 3) await new Promise((r) => setTimeout(r, 20));
    io.signals.emit('SIGTERM');
    expect(await done).toBe(143);
    for (const line of io.out().trim().split('\n')) JSON.parse(line);
  });
});
