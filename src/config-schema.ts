/**
 * The JSON config file format, as one zod schema.
 *
 * Validation and normalisation happen in a single pass: durations, sizes,
 * rates, windows and regexes are parsed by transforms inside the schema, so
 * the parse reports every problem in the file at once, each at its own path,
 * and a successful parse yields ready-to-use numbers. Defaults live here too
 * (as `prefault`s, which the generated JSON Schema shows as `default`), so
 * there is exactly one place that says what an omitted field means.
 *
 * Every object is strict (a misspelt key is an error, not a silently ignored
 * setting) but accepts a `$comment` string, so an example file can explain
 * itself.
 */
import { z } from 'zod';
import { parseDomainKey, type PolicyFields, type PolicyOverride } from './policy.js';
import { MIN_ROBOTS_BYTES } from './robots-rules.js';
import { RATE_PATTERN, WINDOW_PATTERN, parseRate, parseWindow } from './rate.js';
import { DURATION_PATTERN, SIZE_PATTERN, UnitError, parseDuration, parseSize, showValue } from './units.js';
import { VERSION } from './version.js';

/** Used when neither the file nor `--user-agent` sets one. */
export const DEFAULT_USER_AGENT = `crawl/${VERSION} (+https://github.com/crawl-cli/crawl)`;

/** Robots.txt may be cached for at most this long (RFC 9309 §2.4). */
export const MAX_ROBOTS_CACHE_TTL_MS = 86_400_000;

// ---------------------------------------------------------------- field kinds

/** Runs a unit parser as a transform, turning its UnitError into an issue at the field's path. */
function parsedBy<I, T>(input: z.ZodType<I>, parse: (value: I) => T) {
  return input.transform((value, ctx): T => {
    try {
      return parse(value);
    } catch (error) {
      if (!(error instanceof UnitError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: value });
      return z.NEVER;
    }
  });
}

/** The parser's own message for a value of the wrong type, so `true` and `"abc"` read alike. */
function messageFrom(parse: (value: never) => unknown) {
  return (issue: { input?: unknown }): string => {
    try {
      parse(issue.input as never);
    } catch (error) {
      if (error instanceof UnitError) return error.message;
    }
    return `invalid value ${showValue(issue.input)}`;
  };
}

interface DurationOptions {
  /** Zero is refused (a timeout or TTL of 0 means nothing sensible). */
  positive?: boolean;
  /** Upper bound in ms, with how to write it in the message. */
  max?: { ms: number; label: string };
}

/** "30s", "500ms", "1.5m" or a number of ms → ms. */
function duration(options: DurationOptions = {}) {
  const message = messageFrom(parseDuration);
  const input = z.union([z.string().meta({ pattern: DURATION_PATTERN }), z.number().min(0, { error: message })], {
    error: message,
  });
  return parsedBy(input, (value) => {
    const ms = parseDuration(value);
    if (options.positive && ms === 0) throw new UnitError(`expected a duration greater than zero, got ${showValue(value)}`, value);
    if (options.max && ms > options.max.ms) {
      throw new UnitError(`expected a duration of at most ${options.max.label}, got ${showValue(value)}`, value);
    }
    return ms;
  });
}

/** "10MiB", "500KB" or a number of bytes → bytes (at least 1, or `min` with its label). */
function size(min?: { bytes: number; label: string }) {
  const message = messageFrom(parseSize);
  const bytes = z.int({ error: message }).min(1, { error: (i) => `expected a size greater than zero, got ${showValue(i.input)}` });
  const input = z.union([z.string().meta({ pattern: SIZE_PATTERN }), bytes], { error: message });
  return parsedBy(input, (value) => {
    const bytes = parseSize(value);
    if (bytes === 0) throw new UnitError(`expected a size greater than zero, got ${showValue(value)}`, value);
    if (min && bytes < min.bytes) throw new UnitError(`expected at least ${min.label}, got ${showValue(value)}`, value);
    return bytes;
  });
}

function rate() {
  return parsedBy(z.string({ error: messageFrom(parseRate) }).meta({ pattern: RATE_PATTERN }), parseRate);
}

function windows() {
  const item = parsedBy(z.string({ error: messageFrom(parseWindow) }).meta({ pattern: WINDOW_PATTERN }), parseWindow);
  return z.array(item, { error: (i) => `expected a list of windows like ["100/min"], got ${showValue(i.input)}` });
}

/** An integer in [min, max]; one message for wrong type and out of range alike. */
function integer(min: number, max?: number) {
  const range = max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  const error = (issue: { input?: unknown }) => `expected ${range}, got ${showValue(issue.input)}`;
  const base = z.int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}

