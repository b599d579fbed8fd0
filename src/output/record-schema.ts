/**
 * The records `crawl` writes (one JSON object per line), declared once, as
 * zod schemas: the TypeScript types (types.ts infers PageRecord, SkipRecord,
 * RobotsFetchRecord and their parts from these), record.schema.json (JSON
 * Schema draft 2020-12, committed at the package root for users' validators
 * and editors; a test fails while the committed file is stale) and the field
 * table in docs/records.md all come from here. Every object is closed (no
 * other keys), so a field the crawl writes but that is not here fails the
 * build where the record is built, and the test that validates a real
 * crawl's records against record.schema.json.
 *
 * Adding a record field: add it here with a `.describe()` that says when it
 * is present; regenerate the file (`npm run schema`) and list it in the
 * record table in docs/records.md.
 */
import { z } from 'zod';
import { PURPOSES, type Purpose } from '../usage/usage-vocab.js';

/** Why a URL was not fetched. Stable strings: scripts match on them. */
export const SKIP_REASONS = [
  'robots', // disallowed by robots.txt
  'robots-unavailable', // robots.txt answered 5xx / unreachable until we gave up
  'scope', // outside --scope
  'filtered', // failed --include / matched --exclude
  'max-depth',
  'max-pages',
  'nofollow',
  'url-too-long',
  'unsupported-scheme',
  'host-failed', // its host kept failing and was given up for this crawl
  'interrupted', // still queued when the crawl was stopped
  'private-address', // its host is (or resolved to) a loopback/private/link-local/… address; detail names it
  'queue-full', // found while maxQueued URLs were waiting (not remembered: found again later, it may be queued then)
  'max-pages-per-host', // its host key had maxPagesPerHost URLs accepted already (not remembered either)
  'repeated-path', // a path segment repeated more than traps.maxPathRepeats times (/a/b/a/b/a/b/a/b/)
  'query-explosion', // more than traps.maxQueryParams parameters, or its path had traps.maxQueryVariants query strings already
  'usage-denied', // robots.txt states "n" for a declared --purpose (Content-Usage, Content-Signal); usageDenied and usageSources say which
  'price', // its host asks a price (HTTP 402) the crawl may pay (--max-price) but the budget (--budget) could not cover; `price` says what
] as const;

/** Stable error codes of a request that failed; group by these, never by message. */
export const FETCH_ERROR_CODES = [
  'CONNECTION_REFUSED',
  'CONNECTION_RESET',
  'CONNECT_TIMEOUT',
  'HEADERS_TIMEOUT',
  'BODY_TIMEOUT', // the body went silent for longer than the body timeout
  'TOTAL_TIMEOUT', // the response was not complete within the total deadline (a drip-fed body)
  'DNS_FAILURE',
  'TLS_ERROR',
  'INVALID_RESPONSE',
  'DECODE_ERROR',
  'REDIRECT_LIMIT',
  'REDIRECT_INVALID',
  'ABORTED',
  'THROTTLED', // still throttled (429/503) after the throttle retry budget
  'LOCAL_RESOURCE', // our side ran out of something (EMFILE, ENFILE, ENOBUFS, …): not the server's fault
  'PROXY_ERROR', // the proxy answered CONNECT with something other than 200 (407: it wants credentials)
  'FETCH_FAILED',
] as const;

/** A record's error codes: a failed request's, or what the crawl concluded about an answer that arrived (a redirect back into its own chain, a render that failed). */
export const RECORD_ERROR_CODES = [...FETCH_ERROR_CODES, 'REDIRECT_LOOP', 'RENDER_TIMEOUT', 'RENDER_FAILED', 'HANDLER_ERROR', 'HANDLER_TIMEOUT'] as const;

export const PAGE_CHANGES = ['new', 'changed', 'unchanged', 'removed'] as const;

// One time convention: instants are ISO 8601 UTC strings with milliseconds; durations are numbers of ms named `…Ms`.
const instant = () => z.iso.datetime({ precision: 3 }).describe('An instant: ISO 8601 UTC with milliseconds ("2026-11-21T10:00:00.123Z").');
const worker = () => z.string().optional().describe('The worker that wrote the record, in a crawl shared through Redis (--worker; default host-pid).');

