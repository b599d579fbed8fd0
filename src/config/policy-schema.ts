/**
 * The policy part of the config file: `defaults` and `domains`, the politeness
 * a host gets (rate, windows, concurrency, retries, throttling, host
 * failures). Field texts, defaults and parsing live here; file-schema.ts
 * places these schemas in the file and runs checkMergedPolicies on the whole
 * of it, the one place that sees `defaults` and `domains` together.
 */
import { z } from 'zod';
import { comment, describedBy, fieldSchemas, once, parseOnce } from './fields.js';
import { parseDomainKey, policyConflicts, type PolicyConflict, type PolicyFields, type PolicyOverride } from './policy-resolver.js';
import { showValue } from './units.js';
import { authField, headersField, proxyField } from './request-schema.js';
import { RENDER_TEXT, renderMode } from './render-schema.js';
import { purposeList } from './content-fields.js';

const { duration, rate, windows, integer, statusList, boolean, oneOf, hours, timezone } = fieldSchemas;

/**
 * A host's page budget when the config sets none: more than a polite crawl
 * gets through in a day at 1/s, far less than a site that generates pages
 * without end would hand out. Raise it in `domains` for a site crawled whole.
 */
export const DEFAULT_MAX_PAGES_PER_HOST = 100_000;

/** The highest `maxRetryAfter` accepted: no server gets to park a host for more than a day. */
export const MAX_RETRY_AFTER_LIMIT_MS = 86_400_000;

/** A parsed policy object in the file's own field names; the defaults' (every field set) fits it too. */
type PolicyInput = z.output<ReturnType<typeof domainEntryObject>>;

/**
 * Maps the file's field names onto PolicyFields, leaving out what the entry
 * does not set. `backoff` and `hostFailures` are flattened so each sub-field
 * falls back to defaults on its own.
 */
