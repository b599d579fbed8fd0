#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled dist/ (built by `npm install`).
let cli;
try {
  cli = await import('../dist/cli/cli.js');
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
