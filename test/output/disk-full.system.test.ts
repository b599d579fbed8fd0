/**
 * A disk that fills up mid-crawl (issue 21), on a real small tmpfs: the
 * crawl stops at once (the server's log shows no page fetched for nobody),
 * says which file and that the disk is full, exits 4; with --state the same
 * command, run again once there is room, finishes the crawl with every
 * page's record exactly once. Needs root to mount; CI runs as root.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import type { PageRecord } from '../../src/types.js';
import { memoryIo } from '../support/memory-io.js';

const run = promisify(execFile);

/** Pages /p/0 … /p/{PAGES-1}, each about 6 KB of text linking to the next two: thirty fit in 256 KiB, not beside the filler. */
const PAGES = 30;
const FILLER = 'lorem ipsum dolor sit amet '.repeat(220);

let mnt = '';
let mountProblem: string | undefined;
beforeAll(async () => {
  mnt = await mkdtemp(join(tmpdir(), 'crawl-full-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]);
  } catch (err) {
    mountProblem = `cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]}): needs root, as in CI`;
  }
});
afterAll(async () => {
  if (!mountProblem) await run('umount', [mnt]).catch(() => {});
  await rm(mnt, { recursive: true, force: true }).catch(() => {});
});

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
  if (!mountProblem)
    for (const name of ['pages.jsonl', 'pages.jsonl.partial', 'pages.jsonl.torn', 'filler', 'mirror', 'report.html', 'report.html.partial'])
      await rm(join(mnt, name), { recursive: true, force: true });
});

async function site(): Promise<Web> {
  web = await startWeb({
    sites: {
      'a.localhost': {
        robots: null,
        handler: (_req, _res, ctx) => {
          const m = /^\/p\/(\d+)$/.exec(ctx.path);
          const n = ctx.path === '/' ? -1 : m ? Number(m[1]) : NaN;
          if (!(n >= -1 && n < PAGES)) return false;
          const links = [n + 1, 2 * n + 2].filter((k) => k >= 0 && k < PAGES).map((k) => `<a href="/p/${k}">${k}</a>`);
          return ctx.send({ body: `<title>${n}</title><p>${FILLER}</p>${links.join(' ')}` });
        },
      },
    },
  });
  return web;
}

async function cli(cwd: string, args: string[]): Promise<{ code: number; lines: string[] }> {
  const io = memoryIo(cwd);
  const code = await main(args, io);
  return {
    code,
    lines: io
      .err()
      .trim()
      .split('\n')
      .filter((l) => l !== ''),
  };
}

const pagePaths = (log: ReturnType<Web['requests']>) => log.map((r) => r.path).filter((p) => p !== '/robots.txt');

describe('the disk fills up mid-crawl (issue 21)', () => {
  it('-o: stops at once, "the disk is full", exit 4; with --state the same command finishes once there is room, each record once', async (t) => {
    if (mountProblem) return t.skip(mountProblem);
    const w = await site();
    const work = await mkdtemp(join(tmpdir(), 'crawl-full-state-'));
    // Leave about 60 KiB: room for some records, not for all of them.
    await writeFile(join(mnt, 'filler'), Buffer.alloc(196 * 1024));
    const args = ['-q', '--rate', 'unlimited', '--content', 'text', '--state', join(work, 's.db'), '-o', join(mnt, 'pages.jsonl'), w.url('a.localhost')];

    const first = await cli(work, args);
    expect(first.lines).toEqual([`crawl: cannot write output to ${join(mnt, 'pages.jsonl')}: the disk is full`]);
    expect(first.code).toBe(4);
    const fetched = pagePaths(w.requests()).length;
    // It stopped: far from every page, and no more than the requests in flight after the failure.
    expect(fetched).toBeLessThan(PAGES / 2);

    await rm(join(mnt, 'filler'));
    const second = await cli(work, args);
    expect(second.lines).toEqual([]);
    expect(second.code).toBe(0);
    const records = (await readFile(join(mnt, 'pages.jsonl'), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as PageRecord);
    const urls = records.filter((r) => r.type === 'page').map((r) => new URL(r.url).pathname);
    expect(urls.length).toBe(new Set(urls).size); // nothing reported twice
    expect(new Set(urls)).toEqual(new Set(['/', ...Array.from({ length: PAGES }, (_, i) => `/p/${i}`)])); // nothing lost
  }, 60_000);

  it('--save-dir: stops at once, names the directory and says the disk is full, exit 4', async (t) => {
    if (mountProblem) return t.skip(mountProblem);
    const w = await site();
    const work = await mkdtemp(join(tmpdir(), 'crawl-full-save-'));
    await writeFile(join(mnt, 'filler'), Buffer.alloc(196 * 1024));
    const { code, lines } = await cli(work, ['-q', '--rate', 'unlimited', '--save-dir', join(mnt, 'mirror'), w.url('a.localhost')]);
    expect(lines).toEqual([`crawl: cannot write --save-dir ${join(mnt, 'mirror')}: the disk is full`]);
    expect(code).toBe(4);
    expect(pagePaths(w.requests()).length).toBeLessThan(PAGES / 2);
  }, 60_000);

  it('--report: a report the disk has no room for is exit 4 with one line naming it; with --state, how to write it later', async (t) => {
    if (mountProblem) return t.skip(mountProblem);
    const w = await site();
    const work = await mkdtemp(join(tmpdir(), 'crawl-full-report-'));
    // Room for a few KB, not for the report (its inlined script alone is more).
    await writeFile(join(mnt, 'filler'), Buffer.alloc(240 * 1024));
    const report = join(mnt, 'report.html');
    const { code, lines } = await cli(work, ['-q', '--rate', 'unlimited', '--state', 's.db', '--report', report, w.url('a.localhost')]);
    expect(lines).toEqual([
      `crawl: cannot write --report ${report}: the disk is full (its records are kept in s.db: crawl report --state s.db -o ${report} writes the report once there is room)`,
    ]);
    expect(code).toBe(4);
    expect(pagePaths(w.requests()).length).toBe(PAGES + 1); // the crawl itself was whole
    await rm(join(mnt, 'filler'));
    const later = await cli(work, ['report', '-q', '--state', 's.db', '-o', report]);
    expect(later.code).toBe(0);
    expect(await readFile(report, 'utf8')).toMatch(/^<!doctype html>/i);
    await rm(report);
  }, 60_000);

  it('--warc: stops at once, names the file and says the disk is full, exit 4', async (t) => {
    if (mountProblem) return t.skip(mountProblem);
    const w = await site();
    const work = await mkdtemp(join(tmpdir(), 'crawl-full-warc-'));
    // Each page compresses well: leave less room.
    await writeFile(join(mnt, 'filler'), Buffer.alloc(248 * 1024));
    const { code, lines } = await cli(work, ['-q', '--rate', 'unlimited', '--warc', join(mnt, 'site.warc.gz'), w.url('a.localhost')]);
    await rm(join(mnt, 'site.warc.gz.partial'), { force: true });
    expect(lines).toEqual([`crawl: cannot write --warc ${join(mnt, 'site.warc.gz')}: the disk is full`]);
    expect(code).toBe(4);
    expect(pagePaths(w.requests()).length).toBeLessThan(PAGES);
  }, 60_000);
});