function toPolicyOverride(v: PolicyInput): PolicyOverride {
  const fields: PolicyOverride = {
    rate: v.rate,
    limits: v.limits,
    concurrency: v.concurrency,
    jitterMs: v.jitter,
    crawlDelay: v.crawlDelay,
    maxCrawlDelayMs: v.maxCrawlDelay,
    retries: v.retries,
    retryStatuses: v.retryStatuses,
    backoffBaseMs: v.backoff?.base,
    backoffCapMs: v.backoff?.cap,
    throttleStatuses: v.throttleStatuses,
    maxRetryAfterMs: v.maxRetryAfter,
    throttleRetries: v.throttleRetries,
    adaptive: v.adaptive,
    latencyBackoff: v.latencyBackoff,
    hostFailurePause: v.hostFailures?.pause,
    hostFailureGiveUp: v.hostFailures?.giveUp,
    maxPagesPerHost: v.maxPagesPerHost,
    headers: v.headers,
    proxy: v.proxy,
    auth: v.auth,
    render: v.render,
    http2: v.http2,
    hours: v.hours,
    timezone: v.timezone,
    purpose: v.purpose,
  };
  // An unset field must be absent, not undefined: `{ ...defaults, ...entry }` style merges would copy the undefined.
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

const TEXT = {
  rate: 'Minimum gap between request starts to one host: "2/s", "30/min", "5/10s", a delay such as "500ms", or "unlimited".',
  limits: 'Extra sliding windows, each "N/period" ("100/min", "2000/h"): no more than N request starts in ANY span of that length.',
  concurrency: 'Requests in flight at once to one host (1-1000).',
  jitter: 'Up to this much random extra delay added to each gap (never subtracted), e.g. "250ms".',
  crawlDelay: 'robots.txt Crawl-delay: "floor" raises the gap to it, "ignore" disregards it.',
  maxCrawlDelay: 'Crawl-delay values above this are capped (and the cap is reported).',
  retries:
    'Retries of one URL after a transient failure (connection reset, timeout, or a `retryStatuses` answer), 0-20. ' +
    'A retry goes back through the scheduler, so it waits for the host like any request.',
  retryStatuses: 'HTTP statuses retried as transient failures (100-599, each once; none may also be in throttleStatuses).',
  backoff:
    'Exponential backoff with jitter, for retries and for throttling without a Retry-After: ' +
    'the first delay is about `base`, doubling each time up to `cap` (base <= cap).',
  backoffBase: 'First backoff delay, greater than zero.',
  backoffCap: 'Longest backoff delay, greater than zero.',
  throttleStatuses:
    'HTTP statuses that mean "slow down": the host is paused (until Retry-After, else for the backoff), its rate lowered when ' +
    '`adaptive`, and the URL queued again (100-599, each once; none may also be in retryStatuses).',
  maxRetryAfter: 'A longer Retry-After is cut to this (and the cut is reported); greater than zero, at most "24h".',
  throttleRetries: 'Times one URL may be throttled before it gets a THROTTLED error record (0-1000; counted apart from `retries`).',
  adaptive: "Lower the host's rate when it throttles, and recover it gradually after successes, never above the configured rate.",
  latencyBackoff:
    "Lower the host's rate early when its time to first byte climbs above its own baseline (a recent median past 1.5x), down to 1/8 of " +
    'the configured rate at most, and recover it slowly once the time comes back down, never above the configured rate.',
  hostFailures:
    'Consecutive failures of one host (refused, timeouts, 5xx): after `pause` the host is paused with growing backoff; ' +
    'after `giveUp` its remaining URLs are skipped as "host-failed" (1 <= pause <= giveUp).',
  pause: 'Consecutive failures that pause the host.',
  giveUp: 'Consecutive failures that give the host up for this crawl.',
  maxPagesPerHost:
    'URLs of one host key accepted into the crawl (seeds and redirect targets included); past it, new ones are skipped as "max-pages-per-host" ' +
    '(a trap defence: a site that generates pages without end cannot keep the crawl going). Counted per run.',
  headers:
    'Extra request headers, {"Name": "value"}; a value may be {"env": "VARIABLE"} to read it from the environment. ' +
    'Not Host, Content-Length, Connection, User-Agent (userAgent), Cookie (cookies) or Authorization (auth).',
  proxy:
    'Proxy for this host\'s requests, "http://[user:pass@]proxy:port" (CONNECT for https URLs, absolute-form GET for http ones), or false for a direct connection.',
  hours:
    'Quiet hours: the daily window "HH:MM-HH:MM" in `timezone` in which the host is crawled, e.g. "22:00-06:00" (it may cross midnight; ' +
    '"00:00-24:00" is always). Outside it the host is paused, not dropped: its URLs wait for the window to open.',
  timezone: 'The IANA time zone `hours` is read in, e.g. "Europe/Berlin" (DST changes included).',
  http2:
    "Offer HTTP/2 to this host's https servers (TLS ALPN): when the server takes it, one connection carries up to `concurrency` requests at once; " +
    'otherwise HTTP/1.1 as usual. Rates, windows, concurrency and robots.txt are unchanged. Not through a proxy.',
} as const;

/** `"Default 2."` for defaults, `"Falls back to defaults.x."` for an entry's field. */
const inDefaults = (field: keyof typeof TEXT, shown: string) => `${TEXT[field]} Default ${shown}.`;
const inEntry = (field: keyof typeof TEXT, path: string) => `${TEXT[field]} Falls back to defaults.${path}.`;

export const policyDefaultsSchema = once(() =>
  z
    .strictObject({
      $comment: comment(),
      rate: rate().prefault('1/s').describe(inDefaults('rate', '"1/s"')),
      limits: windows().prefault([]).describe(inDefaults('limits', 'none')),
      concurrency: integer(1, 1000).prefault(2).describe(inDefaults('concurrency', '2')),
      jitter: duration().prefault('0ms').describe(inDefaults('jitter', '"0ms"')),
      crawlDelay: oneOf(['floor', 'ignore']).prefault('floor').describe(inDefaults('crawlDelay', '"floor"')),
      maxCrawlDelay: duration().prefault('30s').describe(inDefaults('maxCrawlDelay', '"30s"')),
      retries: integer(0, 20).prefault(2).describe(inDefaults('retries', '2')),
      retryStatuses: statusList().prefault([500, 502, 504]).describe(inDefaults('retryStatuses', '[500, 502, 504]')),
      backoff: z
        .strictObject({
          $comment: comment(),
          base: duration({ positive: true }).prefault('1s').describe(inDefaults('backoffBase', '"1s"')),
          cap: duration({ positive: true }).prefault('60s').describe(inDefaults('backoffCap', '"60s"')),
        })
        .prefault({ base: '1s', cap: '60s' })
        .describe(inDefaults('backoff', '{"base": "1s", "cap": "60s"}')),
      throttleStatuses: statusList().prefault([429, 503]).describe(inDefaults('throttleStatuses', '[429, 503]')),
      maxRetryAfter: duration({ positive: true, max: { ms: MAX_RETRY_AFTER_LIMIT_MS, label: '24h' } })
        .prefault('10m')
        .describe(inDefaults('maxRetryAfter', '"10m"')),
      throttleRetries: integer(0, 1000).prefault(10).describe(inDefaults('throttleRetries', '10')),
      adaptive: boolean().prefault(true).describe(inDefaults('adaptive', 'true')),
      latencyBackoff: boolean().prefault(true).describe(inDefaults('latencyBackoff', 'true')),
      hostFailures: z
        .strictObject({
          $comment: comment(),
          pause: integer(1).prefault(5).describe(inDefaults('pause', '5')),
          giveUp: integer(1).prefault(15).describe(inDefaults('giveUp', '15')),
        })
        .prefault({ pause: 5, giveUp: 15 })
        .describe(inDefaults('hostFailures', '{"pause": 5, "giveUp": 15}')),
      maxPagesPerHost: integer(1).prefault(DEFAULT_MAX_PAGES_PER_HOST).describe(inDefaults('maxPagesPerHost', '100000')),
      headers: headersField().prefault({}).describe(inDefaults('headers', 'none')),
      proxy: proxyField().optional().describe(`${TEXT.proxy} Default none: HTTP_PROXY, HTTPS_PROXY and NO_PROXY from the environment decide.`),
      render: renderMode().prefault(false).describe(`${RENDER_TEXT} Default false.`),
      http2: boolean().prefault(false).describe(inDefaults('http2', 'false')),
      hours: hours().optional().describe(inDefaults('hours', 'none: any time')),
      timezone: timezone().prefault('UTC').describe(inDefaults('timezone', '"UTC"')),
    })
    // Every field has a prefault, so the override is complete; the test of an
    // empty file's defaults pins that (a cast cannot).
    .transform((v) => toPolicyOverride(v) as PolicyFields)
    .describe('Politeness for every host that no `domains` entry matches, and for fields a matching entry leaves unset.'),
);

const domainEntryObject = once(() =>
  z.strictObject({
    $comment: comment(),
    rate: rate().optional().describe(inEntry('rate', 'rate')),
    limits: windows().optional().describe(inEntry('limits', 'limits')),
    concurrency: integer(1, 1000).optional().describe(inEntry('concurrency', 'concurrency')),
    jitter: duration().optional().describe(inEntry('jitter', 'jitter')),
    crawlDelay: oneOf(['floor', 'ignore']).optional().describe(inEntry('crawlDelay', 'crawlDelay')),
    maxCrawlDelay: duration().optional().describe(inEntry('maxCrawlDelay', 'maxCrawlDelay')),
    retries: integer(0, 20).optional().describe(inEntry('retries', 'retries')),
    retryStatuses: statusList().optional().describe(inEntry('retryStatuses', 'retryStatuses')),
    backoff: z
      .strictObject({
        $comment: comment(),
        base: duration({ positive: true }).optional().describe(inEntry('backoffBase', 'backoff.base')),
        cap: duration({ positive: true }).optional().describe(inEntry('backoffCap', 'backoff.cap')),
      })
      .optional()
      .describe(`${TEXT.backoff} Each sub-field falls back to defaults.backoff on its own.`),
    throttleStatuses: statusList().optional().describe(inEntry('throttleStatuses', 'throttleStatuses')),
    maxRetryAfter: duration({ positive: true, max: { ms: MAX_RETRY_AFTER_LIMIT_MS, label: '24h' } })
      .optional()
      .describe(inEntry('maxRetryAfter', 'maxRetryAfter')),
    throttleRetries: integer(0, 1000).optional().describe(inEntry('throttleRetries', 'throttleRetries')),
    adaptive: boolean().optional().describe(inEntry('adaptive', 'adaptive')),
    latencyBackoff: boolean().optional().describe(inEntry('latencyBackoff', 'latencyBackoff')),
    hostFailures: z
      .strictObject({
        $comment: comment(),
        pause: integer(1).optional().describe(inEntry('pause', 'hostFailures.pause')),
        giveUp: integer(1).optional().describe(inEntry('giveUp', 'hostFailures.giveUp')),
      })
      .optional()
      .describe(`${TEXT.hostFailures} Each sub-field falls back to defaults.hostFailures on its own.`),
    maxPagesPerHost: integer(1).optional().describe(inEntry('maxPagesPerHost', 'maxPagesPerHost')),
    headers: headersField().optional().describe(`${TEXT.headers} Added to defaults.headers; a header named in both takes this entry's value.`),
    proxy: proxyField().optional().describe(inEntry('proxy', 'proxy')),
    render: renderMode().optional().describe(`${RENDER_TEXT} Falls back to defaults.render.`),
    http2: boolean().optional().describe(inEntry('http2', 'http2')),
    hours: hours().optional().describe(inEntry('hours', 'hours')),
    timezone: timezone().optional().describe(inEntry('timezone', 'timezone')),
    purpose: purposeList()
      .optional()
      .describe(
        'What the output of this entry\'s hosts is for, replacing the top-level "purpose" for them: "search", "train-ai" (or "ai-train"), "ai-input" (or "ai-use"), "tdm"; [] declares none. Default: the top-level "purpose".',
      ),
    auth: authField()
      .optional()
      .describe(
        'HTTP credentials for this entry\'s hosts only: {"basic": {"user": "u", "password": "p"}} or {"bearer": "token"}; ' +
          'a password or token may be {"env": "VARIABLE"}. Never sent to another host (a redirect elsewhere goes without), never written to records or logs.',
      ),
  }),
);

const domainEntrySchema = once(() => domainEntryObject().transform(toPolicyOverride));

const DOMAINS_TEXT =
  'Per-host politeness, keyed by "host", "host:port" or "*.suffix" (matches the suffix itself and every subdomain). ' +
  'Lookup: exact host:port, exact host, the longest matching wildcard, then defaults; fields an entry omits come from defaults.';

/**
 * The key each parsed `domains` entry was written as, by normalised key, so a
 * problem found after normalisation is still reported where the user wrote
 * it. Kept beside the parse output rather than in it: the output is the
 * DomainPolicies the resolver takes, and should stay exactly that.
 */
const writtenKeys = new WeakMap<object, ReadonlyMap<string, string>>();

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
    let target: string | undefined;
    if ('problem' in key) {
      ctx.addIssue({ code: 'custom', message: key.problem, path: [raw] });
    } else if (seen.has(key.key)) {
      ctx.addIssue({ code: 'custom', message: `names the same host as domains[${JSON.stringify(seen.get(key.key))}]`, path: [raw] });
    } else {
      seen.set(key.key, raw);
      target = key.key;
    }
    const parsed = domainEntrySchema().safeParse(entry, parseOnce);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, path: [raw, ...issue.path] } as z.core.$ZodRawIssue);
      // The fields that did parse still take part in the two-field rules, reported in the same round.
      // (The file has failed, so this output is only ever read by checkMergedPolicies.)
      if (target !== undefined) out[target] = fieldsThatParse(entry);
    } else if (target !== undefined) {
      out[target] = parsed.data;
    }
  }
  writtenKeys.set(out, seen);
  return out;
}

