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

  // Issue 42, item 11: --recrawl sent nothing to such a page, --since sent the ETag back.
  it('sends no validator back to a page that answered Vary: *, and its record says why', async () => {
    const page = { body: '<title>V</title>', etag: '"v1"', lastModified: 'Tue, 01 Dec 2026 00:00:00 GMT', headers: { vary: '*' } };
    web = await startWeb({ sites: { [HOST]: { robots: null, pages: { '/': page } } } });
    const options = { seeds: [web.url(HOST, '/')], defaults: { rate: '50/s' } };
    const previous = (await collect(crawl(options))).filter((r): r is PageRecord => r.type === 'page');
    expect(previous[0]).toMatchObject({ etag: '"v1"', varyAll: true });
    web.reset();
    await collect(crawl({ ...options, since: previous }));
    const [asked] = web.requests(HOST).filter((e) => e.path === '/');
    expect(asked.headers['if-none-match']).toBeUndefined();
    expect(asked.headers['if-modified-since']).toBeUndefined();
  }, 30_000);

  it('refuses a since that is not records', () => {
    expect(() => crawl({ seeds: ['http://a.localhost/'], since: 'last.jsonl' as unknown as object[] })).toThrow(/since: expected an array of records/);
  });
});