function boolean() {
  return z.boolean({ error: (i) => `expected true or false, got ${showValue(i.input)}` });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const list = values.map((v) => JSON.stringify(v)).join(', ');
  return z.enum(values, { error: (i) => `expected one of ${list}, got ${showValue(i.input)}` });
}

/** A JavaScript RegExp source (no flags) → compiled RegExp. */
function regexList() {
  const item = z.string({ error: (i) => `expected a regular expression string, got ${showValue(i.input)}` }).transform((source, ctx) => {
    try {
      return new RegExp(source);
    } catch (error) {
      const why = (error as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
      ctx.addIssue({ code: 'custom', message: `invalid regular expression ${JSON.stringify(source)}: ${why}`, input: source });
      return z.NEVER;
    }
  });
  return z.array(item, { error: (i) => `expected a list of regular expressions, got ${showValue(i.input)}` });
}

/** The input side of `schema` as draft 2020-12 JSON Schema (what a user may write). */
function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    override: ({ jsonSchema }) => {
      // z.int() implies safe-integer bounds; spelled out they are noise to a reader.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  }) as Record<string, unknown>;
}

function withoutDialect({ $schema: _dialect, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}

/**
 * Messages for the issues the schema does not word itself (mostly "wrong
 * type" on objects and lists). Pass as the `error` option of a parse.
 */
export const describeIssue: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'a list' : `a ${issue.expected}`;
    return `expected ${expected}, got ${showValue(issue.input)}`;
  }
  return undefined;
};

const comment = () => z.string().optional().describe('Free text for humans; ignored.');