export const domainsSchema = once(() =>
  describedBy(
    z
      .record(z.string(), z.unknown(), { error: (i) => `expected an object, got ${showValue(i.input)}` })
      .transform(parseDomains)
      .meta({ propertyNames: { pattern: String.raw`^(?:\$comment|(?:\*\.)?[^\s/\\?#@*]+)$` } })
      .describe(DOMAINS_TEXT),
    // Only describes `domains` for the JSON Schema; validation is parseDomains.
    z.object({ $comment: comment() }).catchall(domainEntrySchema()),
  ),
);

/**
 * Reports the two-field rules (policyConflicts) of `defaults` and of every
 * entry as merged with defaults. It has to sit on the whole file, the one
 * place that sees both, and it runs even when unrelated fields failed, so the
 * user still gets every problem in one round. Parts that failed themselves
 * are left out (their values cannot be trusted and their own problems are
 * already reported): parseDomains keeps only the fields of a failed entry that
 * parse, and when `defaults` failed, its fields that failed are left out.
 *
 * A conflict is reported at a field the user wrote. In `defaults` every field
 * is present (the schema fills them in), so a field equal to its built-in
 * default counts as not written: the built-in defaults never conflict with
 * each other, so a conflict always involves a field that differs.
 */
export function checkMergedPolicies(file: { defaults: PolicyFields; domains: Record<string, PolicyOverride> }, ctx: z.core.$RefinementCtx): void {
  const report = (path: PropertyKey[], conflicts: PolicyConflict[]) => {
    for (const { field, message } of conflicts) ctx.addIssue({ code: 'custom', message, path: [...path, field] });
  };
  const failed = ctx.issues.filter((issue) => issue.path?.[0] === 'defaults').map((issue) => issue.path!.slice(1));
  // When `defaults` failed, zod hands over its object in the file's own field names, failed fields included.
  const own: PolicyOverride = failed.length > 0 ? goodDefaults(file.defaults as unknown as Record<string, unknown>, failed) : file.defaults;
  const builtins = builtinDefaults();
  const knownBuiltins = omitFields(builtins, failed);
  report(['defaults'], policyConflicts(omitEqual(own, builtins), knownBuiltins, 'the default'));
  const defaults: PolicyOverride = { ...knownBuiltins, ...own };
  // Present only if parseDomains ran, i.e. `domains` was an object.
  const written = writtenKeys.get(file.domains);
  if (!written) return;
  for (const [key, entry] of Object.entries(file.domains)) {
    report(['domains', written.get(key)!], policyConflicts(entry, defaults));
  }
}

