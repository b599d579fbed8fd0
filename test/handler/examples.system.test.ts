/**
 * The handlers users copy: the README's spider, examples/catalogue.mjs and
 * examples/docs-chunks.mjs, each run as documented against the bundled demo
 * web, and judged by their items and by the servers' own request logs.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const demoDir = join(root, 'fixtures', 'demo');
type Item = { type: string; url: string; label: string | null; data: Record<string, unknown> };

let web: Web | undefined;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-examples-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

/** The demo shop's nine products, as its pages say. */
const PRODUCTS = 9;

describe('the handlers the docs show', () => {
  it("the README's spider pushes one item per product of the paginated catalogue, and asks for nothing else", async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Custom crawls in code'));
    const code = /```js\n([\s\S]*?)```/.exec(section)![1];
    await writeFile(join(tmp.path, 'spider.mjs'), code);
    web = await startWeb({ dir: demoDir });
    const seed = web.url('shop.localhost', '/catalogue/page-1.html');
    const run = await startCrawl(['--handler', 'spider.mjs', '--items-only', '--rate', '20/s', '-q', seed], tmp.path).done;
    expect(run.code, run.stderr).toBe(0);
    const items = jsonLines<Item>(run.stdout);
    expect(items).toHaveLength(PRODUCTS);
    expect(items.find((i) => i.url.endsWith('/products/enamel-mug.html'))).toMatchObject({ label: 'product', data: { name: 'Enamel mug', price: '$12.00' } });
    const asked = web.requests('shop.localhost').map((e) => e.path);
    expect(asked[0]).toBe('/robots.txt');
    expect(asked.filter((p) => !p.startsWith('/products/') && !p.startsWith('/catalogue/') && p !== '/robots.txt')).toEqual([]);
  });

  it("examples/catalogue.mjs carries each product's category from its listing page", async () => {
    web = await startWeb({ dir: demoDir });
    const run = await startCrawl(
      ['--handler', join(root, 'examples', 'catalogue.mjs'), '--items-only', '--rate', '20/s', '-q', web.url('shop.localhost', '/catalogue/page-1.html')],
      tmp.path,
    ).done;
    expect(run.code, run.stderr).toBe(0);
    const items = jsonLines<Item>(run.stdout);
    expect(items).toHaveLength(PRODUCTS);
    expect(items.find((i) => i.url.endsWith('/products/trail-flask.html'))!.data).toEqual({
      name: 'Trail flask',
      price: 22,
      category: 'Outdoor',
      listing: web.url('shop.localhost', '/catalogue/page-2.html'),
    });
    expect(new Set(items.map((i) => i.data.category))).toEqual(new Set(['Books', 'Kitchen', 'Outdoor']));
  });

  it('examples/docs-chunks.mjs, run as it says (node examples/docs-chunks.mjs), cuts the demo docs into chunks under their headings', async () => {
    const child = spawn(process.execPath, [join(root, 'examples', 'docs-chunks.mjs'), '--rate', '20/s', '-q'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    const chunks = jsonLines<Item>(stdout);
    expect(chunks.every((c) => c.type === 'item')).toBe(true);
    const windows = chunks.find((c) => c.data.anchor === 'windows')!;
    expect(windows.data.headings).toEqual(['Politeness and rate limits', 'One rate per host', 'Windows']);
    expect(windows.data.markdown).toBe(
      '### Windows\n\nBesides the gap, a host may have windows such as `100/min`: never more than that many requests in any minute.',
    );
    const group = chunks.find((c) => c.data.anchor === 'which-group-applies')!;
    expect(group.data.markdown).toContain('```\nUser-agent: crawl\nAllow: /internal/public/\nDisallow: /internal/\n```');
    // robots.txt keeps the team area out: no chunk from it, save the public status page the crawler's group allows.
    expect(chunks.filter((c) => c.url.includes('/internal/')).map((c) => new URL(c.url).pathname)).toEqual(['/internal/public/status.html']);
  });
});
