/**
 * `crawl check --render URL` renders the page once, politely, and lists the
 * hosts its browser asked things of, each with its limits and what its
 * robots.txt said: on the client-rendered test web, the app, its CDN and its
 * API, whose robots.txt disallows the private endpoint the page tries.
 * The servers' logs show the private endpoint never asked for.
 *
 * Skipped, saying why, when chromium is not installed (as render.system.test.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { appSites } from '../../fixtures/app-web.js';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';

const browser = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const available = existsSync(browser) || process.env.CRAWL_REQUIRE_SERVICES === '1';
if (!available) console.warn(`check --render: skipped, no chromium at ${browser}`);

describe.skipIf(!available)('crawl check --render', () => {
  let web: Web;
  let dir: string;
  beforeAll(async () => {
    web = await startWeb({ sites: appSites({ items: 2 }) });
    dir = await mkdtemp(join(tmpdir(), 'check-render-'));
    // The API host at its own pace, to see it in its line.
    await writeFile(join(dir, 'c.json'), JSON.stringify({ allowPrivate: true, domains: { 'api.localhost': { rate: '4/s', concurrency: 1 } } }));
  });
  afterAll(async () => {
    await web?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists each host the browser asked, with its rate and its robots.txt verdict', async () => {
    const io = memoryIo(dir);
    const code = await main(['check', '--config', 'c.json', '--render', web.url('app.localhost', '/')], io);
    expect(code, io.err()).toBe(0);
    const out = io.out();
    expect(out).toMatch(/^browser: rendered \(configured\); its requests went to \d+ hosts:$/m);
    const api = out.split('\n').find((l) => l.trim().startsWith('api.localhost'));
    expect(api).toMatch(/rate 4\/s, 1 at once; robots\.txt disallows 1 of \d+ \(http:\/\/api\.localhost:\d+\/private\/secret\)/);
    expect(out.split('\n').find((l) => l.trim().startsWith('cdn.localhost'))).toMatch(/robots\.txt allows what was asked; \d+ fetched/);
    // Disallowed means never requested: the API's own log has no /private/ request, and its robots.txt came first.
    const apiLog = web.requests().filter((r) => r.host.startsWith('api.localhost'));
    expect(apiLog[0].path).toBe('/robots.txt');
    expect(apiLog.some((r) => r.path.startsWith('/private/'))).toBe(false);
    // The check's own robots.txt request and the render's crawl (which asks again) keep the host's gap (1/s by
    // default): they were 31.5 ms apart on a 2/s host (issue 42, item 8).
    const appLog = web.requests().filter((r) => r.host.startsWith('app.localhost'));
    expect(appLog.slice(0, 2).map((r) => r.path)).toEqual(['/robots.txt', '/robots.txt']);
    for (let i = 1; i < appLog.length; i++) expect(appLog[i].at - appLog[i - 1].at, appLog[i].path).toBeGreaterThanOrEqual(950);
  }, 90_000);

  it('without --render, fetches nothing but robots.txt and lists no browser hosts', async () => {
    const io = memoryIo(dir);
    const before = web.requests().length;
    const code = await main(['check', '--config', 'c.json', web.url('app.localhost', '/')], io);
    expect(code).toBe(0);
    expect(io.out()).not.toContain('browser:');
    expect(
      web
        .requests()
        .slice(before)
        .map((r) => r.path),
    ).toEqual(['/robots.txt']);
  });
});