/** The built-in defaults (an empty `defaults` object, parsed), computed once. */
let builtins: PolicyFields | undefined;
function builtinDefaults(): PolicyFields {
  return (builtins ??= policyDefaultsSchema().parse({}, parseOnce));
}

/** A failed domain entry's fields that parse on their own, as an override. */
function fieldsThatParse(entry: unknown): PolicyOverride {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return {};
  const good: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(entry)) {
    // Own keys only: a field named "__proto__" must not find Object.prototype.
    const shape = domainEntryObject().shape as Record<string, z.ZodType>;
    const schema = Object.hasOwn(shape, field) ? shape[field] : undefined;
    const parsed = schema?.safeParse(value);
    if (parsed?.success) good[field] = parsed.data;
  }
  return toPolicyOverride(good);
}

/** A failed `defaults` object (file field names, parsed values) without the fields, or sub-fields, that failed. */
function goodDefaults(value: Record<string, unknown>, failed: PropertyKey[][]): PolicyOverride {
  if (typeof value !== 'object' || value === null) return {};
  const good: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(value)) {
    const here = failed.filter((path) => path[0] === field);
    if (here.some((path) => path.length === 1)) continue;
    if (here.length > 0 && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      // backoff / hostFailures: keep the sub-fields that parsed.
      good[field] = Object.fromEntries(Object.entries(v).filter(([sub]) => !here.some((path) => path[1] === sub)));
    } else if (here.length === 0) {
      good[field] = v;
    }
  }
  return toPolicyOverride(good);
}

