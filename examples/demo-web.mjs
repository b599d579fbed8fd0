/**
 * Runs an example handler against the bundled demo web (fixtures/demo/):
 * serves it on a random local port, crawls it with the `crawl` command and
 * `--handler <the example>`, and ends when the crawl does. The records (or
 * items) go to stdout as with any crawl; what happened goes to stderr.
 *
 * Used by each example when it is run directly (`node examples/catalogue.mjs`);
 * `crawl --handler examples/catalogue.mjs URL` uses the same handler on any site.
 */
import { spawn } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWeb } from '../fixtures/web.js';

const bin = fileURLToPath(new URL('../bin/crawl.js', import.meta.url));
const demoDir = fileURLToPath(new URL('../fixtures/demo/', import.meta.url));

/**
 * Crawls `host` of the demo web from `path` with the handler in `handlerUrl`
 * (an example's import.meta.url) and `args`; resolves with the crawl's exit code.
 * @param {string} handlerUrl
 * @param {string} host
 * @param {string} path
 * @param {string[]} [args]
 * @returns {Promise<number>}
 */
export async function crawlDemo(handlerUrl, host, path, args = []) {
  // The shop answers 429 past 2 requests in any second, as in `npm run demo`: a polite crawl never sees one.
  const web = await startWeb({ dir: demoDir, sites: { 'shop.localhost': { limit: { perSecond: 2, status: 429, retryAfter: '1' } } } });
  try {
    const argv = [bin, '--handler', relative(process.cwd(), fileURLToPath(handlerUrl)), '--rate', '2/s', ...args, ...process.argv.slice(2), web.url(host, path)];
    process.stderr.write(`demo: serving the demo web on 127.0.0.1:${web.port}; running crawl ${argv.slice(1).join(' ')}\n`);
    const child = spawn(process.execPath, argv, { stdio: 'inherit' });
    return await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
  } finally {
    await web.close();
  }
}
