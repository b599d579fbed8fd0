/**
 * A state file is not damaged by the wrong command while a crawl holds it: a
 * second crawl or `--fresh` against a live one, a resume after kill -9 (even
 * while the killed process is a zombie), a clean stop that keeps the links
 * of pages finishing meanwhile. Real SQLite files and the real binary, killed
 * for real; politeness and completeness judged from the server's own log.
 * (Files that are not ours, damaged files and a full disk: state-files.)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { duplicates, startWeb, type Web } from '../../fixtures/web.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

const bin = fileURLToPath(new URL('../../bin/crawl.js', import.meta.url));
let web: Web | undefined;
let dir = '';
beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-state-safety-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

const start = (args: string[]) => startCrawl(args, dir);
const run = (args: string[]) => start(args).done;
const records = (text: string) => jsonLines<{ url: string; status: number | null; type: string }>(text);
const until = async (cond: () => boolean, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const oneLine = (stderr: string) => stderr.trim().split('\n');

describe('a state file one crawl holds', () => {
  it('refuses a second crawl and --fresh while a crawl runs (naming its process); the crawl finishes unharmed; status and report still read it', async () => {
    // /p/3 answers only once the checks below are done: the crawl is surely still running during them.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    web = await startWeb({
      sites: {
        'a.localhost': {
          generate: { pages: 60, linksPerPage: 2 },
          handler: async (_req, _res, ctx): Promise<false> => {
            if (ctx.path === '/p/3') await held;
            return false;
          },
        },
      },
    });
    const seed = web.url('a.localhost', '/');
    const live = start(['--state', 's.db', '-o', 'a.jsonl', '--rate', '20/s', seed]);
    await until(() => web!.requests().some((r) => r.path === '/p/3'), 'the crawl to be fetching', 30_000);
    const pid = live.child.pid!;

    const second = await run(['--state', 's.db', '-o', 'b.jsonl', '-q', seed]);
    expect(second.code, second.stderr).toBe(2);
    expect(oneLine(second.stderr)).toHaveLength(1);
    expect(second.stderr).toMatch(new RegExp(`s\\.db is in use by a running crawl \\(process ${pid}\\)`));

    const fresh = await run(['--state', 's.db', '--fresh', '--max-pages', '5', '-q', seed]);
    expect(fresh.code, fresh.stderr).toBe(2);
    expect(oneLine(fresh.stderr)).toHaveLength(1);
    expect(fresh.stderr).toMatch(new RegExp(`s\\.db is in use by a running crawl \\(process ${pid}\\)`));

    // Read-only commands work while it runs.
    const status = await run(['status', '--state', 's.db', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ heldBy: pid, finished: false });
    const report = await run(['report', '--state', 's.db', '-o', 'r.html', '-q']);
    expect(report.code, report.stderr).toBe(0);

    release();
    const done = await live.done;
    expect(done.stderr).not.toMatch(/SqliteError|locked|\n\s+at /);
    expect(done.code, done.stderr).toBe(0);
    const out = records(await readFile(join(dir, 'a.jsonl'), 'utf8'));
    expect(out.filter((r) => r.status === 200)).toHaveLength(61);
    expect(out.filter((r) => r.type !== 'page')).toEqual([]);
    expect(duplicates(web.requests())).toEqual([]);
    const after = JSON.parse((await run(['status', '--state', 's.db', '--json'])).stdout);
    expect(after).toMatchObject({ heldBy: null, finished: true, doneTotal: 61, done: { '200': 61 } });
  }, 60_000);

  it('resumes at once after kill -9, even while the killed process is a zombie (its pid still answers kill 0)', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 30, linksPerPage: 2 } } } });
    const seed = web.url('a.localhost', '/');
    // `exec sleep` leaves the crawl with a parent that never reaps it: killed, it stays a zombie.
    const sh = spawn('sh', ['-c', `"${process.execPath}" "${bin}" --state s.db -o a.jsonl --rate 10/s -q "${seed}" 2>/dev/null & echo $!; exec sleep 60`], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      let text = '';
      sh.stdout.on('data', (c: Buffer) => (text += c.toString()));
      await until(() => text.includes('\n'), "the crawl's pid");
      const pid = Number(text.trim());
      await until(() => web!.requests().length >= 4, 'the crawl to be fetching');
      process.kill(pid, 'SIGKILL');
      await until(() => /\) Z /.test(readProcStat(pid)), 'the killed crawl to be a zombie', 5_000);
      expect(() => process.kill(pid, 0)).not.toThrow(); // what the old check trusted

      const resumed = await run(['--state', 's.db', '-o', 'a.jsonl', '--rate', '10/s']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/resuming the crawl in s\.db/);
      const out = records(await readFile(join(dir, 'a.jsonl'), 'utf8'));
      expect(new Set(out.filter((r) => r.status === 200).map((r) => r.url)).size).toBe(31);
    } finally {
      sh.kill('SIGKILL');
    }
  }, 60_000);
});

function readProcStat(pid: number): string {
  try {
    return require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string;
  } catch {
    return '';
  }
}
const require = createRequire(import.meta.url);

describe('a clean stop', () => {
  it('keeps the links of pages that finish while stopping: a resumed crawl still reaches every page (a chain of pages)', async () => {
    // One link a page (the next): a page whose links were dropped ends the crawl there. Each answer takes 300 ms, so one is in flight at the stop.
    web = await startWeb({ sites: { 'a.localhost': { robots: null, delayMs: 300, generate: { pages: 12, linksPerPage: 1 } } } });
    const args = ['--state', 's.db', '-o', 'pages.jsonl', '--rate', 'unlimited', '-q'];
    const { child, done } = start([...args, web.url('a.localhost', '/')]);
    await until(() => web!.requests().filter((r) => r.path.startsWith('/p/')).length >= 3 && web!.requests().at(-1)!.status === null, 'a page in flight');
    child.kill('SIGINT');
    expect((await done).code).toBe(130);
    const resumed = await run(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    const out = records(await readFile(join(dir, 'pages.jsonl'), 'utf8'));
    expect(out.map((r) => r.url).sort()).toEqual(
      [web.url('a.localhost', '/'), ...Array.from({ length: 12 }, (_, i) => web!.url('a.localhost', `/p/${i}`))].sort(),
    );
  }, 60_000);
});