/** The failed file fields of `defaults`, mapped to the PolicyFields they feed, left out. */
function omitFields(fields: PolicyFields, failed: PropertyKey[][]): PolicyOverride {
  const out: Record<string, unknown> = { ...fields };
  // Stands for "every sub-field" of a field that failed as a whole (backoff: "x").
  const whole = new Proxy({}, { get: () => true });
  for (const [field, sub] of failed) {
    if (field === undefined) continue;
    const dropped = toPolicyOverride({ [field as string]: sub === undefined ? whole : { [sub as string]: true } });
    for (const key of Object.keys(dropped)) delete out[key];
  }
  return out;
}

/** The fields of `own` whose value differs from `base`. */
function omitEqual(own: PolicyOverride, base: PolicyOverride): PolicyOverride {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return Object.fromEntries(Object.entries(own).filter(([key, value]) => !same(value, base[key as keyof PolicyOverride])));
}

/** The keys of a policy object, for "did you mean" hints (see knownKeysAt). */
export const policyKeys = (): readonly string[] => Object.keys(domainEntryObject().shape);

/** The keys of a policy's sub-object `field` (backoff, hostFailures), for hints one level further down; none for other fields. */
export function policyObjectKeys(field: string): readonly string[] {
  const shape = domainEntryObject().shape;
  if (field === 'backoff') return Object.keys(shape.backoff.unwrap().shape);
  if (field === 'hostFailures') return Object.keys(shape.hostFailures.unwrap().shape);
  return [];
}
