/**
 * What a plain crawl loads before its first request (benchmark 5's profile,
 * as a behaviour check, not a timing): features it does not use stay
 * unloaded. A module-load trace (bench/lib/load-trace.js) records every file
 * the process loads until undici creates its first request; the crawl runs
 * both unbundled (dist/cli/cli.js: module paths say which folder) and as the
 * shipped bundle (bin/crawl.js: lazy chunks keep their modules' names).
 * Inside the bundle, packages leave no file of their own: what a chunk holds
 * is read from the functions it defines, as the bundle keeps their names.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt, startCrawl } from '../support/spawn-crawl.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const trace = join(root, 'bench', 'lib', 'load-trace.js');

/**
 * Packages only some crawls use: Chromium, SQLite, metrics, the linear-time regex engine, Redis, selectors,
 * the report's charts, cookies (until one is held), the public suffix list (registrable domains), request signing (a key given).
 */
const LAZY_PACKAGES = [
  'playwright-core',
  'better-sqlite3',
  'prom-client',
  're2js',
  'redis',
  '@redis/client',
  'cheerio',
  'uplot',
  'tough-cookie',
  'tldts',
  'structured-headers',
  'http-message-sig',
  'jose',
];

/**
 * Functions only the content features define: content/'s own (pageContent,
 * runExtract, toMarkdown), domutils' (getOuterHTML), dom-serializer's
 * (renderTag). They once shared a chunk with the link parser, which reached
 * htmlparser2's index and so its DomUtils, and every crawl compiled them.
 */
const CONTENT_ONLY = ['pageContent', 'runExtract', 'toMarkdown', 'getOuterHTML', 'renderTag'];
/** The names of `CONTENT_ONLY` some text defines (esbuild adds a number to a name two modules share). */
const contentDefinedIn = (texts: string[]) => CONTENT_ONLY.filter((name) => texts.some((text) => new RegExp(`\\bfunction ${name}\\d*\\(`).test(text)));

