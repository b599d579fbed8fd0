/**
 * --render end to end: the real binary renders a local client-rendered web
 * of three hosts (fixtures/app-web.js) in real Chromium, and the servers'
 * own request logs judge it: robots.txt before anything else on every host,
 * per-host gaps and concurrency held for the browser's requests too, no
 * request robots.txt disallows, each document and each shared script
 * requested once, images and fonts never. The records carry what only a
 * browser sees (links built by script, by a timer, pushState routes; never
 * hash-only links) and the rendered text. A browser killed mid-crawl costs a
 * retry, not a record.
 *
 * Skipped, saying why, when chromium is not installed; under .ci/run (which
 * installs it and sets CRAWL_REQUIRE_SERVICES=1) a missing browser fails.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type RequestLogEntry, type Web } from '../../fixtures/web.js';
import { appSites } from '../../fixtures/app-web.js';
import type { PageRecord } from '../../src/types.js';
import { jsonLines, requireBuilt, sendLog, startCrawl, type CrawlRun } from '../support/spawn-crawl.js';
import { chromium } from '../support/system-fixtures.js';
import { readWarc } from '../support/warc-reader.js';

const browser = chromium.path;
const available = chromium.missing === undefined;
if (!available) console.warn(`render: skipped, ${chromium.missing}`);

const ITEMS = 4;
/**
 * 5/s: the gap each host's requests keep, judged as the crawl wrote them
 * (fixtures/send-log.js), every arrival at the servers among them. The
 * servers' own stamps carry the jitter of a loaded machine (this web shares
 * its event loop with the test; a request stamped 30 ms late shortens the
 * next gap by as much), so they judged with a quarter of the gap allowed.
 * A request the limiter did not pace, as a browser fires its scripts and
 * styles, is written within a few ms of the one before, and the servers'
 * concurrency check catches any overlap.
 */
const GAP_MS = 200;
const RENDER_ARGS = [
  '--config',
  'render.json',
  '--render',
  '--browser',
  browser,
  '--allow-private',
  '--rate',
  '5/s',
  '--host-concurrency',
  '1',
  '--links',
  '--content',
  'text',
  '--stats',
  'stats.json',
  '-v',
  '--warc',
  'site.warc.gz',
  // Room for a loaded machine (four system files at once on two cores): no page here takes long unless starved.
  '--render-timeout',
  '30s',
];

let dir: string;
beforeAll(async () => {
  await requireBuilt();
  dir = await mkdtemp(join(tmpdir(), 'crawl-render-'));
  // The docs host renders only what needs it: its one shell, not its static pages.
  await writeFile(join(dir, 'render.json'), JSON.stringify({ domains: { 'docs.localhost': { render: 'auto' } } }));
});

/** A mostly static host: `render: "auto"` must leave its pages alone (and never fetch their scripts) but render its one shell. */
const docsSite = {
  pages: {
    '/':
      `<title>Docs</title><script src="/analytics.js"></script><h1>Docs</h1><p>${'Plenty of text that reads fine without a browser. '.repeat(12)}</p>` +
      ['/guide', '/api', '/faq', '/changes', '/shell'].map((p) => `<a href="${p}">${p}</a>`).join(' '),
    '/guide': '<title>Guide</title><p>A static guide.</p><a href="/">home</a>',
    '/api': '<title>API</title><p>Static.</p>',
    '/faq': '<title>FAQ</title><p>Static.</p>',
    '/changes': '<title>Changes</title><p>Static.</p>',
    '/shell': '<title>Widget</title><div id="app"></div><script src="/widget.js"></script>',
    // The widget's data comes from an API that refuses the crawl's pace (limited.localhost).
    '/widget.js': {
      body: 'fetch("{{origin:limited.localhost}}/data").then((r) => r.json()).then((d) => { document.getElementById("app").innerHTML = \'<a href="/from-widget">built by script</a><p>\' + d.text + \'</p>\'; });',
      headers: { 'content-type': 'text/javascript' },
    },
    '/analytics.js': { body: 'void 0;', headers: { 'content-type': 'text/javascript' } },
    '/from-widget': '<title>From the widget</title><p>Static.</p>',
  },
};
/** An API that refuses a request sooner than 1 s after the last one it accepted (the crawl asks at 5/s): its robots.txt is accepted, the widget's request right after it is not. */
const limitedSite = {
  robots: 'User-agent: *\nDisallow:\n',
  pages: {
    '/data': {
      body: JSON.stringify({ text: 'Data that came after a 429.' }),
      headers: { 'access-control-allow-origin': '*', 'content-type': 'application/json' },
    },
  },
  limit: { perSecond: 1, status: 429 as const, retryAfter: '1', mode: 'gap' as const },
};
const DOCS = ['/', '/api', '/changes', '/faq', '/from-widget', '/guide', '/shell'];
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const pages = (run: CrawlRun) => jsonLines<PageRecord>(run.stdout).filter((r) => r.type === 'page');
const path = (url: string) => new URL(url).pathname;
/** Every document of the app web: the home page, its items, and the pages only a timer links to. */
const DOCUMENTS = ['/', ...Array.from({ length: ITEMS }, (_, i) => `/items/${i}`), ...Array.from({ length: ITEMS }, (_, i) => `/late/${i}`)].sort();

