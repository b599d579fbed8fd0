#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled dist/ (built by `npm install`).
// It runs the bundle (dist/bundle/cli.js, a fraction of the start-up of
// ~400 separate files) unless tsc has rebuilt dist/ since the bundle was
// made: then the fresh, unbundled dist/cli/cli.js runs, never a stale bundle.
import { statSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+ keeps the compiled code on disk between runs (in the OS's temp
// directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a start-up compiles
// nothing it compiled before. Older Nodes lack the call; nothing changes there.
module.enableCompileCache?.();

const builtAt = (file) => statSync(new URL(file, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundled = builtAt('../dist/bundle/cli.js') >= builtAt('../dist/cli/cli.js');
let cli;
try {
  cli = await import(bundled ? '../dist/bundle/cli.js' : '../dist/cli/cli.js');
} catch (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
    process.stderr.write('crawl: not built yet; run `npm install` (or `npm run build`) in the crawl directory\n');
    process.exit(1);
  }
  throw err;
}
const code = await cli.main(process.argv.slice(2));
process.exitCode = code;
// Everything is flushed and closed by now; if a stray handle would keep the
// process alive, do not hang the user's shell for it.
setTimeout(() => process.exit(code), 2000).unref();
