/**
 * Config file + command-line flags → CrawlSettings.
 *
 * read → JSON.parse → validate/normalise (file-schema.ts) → merge with flags.
 * Precedence is flag, then file, then the schema's defaults. Every problem is
 * collected before anything is thrown, so a user fixes a file in one round
 * instead of one error per run.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { DEFAULT_USER_AGENT, configFileSchema, fieldSchemas, fileDefaults, parseOnce, knownKeysAt, type FileConfig } from './file-schema.js';
import { integerProblem } from './fields.js';
import { createPolicyResolver, type PolicyFields } from './policy-resolver.js';
import type { CrawlSettings } from './settings-types.js';
import { secondsIfBare, showValue } from './units.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { urlList } from './url-list.js';
import { contentFormat, extractFlags, purposeList } from './content-fields.js';
import { cookiePairs, placedSecrets } from './request-schema.js';
import { proxyUrlProblem } from '../fetch/request-syntax.js';
import { parseHeaderLine } from '../fetch/request-headers.js';
import { mergePerIp } from './per-ip-schema.js';
import { renderMode, resourceTypes } from './render-schema.js';
import { keyFilesField, signatureAgentField } from './identity-schema.js';
import { moneyLimit, pricingIdentityProblem } from './pricing-fields.js';

export type { FileConfig } from './file-schema.js';

/** The config file or a flag is unusable. `problems` holds one line per problem; `message` joins them. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: string[];

  constructor(problems: string[], options?: { cause?: unknown }) {
    super(problems.join('\n'), options);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

// ---------------------------------------------------------------- issue formatting

/** `domains["a.com"].limits[0]`: dotted where the key is an identifier, bracketed otherwise. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  path.forEach((segment, i) => {
    // Domain keys are always bracketed: `domains.localhost` would read like a field.
    const isDomainKey = i === 1 && path[0] === 'domains';
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment) && !isDomainKey) out += i === 0 ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  });
  return out;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/**
 * Config keys a user writes from the name of the flag that sets them (`--host-concurrency` sets a host's
 * `concurrency`): too far from the real key for a spelling hint, and exactly what a reader of --help would try.
 */
const FLAG_NAMED_KEYS: Record<string, { inPolicy?: string; atTop: string }> = {
  hostConcurrency: { inPolicy: 'concurrency', atTop: 'defaults.concurrency' },
  renderConcurrency: { atTop: 'renderOptions.concurrency' },
  renderTimeout: { atTop: 'renderOptions.timeout' },
};

