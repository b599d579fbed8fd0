/** `crawl report`, called in-process through main() with a fake Io. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(io.err()).toBe('crawl: cannot write no/such/dir/r.html: directory does not exist\n');
  });

  it('names the output after the input by default', () => {
    expect(defaultOutput('pages.jsonl')).toBe('pages.html');
    expect(defaultOutput('out/pages.jsonl.partial')).toBe('out/pages.html');
    expect(defaultOutput('records')).toBe('records.html');
    expect(defaultOutput('-')).toBe('report.html');
  });
});
