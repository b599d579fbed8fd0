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
 * through createRequire (re2js, cheerio, tough-cookie, tldts) or reads files of (uplot).
 * `zod` is only the members the code uses (zodUsed, below).
 * dist/version.js is replaced by the version itself: its relative path to
 * package.json does not hold from dist/bundle/. `undici` is its lean entry
 * (undici-lean.cjs): the names the code imports, without fetch, WebSocket
 * and the mocks that undici's index loads. The link parser's `htmlparser2`
 * is its Parser module alone (parserAlone, below).
 *
 * bin/crawl.js runs the bundle unless tsc wrote dist/ after it (tsc run
 * alone after a change), so a stale bundle never runs.
 */
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/**
 * `zod` → only the members the code uses. The code imports `{ z }`, zod's
 * whole namespace as one value, which esbuild cannot shake: every locale,
 * JSON-schema reader and compiler came along (470 KB, ~36 ms to load before
 * a crawl's first request). The members are read from the compiled files
 * that import zod (`z.NAME`), and each must exist in zod, or the build fails.
 */
const zodUsed = {
  name: 'zod-used',
  setup(b) {
    const importers = [];
    const walk = (dir) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = `${dir}/${entry.name}`;
        if (entry.isDirectory() && file !== outdir) walk(file);
        else if (entry.name.endsWith('.js')) {
          const text = readFileSync(file, 'utf8');
          if (/^import \{ z \} from 'zod';$/m.test(text)) importers.push(text);
        }
      }
    };
    walk(`${root}dist`);
    // `z.NAME`, also across a line break (`z\n  .record(…)`); a `z` used any other way (passed on whole) fails the build.
    const names = [...new Set(importers.flatMap((text) => [...text.matchAll(/(?<![\w$.])z\s*\.\s*([A-Za-z_$][\w$]*)/g)].map((m) => m[1])))].sort();
    const whole = importers.flatMap((text) => [...text.replace(/^import \{ z \} from 'zod';$/m, '').matchAll(/(?<![\w$.-])z(?![\w$])(?!\s*\.)/g)]);
    if (whole.length > 0) throw new Error(`zod's z is used other than as z.NAME (${whole.length} place(s)): the bundle's zod would lack what it needs`);
    b.onStart(async () => {
      const { z } = await import('zod');
      const missing = names.filter((name) => !(name in z));
      if (missing.length > 0) throw new Error(`zod has no ${missing.join(', ')} (read as z.NAME from the compiled code)`);
    });
    b.onResolve({ filter: /^zod$/ }, (args) => (args.importer.startsWith(`${root}dist`) ? { path: 'zod', namespace: 'zod-used' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-used' }, () => ({
      // Aliased: some members (enum, null) are reserved words.
      contents: `import { ${names.map((n) => `${n} as z_${n}`).join(', ')} } from 'zod';\nexport const z = { ${names.map((n) => `${n}: z_${n}`).join(', ')} };\n`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * `htmlparser2`, imported by the link parser (dist/parse/) → its Parser
 * module, the file beside the package's index. The index also re-exports
 * DomUtils (domutils, dom-serializer and a second `entities` with its 23 KB
 * encode tables), and esbuild files what a module imports in the chunks of
 * every entry that reaches the module, used there or not: through the index,
 * they sat in the chunk every crawl loads before its first request (175 KB
 * with them, 69 KB without; about half the time to load it), though only
 * content/, loaded with import() when a crawl asks for content, uses them.
 * A name parse/ imports that Parser.js lacks fails the build.
 */
const parserAlone = {
  name: 'parser-alone',
  setup(b) {
    b.onResolve({ filter: /^htmlparser2$/ }, async (args) => {
      if (!/[\\/]dist[\\/]parse[\\/]/.test(args.importer)) return undefined;
      const index = await b.resolve('htmlparser2', { kind: args.kind, resolveDir: args.resolveDir });
      return index.errors.length > 0 ? { errors: index.errors } : { path: join(dirname(index.path), 'Parser.js') };
    });
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
  // Whitespace and syntax minified; identifiers kept as written, so classes and functions keep
  // their names (errors, their `name` and util.inspect read as unbundled) without esbuild's
  // keepNames; only a clash between bundled modules adds a suffix (commander's CommanderError2).
  // keepNames wrapped every named closure the code creates in a call that redefines the
  // function's `name`: in a crawl that ran per page (the fetch's and the scheduler's callbacks),
  // and it cost 10-15% of the crawl's CPU (BENCHMARKS.md, benchmark 1).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'eof',
  plugins: [substitutes, zodUsed, parserAlone],
  logLevel: 'warning',
  metafile: true,
});
const inputs = Object.keys(result.metafile.inputs).length;
const outputs = Object.keys(result.metafile.outputs).length;
process.stderr.write(`bundled ${inputs} modules into ${outputs} files in dist/bundle/\n`);
