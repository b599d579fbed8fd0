/**
 * `--handler FILE`: the user's ES module, loaded before anything is opened
 * or fetched, so a missing file, a syntax error or a module without a
 * handler is one line and exit 2, never a crawl that fails at its first page.
 * Its flags (`--handler-timeout`, `--handler-errors`, `--handler-concurrency`,
 * `--items-only`) are checked here too.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../config/seeds.js';
import { secondsIfBare } from '../config/units.js';
import { integerProblem } from '../config/fields.js';
import { handleProblem, handlerSettings, handlerTimeoutProblem } from '../handler/handler-options.js';
import type { HandlerSpec } from '../handler/handler-types.js';
import type { HandlerSettings } from '../handler/page-handlers.js';
import type { CrawlFlags } from './flags.js';

/** The handler the flags name, loaded and checked; undefined without `--handler`. */
export async function loadHandler(flags: CrawlFlags, cwd: string, crawlConcurrency: number): Promise<HandlerSettings | undefined> {
  if (flags.handler === undefined) {
    for (const [flag, given] of [
      ['--handler-timeout', flags.handlerTimeout],
      ['--handler-errors', flags.handlerErrors],
      ['--handler-concurrency', flags.handlerConcurrency],
      ['--items-only', flags.itemsOnly],
    ] as const) {
      if (given !== undefined) throw new UsageError(`${flag} goes with --handler FILE (the module whose handle(page, ctx) pushes items)`);
    }
    return undefined;
  }
  const timeout = flags.handlerTimeout === undefined ? undefined : (secondsIfBare(flags.handlerTimeout) as string);
  const timeoutProblem = timeout === undefined ? undefined : handlerTimeoutProblem(timeout);
  if (timeoutProblem) throw new UsageError(`--handler-timeout: ${timeoutProblem}`);
  const concurrency = flags.handlerConcurrency === undefined ? undefined : Number(flags.handlerConcurrency);
  const concurrencyProblem = concurrency === undefined ? undefined : integerProblem(concurrency, 1, 1000, flags.handlerConcurrency);
  if (concurrencyProblem) throw new UsageError(`--handler-concurrency: ${concurrencyProblem}`);
  const handle = await importHandle(flags.handler, cwd);
  return handlerSettings(handle, {
    timeout,
    errors: flags.handlerErrors === 'stop' ? 'stop' : 'record',
    concurrency,
    crawlConcurrency,
  });
}

/** The module's `handle` export (or its default export): a function or a router of functions. */
async function importHandle(file: string, cwd: string): Promise<HandlerSpec> {
  const path = resolve(cwd, file);
  const what = `--handler ${file}`;
  const found = await stat(path).catch(() => undefined);
  if (found === undefined) throw new UsageError(`${what}: no such file`);
  if (!found.isFile()) throw new UsageError(`${what}: not a file`);
  let mod: { handle?: unknown; default?: unknown };
  try {
    mod = (await import(pathToFileURL(path).href)) as typeof mod;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UsageError(`${what}: the module could not be loaded: ${message.split('\n')[0]}`);
  }
  const handle = mod.handle ?? mod.default;
  if (handle === undefined)
    throw new UsageError(`${what} exports no handler: export function handle(page, ctx) { … }, or a router: export const handle = { default, [label]: fn }`);
  const problem = handleProblem(handle);
  if (problem) throw new UsageError(`${what}: handle: ${problem}`);
  return handle as HandlerSpec;
}
