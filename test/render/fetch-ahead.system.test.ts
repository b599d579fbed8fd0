/**
 * Fetching never runs ahead of rendering by more than --render-concurrency
 * pages (issue 42, item 10): with 2 pages rendered at once, ten documents
 * were fetched within 7 ms, and after kill -9 eight of them were fetched
 * again. Judged from the server's log: no render ends sooner than its
 * settle time (0.5 s of a quiet DOM), so before the first one does, at most
 * 2 pages render and 2 more are fetched or waiting.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWeb } from '../../fixtures/web.js';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { chromium } from '../support/system-fixtures.js';

const available = chromium.missing === undefined;
if (!available) console.warn(`render fetch-ahead: skipped, ${chromium.missing}`);

describe.skipIf(!available)('--render-concurrency bounds the documents fetched ahead of the browser', () => {
  it('fetches at most twice --render-concurrency documents before the first render can end', async () => {
    await requireBuilt();
    const dir = await mkdtemp(join(tmpdir(), 'crawl-ahead-'));
    const pages: Record<string, string> = { '/': `<title>Home</title>${Array.from({ length: 10 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(' ')}` };
    for (let i = 0; i < 10; i++) pages[`/p/${i}`] = `<title>Page ${i}</title><p>${i}</p>`;
    const web = await startWeb({ sites: { 'ahead.localhost': { robots: 'User-agent: *\nDisallow:\n', pages } } });
    try {
      const args = ['--render', '--browser', chromium.path, '--allow-private', '--rate', 'unlimited', '--host-concurrency', '8', '--render-concurrency', '2'];
      const run = await startCrawl([...args, web.url('ahead.localhost', '/')], dir).done;
      expect(run.code, run.stderr).toBe(0);
      const docs = web.requests('ahead.localhost').filter((e) => e.path.startsWith('/p/'));
      expect(docs).toHaveLength(10);
      const first = docs[0].at;
      const early = docs.filter((e) => e.at - first < 400).map((e) => e.path);
      expect(early.length, early.join(' ')).toBeLessThanOrEqual(4);
    } finally {
      await web.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
