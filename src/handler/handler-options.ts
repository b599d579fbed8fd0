/**
 * The handler's options, checked once for both entry points: the library's
 * `handle`, `handlerTimeout`, `handlerErrors` and `handlerConcurrency`, and
 * the CLI's `--handler` module with its flags. Each check answers a problem
 * in words (or undefined), as the other options' checks do.
 */
import { parseDuration, showValue } from '../config/units.js';
import type { HandlerSpec } from './handler-types.js';
import type { HandlerSettings } from './page-handlers.js';

/** A handler not settled by then gives HANDLER_TIMEOUT. */
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

/** What `handle` must be: a function, or a router object of functions (`default` and labels). */
export function handleProblem(value: unknown): string | undefined {
  if (typeof value === 'function') return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `expected a function (page, ctx) or a router object like { default: fn, detail: fn }, got ${showValue(value)}`;
  const entries = Object.entries(value);
  if (entries.length === 0) return 'expected a router object with at least one handler (default, or a label)';
  const bad = entries.find(([, fn]) => typeof fn !== 'function');
  return bad ? `${bad[0]}: expected a function (page, ctx), got ${showValue(bad[1])}` : undefined;
}

export function handlerTimeoutProblem(value: unknown): string | undefined {
  try {
    if (parseDuration(value as string | number) > 0) return undefined;
  } catch {
    // worded below
  }
  return `expected a positive duration like "30s" or "2m", got ${showValue(value)}`;
}

export function handlerErrorsProblem(value: unknown): string | undefined {
  return value === 'record' || value === 'stop' ? undefined : `expected "record" (the page's record says HANDLER_ERROR) or "stop", got ${showValue(value)}`;
}

/** Settings from values already checked; `concurrency` defaults to the crawl's global concurrency. */
export function handlerSettings(
  handle: HandlerSpec,
  opts: { timeout?: string | number; errors?: 'record' | 'stop'; concurrency?: number; crawlConcurrency: number },
): HandlerSettings {
  return {
    handle,
    timeoutMs: opts.timeout === undefined ? DEFAULT_HANDLER_TIMEOUT_MS : parseDuration(opts.timeout),
    errors: opts.errors ?? 'record',
    concurrency: opts.concurrency ?? opts.crawlConcurrency,
  };
}
