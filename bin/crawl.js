#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled dist/ (built by `npm install`).
// It runs the bundle (dist/bundle/cli.js, a fraction of the start-up of
// ~400 separate files) unless tsc has rebuilt dist/ since the bundle was
// made: then the fresh, unbundled dist/cli/cli.js runs, never a stale bundle.
// tsc's build mode rewrites only the files a change affects, but always its
// state file (dist/.tsbuildinfo), so that tells when it last wrote.
import { statSync } from 'node:fs';
import module from 'node:module';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import v8 from 'node:v8';

// Node 22.1+ keeps the compiled code on disk between runs (in the OS's temp
// directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a start-up compiles
// nothing it compiled before. Older Nodes lack the call; nothing changes there.
module.enableCompileCache?.();

// undici parses HTTP with WebAssembly (llhttp), and V8 re-compiles its
// parser function optimised (TurboFan) once it is hot, which by V8's default
// is within the first few responses: ~0.1 s of CPU and ~30 MB of peak memory
// in every short crawl, `crawl check` and joining worker, for code that
// makes no difference a page can measure (BENCHMARKS.md, sixteenth pass). A
// higher budget, in force when the parser is made (at the first HTTP/1.1
// connection), keeps it on V8's baseline code for the first ~250 pages; a
// longer crawl has it optimised as before. In force only for that moment:
// while a V8 flag differs from its default, Node compiles its own modules
// without their built-in code cache (~2x slower). So only on the V8
// versions whose default is known here (Node 20 to 26).
const defaultBudget = { 11: 1_800_000, 12: 13_000_000, 13: 13_000_000, 14: 13_000_000 }[process.versions.v8.split('.')[0]];
if (defaultBudget !== undefined) {
  let raised = false;
  const raise = () => {
    if (!raised) v8.setFlagsFromString('--wasm-tiering-budget=2000000000');
    raised = true;
  };
  const lower = () => {
    if (raised) v8.setFlagsFromString(`--wasm-tiering-budget=${defaultBudget}`);
    raised = false;
  };
  const connected = ({ socket }) => {
    lower();
    // An HTTP/2 connection made no parser: the next connection may.
    if (socket?.alpnProtocol === 'h2') return;
    unsubscribe('undici:client:beforeConnect', raise);
    unsubscribe('undici:client:connected', connected);
    unsubscribe('undici:client:connectError', lower);
  };
  subscribe('undici:client:beforeConnect', raise);
  subscribe('undici:client:connected', connected);
  subscribe('undici:client:connectError', lower);
}

const builtAt = (file) => statSync(new URL(file, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundled = builtAt('../dist/bundle/cli.js') >= Math.max(builtAt('../dist/cli/cli.js'), builtAt('../dist/.tsbuildinfo'));
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
