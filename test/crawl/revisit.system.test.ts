/**
 * `crawl --state FILE --revisit` as a user runs it: the real binary, a real
 * SQLite file, a local web with a page that changes at every request and
 * pages that never do (strong ETags). The crawl keeps asking, conditionally
 * for the static pages (304s at the server), ends only at --max-time (exit
 * 0, records in FILE.partial: the crawl is never done) and goes on where it stopped; `crawl status` says what is due when;
 * `kill -9` at random moments loses no visit's record and reports none twice.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';

let web: Web | undefined;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-revisit-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

interface Rec {
  type: string;
  url: string;
  status: number | null;
  change?: string;
  fetchedAt: string;
}

const STATIC = 6;

async function revisitWeb(): Promise<Web> {
  let version = 0;
  const links = ['<a href="/live">live</a>', ...Array.from({ length: STATIC }, (_, i) => `<a href="/s/${i}">s${i}</a>`)].join(' ');
  return startWeb({
    sites: {
      'r.localhost': {
        pages: {
          '/': { body: `<title>home</title>${links}`, etag: '"home"' },
          ...Object.fromEntries(Array.from({ length: STATIC }, (_, i) => [`/s/${i}`, { body: `<title>s${i}</title><p>static</p>`, etag: `"s${i}"` }])),
        },
        handler: (_req, _res, ctx) => ctx.send({ body: `<title>live</title><p>version ${++version}</p>` }),
      },
    },
  });
}

/**
 * What the server saw of a revisiting crawl of revisitWeb: the live page, changing every time, kept at the
 * 1 s floor; the static ones backing off 1.5× to 3 s; every revisit of a static page with its ETag, a 304.
 * Answers the server's requests for a path.
 */
function expectRevisited(w: Web): (path: string) => ReturnType<Web['requests']> {
  const asked = (path: string) => w.requests().filter((r) => r.path === path);
  expect(asked('/live').length).toBeGreaterThanOrEqual(5);
  expect(asked('/s/0').length).toBeGreaterThanOrEqual(2);
  expect(asked('/s/0').length).toBeLessThan(asked('/live').length);
  const again = w.requests().filter((r) => r.path.startsWith('/s/') && r.headers['if-none-match'] !== undefined);
  expect(again.length).toBeGreaterThanOrEqual(STATIC);
  expect(again.every((r) => r.status === 304)).toBe(true);
  return asked;
}

/** Every revisit of a static page (records in visit order) says unchanged, a 304. */
function expectStaticUnchanged(out: Rec[]): void {
  expect(
    out
      .filter((r) => r.url.endsWith('/s/0'))
      .slice(1)
      .every((r) => r.change === 'unchanged' && r.status === 304),
  ).toBe(true);
}

const revisitArgs = (w: Web, maxTime: string) => [
  '--state',
  'revisit.db',
  '--revisit',
  '--revisit-min',
  '1s',
  '--revisit-max',
  '3s',
  '--rate',
  '20/s',
  '--max-time',
  maxTime,
  '-o',
  'visits.jsonl',
  '-q',
  w.url('r.localhost', '/'),
];

describe('crawl --state FILE --revisit', () => {
  it('asks changed pages again sooner than static ones, conditionally, until --max-time; status says what is due', async () => {
    web = await revisitWeb();
    const run = await startCrawl(revisitArgs(web, '7s'), tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    expectRevisited(web);
    const out = jsonLines<Rec>(await readFile(join(tmp.path, 'visits.jsonl.partial'), 'utf8')).filter((r) => r.type === 'page');
    expect(
      out
        .filter((r) => r.url.endsWith('/live'))
        .slice(1)
        .every((r) => r.change === 'changed'),
    ).toBe(true);
    expectStaticUnchanged(out);

    const status = await startCrawl(['status', '--state', 'revisit.db'], tmp.path).done;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`revisits: ${STATIC + 2} page\\(s\\) waiting; next due \\d{4}-\\d\\d-\\d\\dT[^,]+, ${STATIC + 2} within the hour`),
    );
    expect(status.stdout).toMatch(/done: {5}8 /);
  }, 60_000);

  it('killed with kill -9 at random moments, then resumed: every visit recorded once', async () => {
    web = await revisitWeb();
    const random = seededRandom(11);
    let kills = 0;
    for (let i = 0; i < 4; i++) {
      const { child, done } = startCrawl(revisitArgs(web, '30s'), tmp.path);
      const before = web.requests().length;
      const deadline = Date.now() + 20_000;
      while (web.requests().length < before + 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 200 + random() * 1500));
      child.kill('SIGKILL');
      await done;
      kills++;
    }
    const last = await startCrawl(revisitArgs(web, '3s'), tmp.path).done;
    expect(last.code, last.stderr).toBe(0);
    expect(kills).toBe(4);
    const out = jsonLines<Rec>(await readFile(join(tmp.path, 'visits.jsonl.partial'), 'utf8')).filter((r) => r.type === 'page');
    // A visit reported twice would show as two records of a URL closer together than the 1 s revisit floor
    // (the resumed crawl asks a page whose record was kept again at once).
    for (const url of new Set(out.map((r) => r.url))) {
      const times = out
        .filter((r) => r.url === url)
        .map((r) => Date.parse(r.fetchedAt))
        .sort((a, b) => a - b);
      const close = times.slice(1).filter((t, i) => t - times[i] < 900);
      expect(close, url).toEqual([]);
    }
    // Every page reached has records, and the live page was visited across the runs.
    expect(new Set(out.map((r) => new URL(r.url).pathname))).toEqual(new Set(['/', '/live', ...Array.from({ length: STATIC }, (_, i) => `/s/${i}`)]));
    expect(out.filter((r) => r.url.endsWith('/live')).length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});

describe.skipIf(redisServerMissing)('crawl --redis URL --revisit: two workers', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('share one revisit schedule: each visit made once, changed pages asked sooner, static ones with their ETag', async () => {
    web = await revisitWeb();
    const worker = (i: number) =>
      startCrawl(
        [
          '--redis',
          redis!.url,
          '--crawl-id',
          'watch',
          '--worker',
          `w${i}`,
          ...revisitArgs(web!, '7s').filter((a) => a !== '--state' && a !== 'revisit.db' && a !== 'visits.jsonl' && a !== '-o'),
          '-o',
          `w${i}.jsonl`,
        ],
        tmp.path,
      ).done;
    const runs = await Promise.all([worker(0), worker(1)]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const asked = expectRevisited(web);
    // One schedule for both: no page asked twice within the 1 s revisit floor (two workers each scheduling it would).
    for (const path of new Set(web.requests().map((r) => r.path))) {
      if (path === '/robots.txt') continue;
      const times = asked(path)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(
        times.slice(1).filter((t, i) => t - times[i] < 900),
        path,
      ).toEqual([]);
    }
    // Both workers' records, in the order the visits were made.
    const out = [0, 1]
      .flatMap((i) => jsonLines<Rec>(readFileSync(join(tmp.path, `w${i}.jsonl.partial`), 'utf8')))
      .filter((r) => r.type === 'page')
      .sort((a, b) => Date.parse(a.fetchedAt) - Date.parse(b.fetchedAt));
    expect(out.filter((r) => r.url.endsWith('/live')).length).toBe(asked('/live').length);
    expectStaticUnchanged(out);
  }, 60_000);
});