/** A User-Agent header value that starts with a product token (robots.txt groups are matched on it). */
function userAgent() {
  return z.string({ error: (i) => `expected a string, got ${showValue(i.input)}` }).superRefine((value, ctx) => {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+/.test(value) || !/^[\x20-\x7e]+$/.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected printable ASCII starting with a product token like "mybot/1.0", got ${showValue(value)}`,
      });
    }
  });
}

// ---------------------------------------------------------------- policies

/** Maps the file's field names onto PolicyFields, leaving out what the entry does not set. */
function toPolicyOverride(v: {
  rate?: PolicyFields['rate'];
  limits?: PolicyFields['limits'];
  concurrency?: number;
  jitter?: number;
  crawlDelay?: PolicyFields['crawlDelay'];
  maxCrawlDelay?: number;
}): PolicyOverride {
  const out: PolicyOverride = {};
  if (v.rate !== undefined) out.rate = v.rate;
  if (v.limits !== undefined) out.limits = v.limits;
  if (v.concurrency !== undefined) out.concurrency = v.concurrency;
  if (v.jitter !== undefined) out.jitterMs = v.jitter;
  if (v.crawlDelay !== undefined) out.crawlDelay = v.crawlDelay;
  if (v.maxCrawlDelay !== undefined) out.maxCrawlDelayMs = v.maxCrawlDelay;
  return out;
}

const RATE_TEXT =
  'Minimum gap between request starts to one host: "2/s", "30/min", "5/10s", a delay such as "500ms", or "unlimited".';
const LIMITS_TEXT =
  'Extra sliding windows, each "N/period" ("100/min", "2000/h"): no more than N request starts in ANY span of that length.';
const CONCURRENCY_TEXT = 'Requests in flight at once to one host (1-1000).';
const JITTER_TEXT = 'Up to this much random extra delay added to each gap (never subtracted), e.g. "250ms".';
const CRAWL_DELAY_TEXT = 'robots.txt Crawl-delay: "floor" raises the gap to it, "ignore" disregards it.';
const MAX_CRAWL_DELAY_TEXT = 'Crawl-delay values above this are capped (and the cap is reported).';

const policyDefaultsSchema = z
  .strictObject({
    $comment: comment(),
    rate: rate().prefault('1/s').describe(`${RATE_TEXT} Default "1/s".`),
    limits: windows().prefault([]).describe(`${LIMITS_TEXT} Default none.`),
    concurrency: integer(1, 1000).prefault(2).describe(`${CONCURRENCY_TEXT} Default 2.`),
    jitter: duration().prefault('0ms').describe(`${JITTER_TEXT} Default "0ms".`),
    crawlDelay: oneOf(['floor', 'ignore']).prefault('floor').describe(`${CRAWL_DELAY_TEXT} Default "floor".`),
    maxCrawlDelay: duration().prefault('30s').describe(`${MAX_CRAWL_DELAY_TEXT} Default "30s".`),
  })
  .transform((v) => toPolicyOverride(v) as PolicyFields)
  .describe('Politeness for every host that no `domains` entry matches, and for fields a matching entry leaves unset.');

const domainEntrySchema = z
  .strictObject({
    $comment: comment(),
    rate: rate().optional().describe(`${RATE_TEXT} Falls back to defaults.rate.`),
    limits: windows().optional().describe(`${LIMITS_TEXT} Falls back to defaults.limits.`),
    concurrency: integer(1, 1000).optional().describe(`${CONCURRENCY_TEXT} Falls back to defaults.concurrency.`),
    jitter: duration().optional().describe(`${JITTER_TEXT} Falls back to defaults.jitter.`),
    crawlDelay: oneOf(['floor', 'ignore']).optional().describe(`${CRAWL_DELAY_TEXT} Falls back to defaults.crawlDelay.`),
    maxCrawlDelay: duration().optional().describe(`${MAX_CRAWL_DELAY_TEXT} Falls back to defaults.maxCrawlDelay.`),
  })
  .transform(toPolicyOverride);

const DOMAINS_TEXT =
  'Per-host politeness, keyed by "host", "host:port" or "*.suffix" (matches the suffix itself and every subdomain). ' +
  'Lookup: exact host:port, exact host, the longest matching wildcard, then defaults; fields an entry omits come from defaults.';

/**
 * Checks every key and every entry of `domains`, reporting all problems.
 *
 * Entries are parsed here rather than by a catchall schema because zod skips
 * an object's refinements once a child fails with an aborting issue (a
 * non-integer concurrency does that), which would hide bad keys until the
 * entries were fixed: two rounds where one should do.
 */
function parseDomains(value: Record<string, unknown>, ctx: z.core.$RefinementCtx<Record<string, unknown>>) {
  const out: Record<string, PolicyOverride> = {};
  const seen = new Map<string, string>();
  for (const [raw, entry] of Object.entries(value)) {
    if (raw === '$comment') {
      if (typeof entry !== 'string') ctx.addIssue({ code: 'custom', message: `expected a string, got ${showValue(entry)}`, path: [raw] });
      continue;
    }
    const key = parseDomainKey(raw);
    if ('problem' in key) {
      ctx.addIssue({ code: 'custom', message: key.problem, path: [raw] });
    } else if (seen.has(key.key)) {
      ctx.addIssue({ code: 'custom', message: `names the same host as domains[${JSON.stringify(seen.get(key.key))}]`, path: [raw] });
    } else {
      seen.set(key.key, raw);
    }
    const parsed = domainEntrySchema.safeParse(entry, { error: describeIssue });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, path: [raw, ...issue.path] } as z.core.$ZodRawIssue);
    } else if ('key' in key) {
      out[key.key] = parsed.data;
    }
  }
  return out;
}

/** Only describes `domains` for the JSON Schema; validation is parseDomains. */
const domainsDocSchema = z.object({ $comment: comment() }).catchall(domainEntrySchema);

const domainsSchema = z
  .record(z.string(), z.unknown(), { error: (i) => `expected an object, got ${showValue(i.input)}` })
  .transform(parseDomains)
  .meta({
    ...withoutDialect(toJsonSchema(domainsDocSchema)),
    propertyNames: { pattern: String.raw`^(?:\$comment|(?:\*\.)?[^\s/\\?#@*]+)$` },
  })
  .describe(DOMAINS_TEXT);

// ---------------------------------------------------------------- the file

const timeoutObjectSchema = z.strictObject({
  $comment: comment(),
  connect: duration({ positive: true }).prefault('10s').describe('TCP + TLS connection setup. Default "10s".'),
  headers: duration({ positive: true }).prefault('30s').describe('From request sent to response headers received. Default "30s".'),
  body: duration({ positive: true }).prefault('30s').describe('Longest silence while reading the body. Default "30s".'),
});

const timeoutSchema = z
  .union([z.string().meta({ pattern: DURATION_PATTERN }), z.number().min(0, { error: messageFrom(parseDuration) }), timeoutObjectSchema], {
    error: (i) => `expected a duration like "30s" or an object with connect/headers/body, got ${showValue(i.input)}`,
  })
  .transform((value, ctx) => {
    if (typeof value === 'object') return { connectMs: value.connect, headersMs: value.headers, bodyMs: value.body };
    try {
      const ms = parseDuration(value);
      if (ms === 0) throw new UnitError(`expected a duration greater than zero, got ${showValue(value)}`, value);
      return { connectMs: ms, headersMs: ms, bodyMs: ms };
    } catch (error) {
      if (!(error instanceof UnitError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: value });
      return z.NEVER;
    }
  });

const robotsSchema = z.strictObject({
  $comment: comment(),
  enabled: boolean().prefault(true).describe('Fetch and obey robots.txt (RFC 9309). Default true.'),
  maxSize: size({ bytes: MIN_ROBOTS_BYTES, label: '500KiB (RFC 9309 §2.5)' }).prefault('512KiB').describe('robots.txt bytes read; the rest is ignored (RFC 9309 asks for at least 500 KiB). Default "512KiB".'),
  cacheTtl: duration({ positive: true, max: { ms: MAX_ROBOTS_CACHE_TTL_MS, label: '24h' } })
    .prefault('24h')
    .describe('How long a fetched robots.txt is reused, at most "24h". Default "24h".'),
  unavailableRetries: integer(0, 100)
    .prefault(2)
    .describe('Re-fetches of a robots.txt that answered 5xx or was unreachable, before its host is given up (all its URLs skipped). Default 2.'),
  unavailableRetryDelay: duration().prefault('5s').describe('Wait before each such re-fetch. Default "5s".'),
});

/** The config file schema. Parse output is {@link FileConfig}. */
export const configFileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Path or URL of this JSON Schema, for editors.'),
    $comment: comment(),
    userAgent: userAgent()
      .optional()
      .describe('User-Agent header; its product token (before "/") picks the robots.txt group. Default "crawl/<version> (+https://github.com/crawl-cli/crawl)".'),
    concurrency: integer(1, 1000).prefault(16).describe('Requests in flight at once, across all hosts (1-1000). Default 16.'),
    hostKey: oneOf(['host', 'domain'])
      .prefault('host')
      .describe('What shares one politeness budget: "host" (each hostname) or "domain" (all subdomains of a registrable domain). Default "host".'),
    maxDepth: integer(0).optional().describe('Links followed from a seed (seeds are depth 0). Default unlimited.'),
    maxPages: integer(1).optional().describe('Stop after fetching this many pages. Default unlimited.'),
    scope: oneOf(['host', 'domain', 'any'])
      .prefault('host')
      .describe('Which links are followed: "host" (the seeds\' hosts), "domain" (the seeds\' registrable domains) or "any". Default "host".'),
    include: regexList().prefault([]).describe('If set, only URLs matching at least one of these JavaScript regexes (tested against the absolute URL) are crawled. Default none.'),
    exclude: regexList().prefault([]).describe('URLs matching any of these JavaScript regexes are skipped. Default none.'),
    timeout: timeoutSchema
      .prefault({ connect: '10s', headers: '30s', body: '30s' })
      .describe('One duration for all three phases, or an object per phase. Default {"connect": "10s", "headers": "30s", "body": "30s"}.'),
    maxBody: size().prefault('10MiB').describe('Decompressed body bytes read per response; longer bodies are truncated. Default "10MiB".'),
    maxRedirects: integer(0, 100).prefault(10).describe('Redirect hops followed per chain (0-100). Default 10.'),
    maxUrlLength: integer(16, 1_000_000).prefault(2048).describe('Longer URLs are skipped. Default 2048.'),
    respectNofollow: boolean()
      .prefault(true)
      .describe('Honour rel="nofollow", <meta name="robots" content="nofollow"> and X-Robots-Tag: nofollow. Default true.'),
    robots: robotsSchema.prefault({}).describe('robots.txt handling.'),
    defaults: policyDefaultsSchema.prefault({}),
    domains: domainsSchema.prefault({}),
  })
  .meta({ title: 'crawl configuration', description: 'Configuration file for the crawl web crawler (crawler.config.json).' });

/** A validated, normalised config file: durations in ms, sizes in bytes, rates parsed, regexes compiled. */
export type FileConfig = z.output<typeof configFileSchema>;

/** The JSON Schema (draft 2020-12) of the config file, describing what may be written in it. */
export function configJsonSchema(): Record<string, unknown> {
  return toJsonSchema(configFileSchema);
}

/** The exact text of crawler.config.schema.json. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

/**
 * The field kinds the file uses, for callers (the CLI flags) that must accept
 * and reject values exactly as the file does.
 */
export const fieldSchemas = { duration, size, rate, integer, oneOf, regexList, userAgent, boolean };

const POLICY_KEYS = Object.keys(domainEntrySchema.in.shape);

/**
 * The keys valid in the object at `path` (as zod reports it), for "did you
 * mean" hints on unknown keys; empty for paths that hold no fixed object.
 */
export function knownKeysAt(path: readonly PropertyKey[]): readonly string[] {
  const [first, second] = path;
  if (path.length === 0) return Object.keys(configFileSchema.shape);
  if (path.length === 1 && first === 'robots') return Object.keys(robotsSchema.shape);
  if (path.length === 1 && first === 'timeout') return Object.keys(timeoutObjectSchema.shape);
  if (path.length === 1 && first === 'defaults') return POLICY_KEYS;
  if (path.length === 2 && first === 'domains' && typeof second === 'string') return POLICY_KEYS;
  return [];
}
