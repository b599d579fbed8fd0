/**
 * Where a crawl writes its files, checked before the first request: a
 * target that cannot be written, two flags naming one file (or a file
 * inside --save-dir), an output that would replace an input, an existing
 * WARC; and a write the machine refuses mid-crawl (exit 4, not an internal
 * error). Judged by exit code, one stderr line, the files left behind and
 * the server's own log (no request at all when the flags are refused).
 */
import { link, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { crawl } from '../../src/api/crawl.js';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

async function site(): Promise<Web> {
  web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 5, linksPerPage: 1 } } } });
  return web;
}

const tempDir = () => mkdtemp(join(tmpdir(), 'crawl-targets-'));

/** Runs the CLI in-process in `cwd`; stderr as lines. */
async function cli(cwd: string, args: string[]): Promise<{ code: number; lines: string[]; out: string }> {
  const io = memoryIo(cwd);
  const code = await main(args, io);
  return {
    code,
    lines: io
      .err()
      .trim()
      .split('\n')
      .filter((l) => l !== ''),
    out: io.out(),
  };
}

/** Is procfs mounted (a place no file can be created, even by root)? */
const hasProc = await stat('/proc/self').then(
  () => true,
  () => false,
);
const hasDevFull = await stat('/dev/full').then(
  () => true,
  () => false,
);

describe('a target that cannot be written (issue 22)', () => {
  beforeAll(requireBuilt);

  it.skipIf(!hasProc)(
    '--save-dir /proc/mirror: one line naming the directory, exit 2, no request, and no endless mkdir loop',
    async () => {
      const w = await site();
      const cwd = await tempDir();
      const run = startCrawl(['-q', '--save-dir', '/proc/mirror', w.url('a.localhost')], cwd);
      // The bug was a spin at 100% CPU that never ended: kill it so the test fails instead of hanging.
      const killer = setTimeout(() => run.child.kill('SIGKILL'), 10_000);
      const done = await run.done;
      clearTimeout(killer);
      expect(done.signal).toBeNull();
      expect(done.code).toBe(2);
      expect(done.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^crawl: cannot write --save-dir \/proc\/mirror: .+/)]);
      expect(w.requests()).toEqual([]);
    },
    20_000,
  );

  for (const [flag, target] of [
    ['--report', '/proc/r.html'],
    ['--stats', '/proc/s.json'],
    ['--warc', '/proc/w.warc.gz'],
    ['-o', '/proc/p.jsonl'],
  ] as const) {
    it.skipIf(!hasProc)(`${flag} ${target}: one line naming it, exit 2, before any request`, async () => {
      const w = await site();
      const cwd = await tempDir();
      const { code, lines } = await cli(cwd, ['-q', flag, target, w.url('a.localhost')]);
      expect(code).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(target);
      expect(lines[0]).not.toMatch(/internal error|directory does not exist/);
      expect(w.requests()).toEqual([]);
    });
  }
});

