/**
 * The JSON config file format, as one zod schema. Its policy fields
 * (`defaults` and `domains`) are defined in policy-schema.ts.
 *
 * Validation and normalisation happen in a single pass: durations, sizes,
 * rates, windows and regexes are parsed by transforms inside the schema, so
 * the parse reports every problem in the file at once, each at its own path,
 * and a successful parse yields ready-to-use numbers. Defaults live in the
 * schema too (as `prefault`s, which the generated JSON Schema shows as
 * `default`), so there is exactly one place that says what an omitted field
 * means.
 *
 * Every object is strict (a misspelt key is an error, not a silently ignored
 * setting) but accepts a `$comment` string, so an example file can explain
 * itself.
 */
import { z } from 'zod';
import { comment, fieldSchemas, messageFrom, once, toJsonSchema } from './fields.js';
import { DEFAULT_MAX_PAGES_PER_HOST, checkMergedPolicies, domainsSchema, policyDefaultsSchema, policyKeys, policyObjectKeys } from './policy-schema.js';
import { MIN_ROBOTS_BYTES } from '../robots/rules.js';
import { DURATION_PATTERN, UnitError, parseDuration, showValue } from './units.js';
import { VERSION } from '../version.js';
import { cookiesSchema, tlsSchema } from './request-schema.js';
import { contentFields } from './content-fields.js';
import { pricingFields } from './pricing-fields.js';
import { DEFAULT_RENDER_BLOCK, renderFields, renderOptionsSchema } from './render-schema.js';
import { urlList } from './url-list.js';
import { PER_IP_TEXT, perIpSchema } from './per-ip-schema.js';
import { metricsAddressProblem } from './metrics-address.js';
import { identitySchema } from './identity-schema.js';

export { fieldSchemas, parseOnce } from './fields.js';
export { MAX_RETRY_AFTER_LIMIT_MS } from './policy-schema.js';

const { duration, size, integer, boolean, oneOf, regexList, userAgent, networkList } = fieldSchemas;

/** Used when neither the file nor `--user-agent` sets one. */
export const DEFAULT_USER_AGENT = `crawl/${VERSION} (+https://www.npmjs.com/package/polite-crawler)`;

/**
 * The total deadline on one response when the config sets none: long enough
 * for a 10 MiB page on a slow link, short enough that a server dripping a
 * body one byte a second cannot keep a request (and its socket) for hours.
 */
export const DEFAULT_TOTAL_TIMEOUT_MS = 180_000;

/**
 * Link depth from the seeds when the config sets none. Real sites put every
 * page within a few clicks of the home page (a long "older posts" chain is the
 * deepest thing a real site has); a calendar or a generated URL space that
 * links each page to the next reaches it after 100 pages, and ends there.
 */
export const DEFAULT_MAX_DEPTH = 100;

/**
 * Queued URLs when the config sets none: about 150 MB of queue in memory
 * (store/memory-frontier.ts, ≤ 150 B a URL). With `--state` the queue is on
 * disk, but the seen set and a resume's reading of the queue are not, so the
 * same default holds there; raise it when you have the memory.
 */
export const DEFAULT_MAX_QUEUED = 1_000_000;

/** Robots.txt may be cached for at most this long (RFC 9309 §2.4). */
export const MAX_ROBOTS_CACHE_TTL_MS = 86_400_000;

/** The check runs on partly failed files too (see checkMergedPolicies), but only on an object. */
const isObject = ({ value }: { value: unknown }) => typeof value === 'object' && value !== null && !Array.isArray(value);

const timeoutObjectSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    connect: duration({ positive: true }).prefault('10s').describe('TCP + TLS connection setup. Default "10s".'),
    headers: duration({ positive: true }).prefault('30s').describe('From request sent to response headers received. Default "30s".'),
    body: duration({ positive: true }).prefault('30s').describe('Longest silence while reading the body. Default "30s".'),
    total: duration({ positive: true })
      .prefault('3m')
      .describe(
        'Deadline for a whole response, from the request\'s start to its last body byte, however steadily the bytes trickle in (error TOTAL_TIMEOUT). The same for every host. Default "3m".',
      ),
  }),
);

/** `timeout: "30s"`: the three idle limits; the total deadline keeps its default unless that is shorter. */
export function timeoutsFromOne(ms: number): { connectMs: number; headersMs: number; bodyMs: number; totalMs: number } {
  return { connectMs: ms, headersMs: ms, bodyMs: ms, totalMs: Math.max(ms, DEFAULT_TOTAL_TIMEOUT_MS) };
}