/**
 * One crawl serves every assertion (a browser costs seconds to start): its
 * browser is killed (SIGKILL) as the app's first record comes out, while
 * the pages that record linked to are being rendered, so every politeness
 * assertion below also holds across a crash and its retries.
 */
describe.skipIf(!available)('--render on a client-rendered web, its browser killed mid-crawl', () => {
  let web: Web;
  let run: CrawlRun;
  let killed = 0;
  let sent: ReturnType<typeof sendLog>;

  beforeAll(async () => {
    web = await startWeb({ sites: { ...appSites({ items: ITEMS }), 'docs.localhost': docsSite, 'limited.localhost': limitedSite } });
    sent = sendLog(join(dir, 'sent.jsonl'));
    const { child, done } = startCrawl([...RENDER_ARGS, web.url('app.localhost', '/'), web.url('docs.localhost', '/')], dir, sent.opts);
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('"host":"app.localhost')) return;
      child.stdout!.off('data', onData);
      // The crawl's own children are the browser's processes (playwright starts chromium directly).
      // Asked asynchronously: a synchronous child process would stall this process, and with it the web's arrival times.
      void promisify(execFile)('pgrep', ['-P', String(child.pid)]).then(({ stdout }) => {
        const pids = stdout.trim().split('\n').filter(Boolean).map(Number);
        for (const pid of pids) process.kill(pid, 'SIGKILL');
        killed = pids.length;
      });
    };
    child.stdout!.on('data', onData);
    run = await done;
  }, 120_000);
  afterAll(() => web?.close());

  it('ends with every page rendered when its browser is killed under it: a retry, not a lost record', () => {
    expect(killed).toBeGreaterThan(0);
    expect(run.code, run.stderr).toBe(0);
    expect(
      pages(run)
        .filter((r) => r.host.startsWith('app.'))
        .map((r) => path(r.url))
        .sort(),
    ).toEqual(DOCUMENTS);
    // Every page the kill cut short learns of it at once, not at its render timeout (30 s): a page awaiting
    // its subrequests, or a call the dead browser never answered, hung that long before the pool raced its disconnect.
    const diedAt = [...run.stderr.matchAll(/\[(\d+\.\d+)s\] warning: the browser died while rendering/g)].map((m) => Number(m[1]));
    expect(diedAt.length).toBeGreaterThan(0);
    expect(Math.max(...diedAt) - Math.min(...diedAt)).toBeLessThan(15);
  });

  it('with render "auto", renders only the shell and leaves static pages (and their scripts) alone', () => {
    const docs = pages(run).filter((r) => r.host.startsWith('docs.'));
    expect(docs.map((r) => path(r.url)).sort()).toEqual(DOCS);
    for (const r of docs) {
      const shell = path(r.url) === '/shell';
      expect(r, r.url).toMatchObject(shell ? { rendered: true, renderReason: 'empty-mount' } : { rendered: false, renderReason: 'static' });
    }
    // The shell's link exists only once its script has run.
    expect(docs.find((r) => path(r.url) === '/shell')!.linkList!.map(path)).toEqual(['/from-widget']);
    expect(web.count('docs.localhost', '/widget.js')).toBe(1);
    expect(web.count('docs.localhost', '/analytics.js')).toBe(0);
  });

  it('pauses a host that answers a browser request 429 until its Retry-After, as for a page, and makes the request again after the pause', () => {
    const log = web.requests('limited.localhost').map((e) => ({ path: e.path, status: e.status, at: e.at }));
    expect(log.map((e) => `${e.path} ${e.status}`)).toEqual(['/robots.txt 200', '/data 429', '/data 200']);
    expect(log[2].at - log[1].at).toBeGreaterThanOrEqual(950);
    // The widget got its data: the page was read after the retry's answer.
    expect(pages(run).find((r) => path(r.url) === '/shell')!.content).toContain('Data that came after a 429.');
  });

  it('finds what only a browser sees, and reads the rendered text', () => {
    expect(run.code, run.stderr).toBe(0);
    const records = pages(run).filter((r) => r.host.startsWith('app.'));
    expect(records.map((r) => path(r.url)).sort()).toEqual(DOCUMENTS);
    for (const r of records) {
      expect(r).toMatchObject({ status: 200, rendered: true, renderReason: 'configured' });
      expect(r.error).toBeUndefined();
      // Hash-only links (#/tab/…) are the same document.
      expect(r.linkList!.some((l) => l.includes('#'))).toBe(false);
    }
    const home = records.find((r) => path(r.url) === '/')!;
    // Built from the API by script, and one added by a timer 200 ms after load; pushState routes are paths.
    expect(home.linkList!.map(path).sort()).toEqual(['/', '/items/0', '/items/1', '/items/2', '/items/3', '/late/0']);
    const item = records.find((r) => path(r.url) === '/items/2')!;
    expect(item.content).toContain('The rendered text of item 2.');
    // The private API is disallowed: the app's inline fallback shows instead.
    expect(item.content).toContain('Inline fallback');
    expect(item.content).not.toContain('never fetched');
    expect(item.subrequests).toMatchObject({ disallowed: 1 });
    expect(item.subrequests!.blocked).toBeGreaterThanOrEqual(1); // the logo
  });

  it('asks every server for robots.txt first, never for what it disallows, and for each document and shared file once', () => {
    for (const host of ['app.localhost', 'api.localhost', 'cdn.localhost']) {
      const log = web.requests(host);
      expect(log[0]?.path, host).toBe('/robots.txt');
      expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    }
    expect(web.requests('api.localhost').filter((e) => e.path.startsWith('/private/'))).toEqual([]);
    for (const doc of DOCUMENTS) expect(web.count('app.localhost', doc), doc).toBe(1);
    expect(web.count('app.localhost', '/app.js')).toBe(1);
    expect(web.count('cdn.localhost', '/bundle.js')).toBe(1);
    expect(web.count('cdn.localhost', '/style.css')).toBe(1);
    // Images and fonts are blocked by default.
    expect(web.count('app.localhost', '/logo.png')).toBe(0);
    expect(web.count('cdn.localhost', '/font.woff2')).toBe(0);
    // The API is asked once per item and once for the list: JSON is cached like any reusable response.
    expect(web.count('api.localhost', '/items')).toBe(1);
  });

  it("holds the browser's requests to each host's rate and concurrency, as the crawl wrote them and the servers saw them", async () => {
    const written = await sent.written();
    for (const host of ['app.localhost', 'api.localhost', 'cdn.localhost', 'docs.localhost', 'limited.localhost']) {
      const log: RequestLogEntry[] = web.requests(host);
      expect(web.maxInFlight(host), host).toBe(1);
      const mine = written.filter((e) => new URL(e.origin).hostname === host);
      expect(mine.length, host).toBeGreaterThanOrEqual(log.length);
      for (let i = 1; i < mine.length; i++) {
        expect(mine[i].at - mine[i - 1].at, `${host} ${mine[i - 1].path} → ${mine[i].path}`).toBeGreaterThanOrEqual(GAP_MS);
      }
      // The browser's requests carry the crawl's User-Agent, like every other request.
      for (const e of log) expect(e.userAgent).toMatch(/^crawl\//);
    }
  });

  it("counts the browser's requests per host in the summary", async () => {
    expect(run.stderr).toContain('browser requests (rendered pages)');
    // -v lists each browser request and what became of it, with its host's limits.
    expect(run.stderr).toMatch(
      /debug: http:\/\/app\.localhost:\d+\/items\/1: fetch http:\/\/api\.localhost:\d+\/private\/secret → disallowed \(api\.localhost:\d+, 5\/s\)/,
    );
    expect(run.stderr).toMatch(/: image http:\/\/app\.localhost:\d+\/logo\.png → blocked/);
    const { readFile } = await import('node:fs/promises');
    const stats = JSON.parse(await readFile(join(dir, 'stats.json'), 'utf8')) as { hosts: Array<{ host: string; subrequests?: Record<string, number> }> };
    const api = stats.hosts.find((h) => h.host.startsWith('api.localhost'))!;
    expect(api.subrequests).toMatchObject({ fetched: 1 + ITEMS });
    // Each page asks the private API and is refused (the server never sees it: the test above). A page whose
    // render the browser's kill cut short is rendered again and asks again: up to two more per page in flight (4 at once, the default).
    expect(api.subrequests!.disallowed).toBeGreaterThanOrEqual(1 + 2 * ITEMS);
    expect(api.subrequests!.disallowed).toBeLessThanOrEqual(1 + 2 * ITEMS + 2 * 4);
  });
});

