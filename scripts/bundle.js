#!/usr/bin/env node
/**
 * `npm run build`'s second step: bundles what tsc wrote (dist/cli/cli.js and
 * dist/index.js) into dist/bundle/, one file per entry plus shared chunks.
 *
 * Why: a crawl loaded ~400 files (~1,000 with --redis) before its first
 * request, and Node resolves, reads and compiles each one; one bundle,
 * minified, starts the same code in a fraction of the time (BENCHMARKS.md,
 * benchmark 5). Every `await import()` of the sources stays a separate chunk,
 * so what a crawl does not use (render/, the report, the archive writers,
 * Redis, SQLite, metrics) is still not loaded.
 *
 * Left outside the bundle: native or heavy packages loaded only when used
 * (better-sqlite3, playwright-core, prom-client), packages the code loads
 * through createRequire (re2js, cheerio) or reads files of (uplot).
 * dist/version.js is replaced by the version itself: its relative path to
 * package.json does not hold from dist/bundle/. `undici` is its lean entry
 * (undici-lean.cjs): the names the code imports, without fetch, WebSocket
 * and the mocks that undici's index loads.
 *
 * bin/crawl.js runs the bundle unless dist/cli/cli.js is newer (tsc run
 * alone after a change), so a stale bundle never runs.
 */
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

/** dist/version.js → the version as a constant; `undici` → undici-lean.cjs. */
const substitutes = {
  name: 'substitutes',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]version\.js$/ }, () => ({ contents: `export const VERSION = ${JSON.stringify(version)};`, loader: 'js' }));
    b.onResolve({ filter: /^undici$/ }, () => ({ path: fileURLToPath(new URL('./undici-lean.cjs', import.meta.url)) }));
  },
};

const outdir = `${root}dist/bundle`;
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { cli: 'dist/cli/cli.js', index: 'dist/index.js' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['better-sqlite3', 'playwright-core', 'prom-client', 're2js', 'cheerio', 'uplot'],
  // Bundled CommonJS (undici, commander, @redis/client) calls require() for Node's own modules.
  banner: { js: "import { createRequire as __crawlCreateRequire } from 'node:module'; const require = __crawlCreateRequire(import.meta.url);" },
  minify: true,
  // Class and function names stay: errors and their `name` read the same as unbundled.
  keepNames: true,
  legalComments: 'eof',
  plugins: [substitutes],
  logLevel: 'warning',
  metafile: true,
});
const inputs = Object.keys(result.metafile.inputs).length;
const outputs = Object.keys(result.metafile.outputs).length;
process.stderr.write(`bundled ${inputs} modules into ${outputs} files in dist/bundle/\n`);