let server: Server;
let url: string;
let dir: string;
beforeAll(async () => {
  await requireBuilt();
  dir = await mkdtemp(join(tmpdir(), 'crawl-laziness-'));
  server = createServer((req, res) => {
    const page = /^\/p\/(\d+)$/.exec(req.url ?? '');
    if (req.url === '/robots.txt') res.writeHead(404).end();
    // /p/0 … /p/20, each linking to the next: a short crawl of 21 pages.
    else if (page) res.writeHead(200, { 'content-type': 'text/html' }).end(Number(page[1]) < 20 ? `<a href="/p/${Number(page[1]) + 1}">next</a>` : 'end');
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>t</title><p>plain</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The files node loads running `args` before the first request (paths; `node_modules/…` for packages). */
async function loadedBeforeFirstRequest(args: string[], name: string): Promise<string[]> {
  const file = join(dir, `${name}.trace`);
  const child = spawn(process.execPath, ['--import', pathToFileURL(trace).href, ...args], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CRAWL_LOAD_TRACE: file },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, stderr).toBe(0);
  const lines = (await readFile(file, 'utf8')).split('\n');
  const end = lines.indexOf('--- first request');
  expect(end, 'the trace saw no request').toBeGreaterThan(0);
  return lines.slice(0, end).map((l) => l.replace(/^(esm|cjs) (file:\/\/)?/, ''));
}

const packagesIn = (files: string[]) => new Set(files.flatMap((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1] ?? []));
const ours = (files: string[], folder: string) => files.filter((f) => f.includes(`/dist/${folder}/`)).map((f) => f.slice(f.indexOf('/dist/') + 6));

/** Runs the unbundled CLI (dist/cli/cli.js) with argv. */
const unbundled = (argv: string[]) => [
  '--input-type=module',
  '-e',
  `const { main } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist', 'cli', 'cli.js')).href)}); process.exitCode = await main(${JSON.stringify(argv)});`,
];

describe('start-up loads only what the crawl uses', () => {
  it('a plain crawl loads no rendering, report builder, archive writer, SQLite, Redis or metrics code', async () => {
    const files = await loadedBeforeFirstRequest(unbundled(['-q', '-o', 'out.jsonl', url]), 'crawl');
    expect(ours(files, 'render')).toEqual([]);
    expect(ours(files, 'archive')).toEqual([]);
    // Routing records (a few lines, used by every crawl) is all of report/ a plain crawl needs.
    expect(ours(files, 'report').sort()).toEqual(['report/kept-record.js', 'report/record-routes.js']);
    expect(ours(files, 'store').filter((f) => /sqlite|redis/.test(f))).toEqual([]);
    // Checking --extract rules is all of content/ a plain crawl needs (the config may hold some); no DOM code.
    expect(ours(files, 'content')).toEqual(['content/extract-rules.js']);
    // The address parser (config/metrics-address.ts, a dozen lines) checks a config file's `metrics` field on every
    // start; nothing of the endpoint or the series loads.
    expect(ours(files, 'output').filter((f) => f.includes('metrics'))).toEqual([]);
    // Signing (identity/, http-message-sig, jose) loads only when a key is given.
    expect(ours(files, 'identity')).toEqual([]);
    expect([...packagesIn(files)].filter((p) => LAZY_PACKAGES.includes(p))).toEqual([]);
  });

  it('crawl check loads neither the crawl loop nor any feature it does not explain', async () => {
    const files = await loadedBeforeFirstRequest(unbundled(['check', url]), 'check');
    expect(ours(files, 'crawl').filter((f) => f !== 'crawl/robots-hop.js' && f !== 'crawl/attempt-history.js' && f !== 'crawl/crawl-context.js')).toEqual([]);
    expect(ours(files, 'render')).toEqual([]);
    expect([...packagesIn(files)].filter((p) => LAZY_PACKAGES.includes(p))).toEqual([]);
  });

  it("the bundle's undici entry runs ProxyAgent and Dispatcher's API only once a crawl asks for ProxyAgent", async () => {
    const lean = join(root, 'scripts', 'undici-lean.cjs');
    const probe = [
      `const lean = require(${JSON.stringify(lean)});`,
      `const loaded = () => Object.keys(require.cache).filter((f) => /undici[\\/]lib[\\/](api[\\/]|dispatcher[\\/]proxy-agent)/.test(f)).length;`,
      'const before = loaded();',
      "const connects = typeof lean.ProxyAgent === 'function' && typeof new lean.Pool('http://127.0.0.1:9').connect === 'function';",
      'console.log(JSON.stringify({ before, after: loaded(), connects }));',
    ].join('\n');
    const child = spawn(process.execPath, ['-e', probe], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    const seen = JSON.parse(out) as { before: number; after: number; connects: boolean };
    expect(seen.before).toBe(0);
    expect(seen.after).toBeGreaterThan(0);
    expect(seen.connects, 'a Pool to the proxy has connect() once ProxyAgent is loaded').toBe(true);
  });

  it('the shipped bundle loads none of the lazy chunks', async () => {
    const files = await loadedBeforeFirstRequest([join(root, 'bin', 'crawl.js'), '-q', '-o', 'out.jsonl', url], 'bundle');
    expect(
      files.some((f) => f.includes('/dist/bundle/cli.js')),
      'bin/crawl.js did not run the bundle',
    ).toBe(true);
    const chunks = files.filter((f) => f.includes('/dist/bundle/chunks/')).map((f) => f.replace(/.*\/chunks\//, '').replace(/-[A-Z0-9]+\.js$/, ''));
    expect(
      chunks.filter((c) =>
        /^(renderer|browser-path|report-tap|open-archive|save-dir|warc-writer|redis-store|sqlite-store|metrics|metrics-endpoint|state-target|check-command|status-command|report-command|page-content)$/.test(
          c,
        ),
      ),
    ).toEqual([]);
    // Bundled, nothing is read from node_modules but robots-parser (loaded through createRequire, as unbundled).
    expect([...packagesIn(files)]).toEqual(['robots-parser']);
    // Nor compiled inside a chunk: no content code, domutils or dom-serializer (all of them are in the bundle, so the check can see them).
    const chunkDir = join(root, 'dist', 'bundle', 'chunks');
    const all = await Promise.all((await readdir(chunkDir)).map((f) => readFile(join(chunkDir, f), 'utf8')));
    expect(contentDefinedIn(all), 'the bundle no longer defines these functions by name').toEqual(CONTENT_ONLY);
    const loaded = await Promise.all(files.filter((f) => f.includes('/dist/bundle/')).map((f) => readFile(f, 'utf8')));
    expect(contentDefinedIn(loaded)).toEqual([]);
  });

  // V8 re-compiles undici's WebAssembly HTTP parser optimised once it is hot, by default within the first
  // responses: ~0.1 s of CPU and ~30 MB of peak memory a short crawl paid (bin/crawl.js raises the budget).
  it("a short crawl keeps undici's HTTP parser on V8's baseline compiler", async () => {
    const run = await startCrawl(['--rate', 'unlimited', '-q', `${url}p/0`], dir, { nodeArgs: ['--trace-wasm-compilation-times'] }).done;
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('{"type":"page"'))).toHaveLength(21);
    // The trace works (V8 reports its baseline compiles), and names no optimised one.
    expect(lines.filter((l) => l.includes('using Liftoff')).length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes('using TurboFan'))).toEqual([]);
  });
});
