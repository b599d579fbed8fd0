/**
 * The spend ledger across `kill -9` with `--state`: every charge
 * (`crawler-charged`) is committed with its page's completion, so after
 * crashes and a resume each page's charge is in the ledger exactly once,
 * and the ledger equals the charges of the records written.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { seededRandom } from '../support/seeded-random.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, killAtRandom, requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { parseAmount } from '../../src/politeness/crawl-price.js';

let web: Web | undefined;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-spend-crash-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const PAGES = 400;

describe('the spend ledger, killed with kill -9 and resumed', () => {
  it('counts each charge once: the ledger equals the charges of the records written', async () => {
    // Every page is paid: 0.01, charged as it is served; each links to the next two.
    web = await startWeb({
      sites: {
        'paid.localhost': {
          delayMs: 3,
          handler: (_req, _res, ctx) => {
            const m = /^\/(?:p\/(\d+))?$/.exec(ctx.path);
            if (!m) return false;
            const n = m[1] === undefined ? -1 : Number(m[1]);
            const links = [n + 1, n + 2].filter((i) => i < PAGES).map((i) => `<a href="/p/${i}">${i}</a>`);
            return ctx.send({ body: `<title>${n}</title>${links.join(' ')}`, headers: { 'crawler-charged': 'USD 0.01' } });
          },
        },
      },
    });
    const args = ['--state', 'crawl.db', '-o', 'out.jsonl', '--stats', 'stats.json', '--max-depth', '1000', '--rate', 'unlimited', '-q'];
    const seed = web.url('paid.localhost', '/');
    const kills = await killAtRandom([...args, seed], tmp.path, web, { runs: 4, after: 40, maxDelayMs: 120, random: seededRandom(7) });
    expect(kills).toBeGreaterThanOrEqual(2);
    const last = await startCrawl([...args, seed], tmp.path).done;
    expect(last.code, last.stderr).toBe(0);

    const pages = jsonLines<{ type: string; url: string; charged?: { amount: string; currency: string } }>(
      await readFile(join(tmp.path, 'out.jsonl'), 'utf8'),
    ).filter((r) => r.type === 'page');
    expect(pages).toHaveLength(PAGES + 1);
    expect(new Set(pages.map((p) => p.url)).size).toBe(PAGES + 1);
    let micros = 0;
    for (const p of pages) micros += parseAmount(p.charged!.amount)!;
    const stats = JSON.parse(await readFile(join(tmp.path, 'stats.json'), 'utf8')) as {
      spend?: Record<string, { amount: string; hosts: Record<string, string> }>;
    };
    const total = ((PAGES + 1) / 100).toFixed(2);
    expect(micros).toBe(parseAmount(total));
    expect(stats.spend).toEqual({ USD: { amount: total, hosts: { [new URL(seed).host]: total } } });
  }, 90_000);
});