/** Per use, what was stated: "y" (allowed) or "n" (not); a use not stated is absent. */
const usageValue = () => z.enum(['y', 'n']).optional();
/** Where each usage statement came from (page records; skip records of `usage-denied`). */
const usageSourcesSchema = () =>
  z
    .array(
      z.strictObject({
        source: z
          .enum(['robots', 'tdmrep', 'header', 'meta'])
          .describe("A robots.txt rule, the origin's /.well-known/tdmrep.json, a response header, or a <meta> tag of the document."),
        name: z.string().describe('The rule, header or meta name, lowercased (content-usage, content-signal, tdm-reservation, x-robots-tag, robots).'),
        value: z.string().describe('What it said, as sent (a robots.txt rule: the value after its colon, path included).'),
        line: z.int().min(1).optional().describe('A robots.txt rule: its 1-based line number.'),
        url: z.string().optional().describe('A robots.txt rule: the robots.txt it is a line of; tdmrep: the tdmrep.json.'),
        fetchedAt: instant()
          .optional()
          .describe('A robots.txt rule or tdmrep.json: when that file was fetched (the copy in force when the page was), ISO 8601.'),
        states: usageSchema().describe('What it stated, per use (nothing when it did not parse).'),
      }),
    )
    .optional();
const usageSchema = () => z.strictObject(Object.fromEntries(PURPOSES.map((p) => [p, usageValue()])) as { [P in Purpose]: ReturnType<typeof usageValue> });

export const throttleEventSchema = z
  .strictObject({
    at: instant().describe("When the answer came (ISO 8601): the host's pause began then."),
    status: z.int().describe('The throttling status (429, 503, …).'),
    retryAfterMs: z
      .number()
      .optional()
      .describe('What Retry-After announced, ms, before maxRetryAfter capped it; absent when the server sent none (the pause was a backoff).'),
    pausedUntil: instant().describe('Until when the host was paused (ISO 8601).'),
  })
  .describe('A throttling answer and the pause it caused.');

/** An amount of money as a server stated it: a decimal string, never a float. */
const moneySchema = () =>
  z.strictObject({
    amount: z
      .string()
      .regex(/^\d+\.\d{2,6}$/)
      .describe('The amount as a decimal string ("0.01"), exact: never a float.'),
    currency: z.string().describe('The currency as the server stated it ("USD").'),
  });

export const subrequestCountsSchema = z.strictObject({
  fetched: z.int().min(0).describe("Requested through their hosts' robots.txt and limits."),
  cached: z.int().min(0).describe('Answered from the crawl-wide subresource cache (or a request already under way).'),
  blocked: z.int().min(0).describe('Refused: a blocked resource type or URL, a navigation, a non-GET request, a refused address.'),
  disallowed: z.int().min(0).describe("Refused: their host's robots.txt disallows them."),
});

