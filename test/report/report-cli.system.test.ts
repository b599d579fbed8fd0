/** `crawl report`, called in-process through main() with a fake Io. */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { defaultOutput } from '../../src/cli/report-command.js';
import { memoryIo as sharedMemoryIo } from '../support/memory-io.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-report-cli-'));
  const records = [
    {
      type: 'page',
      url: 'http://a.test/',
      status: 200,
      depth: 0,
      parent: null,
      contentType: 'text/html',
      bytes: 100,
      title: 'A',
      links: 1,
      fetchedAt: '2026-01-01T00:00:00.000Z',
      elapsedMs: 20,
    },
    {
      type: 'page',
      url: 'http://a.test/x',
      status: 404,
      depth: 1,
      parent: 'http://a.test/',
      contentType: 'text/html',
      bytes: 0,
      title: null,
      links: 0,
      fetchedAt: '2026-01-01T00:00:01.000Z',
      elapsedMs: 20,
    },
  ];
  await writeFile(join(dir, 'pages.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await writeFile(join(dir, 'notes.txt'), 'hello\n');
  await writeFile(join(dir, 'crawler.config.json'), JSON.stringify({ domains: { 'a.test': { rate: '2/s' } } }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const memoryIo = () => sharedMemoryIo(dir);

describe('crawl report', () => {
  it('writes the HTML file and says so on stderr, nothing on stdout', async () => {
    const io = memoryIo();
    expect(await main(['report', 'pages.jsonl', '-o', 'out.html'], io)).toBe(0);
    const html = await readFile(join(dir, 'out.html'), 'utf8');
    expect(html).toContain('<title>Crawl report: pages.jsonl</title>');
    expect(io.out()).toBe('');
    expect(io.err()).toMatch(/^crawl: wrote out\.html \([\d.]+ KiB\) from 2 records\n$/);
  });

  it('-o - writes the HTML to stdout', async () => {
    const io = memoryIo();
    expect(await main(['report', 'pages.jsonl', '-o', '-', '-q'], io)).toBe(0);
    expect(io.out()).toMatch(/^<!doctype html>[\s\S]*<\/html>\n$/);
    expect(io.err()).toBe('');
  });

  it('takes the configured rate from --config', async () => {
    const io = memoryIo();
    expect(await main(['report', 'pages.jsonl', '-o', '-', '-q', '--config', 'crawler.config.json'], io)).toBe(0);
    expect(io.out()).toContain('<td class="host">a.test</td><td>2</td><td>2/s</td>');
  });

  it('takes the configured rate from --rate, and records from stdin', async () => {
    const io = memoryIo();
    (io.stdin as PassThrough).end(await readFile(join(dir, 'pages.jsonl')));
    expect(await main(['report', '-', '-o', '-', '-q', '--rate', '30/min'], io)).toBe(0);
    expect(io.out()).toContain('<td class="host">a.test</td><td>2</td><td>30/min</td>');
    expect(io.out()).toContain('<title>Crawl report: stdin</title>');
  });

  it('a bad input file is one line and exit 2', async () => {
    for (const [file, message] of [
      ['missing.jsonl', 'crawl: cannot read missing.jsonl: no such file\n'],
      ['.', 'crawl: cannot read .: it is a directory\n'],
      ['notes.txt', 'crawl: notes.txt: line 1 is not a crawl record (expected JSON lines with "type": "page" or "skipped", as crawl writes them)\n'],
    ]) {
      const io = memoryIo();
      expect(await main(['report', file, '-o', 'never.html'], io)).toBe(2);
      expect(io.err()).toBe(message);
      expect(io.out()).toBe('');
    }
  });

  it('an unwritable output is one line and exit 2', async () => {
    const io = memoryIo();
    expect(await main(['report', 'pages.jsonl', '-o', 'no/such/dir/r.html'], io)).toBe(2);
    expect(io.err()).toBe('crawl: cannot write no/such/dir/r.html: directory does not exist\n');
  });

  it('reads records of the previous version (instants as epoch ms) and of this one (ISO strings) into the same report', async () => {
    const T = Date.parse('2026-11-21T10:00:00.000Z');
    const iso = (ms: number) => new Date(ms).toISOString();
    const old = [
      {
        type: 'robots',
        url: 'http://a.test/robots.txt',
        host: 'a.test',
        status: 429,
        startedAt: T,
        elapsedMs: 10,
        bytes: 0,
        pausedUntil: T + 2010,
        retryAfterMs: 2000,
      },
      { type: 'robots', url: 'http://a.test/robots.txt', host: 'a.test', status: 200, startedAt: T + 2100, elapsedMs: 10, bytes: 20 },
      ...Array.from({ length: 6 }, (_, i) => ({
        type: 'page',
        url: `http://a.test/${i}`,
        host: 'a.test',
        status: 200,
        depth: 1,
        parent: null,
        contentType: 'text/html',
        bytes: 100,
        title: null,
        links: 0,
        fetchedAt: iso(T + 2500 + i * 500),
        startedAt: T + 2500 + i * 500 + 3,
        elapsedMs: 20,
      })),
      {
        type: 'page',
        url: 'http://a.test/busy',
        host: 'a.test',
        status: 200,
        depth: 1,
        parent: null,
        contentType: 'text/html',
        bytes: 100,
        title: null,
        links: 0,
        fetchedAt: iso(T + 9000),
        startedAt: T + 9001,
        elapsedMs: 20,
        attempts: 2,
        attemptStarts: [T + 6000],
        throttles: [{ at: T + 6020, status: 429, retryAfterMs: 2000, pausedUntil: T + 8030 }],
      },
    ];
    const now = old.map((r) => {
      const out: Record<string, unknown> = { ...r, startedAt: iso(r.startedAt) };
      if ('pausedUntil' in r && r.pausedUntil !== undefined) out.pausedUntil = iso(r.pausedUntil);
      if ('attemptStarts' in r && r.attemptStarts) out.attemptStarts = r.attemptStarts.map(iso);
      if ('throttles' in r && r.throttles) out.throttles = r.throttles.map((t) => ({ ...t, at: iso(t.at), pausedUntil: iso(t.pausedUntil) }));
      return out;
    });
    const html: string[] = [];
    for (const [name, records] of [
      ['old', old],
      ['new', now],
    ] as const) {
      const sub = join(dir, name);
      await mkdir(sub, { recursive: true });
      await writeFile(join(sub, 'pages.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const io = sharedMemoryIo(sub);
      expect(await main(['report', 'pages.jsonl', '-o', '-', '-q', '--rate', '2/s'], io)).toBe(0);
      html.push(io.out().replace(/Generated by [^<]*/, ''));
    }
    expect(html[1]).toBe(html[0]);
    // Read, not dropped: exact starts (no fallback note), the host's 7 requests and 2 robots.txt requests, the pauses drawn.
    expect(html[0]).not.toContain('Request starts are taken from <code>fetchedAt</code>');
    expect(html[0]).toContain('<td class="host">a.test</td><td>7');
    expect(html[0]).toMatch(/"pauses":\[\[[^\]]+\],\[[^\]]+\]\]/);
  });

  it('names the output after the input by default', () => {
    expect(defaultOutput('pages.jsonl')).toBe('pages.html');
    expect(defaultOutput('out/pages.jsonl.partial')).toBe('out/pages.html');
    expect(defaultOutput('records')).toBe('records.html');
    expect(defaultOutput('-')).toBe('report.html');
  });
});

describe('crawl … --report: the report built during the crawl', () => {
  let web: Web | undefined;
  afterAll(() => web?.close());

  it("counts the crawl's skips without --emit-skipped, and warns only about what applies to it", async () => {
    const offSite = Array.from({ length: 5 }, (_, i) => `<a href="http://elsewhere.test/${i}">o</a>`).join(' ');
    const disallowed = Array.from({ length: 3 }, (_, i) => `<a href="/private/${i}">p</a>`).join(' ');
    web = await startWeb({
      sites: { 'a.localhost': { robots: 'User-agent: *\nDisallow: /private/\n', pages: { '/': `${offSite} ${disallowed} <a href="/b">b</a>`, '/b': 'b' } } },
    });
    const out = await mkdtemp(join(tmpdir(), 'crawl-report-tap-'));
    const io = sharedMemoryIo(out);
    expect(await main(['--rate', '200/s', '-q', '--stats', 'stats.json', '--report', 'r.html', web.url('a.localhost', '/')], io)).toBe(0);
    const stats = JSON.parse(await readFile(join(out, 'stats.json'), 'utf8')) as { skippedByReason: Record<string, number> };
    const skipped = Object.values(stats.skippedByReason).reduce((a, b) => a + b, 0);
    expect(skipped).toBe(8);
    const html = await readFile(join(out, 'r.html'), 'utf8');
    // The header card, the skip reasons and the host's row all say what the crawl's summary says.
    expect(html).toContain('<div class="card"><div class="value">8</div><div class="label">skipped</div>');
    for (const [reason, n] of Object.entries(stats.skippedByReason)) expect(html).toContain(`<tr><td>${reason}</td><td class="num">${n}</td>`);
    expect(html).not.toContain('No skip records');
    const skippedColumn = (host: string) => {
      const row = html.split('<tr>').find((r) => r.startsWith(`<td class="host">${host}</td>`));
      const cells = [...(row ?? '').matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => m[1].replace(/<[^>]+>/g, ''));
      return cells[13];
    };
    expect(skippedColumn(`a.localhost:${web.port}`)).toBe('3');
    expect(skippedColumn('elsewhere.test')).toBe('5');
    // Rates came from the crawl's own settings: no warning that they might differ from the crawl's, nor that they are unknown.
    expect(html).not.toContain('given to <code>crawl report</code>');
    expect(html).not.toContain('Configured rates are unknown');
    await rm(out, { recursive: true, force: true });
  });
});
