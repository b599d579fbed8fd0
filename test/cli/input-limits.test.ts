/**
 * Numbers and URLs past what the crawler can take (issue 23): one line per bad
 * value, saying what is wrong ("too large (max N)", "port … is out of range")
 * and echoing the input as typed, exit 2, nothing on stdout.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../support/memory-io.js';
import { main } from '../../src/cli/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const HUGE = '99999999999999999999';

async function refused(argv: string[], cwd = root): Promise<string[]> {
  const io = memoryIo(cwd);
  expect(await main(argv, io)).toBe(2);
  expect(io.out()).toBe('');
  return io.err().trim().split('\n');
}

describe('integer flags past their maximum: one line, "too large (max N)", the input as typed', () => {
  it('--max-pages 9007199254740993 (was "expected an integer >= 1, got 9007199254740992")', async () => {
    expect(await refused(['--max-pages', '9007199254740993', 'http://a/'])).toEqual([
      'crawl: --max-pages: too large (max 9007199254740991), got 9007199254740993',
    ]);
  });

  it('--concurrency 99999999999999999999 (the error was printed twice)', async () => {
    expect(await refused(['--concurrency', HUGE, 'http://a/'])).toEqual([`crawl: --concurrency: too large (max 1000), got ${HUGE}`]);
  });

  const flags: Array<[string, number]> = [
    ['--host-concurrency', 1000],
    ['--ip-concurrency', 1000],
    ['--max-depth', Number.MAX_SAFE_INTEGER],
    ['--max-pages-per-host', Number.MAX_SAFE_INTEGER],
    ['--max-queued', Number.MAX_SAFE_INTEGER],
  ];
  for (const [flag, max] of flags) {
    it(flag, async () => {
      expect(await refused([flag, HUGE, 'http://a/'])).toEqual([`crawl: ${flag}: too large (max ${max}), got ${HUGE}`]);
    });
  }

  it('a too-small value still reads "expected …", echoed as typed', async () => {
    expect(await refused(['--max-pages', '-99999999999999999999', 'http://a/'])).toEqual([
      'crawl: --max-pages: expected an integer >= 1, got -99999999999999999999',
    ]);
  });

  it('crawl status --top', async () => {
    expect(await refused(['status', '--state', 'x.db', '--top', HUGE])).toEqual([`crawl: --top: too large (max 9007199254740991), got ${HUGE}`]);
  });

  it('sizes say "too large" with their maximum', async () => {
    expect(await refused(['--max-body', HUGE, 'http://a/'])).toEqual([`crawl: --max-body: too large (max 9007199254740991 bytes), got "${HUGE}"`]);
  });

  it('config fields: once per field, no rounded digits echoed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-limits-'));
    await writeFile(join(dir, 'c.json'), `{"concurrency": ${HUGE}, "maxPages": 9007199254740993, "defaults": {"concurrency": 5000}}`);
    const lines = await refused(['--config', 'c.json', 'http://a/'], dir);
    expect(lines).toHaveLength(3);
    expect(lines).toContain(`crawl: ${join(dir, 'c.json')}: concurrency: too large (max 1000)`);
    expect(lines).toContain(`crawl: ${join(dir, 'c.json')}: maxPages: too large (max 9007199254740991)`);
    expect(lines).toContain(`crawl: ${join(dir, 'c.json')}: defaults.concurrency: too large (max 1000), got 5000`);
  });
});

describe('URLs with a port out of range say so', () => {
  it('a seed (was "expected an absolute http:// URL")', async () => {
    expect(await refused(['http://127.0.0.1:99999/'])).toEqual(['crawl: invalid seed URL "http://127.0.0.1:99999/": port 99999 is out of range (1-65535)']);
  });

  it('a seeds file line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-limits-'));
    await writeFile(join(dir, 'seeds.txt'), 'http://a.example/\nhttps://[::1]:70000/x\n');
    expect(await refused(['--seeds-file', 'seeds.txt'], dir)).toEqual([
      `crawl: seeds file ${join(dir, 'seeds.txt')}, line 2: invalid seed URL "https://[::1]:70000/x": port 70000 is out of range (1-65535)`,
    ]);
  });

  it('--sitemap', async () => {
    expect(await refused(['--sitemap', 'http://a.example:99999/s.xml'])).toEqual([
      'crawl: --sitemap: port 99999 is out of range (1-65535), got "http://a.example:99999/s.xml"',
    ]);
  });
});

describe('--help', () => {
  it('crawl status --help shows --top\'s default as a number, not "10"', async () => {
    const io = memoryIo(root);
    expect(await main(['status', '--help'], io)).toBe(0);
    expect(io.out()).toMatch(/--top <n> +hosts to list per table \(default 10\)/);
  });

  // Commander fills each description to the width; a description with its own line breaks came out ragged
  // ("one connection" alone on a line, then "per host, …" on the next).
  it.each([[['--help']], [['check', '--help']], [['report', '--help']], [['status', '--help']]])(
    '%j fills every option description: no line ends where the next word would still fit',
    async (argv) => {
      const io = memoryIo(root);
      expect(await main(argv, io)).toBe(0);
      const lines = io.out().split('\n');
      const options = lines.indexOf('Options:');
      expect(options).toBeGreaterThan(0);
      for (let i = options + 2; i < lines.length && lines[i] !== ''; i++) {
        const continued = /^ {10,}(\S+)/.exec(lines[i]);
        if (continued) expect(lines[i - 1].length + 1 + continued[1].length, `${lines[i - 1]}\n${lines[i]}`).toBeGreaterThan(80);
      }
    },
  );
});