export const pageRecordSchema = z
  .strictObject({
    type: z.literal('page'),
    url: z.string().describe('The URL requested, canonical (credentials redacted).'),
    host: z.string().describe('The host key whose limits paced the request: host[:port], or the registrable domain with hostKey "domain".'),
    status: z.int().nullable().describe('The HTTP status; null when no answer came (then `error` says why).'),
    depth: z.int().min(0).describe('Links followed from a seed (seeds are 0; a redirect keeps its depth).'),
    parent: z.string().nullable().describe('The page the URL was found on (or that redirected to it); null for a seed.'),
    contentType: z.string().nullable().describe('The media type, lowercased, without parameters ("text/html"); null when none was sent or no answer came.'),
    bytes: z.int().min(0).nullable().describe('Decoded body bytes read; null when the body was not read (not HTML; see contentLength); 0 when no answer came.'),
    contentLength: z.int().min(0).optional().describe('The Content-Length the server declared, when the body was not read. A claim, not checked.'),
    truncated: z.boolean().optional().describe('True when the body was cut at --max-body; links come from the part read.'),
    title: z.string().nullable().describe('The HTML <title>, whitespace collapsed; null when none.'),
    links: z.int().min(0).describe('Links found on the page (for a sitemap: URLs it lists).'),
    linkList: z.array(z.string()).optional().describe('With --links: the links found, absolute and canonical.'),
    canonical: z.string().optional().describe("The page's rel=canonical URL (link element or Link header), absolute; absent when it names none."),
    content: z.string().optional().describe("With --content: the page's main content as text, HTML or Markdown."),
    contentTruncated: z.boolean().optional().describe('True when `content` was cut at --max-content.'),
    extract: z
      .record(z.string(), z.union([z.string(), z.null(), z.array(z.string())]))
      .optional()
      .describe('With --extract: one key per rule; a string or null (first match), or an array (name[]).'),
    kind: z
      .enum(['sitemap', 'link-check'])
      .optional()
      .describe('Absent for a page crawled as usual; "sitemap" for a sitemap file, "link-check" for a link checked with --check-links.'),
    method: z.enum(['HEAD', 'GET']).optional().describe("A link check's method: HEAD, or GET after HEAD was refused."),
    lastmod: z.string().optional().describe('The <lastmod> of the sitemap entry the URL came from, as written there.'),
    location: z.string().optional().describe("A redirect's Location, absolute."),
    fetchedAt: instant().describe("When the URL was claimed for its request, ISO 8601 (the record's own time)."),
    startedAt: instant()
      .optional()
      .describe("When the request was written to the socket, ISO 8601 (what the host's limiter counts); absent when no answer came."),
    elapsedMs: z.number().min(0).describe("From the request's start to the end of its body, ms."),
    httpVersion: z
      .enum(['1.1', '2'])
      .optional()
      .describe(
        'On a host whose policy offers HTTP/2 (--http2, "http2": true): the HTTP version the answer came over, "2" or "1.1" (the server declined). Absent elsewhere: HTTP/1.1.',
      ),
    attempts: z.int().min(2).optional().describe('Fetch attempts, when more than one (retries after failures or throttling).'),
    attemptStarts: z.array(instant()).optional().describe('When the earlier attempts were sent, ISO 8601, oldest first; the latest 10.'),
    throttles: z.array(throttleEventSchema).optional().describe('The 429/503 answers this URL got (the latest 10), oldest first.'),
    etag: z.string().optional().describe('The response\'s ETag as sent (W/"…" when weak); on a 304 that names none, the one kept from the last pass.'),
    lastModified: z.string().optional().describe("The response's Last-Modified as sent; on a 304 that names none, the one kept from the last pass."),
    varyAll: z
      .literal(true)
      .optional()
      .describe(
        'The response said `Vary: *`: its etag and lastModified are shown but never sent in a later conditional request (not by --recrawl, not by --since).',
      ),
    digest: z
      .string()
      .optional()
      .describe("sha256:BASE32 of the body read, Content-Encoding undone; on a 304, the last pass's. Absent when no body was read (not HTML)."),
    change: z
      .enum(PAGE_CHANGES)
      .optional()
      .describe(
        'In a re-crawl (--recrawl, --since, --revisit): "new", "changed", "unchanged" (a 304 or the same digest) or "removed" (404/410 or a redirect elsewhere where there was a page); absent when no usable answer came.',
      ),
    previousFetchedAt: instant().optional().describe('In a re-crawl: when the last pass fetched the page, ISO 8601.'),
    duplicateOf: z
      .string()
      .optional()
      .describe(
        'The first URL of this crawl (this process) whose body had the same digest (a mirror, a session-id URL), among the last 100,000 distinct bodies.',
      ),
    savedPath: z.string().optional().describe('With --save-dir: the file the body was saved to, relative to that directory, "/"-separated.'),
    warcOffset: z.int().min(0).optional().describe("With --warc: the byte offset of this page's response record in the WARC file."),
    rendered: z
      .boolean()
      .optional()
      .describe(
        'On a host that renders (render true or "auto"): whether the page was rendered in a browser; links, content and extract then come from the rendered DOM.',
      ),
    renderReason: z
      .string()
      .optional()
      .describe(
        'Why it was or was not rendered: "configured" (render true), "empty-mount", "noscript", "script-shell" (auto found an application shell), "static" (auto found none), "not-html".',
      ),
    subrequests: subrequestCountsSchema.optional().describe("A rendered page's browser requests."),
    navigations: z
      .array(z.string())
      .optional()
      .describe(
        'URLs a rendered page tried to navigate to by itself after loading (a script setting location, a form GET, a meta refresh, a link clicked): followed as links through the usual admission, while the page stayed as it was. Absent when it tried none.',
      ),
    usage: usageSchema()
      .optional()
      .describe(
        'What the site stated this content may be used for, per use ("y" or "n"), combined over every source (any "n" wins); a use no source stated is absent. Absent when nothing was stated.',
      ),
    usageSources: usageSourcesSchema().describe('Where each usage statement came from, in the order read. Absent when nothing was stated.'),
    usageDenied: z
      .enum(PURPOSES)
      .optional()
      .describe(
        'The declared purpose (--purpose) this page stated "n" for: its content, extract, saved body and WARC records were withheld, and no page handler ran on it.',
      ),
    slowed: z
      .strictObject({
        factor: z.number().gt(0).lt(1).describe('The fraction of its configured rate the host ran at.'),
        why: z.string().describe('Why, in words: "throttled 2× (429/503)", "latency 412 ms vs 130 ms baseline", or both.'),
      })
      .optional()
      .describe('The host ran below its configured rate when this page was requested (429/503 feedback, or a server slowing down). Absent at full rate.'),
    notArchived: z
      .literal('noarchive')
      .optional()
      .describe('The page said noarchive: it was kept out of --save-dir and --warc (--archive-noarchive keeps it). Absent otherwise, and without an archive.'),
    robotsDirectives: z
      .array(z.string())
      .optional()
      .describe(
        'The robots directives addressed to this crawler (X-Robots-Tag, <meta name="robots">, or the meta of its product token): noindex, nofollow, noarchive, nosnippet, noimageindex, notranslate, noai, noimageai, indexifembedded. Absent when none.',
      ),
    price: moneySchema()
      .optional()
      .describe("A 402 answer's price (crawler-price), as stated: the page is not paid for unless --max-price covers it. Absent otherwise."),
    charged: moneySchema()
      .optional()
      .describe("What the server says this request was charged (crawler-charged): added to the crawl's spend ledger. Absent when nothing was charged."),
    worker: worker(),
    error: z
      .strictObject({
        code: z.enum(RECORD_ERROR_CODES).describe('Stable code: group by it, never by message.'),
        message: z.string().describe('For humans; wording may change.'),
      })
      .optional()
      .describe(
        'Why the page failed: no answer (status null), or an answer the crawl could not use (REDIRECT_LOOP, THROTTLED, RENDER_TIMEOUT, RENDER_FAILED).',
      ),
  })
  .describe('A URL that was requested (or whose host could not be connected to at all).');

