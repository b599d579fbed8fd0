/** `crawl report`, called in-process through main() with a fake Io. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../fixtures/web.js';
import { main, type Io } from '../src/cli/cli.js';
import { defaultOutput } from '../src/cli/report-command.js';
import { memoryIo as sharedMemoryIo } from './support/memory-io.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-report-cli-'));
  const records = [
    { type: 'page', url: 'http://a.test/', status: 200, depth: 0, parent: null, contentType: 'text/html', bytes: 100, title: 'A', links: 1, fetchedAt: '2026-01-01T00:00:00.000Z', elapsedMs: 20 },
    { type: 'page', url: 'http://a.test/x', status: 404, depth: 1, parent: 'http://a.test/', contentType: 'text/html', bytes: 0, title: null, links: 0, fetchedAt: '2026-01-01T00:00:01.000Z', elapsedMs: 20 },
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
      expect(await main(['report', file!, '-o', 'never.html'], io)).toBe(2);
      expect(io.err()).toBe(message);
      expect(io.out()).toBe('');
    }
  });

  it('an unwritable output is one line and exit 2', async () => {
    const io = memoryIo();
    expect(await main(['report', 'pages.jsonl', '-o', 'no/such/dir/r.html'], io)).toBe(2);
    expect(io.err()).toBe('crawl: cannot write no/such/dir/r.html: ENOENT\n');
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

  it('counts the crawl\'s skips without --emit-skipped, and warns only about what applies to it', async () => {
    const offSite = Array.from({ length: 5 }, (_, i) => `<a href="http://elsewhere.test/${i}">o</a>`).join(' ');
    const disallowed = Array.from({ length: 3 }, (_, i) => `<a href="/private/${i}">p</a>`).join(' ');
    web = await startWeb({ sites: { 'a.localhost': { robots: 'User-agent: *\nDisallow: /private/\n', pages: { '/': `${offSite} ${disallowed} <a href="/b">b</a>`, '/b': 'b' } } } });
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
      const cells = [...(row ?? '').matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));
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
