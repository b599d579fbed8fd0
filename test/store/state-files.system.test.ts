/**
 * A state file is not damaged by the wrong file or a full disk: another
 * application's SQLite database, a JSON-lines file, a damaged or missing
 * file (one line, exit 2, nothing rewritten), and a disk that fills up mid-
 * crawl (exit 4, then a clean resume). Real SQLite files and the real binary.
 * Split from state-safety so the two run in parallel.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

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
const oneLine = (stderr: string) => stderr.trim().split('\n');
const require = createRequire(import.meta.url);

describe('a file that is not a usable state file', () => {
  it("refuses another application's SQLite database and a JSON-lines file, with or without --fresh, leaving them byte for byte as they were", async () => {
    const Driver = require('better-sqlite3');
    const app = new Driver(join(dir, 'app.db'));
    app.pragma('journal_mode = DELETE');
    app.exec("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me')");
    app.close();
    await writeFile(join(dir, 'pages.jsonl'), '{"type":"page","url":"http://a.localhost/","status":200}\n'.repeat(200));
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'one page' } } } });
    const seed = web.url('a.localhost', '/');
    for (const [file, message] of [
      ['app.db', /app\.db is not a crawl state file \(it holds other tables\)/],
      ['pages.jsonl', /pages\.jsonl is not a crawl state file \(not an SQLite database\)/],
    ] as const) {
      const before = await readFile(join(dir, file));
      const mtime = (await stat(join(dir, file))).mtimeMs;
      for (const args of [
        ['--state', file, '-q', seed],
        ['--state', file, '--fresh', '-q', seed],
      ]) {
        const r = await run(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(oneLine(r.stderr)).toHaveLength(1);
        expect(r.stderr).toMatch(message);
        expect(await readFile(join(dir, file)), args.join(' ')).toEqual(before);
        expect((await stat(join(dir, file))).mtimeMs).toBe(mtime);
      }
    }
    expect((await readdir(dir)).sort()).toEqual(['app.db', 'pages.jsonl']); // no -wal, -shm or anything else
    expect(web.requests()).toEqual([]);
  }, 60_000);

  it('says a damaged state file is damaged and how to recover, in crawl, status and report alike (exit 2); --fresh replaces it', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 30, linksPerPage: 2 } } } });
    const seed = web.url('a.localhost', '/');
    const first = await run(['--state', 's.db', '--max-pages', '10', '--rate', '50/s', '-q', seed]);
    expect(first.code, first.stderr).toBe(0);
    // Random bytes over everything after the first page (the header and the table of tables survive).
    const random = seededRandom(23);
    const size = (await stat(join(dir, 's.db'))).size;
    expect(size).toBeGreaterThan(8192);
    const noise = Buffer.from(Array.from({ length: size - 4096 }, () => Math.floor(random() * 256)));
    const fh = await open(join(dir, 's.db'), 'r+');
    await fh.write(noise, 0, noise.length, 4096);
    await fh.close();

    const damaged = /s\.db is damaged \(database disk image is malformed\): start the crawl over with --fresh, which replaces the file, or delete it/;
    for (const args of [
      ['--state', 's.db', '-q', seed],
      ['--state', 's.db', '-q'],
      ['status', '--state', 's.db'],
      ['report', '--state', 's.db', '-o', 'r.html'],
    ]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(damaged);
    }
    expect(existsSync(join(dir, 'r.html'))).toBe(false);

    web.reset();
    const fresh = await run(['--state', 's.db', '--fresh', '--max-pages', '3', '--rate', '50/s', '-o', 'p.jsonl', '-q', seed]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(records(await readFile(join(dir, 'p.jsonl'), 'utf8')).filter((r) => r.status === 200)).toHaveLength(3);
    const status = await run(['status', '--state', 's.db', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ doneTotal: 3 });
  }, 60_000);

  it('says a missing state file does not exist, and points a state file given as records to --state', async () => {
    for (const args of [
      ['status', '--state', 'nope.db'],
      ['report', '--state', 'nope.db'],
    ]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)).toHaveLength(1);
      expect(r.stderr).toMatch(/nope\.db does not exist/);
    }
    expect(existsSync(join(dir, 'nope.db'))).toBe(false);
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'one page' } } } });
    expect((await run(['--state', 's1.db', '-q', web.url('a.localhost', '/')])).code).toBe(0);
    const r = await run(['report', 's1.db']);
    expect(r.code, r.stderr).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/s1\.db is a crawl state file; use crawl report --state s1\.db/);
  }, 60_000);
});

describe('a full disk under --state', () => {
  const PAGES = 1500;
  it('stops with one line and exit 4, then the same command resumes once there is room: every page once, nothing written twice', async () => {
    const small = join(dir, 'small');
    await mkdir(small);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', small], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      console.warn(`skipped: a small tmpfs could not be mounted (${mounted.stderr.trim() || mounted.error?.message}); this test needs root`);
      return;
    }
    try {
      // Enough pages that the state outgrows the disk however its commits are batched (400 did not
      // always: under load fewer, larger commits kept the write-ahead log small). The free-space
      // check runs at every commit, so it stops the crawl before SQLite's own SQLITE_FULL would.
      web = await startWeb({ sites: { 'a.localhost': { generate: { pages: PAGES, linksPerPage: 3 } } } });
      const seed = web.url('a.localhost', '/');
      const args = ['--state', 'small/s.db', '-o', 'pages.jsonl', '--rate', 'unlimited', '--host-concurrency', '4', '-q', seed];
      const full = await run(args);
      const firstRunEnded = performance.timeOrigin + performance.now();
      expect(full.code, full.stderr).toBe(4);
      expect(oneLine(full.stderr)).toEqual([
        expect.stringMatching(
          /^crawl: cannot write state file .*small\/s\.db: the disk is full \(less than 1 MiB left\); run the same command again once there is room$/,
        ),
      ]);
      expect(web.requests().length).toBeLessThan(PAGES + 1); // it stopped before the end
      expect(existsSync(join(dir, 'pages.jsonl.partial'))).toBe(true); // and its output says it is incomplete

      expect(spawnSync('mount', ['-o', 'remount,size=64m', small]).status).toBe(0);
      const resumed = await run(args);
      expect(resumed.code, resumed.stderr).toBe(0);
      const out = records(await readFile(join(dir, 'pages.jsonl'), 'utf8'));
      const urls = out.filter((r) => r.status === 200).map((r) => r.url);
      // On a failure, say which pages lack a record and what else the output holds for them.
      const fetched = new Set(web.requests().map((e) => e.path));
      const recorded = new Set(urls.map((u) => new URL(u).pathname));
      const lacking = [...fetched].filter((p) => p !== '/robots.txt' && !recorded.has(p));
      // For each, when the server saw it asked (which run) and what the state file says of it.
      const inState = (path: string) => {
        const Driver = createRequire(import.meta.url)('better-sqlite3');
        const db = new Driver(join(small, 's.db'), { readonly: true });
        try {
          return db.prepare('SELECT state, outcome, done_at FROM urls WHERE url = ?').get(web!.url('a.localhost', path)) as unknown;
        } finally {
          db.close();
        }
      };
      const asked = (path: string) =>
        web!
          .requests('a.localhost')
          .filter((e) => e.path === path)
          .map((e) => (e.at < firstRunEnded ? 'run 1' : 'run 2'));
      const lost = lacking.slice(0, 5).map((p) => ({ path: p, asked: asked(p), state: inState(p) }));
      const files = (await readdir(dir)).filter((f) => f.startsWith('pages.jsonl'));
      const why =
        `pages without a 200 record: ${JSON.stringify(lost)}; other records: ${JSON.stringify(out.filter((r) => r.status !== 200).slice(0, 5))}; ` +
        `output files: ${JSON.stringify(files)}; first run said: ${JSON.stringify(full.stderr)}; the resumed run said: ${JSON.stringify(resumed.stderr)}`;
      expect(new Set(urls).size, why).toBe(PAGES + 1);
      expect(urls).toHaveLength(PAGES + 1); // no record written twice
      const status = JSON.parse((await run(['status', '--state', 'small/s.db', '--json'])).stdout);
      expect(status).toMatchObject({ finished: true, doneTotal: PAGES + 1 });
    } finally {
      spawnSync('umount', ['-l', small]);
    }
  }, 60_000);

  it('a commit the full disk refuses: every store call after it rejects with one IO_FAILED error (never thrown into a timer), and close does not throw it again', async () => {
    const small = join(dir, 'tiny');
    await mkdir(small);
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', small]).status !== 0) {
      console.warn('skipped: a small tmpfs could not be mounted; this test needs root');
      return;
    }
    try {
      // The store commits when 50 ms have passed since its last commit; on a fast machine 5,000 adds fit in
      // one interval, stay in the page cache and never reach the disk (Node 24 in CI). A clock that moves
      // 60 ms a call makes every add commit, so the full disk is met within the first few dozen.
      let t = Date.now();
      const store = new SqliteStore(join(small, 's.db'), { now: () => (t += 60) });
      await store.open({ seeds: ['http://a.test/'], configFingerprint: 'f' });
      let answer: unknown;
      for (let i = 0; i < 5_000 && !(answer instanceof Promise); i++)
        answer = store.add(`http://a.test/${'x'.repeat(200)}/${i}`, 'a.test', { url: `http://a.test/${i}`, depth: 1, parent: null, hops: 0, attempt: 0 });
      expect(answer).toBeInstanceOf(Promise);
      const err = await (answer as Promise<unknown>).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'IO_FAILED',
        message: expect.stringMatching(/^cannot write state file .*tiny\/s\.db: the disk is full \(SQLITE_FULL\)/),
      });
      await expect(store.complete({ id: 1, key: 'a.test', entry: { url: 'http://a.test/', depth: 0, parent: null, hops: 0, attempt: 0 } })).rejects.toBe(err);
      expect(() => store.close()).not.toThrow();
    } finally {
      spawnSync('umount', ['-l', small]);
    }
  }, 60_000);
});