/** A hint for an unknown key: a near-miss spelling of a key valid here, or where the key belongs. */
function didYouMean(objectPath: readonly PropertyKey[], key: string): string {
  const named = Object.hasOwn(FLAG_NAMED_KEYS, key) ? FLAG_NAMED_KEYS[key] : undefined;
  if (named !== undefined) {
    if (objectPath.length === 0) return ` (did you mean "${named.atTop}"?)`;
    if (named.inPolicy !== undefined && knownKeysAt(objectPath).includes(named.inPolicy)) return ` (did you mean "${named.inPolicy}"?)`;
  }
  // A per-host field written at the top level is a common slip; said first, as an exact key beats a near miss.
  if (objectPath.length === 0 && knownKeysAt(['defaults']).includes(key)) {
    return ` ("${key}" belongs in "defaults" or a "domains" entry)`;
  }
  let best: string | undefined;
  let bestDistance = 3; // more than two edits away is a different word, not a typo
  for (const known of knownKeysAt(objectPath)) {
    const d = editDistance(key.toLowerCase(), known.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

type Issue = z.core.$ZodIssue;

function isRootTypeMismatch(issues: readonly Issue[]): boolean {
  return issues.every((i) => i.code === 'invalid_type' && i.path.length === 0);
}

/**
 * Turns zod issues into `"<where>: <what>"` lines; `where(path)` names the
 * location. A line said twice (two checks failing one value alike) is said once.
 */
function issueLines(issues: readonly Issue[], where: (path: PropertyKey[]) => string, prefix: PropertyKey[] = []): string[] {
  return [...new Set(allIssueLines(issues, where, prefix))];
}

function allIssueLines(issues: readonly Issue[], where: (path: PropertyKey[]) => string, prefix: PropertyKey[] = []): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${where([...path, key])}: unknown key${didYouMean(path, key)}`);
    } else if (issue.code === 'invalid_union') {
      // "timeout": {"connect": "x"} fails every branch of string | number | object;
      // report the one branch that got past the type check, not "no branch matched".
      const relevant = issue.errors.filter((branch) => !isRootTypeMismatch(branch));
      if (relevant.length === 1) lines.push(...issueLines(relevant[0], where, path));
      else lines.push(`${where(path)}: ${issue.message}`);
    } else {
      lines.push(`${where(path)}: ${issue.message}`);
    }
  }
  return lines;
}

// ---------------------------------------------------------------- the file

/** Validates and normalises parsed JSON; `source` names the file in messages. */
export function validateConfig(raw: unknown, source = 'config'): FileConfig {
  const result = configFileSchema().safeParse(raw, parseOnce);
  if (result.success) return result.data;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError([`${source}: expected a JSON object at the top level, got ${showValue(raw)}`]);
  }
  throw new ConfigError(issueLines(result.error.issues, (path) => (path.length ? `${source}: ${formatPath(path)}` : source)));
}

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8's messages vary by version, and some name no position and quote the
    // whole file over several lines: find the error ourselves (json-syntax.ts).
    const found = findJsonSyntaxError(text);
    if (found) {
      const { line, column } = lineColumn(text, found.offset);
      throw new ConfigError([`${source}: invalid JSON at line ${line}, column ${column}: ${found.message}`], { cause: error });
    }
    const message = (error as Error).message.split('\n')[0];
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : text.length;
    const { line, column } = lineColumn(text, offset);
    const why = message
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .replace(/\s+in JSON at position \d+/, '')
      .replace(/\s+at position \d+/, '');
    throw new ConfigError([`${source}: invalid JSON at line ${line}, column ${column}: ${why}`], { cause: error });
  }
}

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return (error as Error).message;
}

/** Reads, parses and validates a config file. Throws ConfigError naming `path` as given. */
export async function loadConfigFile(path: string): Promise<FileConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`${path}: cannot read config: ${describeReadError(error)}`], { cause: error });
  }
  // Editors on Windows like to start UTF-8 files with a byte-order mark, which JSON.parse rejects.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return validateConfig(parseJson(text, path), path);
}

// ---------------------------------------------------------------- flags

/** Flag values as typed on the command line (numbers may also be passed as numbers). */
export interface CliOverrides {
  /** `--user-agent`: replaces `userAgent`. */
  userAgent?: string;
  /** `--concurrency`: global requests in flight (1-1000). */
  concurrency?: string | number;
  /** `--rate`: replaces `defaults.rate`, so it applies to every domain entry that sets no rate of its own. */
  rate?: string;
  /** `--host-concurrency`: replaces `defaults.concurrency`, likewise for entries without their own. */
  hostConcurrency?: string | number;
  /** `--max-depth` (>= 0). */
  maxDepth?: string | number;
  /** `--max-pages` (>= 1). */
  maxPages?: string | number;
  /** `--scope`: host | domain | any. */
  scope?: string;
  /** `--include` (repeatable): replaces the file's list. */
  include?: string[];
  /** `--exclude` (repeatable): replaces the file's list. */
  exclude?: string[];
  /** `--timeout`: one duration for connect, headers and body (the total deadline is raised to it if shorter); a bare number is seconds, as in wget and curl. */
  timeout?: string;
  /** `--max-body`: cap on decompressed body bytes. */
  maxBody?: string;
  /** `--no-robots` sets false. */
  robots?: boolean;
  /** `--emit-skipped`: also write a record per skipped URL. Default false. */
  emitSkipped?: boolean;
  /** `--links`: include each page's link list. Default false. */
  links?: boolean;
  /** `--allow-private`: lift the SSRF guard (replaces `allowPrivate`). */
  allowPrivate?: boolean;
  /** `--max-queued` (>= 1): replaces `maxQueued`. */
  maxQueued?: string | number;
  /** `--max-pages-per-host` (>= 1): replaces `defaults.maxPagesPerHost`, so a domain entry's own value still wins. */
  maxPagesPerHost?: string | number;
  /** `--content text|html|markdown`: replaces `content`. */
  content?: string;
  /** `--max-content <size>`: replaces `maxContent`. */
  maxContent?: string;
  /** `--extract name=selector` (repeatable): added to the file's `extract`; a name in both takes the flag's. */
  extract?: string[];
  /** `--archive-noarchive`: replaces `archiveNoarchive`. */
  archiveNoarchive?: boolean;
  /** `--fetch-denied`: replaces `fetchDenied`. */
  fetchDenied?: boolean;
  /** `--follow-canonical`: replaces `followCanonical`. */
  followCanonical?: boolean;
  /** `--purpose LIST`: replaces `purpose`. */
  purpose?: string;
  /** `--sitemap` (repeatable): sitemap files that seed the crawl; replaces the file's `sitemaps`. */
  sitemap?: string[];
  /** `--sitemaps`: also use the seeds' robots.txt Sitemap: lines (`robotsSitemaps`). */
  sitemaps?: boolean;
  /** `--check-links`: check out-of-scope links instead of skipping them (`checkLinks`). */
  checkLinks?: boolean;
  /** `--header 'Name: value'` (repeatable): added to `defaults.headers` (a flag's value wins there; a domain entry's own value for the same name still wins for its hosts). */
  headers?: string[];
  /** `--proxy URL`: replaces `defaults.proxy`; a domain entry's own `proxy` still wins. */
  proxy?: string;
  /** `--cookie name=value` (repeatable): replaces `cookies.send`. */
  cookies?: string[];
  /** `--cookie-jar FILE`: replaces `cookies.jar`. */
  cookieJar?: string;
  /** `--insecure`: replaces `tls.insecure`. */
  insecure?: boolean;
  /** `--ca FILE`: replaces `tls.ca`. */
  ca?: string;
  /** `--ip-rate`: replaces `perIp.rate`, and turns per-IP limits on. */
  ipRate?: string;
  /** `--ip-concurrency` (1-1000): replaces `perIp.concurrency`, and turns per-IP limits on. */
  ipConcurrency?: string | number;
  /** `--render [auto]`: replaces `render` (and so `defaults.render`); a domain entry's own `render` still wins. */
  render?: string | boolean;
  /** `--render-concurrency` (1-64): replaces `renderOptions.concurrency`. */
  renderConcurrency?: string | number;
  /** `--render-timeout`: replaces `renderOptions.timeout`; a bare number is seconds. */
  renderTimeout?: string;
  /** `--render-block image,font` ("none" for none): replaces `renderOptions.block`. */
  renderBlock?: string;
  /** `--browser PATH`: replaces `renderOptions.browser`. */
  browser?: string;
  /** `--http2`: replaces `defaults.http2`; a domain entry's own `http2` still wins. */
  http2?: boolean;
  /** `--no-latency-backoff` (false): replaces `defaults.latencyBackoff`; a domain entry's own `latencyBackoff` still wins. */
  latencyBackoff?: boolean;
  /** `--sign-key FILE` (once, or twice during a rotation: new, then old): replaces `identity.key`. */
  signKey?: string[];
  /** `--signature-agent URL`: replaces `identity.signatureAgent`. */
  signatureAgent?: string;
  /** `--max-price AMOUNT`: replaces `maxPrice`. */
  maxPrice?: string;
  /** `--budget TOTAL`: replaces `budget`. */
  budget?: string;
}

const FLAG_NAMES: Record<keyof CliOverrides, string> = {
  userAgent: '--user-agent',
  concurrency: '--concurrency',
  rate: '--rate',
  hostConcurrency: '--host-concurrency',
  maxDepth: '--max-depth',
  maxPages: '--max-pages',
  scope: '--scope',
  include: '--include',
  exclude: '--exclude',
  timeout: '--timeout',
  maxBody: '--max-body',
  robots: '--robots',
  emitSkipped: '--emit-skipped',
  links: '--links',
  allowPrivate: '--allow-private',
  maxQueued: '--max-queued',
  maxPagesPerHost: '--max-pages-per-host',
  content: '--content',
  maxContent: '--max-content',
  extract: '--extract',
  followCanonical: '--follow-canonical',
  fetchDenied: '--fetch-denied',
  archiveNoarchive: '--archive-noarchive',
  purpose: '--purpose',
  sitemap: '--sitemap',
  sitemaps: '--sitemaps',
  checkLinks: '--check-links',
  headers: '--header',
  proxy: '--proxy',
  cookies: '--cookie',
  cookieJar: '--cookie-jar',
  insecure: '--insecure',
  ca: '--ca',
  ipRate: '--ip-rate',
  ipConcurrency: '--ip-concurrency',
  render: '--render',
  renderConcurrency: '--render-concurrency',
  renderTimeout: '--render-timeout',
  renderBlock: '--render-block',
  browser: '--browser',
  http2: '--http2',
  latencyBackoff: '--no-latency-backoff',
  signKey: '--sign-key',
  signatureAgent: '--signature-agent',
  maxPrice: '--max-price',
  budget: '--budget',
};

/**
 * "16" → 16 with the file's range checks and messages; a bad value is echoed
 * as typed ("9007199254740993", not the double it rounds to) in one line.
 */
function intFlag(min: number, max?: number) {
  const field = fieldSchemas.integer(min, max);
  return z
    .unknown()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const typed = typeof value === 'string' ? value : undefined;
      const asNumber = typed !== undefined && /^\s*-?\d+\s*$/.test(typed) ? Number(typed) : value;
      const problem = integerProblem(asNumber, min, max, typed);
      const parsed = problem === undefined ? field.safeParse(asNumber) : undefined;
      if (parsed?.success) return parsed.data;
      ctx.addIssue({ code: 'custom', message: problem ?? `expected an integer, got ${showValue(value)}` });
      return z.NEVER;
    })
    .optional();
}

/**
 * Each flag's schema, built only for the flags given: most crawls give a few
 * flags or none, and building all forty was ~5 ms of every start-up. Parsed
 * in this order, so problems are reported in it.
 */
const FLAG_SCHEMAS = {
  userAgent: () => fieldSchemas.userAgent().optional(),
  concurrency: () => intFlag(1, 1000),
  rate: () => fieldSchemas.rate().optional(),
  hostConcurrency: () => intFlag(1, 1000),
  maxDepth: () => intFlag(0),
  maxPages: () => intFlag(1),
  scope: () => fieldSchemas.oneOf(['host', 'domain', 'any']).optional(),
  include: () => fieldSchemas.regexList().optional(),
  exclude: () => fieldSchemas.regexList().optional(),
  // `--timeout 5` is 5 s, as wget and curl read it (a bare number in the file is still ms, like every duration there).
  timeout: () => z.preprocess(secondsIfBare, fieldSchemas.duration({ positive: true })).optional(),
  maxBody: () => fieldSchemas.size().optional(),
  robots: () => fieldSchemas.boolean().optional(),
  emitSkipped: () => fieldSchemas.boolean().optional(),
  links: () => fieldSchemas.boolean().optional(),
  allowPrivate: () => fieldSchemas.boolean().optional(),
  maxQueued: () => intFlag(1),
  maxPagesPerHost: () => intFlag(1),
  content: () => contentFormat().optional(),
  maxContent: () => fieldSchemas.size().optional(),
  extract: () => extractFlags().optional(),
  followCanonical: () => fieldSchemas.boolean().optional(),
  fetchDenied: () => fieldSchemas.boolean().optional(),
  archiveNoarchive: () => fieldSchemas.boolean().optional(),
  purpose: () => purposeList().optional(),
  sitemap: () => urlList().optional(),
  sitemaps: () => fieldSchemas.boolean().optional(),
  checkLinks: () => fieldSchemas.boolean().optional(),
  headers: () =>
    z
      .array(z.string())
      .optional()
      .transform((lines, ctx) => (lines === undefined ? undefined : headerFlags(lines, ctx))),
  proxy: () =>
    z
      .string()
      .optional()
      .superRefine((value, ctx) => {
        const problem = value === undefined ? undefined : proxyUrlProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
  cookies: () => cookiePairs().optional(),
  cookieJar: () => z.string().min(1, { error: 'expected a file path' }).optional(),
  insecure: () => fieldSchemas.boolean().optional(),
  ca: () => z.string().min(1, { error: 'expected a file path' }).optional(),
  ipRate: () => fieldSchemas.rate().optional(),
  ipConcurrency: () => intFlag(1, 1000),
  render: () => renderMode().optional(),
  renderConcurrency: () => intFlag(1, 64),
  renderTimeout: () => z.preprocess(secondsIfBare, fieldSchemas.duration({ positive: true })).optional(),
  renderBlock: () => resourceTypes().optional(),
  browser: () => z.string().min(1, { error: 'expected a path to a Chromium executable' }).optional(),
  http2: () => fieldSchemas.boolean().optional(),
  latencyBackoff: () => fieldSchemas.boolean().optional(),
  signKey: () => keyFilesField().optional(),
  signatureAgent: () => signatureAgentField().optional(),
  maxPrice: () => moneyLimit().optional(),
  budget: () => moneyLimit().optional(),
} satisfies Record<keyof CliOverrides, () => z.ZodType>;

/** `--header` lines → lowercased name → value; each bad line is reported at its own index. */
function headerFlags(lines: string[], ctx: z.core.$RefinementCtx): Record<string, string> {
  const out: Record<string, string> = {};
  lines.forEach((line, index) => {
    const parsed = parseHeaderLine(line);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem, path: [index] });
    else out[parsed.name] = parsed.value;
  });
  return out;
}

type ParsedFlags = { [K in keyof typeof FLAG_SCHEMAS]?: z.output<ReturnType<(typeof FLAG_SCHEMAS)[K]>> };

function parseFlags(cli: CliOverrides): ParsedFlags {
  const flags: Record<string, unknown> = {};
  const issues: z.core.$ZodIssue[] = [];
  for (const [name, schema] of Object.entries(FLAG_SCHEMAS)) {
    const value = cli[name as keyof CliOverrides];
    if (value === undefined) continue;
    const result = schema().safeParse(value, parseOnce);
    if (result.success) flags[name] = result.data;
    else for (const issue of result.error.issues) issues.push({ ...issue, path: [name, ...issue.path] });
  }
  if (issues.length === 0) return flags;
  const flag = (path: PropertyKey[]) => FLAG_NAMES[path[0] as keyof CliOverrides] ?? `--${String(path[0])}`;
  throw new ConfigError(issueLines(issues, flag));
}

/**
 * Merges a validated file (or none) with command-line flags: flag wins over
 * file wins over default. Throws ConfigError naming each bad flag.
 */
export function buildSettings(file: FileConfig | undefined, cli: CliOverrides): CrawlSettings {
  const flags = parseFlags(cli);
  const base = file ?? fileDefaults();
  const maxPrice = flags.maxPrice ?? base.maxPrice;
  const unsigned = pricingIdentityProblem(maxPrice, (flags.signKey ?? base.identity?.key)?.[0]);
  if (unsigned !== undefined) throw new ConfigError([unsigned]);
  // Overriding `defaults` (not each entry) is what makes a domain entry's own
  // rate still win over --rate while entries without one follow the flag.
  const defaults: PolicyFields = {
    ...base.defaults,
    ...(flags.rate !== undefined && { rate: flags.rate }),
    ...(flags.hostConcurrency !== undefined && { concurrency: flags.hostConcurrency }),
    ...(flags.maxPagesPerHost !== undefined && { maxPagesPerHost: flags.maxPagesPerHost }),
    ...(flags.headers !== undefined && { headers: { ...base.defaults.headers, ...flags.headers } }),
    ...(flags.proxy !== undefined && { proxy: flags.proxy }),
    ...(flags.http2 !== undefined && { http2: flags.http2 }),
    ...(flags.latencyBackoff !== undefined && { latencyBackoff: flags.latencyBackoff }),
    // --render, else the file's top-level `render`, stands for defaults.render.
    ...((flags.render ?? base.render) !== undefined && { render: (flags.render ?? base.render)! }),
  };
  // --timeout says nothing about the total deadline: the file's stays, raised to the flag if shorter.
  const timeouts =
    flags.timeout !== undefined
      ? { connectMs: flags.timeout, headersMs: flags.timeout, bodyMs: flags.timeout, totalMs: Math.max(flags.timeout, base.timeout.totalMs) }
      : { ...base.timeout };
  return {
    userAgent: flags.userAgent ?? base.userAgent ?? DEFAULT_USER_AGENT,
    concurrency: flags.concurrency ?? base.concurrency,
    hostKey: base.hostKey,
    maxDepth: flags.maxDepth ?? base.maxDepth,
    maxPages: flags.maxPages ?? base.maxPages ?? Infinity,
    maxQueued: flags.maxQueued ?? base.maxQueued,
    traps: { maxPathRepeats: base.traps.maxPathRepeats, maxQueryParams: base.traps.maxQueryParams, maxQueryVariants: base.traps.maxQueryVariants },
    scope: flags.scope ?? base.scope,
    include: flags.include ?? base.include,
    exclude: flags.exclude ?? base.exclude,
    timeouts,
    maxBodyBytes: flags.maxBody ?? base.maxBody,
    maxUrlLength: base.maxUrlLength,
    maxRedirects: base.maxRedirects,
    robots: {
      enabled: flags.robots ?? base.robots.enabled,
      maxBytes: base.robots.maxSize,
      cacheTtlMs: base.robots.cacheTtl,
      unavailableRetries: base.robots.unavailableRetries,
      unavailableRetryDelayMs: base.robots.unavailableRetryDelay,
    },
    respectNofollow: base.respectNofollow,
    emitSkipped: flags.emitSkipped ?? false,
    emitLinks: flags.links ?? false,
    content: {
      format: flags.content ?? base.content ?? null,
      maxBytes: flags.maxContent ?? base.maxContent,
      extract: [...base.extract.filter((rule) => !flags.extract?.some((f) => f.name === rule.name)), ...(flags.extract ?? [])],
    },
    followCanonical: flags.followCanonical ?? base.followCanonical,
    fetchDenied: flags.fetchDenied ?? base.fetchDenied,
    archiveNoarchive: flags.archiveNoarchive ?? base.archiveNoarchive,
    purpose: flags.purpose ?? base.purpose,
    pricing: { maxPrice: maxPrice ?? null, budget: flags.budget ?? base.budget ?? null },
    sitemaps: { urls: flags.sitemap ?? base.sitemaps, fromRobots: flags.sitemaps ?? base.robotsSitemaps },
    checkLinks: flags.checkLinks ?? base.checkLinks,
    network: { allowPrivate: flags.allowPrivate ?? base.allowPrivate, allowNetworks: base.allowNetworks },
    perIp: mergePerIp(base.perIp, { rate: flags.ipRate, concurrency: flags.ipConcurrency }),
    policyFor: createPolicyResolver(base.domains, defaults),
    http2: defaults.http2 || Object.values(base.domains).some((entry) => entry.http2 === true),
    render: {
      // The browser is needed when any host may render: the default or any domain entry.
      enabled: defaults.render !== false || Object.values(base.domains).some((entry) => entry.render !== undefined && entry.render !== false),
      browser: flags.browser ?? base.renderOptions.browser ?? null,
      concurrency: flags.renderConcurrency ?? base.renderOptions.concurrency,
      timeoutMs: flags.renderTimeout ?? base.renderOptions.timeout,
      block: flags.renderBlock ?? base.renderOptions.block,
      blockUrls: base.renderOptions.blockUrls,
      recycleAfter: base.renderOptions.recycleAfter,
      cacheBytes: base.renderOptions.cacheSize,
      maxBrowserMemoryBytes: base.renderOptions.maxBrowserMemory,
    },
    requests: {
      cookies: { send: flags.cookies ?? base.cookies.send, jar: flags.cookieJar ?? base.cookies.jar ?? null, keep: base.cookies.keep },
      tls: { insecure: flags.insecure ?? base.tls.insecure, ca: flags.ca ?? base.tls.ca ?? null },
      secrets: placedSecrets(defaults, base.domains),
    },
    identity: identityOf(base, flags),
  };
}

/** `identity` from the file and the flags (each flag replaces its field); a key without a Signature-Agent, or the reverse, is one line. */
function identityOf(base: FileConfig, flags: ParsedFlags): CrawlSettings['identity'] {
  const keys = flags.signKey ?? base.identity?.key;
  const signatureAgent = flags.signatureAgent ?? base.identity?.signatureAgent;
  if (keys === undefined && signatureAgent === undefined) return null;
  if (keys === undefined) throw new ConfigError(['--signature-agent: goes with --sign-key FILE (or identity.key): there is nothing to sign with']);
  if (signatureAgent === undefined) {
    throw new ConfigError(['--sign-key: goes with --signature-agent https://ORIGIN (or identity.signatureAgent): verifiers find the public key there']);
  }
  return { keys, signatureAgent };
}