describe.skipIf(!available)('--render with --warc', () => {
  it('archives what the browser fetched, once per URL, beside the pages: what a replay needs', async () => {
    const { readFile } = await import('node:fs/promises');
    const records = readWarc(await readFile(join(dir, 'site.warc.gz')));
    const responses = records.filter((r) => r.header('WARC-Type') === 'response').map((r) => r.header('WARC-Target-URI')!);
    const paths = (host: string) =>
      responses
        .filter((u) => new URL(u).hostname === host)
        .map(path)
        .sort();
    expect(paths('cdn.localhost')).toEqual(['/bundle.js', '/style.css']);
    expect(paths('api.localhost')).toEqual(['/items', ...Array.from({ length: ITEMS }, (_, i) => `/items/${i}`)]);
    expect(paths('app.localhost')).toEqual([...DOCUMENTS, '/app.js'].sort());
  });
});

/**
 * A page whose script never ends takes a core until it is closed, so it has
 * a crawl of its own, with a short render timeout: beside the crawl above it
 * starved the browser's other pages on a loaded machine (two cores, four
 * system files at once) past their own timeout.
 */
describe.skipIf(!available)('--render on a page that never finishes loading', () => {
  it('closes it at --render-timeout: RENDER_TIMEOUT, the record still comes, and the next page renders', async () => {
    const site = {
      pages: {
        '/': '<title>Home</title><a href="/spin">spin</a>',
        '/spin': '<title>Spin</title><div id="app"></div><a href="/after">after</a><script>for (;;) {}</script>',
        '/after': '<title>After</title><div id="app"></div><script>document.getElementById("app").textContent = "Rendered after the spin.";</script>',
      },
    };
    const web = await startWeb({ sites: { 'spin.localhost': site } });
    try {
      const args = ['--render', '--browser', browser, '--allow-private', '--rate', '20/s', '--links', '--content', 'text', '--render-timeout', '2s'];
      const run = await startCrawl([...args, web.url('spin.localhost', '/')], dir).done;
      expect(run.code, run.stderr).toBe(0);
      const records = pages(run);
      expect(records.map((r) => path(r.url)).sort()).toEqual(['/', '/after', '/spin']);
      const spin = records.find((r) => path(r.url) === '/spin')!;
      expect(spin).toMatchObject({ status: 200, title: 'Spin', rendered: false, error: { code: 'RENDER_TIMEOUT' } });
      // Its links are the fetched HTML's: that is how /after was found.
      expect(spin.linkList!.map(path)).toEqual(['/after']);
      expect(records.find((r) => path(r.url) === '/after')).toMatchObject({ rendered: true, content: expect.stringContaining('Rendered after the spin.') });
    } finally {
      await web.close();
    }
  }, 60_000);
});