const timeoutSchema = once(() =>
  z
    .union([z.string().meta({ pattern: DURATION_PATTERN }), z.number().min(0, { error: messageFrom(parseDuration) }), timeoutObjectSchema()], {
      error: (i) => `expected a duration like "30s" or an object with connect/headers/body/total, got ${showValue(i.input)}`,
    })
    .transform((value, ctx) => {
      if (typeof value === 'object') return { connectMs: value.connect, headersMs: value.headers, bodyMs: value.body, totalMs: value.total };
      try {
        const ms = parseDuration(value);
        if (ms === 0) throw new UnitError(`expected a duration greater than zero, got ${showValue(value)}`, value);
        return timeoutsFromOne(ms);
      } catch (error) {
        if (!(error instanceof UnitError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.message, input: value });
        return z.NEVER;
      }
    }),
);

const robotsSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    enabled: boolean().prefault(true).describe('Fetch and obey robots.txt (RFC 9309). Default true.'),
    maxSize: size({ bytes: MIN_ROBOTS_BYTES, label: '500KiB (RFC 9309 §2.5)' })
      .prefault('512KiB')
      .describe('robots.txt bytes read; the rest is ignored (RFC 9309 asks for at least 500 KiB). Default "512KiB".'),
    cacheTtl: duration({ positive: true, max: { ms: MAX_ROBOTS_CACHE_TTL_MS, label: '24h' } })
      .prefault('24h')
      .describe('How long a fetched robots.txt is reused, at most "24h". Default "24h".'),
    unavailableRetries: integer(0, 100)
      .prefault(2)
      .describe(
        'Re-fetches of a robots.txt that answered 5xx or 429 or failed in transit, before its host is given up: its URLs are then skipped as "robots-unavailable". ' +
          'A host that cannot be connected to at all (refused, DNS failure, connect timeout, TLS failure, a proxy refusing the tunnel) is re-tried sooner (see unavailableRetryDelay), ' +
          'and once given up its URLs get page records carrying that error code (they are not requested). Default 2.',
      ),
    unavailableRetryDelay: duration()
      .prefault('5s')
      .describe(
        'Wait before the first such re-fetch, doubling after each; at most 1s (then 2s, …) for a host that cannot be connected to, so a dead host is given up in about 3s with the defaults. Default "5s".',
      ),
  }),
);

const trapsSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    maxPathRepeats: integer(1)
      .prefault(3)
      .describe(
        'Most times one segment may appear in a URL\'s path; a URL with more is skipped as "repeated-path" (a relative link that keeps adding itself: /a/b/a/b/a/b/a/b/). Default 3.',
      ),
    maxQueryParams: integer(1).prefault(32).describe('Most query parameters in one URL; a URL with more is skipped as "query-explosion". Default 32.'),
    maxQueryVariants: integer(1)
      .prefault(10_000)
      .describe(
        'Most distinct query strings accepted for one scheme, host and path (/cal?d=1, /cal?d=2, …); past it, new ones are skipped as "query-explosion". Default 10000.',
      ),
  }),
);

