/**
 * The package entry: the crawler as a library. The `crawl` command is a
 * client of the same code (src/cli/).
 *
 * ```js
 * import { crawl, explain } from 'polite-crawler';
 * for await (const record of crawl({ seeds: ['https://example.com/'], defaults: { rate: '2/s' } })) console.log(record.url, record.status);
 * const why = await explain('https://example.com/private/page');
 * ```
 *
 * Importing it is cheap: it loads the options' validation; the crawl loop,
 * its transport and `explain`'s parts load when first used.
 */
export { crawl, type CrawlRun } from './api/crawl.js';
export type { CheckResult, RobotsResult, ScopeResult } from './api/check.js';

/**
 * Explains `url` under `options` (the config file's fields, plus `seeds` and
 * `robotsTxt`): scope, host policy, robots.txt and the address guard
 * (api/check.ts, loaded at the first call: importing the package stays cheap).
 *
 * @throws UsageError (as a rejection) for an invalid URL or seed.
 * @throws ConfigError (as a rejection) with one line per problem in `options`.
 */
export async function explain(url: string, options?: ExplainOptions): Promise<CheckResult> {
  return (await import('./api/check.js')).explain(url, options);
}
import type { CheckResult } from './api/check.js';
import type { ExplainOptions } from './api/options.js';
export type { CrawlConfig, CrawlLog, CrawlOptions, ExplainOptions } from './api/options.js';

// Errors a caller may catch: bad options (one line per problem) and bad seeds.
export { ConfigError } from './config/settings.js';
export { UsageError } from './config/seeds.js';
// A `saveDir` or `warc` that cannot be written (the first pull rejects with it).
export { OutputError } from './output/sink.js';
// The crawl stopped by a page handler's error (handlerErrors: 'stop').
export { HandlerError } from './handler/handler-error.js';

// What the iteration yields and reports.
export type { HostPolicy, WindowLimit } from './config/settings-types.js';
export type { ErrorCode, ItemRecord, OutputRecord, PageRecord, RecordErrorCode, RobotsFetchRecord, SkipReason, SkipRecord, ThrottleEvent } from './types.js';
// Site-specific crawls: the `handle` option's types.
export type {
  EnqueueOptions,
  HandlerContext,
  HandlerLog,
  HandlerPage,
  HandlerResult,
  HandlerRouter,
  HandlerSpec,
  JsonValue,
  PageHandler,
} from './handler/handler-types.js';
export type { ProgressSnapshot } from './output/progress.js';
export type { CrawlSummary, HostStats } from './output/summary.js';
/** @deprecated The name of `run.done`'s result before it became plain JSON: use CrawlSummary. */
export type CrawlStats = import('./output/summary.js').CrawlSummary;
export type { ScopeRejection } from './parse/scope.js';

export { VERSION } from './version.js';
