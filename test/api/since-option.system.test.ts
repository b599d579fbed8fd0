/** The library's `since` option (like --since): a previous crawl()'s records as a re-crawl's history. */
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { expectedChanges, twoGenerationSite } from '../../fixtures/generations.js';
import { crawl, type OutputRecord, type PageRecord } from '../../src/index.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const HOST = 'a.localhost';
const collect = async (run: AsyncIterable<OutputRecord>) => {
  const out: OutputRecord[] = [];
  for await (const r of run) out.push(r);
  return out;
};

describe('crawl({ since })', () => {
  it('asks with the validators of the records it is given and says what changed', async () => {
    web = await startWeb({ sites: { [HOST]: { robots: null, pages: twoGenerationSite(1) } } });
    const seeds = [web.url(HOST, '/')];
    const options = { seeds, defaults: { rate: '50/s' } };
    const previous = await collect(crawl(options));
    web.setPages(HOST, twoGenerationSite(2));
    web.reset();
    const again = (await collect(crawl({ ...options, since: previous }))).filter((r): r is PageRecord => r.type === 'page');
    expect(Object.fromEntries(again.map((r) => [new URL(r.url).pathname, r.change]))).toEqual(expectedChanges);
    expect(web.requests(HOST).find((e) => e.path === '/s1')!.headers['if-none-match']).toBe('"s1-1"');
  }, 30_000);

  it('refuses a since that is not records', () => {
    expect(() => crawl({ seeds: ['http://a.localhost/'], since: 'last.jsonl' as unknown as object[] })).toThrow(/since: expected an array of records/);
  });
});
