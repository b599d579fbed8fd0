/**
 * Library options → CrawlSettings, through the same schema and messages as a
 * config file, so a mistake reads the same in code as in crawler.config.json:
 * `options: concurrency: expected an integer from 1 to 1000, got 0`.
 *
 * Order mirrors the CLI: seeds first (a UsageError, as for a bad seed on the
 * command line), then every other problem at once in one ConfigError.
 */
import { buildSettings, ConfigError, validateConfig, type FileConfig } from '../config/settings.js';
import { checkSeeds, UsageError } from '../config/seeds.js';
import { showValue } from '../config/units.js';
import { integerProblem } from '../config/fields.js';
import { archiveTargetProblem } from '../archive/open-archive.js';
import type { CrawlSettings } from '../config/settings-types.js';
import { metricsAddressProblem } from '../config/metrics-address.js';
import { handleProblem, handlerErrorsProblem, handlerTimeoutProblem } from '../handler/handler-options.js';

/** Names the options object in messages, where a config file's path would stand. */
export const OPTIONS_SOURCE = 'options';

/** A check of one code-only option: the problem, or undefined when the value is fine. */
type Check = (value: unknown) => string | undefined;

const boolean: Check = (v) => (typeof v === 'boolean' ? undefined : `expected true or false, got ${showValue(v)}`);
const positiveInteger: Check = (v) => integerProblem(v, 1);
const abortSignal: Check = (v) => (v instanceof AbortSignal ? undefined : `expected an AbortSignal, got ${showValue(v)}`);
const text: Check = (v) => (typeof v === 'string' ? undefined : `expected a string, got ${showValue(v)}`);
const log: Check = (v) => {
  const l = v as { info?: unknown; warn?: unknown } | null;
  return typeof l === 'object' && l !== null && typeof l.info === 'function' && typeof l.warn === 'function'
    ? undefined
    : `expected an object with info() and warn() methods (console will do), got ${showValue(v)}`;
};

const path: Check = (v) => (typeof v === 'string' && v.trim() !== '' ? undefined : `expected a path, got ${showValue(v)}`);
const warcPath: Check = (v) => path(v) ?? archiveTargetProblem({ warc: v as string }, { saveDir: 'saveDir', warc: 'warc' })?.replace(/^warc: /, '');

/** The code-only options each entry point accepts; every other key must be a config field. */
/** `metrics`: "[HOST:]PORT", checked with the CLI's own parser. */
const metricsAddress: Check = (v) => {
  if (typeof v !== 'string') return `expected "[HOST:]PORT" like "9464" or "0.0.0.0:9464", got ${showValue(v)}`;
  return metricsAddressProblem(v);
};

/** `since`: a previous run's records, as `crawl()` yielded them (or parsed from its JSON lines). */
const records: Check = (v) =>
  Array.isArray(v) && v.every((r) => r !== null && typeof r === 'object')
    ? undefined
    : `expected an array of records (objects, as a previous crawl() yielded them), got ${showValue(v)}`;

export const CRAWL_ONLY: Record<string, Check> = {
  signal: abortSignal,
  emitSkipped: boolean,
  links: boolean,
  emitRobots: boolean,
  saveDir: path,
  warc: warcPath,
  highWaterMark: positiveInteger,
  log,
  metrics: metricsAddress,
  metricsHosts: (v) => integerProblem(v, 0, 1000),
  since: records,
  handle: handleProblem,
  handlerTimeout: handlerTimeoutProblem,
  handlerErrors: handlerErrorsProblem,
  handlerConcurrency: (v) => integerProblem(v, 1, 1000),
};
export const EXPLAIN_ONLY: Record<string, Check> = { robotsTxt: text };

export interface ResolvedOptions {
  /** Canonical seeds, duplicates removed. */
  seeds: string[];
  settings: CrawlSettings;
  /** The code-only options, checked but as given. */
  extra: Record<string, unknown>;
}

/**
 * Validates `options` (seeds, `only` fields, config fields) and builds the
 * settings. `defaultSeeds` stands in for missing or empty seeds (explain()
 * checks a URL against itself); without it seeds are required.
 *
 * @throws UsageError for missing or invalid seeds.
 * @throws ConfigError with one line per problem for everything else.
 */
export function resolveOptions(options: unknown, only: Record<string, Check>, defaultSeeds?: string[]): ResolvedOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigError([`${OPTIONS_SOURCE}: expected an object like { seeds: ["https://example.com/"] }, got ${showValue(options)}`]);
  }
  const { seeds: rawSeeds, ...rest } = options as Record<string, unknown>;
  // Sitemaps named in the options are a start of their own: seeds may then be left out.
  const named = Array.isArray(rest.sitemaps) && rest.sitemaps.length > 0;
  const seeds = resolveSeeds(rawSeeds, defaultSeeds ?? (named ? [] : undefined));

  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    const check = only[key];
    if (!check) config[key] = value;
    else if (value !== undefined) {
      extra[key] = value;
      const problem = check(value);
      if (problem) problems.push(`${OPTIONS_SOURCE}: ${key}: ${problem}`);
    }
  }
  let file: FileConfig | undefined;
  try {
    file = validateConfig(config, OPTIONS_SOURCE);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  if (problems.length > 0 || file === undefined) throw new ConfigError(problems);
  const settings = buildSettings(file, { emitSkipped: extra.emitSkipped as boolean | undefined, links: extra.links as boolean | undefined });
  return { seeds, settings, extra };
}

function resolveSeeds(raw: unknown, fallback: string[] | undefined): string[] {
  if ((raw === undefined || (Array.isArray(raw) && raw.length === 0)) && fallback) return fallback;
  if (!Array.isArray(raw)) throw new UsageError(`${OPTIONS_SOURCE}: seeds: expected a list of http(s) URLs, got ${showValue(raw)}`);
  // An empty list gets the library's wording; checkSeeds' names the command line.
  if (raw.length === 0) throw new UsageError(`${OPTIONS_SOURCE}: seeds: no seed URL given`);
  return checkSeeds(raw.map((s) => (typeof s === 'string' ? s : String(s))));
}
