/**
 * `-o` with `--state` across `kill -9`: every page's record exactly once.
 * A record is confirmed before its URL is completed in the state file, which
 * commits every 50 ms; before the output ledger, a kill in between left
 * records whose pages the resumed crawl fetched and wrote again. The real
 * binary, a real SQLite file, killed at random moments (seeded) while it
 * crawls a local web as fast as it can.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, killAtRandom, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
/** Pages per host. */
const PAGES = 2_000;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-output-crash-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe('-o after kill -9 with --state', () => {
  it('holds every page once, however often the crawl was killed', async () => {
    const hosts = ['a.localhost', 'b.localhost'];
    // Big enough, and each answer 4 ms late (at most 4,000 pages/s with 16 in flight), that no run finishes
    // before its kill on a fast machine: 600 pages served instantly once let a run end first (Node 24, quiet).
    web = await startWeb({ sites: Object.fromEntries(hosts.map((h) => [h, { delayMs: 4, generate: { pages: PAGES, linksPerPage: 4 } }])) });
    const args = [
      '--state',
      'crawl.db',
      '-o',
      'pages.jsonl',
      '--emit-skipped',
      '--max-depth',
      '1000',
      '--rate',
      'unlimited',
      '--host-concurrency',
      '8',
      '-q',
      ...hosts.map((h) => web!.url(h, '/')),
    ];
    // Killed once pages are flowing, at a random moment after that.
    const kills = await killAtRandom(args, tmp.path, web, { runs: 6, after: 50, maxDelayMs: 200, random: seededRandom(7) });
    expect(kills).toBeGreaterThanOrEqual(3);
    const last = await startCrawl(args, tmp.path).done;
    expect(last.code, last.stderr).toBe(0);

    const out = jsonLines<{ type: string; url: string; status: number | null }>(await readFile(join(tmp.path, 'pages.jsonl'), 'utf8'));
    const pages = out.filter((r) => r.type === 'page').map((r) => r.url);
    const twice = pages.filter((u, i) => pages.indexOf(u) !== i);
    expect(twice).toEqual([]);
    const expected = hosts.flatMap((h) => [web!.url(h, '/'), ...Array.from({ length: PAGES }, (_, i) => web!.url(h, `/p/${i}`))]);
    expect(new Set(pages)).toEqual(new Set(expected));
    // The crash did repeat requests (the pages in flight or finished just before a kill), just not records.
    expect(web.requests().filter((r) => r.path !== '/robots.txt').length).toBeGreaterThanOrEqual(expected.length);
  }, 120_000);
});
