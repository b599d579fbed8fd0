/**
 * The browser restarted on its memory cap (`renderOptions.maxBrowserMemory`):
 * with a cap every browser passes, a rendered crawl of the client-rendered
 * web restarts its browser between pages, says so once per restart, and
 * still ends with every page rendered, each exactly once. The memory read
 * itself (browser-memory.ts) sees a child process's PSS.
 *
 * Skipped, saying why, when chromium is not installed (as render.system.test.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { appSites } from '../../fixtures/app-web.js';
import { createCrawlSession, loadRendering } from '../../src/api/crawl-session.js';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import type { RecordSink } from '../../src/output/sink.js';
import { descendantMemory } from '../../src/render/browser-memory.js';
import type { PageRecord } from '../../src/types.js';

const browser = process.env.CRAWL_BROWSER ?? '/usr/bin/chromium';
const available = existsSync(browser) || process.env.CRAWL_REQUIRE_SERVICES === '1';
if (!available) console.warn(`browser memory cap: skipped, no chromium at ${browser}`);

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

describe('browser memory', () => {
  it('reads the PSS of the processes below this one', async () => {
    const before = descendantMemory() ?? 0;
    // Read once the child says its 64 MiB are filled: a fixed second was not always enough for a loaded
    // machine to start Node and fill them (CI once read 27.7 MB).
    const child = spawn(process.execPath, ['-e', "const b = Buffer.alloc(64 * 2 ** 20, 1); process.stdout.write('filled'); setTimeout(() => b, 30000)"], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await new Promise((resolve, reject) => {
        child.stdout.once('data', resolve);
        child.once('exit', (code) => reject(new Error(`the child exited (${code}) before filling its buffer`)));
      });
      expect(descendantMemory()! - before).toBeGreaterThan(50 * 2 ** 20);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.skipIf(!available)(
    'a browser past its cap is restarted between pages, and every page is rendered once',
    async () => {
      const ITEMS = 8;
      web = await startWeb({ sites: appSites({ items: ITEMS }) });
      const file = validateConfig({ allowPrivate: true, render: true, renderOptions: { maxBrowserMemory: '1MiB' } });
      const settings = buildSettings(file, { rate: 'unlimited', hostConcurrency: '2' });
      const records: PageRecord[] = [];
      const sink: RecordSink = { write: async (r) => void (r.type === 'page' && records.push(r)), close: async () => {}, broken: false, written: 0 };
      const lines: string[] = [];
      const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
      const session = createCrawlSession({ settings, seeds: [web.url('app.localhost', '/')], sink, log, render: await loadRendering(browser) });
      await session.run();

      const app = records
        .filter((r) => r.host.startsWith('app.'))
        .map((r) => new URL(r.url).pathname)
        .sort();
      const documents = ['/', ...Array.from({ length: ITEMS }, (_, i) => `/items/${i}`), ...Array.from({ length: ITEMS }, (_, i) => `/late/${i}`)].sort();
      expect(app).toEqual(documents);
      expect(records.filter((r) => r.host.startsWith('app.')).every((r) => r.rendered === true && r.error === undefined)).toBe(true);
      const restarts = session.rendered()!.browserRestarts;
      // 17 pages, a look every 5: at least two restarts.
      expect(restarts).toBeGreaterThanOrEqual(2);
      expect(lines.filter((l) => l.includes('past renderOptions.maxBrowserMemory (1 MiB): restarting it between pages'))).toHaveLength(restarts);
    },
    120_000,
  );
});