/** The config file schema, built at its first use. Parse output is {@link FileConfig}. */
export const configFileSchema = once(() =>
  z
    .strictObject({
      $schema: z.string().optional().describe('Path or URL of this JSON Schema, for editors.'),
      $comment: comment(),
      userAgent: userAgent()
        .optional()
        .describe(
          'User-Agent header; its product token (before "/") picks the robots.txt group. Default "crawl/<version> (+https://www.npmjs.com/package/polite-crawler)".',
        ),
      concurrency: integer(1, 1000).prefault(16).describe('Requests in flight at once, across all hosts (1-1000). Default 16.'),
      hostKey: oneOf(['host', 'domain'])
        .prefault('host')
        .describe('What shares one politeness budget: "host" (each hostname) or "domain" (all subdomains of a registrable domain). Default "host".'),
      maxDepth: integer(0)
        .prefault(DEFAULT_MAX_DEPTH)
        .describe(
          'Links followed from a seed (seeds are depth 0; a redirect keeps its depth). Deeper URLs are skipped as "max-depth". Default 100: deeper than real sites go, so a calendar trap ends.',
        ),
      maxPages: integer(1).optional().describe('Stop after fetching this many pages. Default unlimited.'),
      maxQueued: integer(1)
        .prefault(DEFAULT_MAX_QUEUED)
        .describe(
          'URLs waiting in the queue, all hosts together; a URL found while it is full is skipped as "queue-full" and not remembered (found again later, it is queued if there is room then). ' +
            'Bounds the memory a site with endless links can take (about 150 B a queued URL in memory). Default 1000000.',
        ),
      traps: trapsSchema()
        .prefault({})
        .describe(
          'Defences against URL spaces that never end (calendars, relative links that keep growing, query strings that multiply); each refused URL is skipped with its own reason.',
        ),
      scope: oneOf(['host', 'domain', 'any'])
        .prefault('host')
        .describe('Which links are followed: "host" (the seeds\' hosts), "domain" (the seeds\' registrable domains) or "any". Default "host".'),
      include: regexList()
        .prefault([])
        .describe(
          'If set, only URLs matching at least one of these regular expressions (RE2 syntax, matched in linear time: no lookaround or backreferences; tested against the canonical absolute URL) are crawled. Default none.',
        ),
      exclude: regexList().prefault([]).describe('URLs matching any of these regular expressions (RE2 syntax, as for include) are skipped. Default none.'),
      timeout: timeoutSchema()
        .prefault({ connect: '10s', headers: '30s', body: '30s', total: '3m' })
        .describe(
          'One duration for connect, headers and body (the total deadline then stays "3m", or that duration if longer), or an object per phase. ' +
            'Default {"connect": "10s", "headers": "30s", "body": "30s", "total": "3m"}.',
        ),
      maxBody: size().prefault('10MiB').describe('Decompressed body bytes read per response; longer bodies are truncated. Default "10MiB".'),
      maxRedirects: integer(0, 100).prefault(10).describe('Redirect hops followed per chain (0-100). Default 10.'),
      maxUrlLength: integer(16, 1_000_000).prefault(2048).describe('Longer URLs are skipped. Default 2048.'),
      respectNofollow: boolean()
        .prefault(true)
        .describe('Honour rel="nofollow", <meta name="robots" content="nofollow"> and X-Robots-Tag: nofollow. Default true.'),
      robots: robotsSchema().prefault({}).describe('robots.txt handling.'),
      sitemaps: urlList()
        .prefault([])
        .describe(
          'Sitemap files whose URLs seed the crawl, like --sitemap: XML sitemaps, sitemap indexes, text files (one URL per line), gzip or not. ' +
            "Their hosts are in scope as the seeds' are; the URLs they list are one deeper than the sitemap and scope-checked like links. Default none.",
        ),
      robotsSitemaps: boolean()
        .prefault(false)
        .describe(
          "Also seed the crawl from the Sitemap: lines of each seed's robots.txt, like --sitemaps (read even with robots.enabled false). Default false.",
        ),
      checkLinks: boolean()
        .prefault(false)
        .describe(
          'Link-check mode, like --check-links: links out of scope are not skipped but checked with one request each (HEAD, then GET if HEAD is refused), ' +
            'through their host\'s limits and robots.txt; never parsed or followed. Their records have kind "link-check". Default false.',
        ),
      allowPrivate: boolean()
        .prefault(false)
        .describe(
          'Connect to special-purpose addresses (loopback, private, CGNAT, link-local and cloud metadata, unique-local, multicast, reserved) on any host. ' +
            'Without it they are refused (skip reason "private-address") except on the exact hosts the seeds name. Default false.',
        ),
      allowNetworks: networkList()
        .prefault([])
        .describe(
          'Special-purpose networks that may be connected to anyway, as CIDRs ("10.0.0.0/8", "fd00::/8") or single addresses; checked against the address connected to. Default none.',
        ),
      ...contentFields(),
      ...pricingFields(),
      ...renderFields(),
      cookies: cookiesSchema()
        .prefault({})
        .describe("Cookies: sent to the seeds' hosts, read from a cookies.txt, and kept from responses during the crawl (per RFC 6265)."),
      tls: tlsSchema().prefault({}).describe('TLS trust for https connections (through a proxy too).'),
      identity: identitySchema().optional(),
      defaults: policyDefaultsSchema().prefault({}),
      domains: domainsSchema().prefault({}),
      perIp: perIpSchema().optional().describe(PER_IP_TEXT.perIp),
      metrics: z
        .string()
        .superRefine((value, ctx) => {
          const problem = metricsAddressProblem(value);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional()
        .describe(
          'Serve Prometheus/OpenMetrics series at http://HOST:PORT/metrics while the crawl runs, like --metrics (which overrides it): "9464" (on 127.0.0.1), "0.0.0.0:9464", or port 0 for a free one. Default none.',
        ),
      metricsHosts: integer(0, 1000)
        .optional()
        .describe('Hosts with series of their own (the top N by requests), like --metrics-hosts (which overrides it); needs metrics. Default 10.'),
    })
    .superRefine(checkMergedPolicies, { when: isObject })
    .meta({ title: 'crawl configuration', description: 'Configuration file for the crawl web crawler (crawler.config.json).' }),
);

/** A validated, normalised config file: durations in ms, sizes in bytes, rates parsed, regexes compiled. */
export type FileConfig = z.output<ReturnType<typeof configFileSchema>>;

/**
 * What the schema makes of an empty file (`{}`), as a fresh object each call.
 * A crawl without a config file starts from this instead of building the
 * schema (~60 fields of zod, ~25 ms of every start-up) to parse `{}`. The
 * schema's prefaults stay the one place a default is decided: a test parses
 * `{}` and fails, naming the field, when this differs.
 */
export function fileDefaults(): FileConfig {
  return {
    concurrency: 16,
    hostKey: 'host',
    maxDepth: DEFAULT_MAX_DEPTH,
    maxQueued: DEFAULT_MAX_QUEUED,
    traps: {
      maxPathRepeats: 3,
      maxQueryParams: 32,
      maxQueryVariants: 10_000,
    },
    scope: 'host',
    include: [],
    exclude: [],
    timeout: {
      connectMs: 10_000,
      headersMs: 30_000,
      bodyMs: 30_000,
      totalMs: DEFAULT_TOTAL_TIMEOUT_MS,
    },
    maxBody: 10_485_760,
    maxRedirects: 10,
    maxUrlLength: 2048,
    respectNofollow: true,
    robots: {
      enabled: true,
      maxSize: 524_288,
      cacheTtl: 86_400_000,
      unavailableRetries: 2,
      unavailableRetryDelay: 5000,
    },
    sitemaps: [],
    robotsSitemaps: false,
    checkLinks: false,
    allowPrivate: false,
    allowNetworks: [],
    maxContent: 1_048_576,
    extract: [],
    followCanonical: false,
    fetchDenied: false,
    archiveNoarchive: false,
    purpose: [],
    renderOptions: {
      concurrency: 4,
      timeout: 30_000,
      block: [...DEFAULT_RENDER_BLOCK],
      blockUrls: [],
      recycleAfter: 50,
      maxBrowserMemory: 1_073_741_824,
      cacheSize: 67_108_864,
    },
    cookies: {
      send: [],
      keep: true,
    },
    tls: {
      insecure: false,
    },
    defaults: {
      rate: {
        intervalMs: 1000,
        label: '1/s',
      },
      limits: [],
      concurrency: 2,
      jitterMs: 0,
      crawlDelay: 'floor',
      maxCrawlDelayMs: 30_000,
      retries: 2,
      retryStatuses: [500, 502, 504],
      backoffBaseMs: 1000,
      backoffCapMs: 60_000,
      throttleStatuses: [429, 503],
      maxRetryAfterMs: 600_000,
      throttleRetries: 10,
      adaptive: true,
      latencyBackoff: true,
      hostFailurePause: 5,
      hostFailureGiveUp: 15,
      maxPagesPerHost: DEFAULT_MAX_PAGES_PER_HOST,
      headers: {},
      render: false,
      http2: false,
      timezone: 'UTC',
    },
    domains: {},
  };
}

/** The JSON Schema (draft 2020-12) of the config file, describing what may be written in it. */
export function configJsonSchema(): Record<string, unknown> {
  return toJsonSchema(configFileSchema());
}

/** The exact text of crawler.config.schema.json. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

/**
 * The keys valid in the object at `path` (as zod reports it), for "did you
 * mean" hints on unknown keys; empty for paths that hold no fixed object.
 */
export function knownKeysAt(path: readonly PropertyKey[]): readonly string[] {
  const [first, second, third] = path;
  if (path.length === 0) return Object.keys(configFileSchema().shape);
  if (path.length === 1 && first === 'robots') return Object.keys(robotsSchema().shape);
  if (path.length === 1 && first === 'timeout') return Object.keys(timeoutObjectSchema().shape);
  if (path.length === 1 && first === 'traps') return Object.keys(trapsSchema().shape);
  if (path.length === 1 && first === 'cookies') return Object.keys(cookiesSchema().shape);
  if (path.length === 1 && first === 'tls') return Object.keys(tlsSchema().shape);
  if (path.length === 1 && first === 'identity') return Object.keys(identitySchema().shape);
  if (path.length === 1 && first === 'renderOptions') return Object.keys(renderOptionsSchema().shape);
  if (path.length === 1 && first === 'perIp') return ['$comment', 'rate', 'concurrency'];
  // A policy object sits at `defaults` and at `domains.<key>`; its own sub-objects one level below.
  const policyDepth = first === 'defaults' ? 1 : first === 'domains' && typeof second === 'string' ? 2 : undefined;
  if (policyDepth === undefined) return [];
  if (path.length === policyDepth) return policyKeys();
  const field = policyDepth === 1 ? second : third;
  if (path.length === policyDepth + 1 && typeof field === 'string') return policyObjectKeys(field);
  return [];
}
