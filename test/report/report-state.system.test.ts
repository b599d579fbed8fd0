/**
 * A report from a `--state` file: the record log the stores keep
 * (`recordLog`), what the crawl command routes into it (and robots.txt
 * records to stdout only with --emit-robots), and `crawl report --state`.
 * Crawls run in-process through main() against fixtures/web.js servers.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { RecordLog } from '../../src/store/crawl-store.js';
import { keptRecord } from '../../src/report/kept-record.js';
import { memoryIo } from '../support/memory-io.js';

let dir: string;
let web: Web | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-report-state-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const META = { seeds: ['http://a.test/'], configFingerprint: 'f' };

async function readAll(log: RecordLog): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const r of log.read()) out.push(r);
  return out;
}

/** The JSON the report's charts are drawn from. */
function chartData(html: string): { charts: Array<{ host: string; robots: unknown[]; pauses: unknown[] }> } {
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  return JSON.parse(m![1].replace(/\\u003c/g, '<'));
}

describe('the record log', () => {
  it("SQLite: kept with the store's commits, read back in order by another process, in batches", async () => {
    const path = join(dir, 'log.db');
    const store = new SqliteStore(path);
    await store.open(META);
    const log = store.recordLog();
    for (let i = 0; i < 4500; i++) await log.append({ type: 'page', url: `http://a.test/${i}`, n: i });
    store.close();
    const reader = new SqliteStore(path, { readOnly: true });
    const back = (await readAll(reader.recordLog())) as Array<{ n: number }>;
    reader.close();
    expect(back).toHaveLength(4500);
    expect(back.every((r, i) => r.n === i)).toBe(true);
  });

  it('SQLite: a new crawl in the file starts an empty log; --fresh drops it', async () => {
    const path = join(dir, 'fresh.db');
    let store = new SqliteStore(path);
    await store.open(META);
    await store.recordLog().append({ type: 'page', url: 'http://a.test/old' });
    store.close();
    store = new SqliteStore(path, { fresh: true });
    await store.open(META);
    await store.recordLog().append({ type: 'page', url: 'http://a.test/new' });
    store.close();
    const reader = new SqliteStore(path, { readOnly: true });
    expect(await readAll(reader.recordLog())).toEqual([{ type: 'page', url: 'http://a.test/new' }]);
    reader.close();
  });

  it('SQLite: read-only opening writes nothing and refuses what is not a state file', async () => {
    expect(() => new SqliteStore(join(dir, 'missing.db'), { readOnly: true })).toThrow(/missing\.db does not exist/);
    await writeFile(join(dir, 'text.db'), 'hello, this is not a database at all, but long enough to be read as one\n'.repeat(20));
    expect(() => new SqliteStore(join(dir, 'text.db'), { readOnly: true })).toThrow(/not a crawl state file/);
  });

  it('memory: keeps copies, in order', async () => {
    const store = new MemoryStore();
    const log = store.recordLog();
    const rec = { type: 'page', url: 'http://a.test/', list: [1] };
    await log.append(rec);
    rec.list.push(2);
    await log.append({ type: 'skipped', url: 'http://a.test/x' });
    expect(await readAll(store.recordLog())).toEqual([
      { type: 'page', url: 'http://a.test/', list: [1] },
      { type: 'skipped', url: 'http://a.test/x' },
    ]);
  });

  it('keeps only the fields the report reads', () => {
    const page = {
      type: 'page' as const,
      url: 'http://a.test/',
      host: 'a.test',
      status: 200,
      depth: 0,
      parent: null,
      contentType: 'text/html',
      bytes: 10,
      title: 'T',
      links: 3,
      linkList: ['http://a.test/x'],
      fetchedAt: '2026-01-01T00:00:00.000Z',
      startedAt: '2026-01-01T00:00:00.001Z',
      elapsedMs: 2,
      attempts: 2,
      attemptStarts: ['2026-01-01T00:00:00.000Z'],
    };
    expect(keptRecord(page)).toEqual({
      type: 'page',
      url: 'http://a.test/',
      host: 'a.test',
      status: 200,
      bytes: 10,
      startedAt: '2026-01-01T00:00:00.001Z',
      elapsedMs: 2,
      attempts: 2,
      attemptStarts: ['2026-01-01T00:00:00.000Z'],
    });
    const { startedAt: _, ...untimed } = page;
    expect(keptRecord(untimed)).toMatchObject({ fetchedAt: '2026-01-01T00:00:00.000Z' });
    // A failure keeps the page it was found on, for the failures table.
    expect(keptRecord({ ...page, status: 404, parent: 'http://a.test/from' })).toMatchObject({ status: 404, parent: 'http://a.test/from' });
    // A skip keeps the page it was found on: a resume after a crash drops the skips of a page fetched again.
    expect(keptRecord({ type: 'skipped', url: 'http://a.test/p', reason: 'robots', depth: 1, parent: 'http://a.test/' })).toEqual({
      type: 'skipped',
      url: 'http://a.test/p',
      reason: 'robots',
      parent: 'http://a.test/',
    });
  });
});