describe('two outputs, one file (issue 23)', () => {
  const cases: Array<{ name: string; args: string[]; flags: [string, string]; keep?: string }> = [
    { name: '--state X -o X', args: ['--state', 'X', '-o', 'X'], flags: ['--state', '-o'] },
    { name: '-o f --report f', args: ['-o', 'f', '--report', 'f'], flags: ['-o', '--report'] },
    { name: '-o f.warc.gz --warc f.warc.gz', args: ['-o', 'f.warc.gz', '--warc', 'f.warc.gz'], flags: ['-o', '--warc'] },
    { name: '--stats s.json --report ./sub/../s.json', args: ['--stats', 's.json', '--report', './sub/../s.json'], flags: ['--stats', '--report'] },
    { name: '-o inside --save-dir', args: ['--save-dir', 'mirror', '-o', 'mirror/a.localhost/pages.jsonl'], flags: ['-o', '--save-dir'] },
    { name: '--warc inside --save-dir', args: ['--warc', 'mirror/site.warc.gz', '--save-dir', 'mirror'], flags: ['--warc', '--save-dir'] },
    {
      name: '-o over the --cookie-jar it reads',
      args: ['-o', 'cookies.txt', '--cookie-jar', 'cookies.txt'],
      flags: ['-o', '--cookie-jar'],
      keep: 'cookies.txt',
    },
    {
      name: '--report over the --seeds-file it reads',
      args: ['--report', 'seeds.txt', '--seeds-file', 'seeds.txt'],
      flags: ['--report', '--seeds-file'],
      keep: 'seeds.txt',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: one line naming both flags, exit 2, no request`, async () => {
      const w = await site();
      const cwd = await tempDir();
      await mkdir(join(cwd, 'sub'));
      const seed = w.url('a.localhost');
      await writeFile(join(cwd, 'cookies.txt'), '# Netscape HTTP Cookie File\n');
      await writeFile(join(cwd, 'seeds.txt'), `${seed}\n`);
      const { code, lines } = await cli(cwd, ['-q', ...c.args, seed]);
      expect(lines).toHaveLength(1);
      for (const flag of c.flags) expect(lines[0]).toContain(`${flag} `);
      expect(code).toBe(2);
      expect(w.requests()).toEqual([]);
      if (c.keep) expect(await readFile(join(cwd, c.keep), 'utf8')).toMatch(c.keep === 'seeds.txt' ? /^http:/ : /^# Netscape/);
    });
  }

  it('two names for one existing file (a hard link) count as the same file', async () => {
    const w = await site();
    const cwd = await tempDir();
    await writeFile(join(cwd, 'report.html'), 'old report');
    await link(join(cwd, 'report.html'), join(cwd, 'stats.json'));
    const { code, lines } = await cli(cwd, ['-q', '--report', 'report.html', '--stats', 'stats.json', w.url('a.localhost')]);
    expect(code).toBe(2);
    expect(lines).toEqual([expect.stringMatching(/--report report\.html.*--stats stats\.json|--stats stats\.json.*--report report\.html/)]);
    expect(w.requests()).toEqual([]);
  });

  it('crawl(): a warc file inside saveDir is refused at the first pull, before any request', async () => {
    const w = await site();
    const cwd = await tempDir();
    const run = crawl({ seeds: [w.url('a.localhost')], saveDir: join(cwd, 'mirror'), warc: join(cwd, 'mirror', 'x.warc.gz') });
    await expect(run.next()).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/warc .*saveDir/) });
    expect(w.requests()).toEqual([]);
  });
});

describe('an existing WARC file (issue 23)', () => {
  it('--warc existing.warc.gz without --state is refused with a hint, exit 2, the file untouched', async () => {
    const w = await site();
    const cwd = await tempDir();
    await writeFile(join(cwd, 'site.warc.gz'), 'an earlier archive');
    const { code, lines } = await cli(cwd, ['-q', '--warc', 'site.warc.gz', w.url('a.localhost')]);
    expect(code).toBe(2);
    expect(lines).toEqual([expect.stringMatching(/^crawl: --warc site\.warc\.gz already exists.*(remove|another)/)]);
    expect(await readFile(join(cwd, 'site.warc.gz'), 'utf8')).toBe('an earlier archive');
    expect(w.requests()).toEqual([]);
  });
});

describe('the machine refuses a write (issue 23)', () => {
  it.skipIf(!hasDevFull)('-o /dev/full: "the disk is full", exit 4, not an internal error', async () => {
    const w = await site();
    const cwd = await tempDir();
    const { code, lines } = await cli(cwd, ['-q', '-o', '/dev/full', w.url('a.localhost')]);
    expect(lines).toEqual(['crawl: cannot write output to /dev/full: the disk is full']);
    expect(code).toBe(4);
  });
});

describe('crawl report writing over its input (issue 24)', () => {
  it('report pages.jsonl -o pages.jsonl (or ./pages.jsonl) is refused, exit 2, the records untouched', async () => {
    const cwd = await tempDir();
    const records = JSON.stringify({ type: 'page', url: 'http://a.test/', status: 200, depth: 0 }) + '\n';
    await writeFile(join(cwd, 'pages.jsonl'), records);
    for (const out of ['pages.jsonl', './pages.jsonl']) {
      const { code, lines } = await cli(cwd, ['report', 'pages.jsonl', '-o', out]);
      expect(code).toBe(2);
      expect(lines).toEqual([expect.stringMatching(/^crawl: -o .*pages\.jsonl.* is the records file/)]);
      expect(await readFile(join(cwd, 'pages.jsonl'), 'utf8')).toBe(records);
    }
  });

  it('report --state s.db -o s.db is refused, exit 2, the state file untouched', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 's.db'), 'not touched');
    const { code, lines } = await cli(cwd, ['report', '--state', 's.db', '-o', 's.db']);
    expect(code).toBe(2);
    expect(lines).toEqual([expect.stringMatching(/^crawl: -o s\.db is the --state file/)]);
    expect(await readFile(join(cwd, 's.db'), 'utf8')).toBe('not touched');
  });
});