export const skipRecordSchema = z
  .strictObject({
    type: z.literal('skipped'),
    url: z.string().describe('The URL not fetched.'),
    reason: z.enum(SKIP_REASONS).describe('Why it was not fetched (stable values).'),
    depth: z.int().min(0).describe('As in a page record.'),
    parent: z.string().nullable().describe('As in a page record.'),
    detail: z.string().optional().describe('More on the reason: the deciding robots.txt rule, the refused address, …'),
    usageDenied: z.enum(PURPOSES).optional().describe('A `usage-denied` skip: the declared purpose (--purpose) robots.txt states "n" for.'),
    usageSources: usageSourcesSchema().describe('A `usage-denied` skip: the robots.txt rules that apply to the URL.'),
    price: moneySchema().optional().describe('A `price` skip: the price its host quoted (crawler-price).'),
    worker: worker(),
  })
  .describe('A URL not fetched (seeds and redirect targets always; others with --emit-skipped).');

export const robotsRecordSchema = z
  .strictObject({
    type: z.literal('robots'),
    url: z.string().describe('The robots.txt URL requested (each redirect hop is a record).'),
    host: z.string().describe('The host key whose limiter paced the request.'),
    status: z.int().nullable().describe('The HTTP status; null when no answer came.'),
    startedAt: instant().describe('When the request was sent (or began, when it failed before that), ISO 8601.'),
    elapsedMs: z.number().min(0),
    bytes: z.int().min(0).describe('Bytes of robots.txt read (at most robots.maxSize).'),
    pausedUntil: instant().optional().describe('A 429/503 answer: until when it paused the host, ISO 8601.'),
    retryAfterMs: z.number().optional().describe('What its Retry-After announced, ms.'),
    error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
    worker: worker(),
  })
  .describe('A robots.txt request, written with --emit-robots.');

export const itemRecordSchema = z
  .strictObject({
    type: z.literal('item'),
    url: z.string().describe('The page whose handler pushed the item (its page record comes right after its items).'),
    label: z.string().nullable().describe('The label the page was enqueued with; null for seeds and links the crawl followed.'),
    fetchedAt: instant().describe("The page record's fetchedAt: which fetch of the page the item came from."),
    data: z.json().describe('What the handler pushed (ctx.push), as JSON.'),
    worker: worker(),
  })
  .describe('An item a page handler emitted (--handler, or the `handle` option).');

export const outputRecordSchema = z
  .discriminatedUnion('type', [pageRecordSchema, skipRecordSchema, robotsRecordSchema, itemRecordSchema])
  .meta({ title: 'crawl record', description: "One line of crawl's JSON-lines output." });

/** The exact text of record.schema.json. */
export function renderRecordJsonSchema(): string {
  const schema = z.toJSONSchema(outputRecordSchema, {
    target: 'draft-2020-12',
    io: 'output',
    override: ({ jsonSchema }) => {
      // z.int() implies safe-integer bounds; spelled out they are noise to a reader.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as Record<string, unknown>;
  return `${JSON.stringify(schema, null, 2)}\n`;
}