describe.skipIf(!available)('with a browser that does not start', () => {
  // Issue 42, item 14: every page was RENDER_FAILED ("Target page, context or browser has been closed"), exit 0.
  it('says so in one line and exits 2 before any request', async () => {
    const web = await startWeb({ sites: appSites({ items: 1 }) });
    try {
      const run = await startCrawl(['--browser', '/bin/true', '--render', web.url('app.localhost', '/')], dir).done;
      expect(run.code, run.stderr).toBe(2);
      // The crawl's opening line, then the one line that says what is wrong.
      const lines = run.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('crawl: crawling '));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^crawl: rendering needs a browser: "\/bin\/true" did not start as Chromium \(.+\); install Chromium/);
      expect(web.requests()).toEqual([]);
      expect(run.stdout).toBe('');
    } finally {
      await web.close();
    }
  });
});

describe('without a browser', () => {
  it('says how to install one in one line and exits 2 before any request (`--render URL`: the URL is the seed, not a mode)', async () => {
    const web = await startWeb({ sites: appSites({ items: 1 }) });
    try {
      const run = await startCrawl(['--browser', join(dir, 'no-such-browser'), '--render', web.url('app.localhost', '/')], dir).done;
      expect(run.code).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^crawl: rendering needs a browser: --browser ".*no-such-browser" is not an executable file; install Chromium \(Debian\/Ubuntu: apt-get install chromium\)/,
      );
      expect(web.requests()).toEqual([]);
      expect(run.stdout).toBe('');
    } finally {
      await web.close();
    }
  });
});
