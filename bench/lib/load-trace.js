/**
 * Preloaded into a benchmarked child (`node --import ./bench/lib/load-trace.js …`):
 * appends to the file named by CRAWL_LOAD_TRACE one line per module the
 * process loads (ESM through a loader hook, CommonJS through the compile
 * step), and the line `--- first request` when undici creates its first
 * request. Every line before that marker is a module the user waited for.
 * Both threads append with O_APPEND, and a module's line is written before
 * its load returns, so the file's order is the order things happened.
 * The hook thread slows loading: use it to count, never to time.
 */
import { appendFileSync } from 'node:fs';
import { channel } from 'node:diagnostics_channel';
import Module, { register } from 'node:module';

const target = process.env.CRAWL_LOAD_TRACE;
if (target) {
  register(new URL('./load-trace-hooks.js', import.meta.url), { data: { target } });
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    appendFileSync(target, `cjs ${filename}\n`);
    return compile.call(this, content, filename);
  };
  let marked = false;
  const onRequest = () => {
    if (marked) return;
    marked = true;
    appendFileSync(target, '--- first request\n');
    channel('undici:request:create').unsubscribe(onRequest);
  };
  channel('undici:request:create').subscribe(onRequest);
}
