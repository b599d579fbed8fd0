/**
 * `crawl --handler FILE`: the real binary loads a user's module, writes its
 * items between the page records (or alone, `--items-only`), refuses a bad
 * module or flag in one line before any request, and stops with exit 1 on a
 * handler's error when asked to. Across crashes: handler-crash.system.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { useTempDir } from '../support/system-fixtures.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let web: Web | undefined;
beforeAll(requireBuilt);
const tmp = useTempDir('crawl-handler-cli-');
afterEach(async () => {
  await web?.close();
  web = undefined;
});

type Line = { type: string; url: string; label?: string | null; parent?: string | null; data?: Record<string, unknown>; error?: { code: string } };

/** A router: listings (unlabelled) send each linked page on as `leaf` with where it came from; leaves push one item. */
const ROUTER = `
export const handle = {
  default(page, ctx) {
    ctx.enqueue(page.links, { label: 'leaf', userData: { from: page.url } });
    ctx.push({ kind: 'listing', links: page.links.length });
    return { follow: false };
  },
  leaf(page, ctx) {
    ctx.push({ kind: 'leaf', title: page.$('title').text(), from: page.userData.from });
    ctx.follow(false);
  },
};
`;

describe('crawl --handler', () => {
  it('writes items between the page records, or only them with --items-only', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': { pages: { '/': '<title>Home</title><a href="/x">x</a><a href="/y">y</a>', '/x': '<title>X</title>', '/y': '<title>Y</title>' } },
      },
    });
    await writeFile(join(tmp.path, 'spider.mjs'), ROUTER);
    const all = await startCrawl(['--handler', 'spider.mjs', '--rate', '50/s', web.url('a.localhost', '/')], tmp.path).done;
    expect(all.code, all.stderr).toBe(0);
    const lines = jsonLines<Line>(all.stdout);
    expect(lines.filter((l) => l.type === 'page')).toHaveLength(3);
    const items = lines.filter((l) => l.type === 'item');
    expect(items.map((i) => i.data)).toEqual(
      expect.arrayContaining([
        { kind: 'listing', links: 2 },
        { kind: 'leaf', title: 'X', from: web.url('a.localhost', '/') },
        { kind: 'leaf', title: 'Y', from: web.url('a.localhost', '/') },
      ]),
    );
    expect(items.filter((i) => i.label === 'leaf')).toHaveLength(2);
    // The summary counts them.
    expect(all.stderr).toMatch(/items {4}3 pushed by the page handler; 0 pages where it failed/);

    const only = await startCrawl(['--handler', 'spider.mjs', '--items-only', '--rate', '50/s', web.url('a.localhost', '/')], tmp.path).done;
    expect(only.code, only.stderr).toBe(0);
    expect(jsonLines<Line>(only.stdout).map((l) => l.type)).toEqual(['item', 'item', 'item']);
  });

  it.each([
    ['a missing module', ['--handler', 'nope.mjs'], /^crawl: --handler nope\.mjs: no such file$/],
    ['a module without a handler', ['--handler', 'empty.mjs'], /^crawl: --handler empty\.mjs exports no handler: export function handle\(page, ctx\)/],
    ['a module that throws as it loads', ['--handler', 'broken.mjs'], /^crawl: --handler broken\.mjs: the module could not be loaded: boom at load$/],
    [
      'a router with a non-function',
      ['--handler', 'bad-router.mjs'],
      /^crawl: --handler bad-router\.mjs: handle: leaf: expected a function \(page, ctx\), got 42$/,
    ],
    ['--items-only without --handler', ['--items-only'], /^crawl: --items-only goes with --handler FILE/],
    ['a bad --handler-timeout', ['--handler', 'spider.mjs', '--handler-timeout', 'soon'], /^crawl: --handler-timeout: expected a positive duration like "30s"/],
  ])('refuses %s in one line, exit 2, before any request', async (_what, args, line) => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<title>Home</title>' } } } });
    await writeFile(join(tmp.path, 'spider.mjs'), ROUTER);
    await writeFile(join(tmp.path, 'empty.mjs'), 'export const nothing = 1;\n');
    await writeFile(join(tmp.path, 'broken.mjs'), 'throw new Error("boom at load");\n');
    await writeFile(join(tmp.path, 'bad-router.mjs'), 'export const handle = { default() {}, leaf: 42 };\n');
    const run = await startCrawl([...args, web.url('a.localhost', '/')], tmp.path).done;
    expect(run.code).toBe(2);
    const errs = run.stderr.trim().split('\n');
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(line);
    expect(web.requests()).toEqual([]);
  });

  it('with --handler-errors stop, ends after the failing page with one line and exit 1; the record says why', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<title>Home</title><a href="/x">x</a>', '/x': '<title>X</title>' } } } });
    await writeFile(
      join(tmp.path, 'strict.mjs'),
      'export function handle(page) { if (page.url.endsWith("/x")) throw new Error("no price on " + page.url); }\n',
    );
    const run = await startCrawl(['--handler', 'strict.mjs', '--handler-errors', 'stop', '-q', '--rate', '50/s', web.url('a.localhost', '/')], tmp.path).done;
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `crawl: stopped: the page handler failed at ${web.url('a.localhost', '/x')}: no price on ${web.url('a.localhost', '/x')} (--handler-errors stop)`,
    );
    const failed = jsonLines<Line>(run.stdout).find((l) => l.url.endsWith('/x'));
    expect(failed?.error?.code).toBe('HANDLER_ERROR');
  });
});