describe('crawl report --state', () => {
  const site = () => ({
    'a.localhost': { generate: { pages: 6, linksPerPage: 2 }, robots: 'User-agent: *\nDisallow: /private\n', pages: { '/gone': { status: 404 } } },
  });

  it('writes the same report from the state file as from the records, robots.txt requests included', async () => {
    web = await startWeb({ sites: site() });
    const io = memoryIo(dir);
    expect(
      await main(['--rate', '100/s', '-q', '--state', 'crawl.db', '-o', 'pages.jsonl', web.url('a.localhost', '/'), web.url('a.localhost', '/gone')], io),
    ).toBe(0);
    const lines = (await readFile(join(dir, 'pages.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines).toHaveLength(8);
    expect(lines.some((r) => r.type === 'robots')).toBe(false); // not without --emit-robots

    const fromState = memoryIo(dir);
    expect(await main(['report', '--state', 'crawl.db', '-o', 'state.html'], fromState)).toBe(0);
    expect(fromState.err()).toMatch(/^crawl: wrote state\.html \(.+\) from 9 records\n$/); // 8 pages and 1 robots.txt request
    const html = await readFile(join(dir, 'state.html'), 'utf8');
    expect(html).toContain('<title>Crawl report: crawl.db</title>');
    expect(html).toContain('+1 robots.txt');
    const data = chartData(html);
    expect(data.charts.map((c) => c.host)).toEqual([`a.localhost:${web.port}`]);
    expect(data.charts[0].robots).toEqual([[0, 200]]); // the first request of the crawl
    expect(await main(['report', 'pages.jsonl', '-o', 'file.html', '-q'], memoryIo(dir))).toBe(0);
    const fromFile = await readFile(join(dir, 'file.html'), 'utf8');
    // The records file lacks the robots.txt request; otherwise the same tables.
    const table = (h: string) => /<section id="outcomes">[\s\S]*?<\/section>/.exec(h)![0];
    expect(table(html)).toBe(table(fromFile));
  });

  it('--emit-robots writes robots.txt records to the output too', async () => {
    web = await startWeb({ sites: site() });
    const io = memoryIo(dir);
    expect(await main(['--rate', '100/s', '-q', '--emit-robots', web.url('a.localhost', '/')], io)).toBe(0);
    const records = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({
      type: 'robots',
      url: `${web.origin('a.localhost')}/robots.txt`,
      host: `a.localhost:${web.port}`,
      status: 200,
      bytes: 33,
    });
    expect(records.filter((r) => r.type === 'robots')).toHaveLength(1);
    // And `crawl report` reads such a file, robots.txt record first.
    await writeFile(join(dir, 'with-robots.jsonl'), io.out());
    const rep = memoryIo(dir);
    expect(await main(['report', 'with-robots.jsonl', '-o', 'with-robots.html'], rep)).toBe(0);
    expect(rep.err()).toMatch(/from 8 records/);
  });

  it.each([
    [['report'], 'no records to report on: give a records file (crawl report pages.jsonl) or --state FILE'],
    [['report', 'pages.jsonl', '--state', 'crawl.db'], 'give a records file or --state FILE, not both'],
    [['report', '--state', 'nope.db'], /nope\.db does not exist: no crawl has been kept in it$/],
  ])('%j: one line, exit 2', async (argv, message) => {
    const io = memoryIo(dir);
    expect(await main(argv, io)).toBe(2);
    const lines = io.err().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0].replace(/^crawl: /, '')).toMatch(typeof message === 'string' ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message);
  });

  it("says so when the state file's crawl kept no records (started by an older version)", async () => {
    const path = join(dir, 'old.db');
    const store = new SqliteStore(path);
    await store.open(META);
    store.close();
    const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Driver(path);
    db.exec("DELETE FROM meta WHERE key = 'records_for'; DROP TABLE records;");
    db.close();
    const io = memoryIo(dir);
    expect(await main(['report', '--state', 'old.db', '-o', 'old.html'], io)).toBe(2);
    expect(io.err()).toBe(`crawl: ${path} holds no records for a report: its crawl was started by an older version, which did not keep them\n`);
  });
});
