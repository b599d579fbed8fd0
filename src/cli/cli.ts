/**
 * The command-line boundary: parses argv, maps every failure to one line on
 * stderr and an exit code, and owns signals. Commands are plain async
 * functions returning an exit code; nothing else calls process.exit.
 *
 * Exit codes (EXIT in flags.ts): 0 finished, 1 internal error (or a page
 * handler's with --handler-errors stop), 2 usage or
 * config error, 3 nothing could be reached, 4 a file could not be written
 * (disk full, read-only, permission), 5 a Redis crawl's state is gone from
 * Redis, 130 SIGINT, 143 SIGTERM.
 * `crawl check` exits 0 when the URL would be fetched and 1 when it would be
 * skipped.
 *
 * Heavy modules (undici, htmlparser2, zod) load only when a command runs, so
 * `crawl --version` and `--help` start fast.
 */
import { Command, CommanderError, Option } from 'commander';
import { ignoreStreamErrors } from '../output/logger.js';
import { VERSION } from '../version.js';
import { EXIT, type CheckFlags, type CrawlFlags, type Io, type KeysFlags, type ReportFlags, type StatusFlags } from './flags.js';
import { withParentOptions } from './parent-options.js';

export { EXIT, type CheckFlags, type CrawlFlags, type Io, type KeysFlags, type ReportFlags, type StatusFlags } from './flags.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

const EXAMPLES = `
Examples:
  $ crawl https://example.com/ > pages.jsonl
  $ crawl https://example.com/ | jq -r 'select(.status == 404) | .url'
  $ crawl --rate 2/s --max-depth 3 --scope domain https://www.example.com/
  $ crawl --config crawler.config.json --seeds-file seeds.txt -o pages.jsonl
  $ crawl --check-links https://example.com/ | jq 'select(.status >= 400)'
  $ crawl --sitemaps --max-depth 1 https://example.com/
  $ crawl check https://example.com/private/page
  $ crawl report pages.jsonl -o report.html
  $ crawl --state site.db --recrawl -o changes.jsonl
  $ crawl --state site.db --revisit -o changes.jsonl https://example.com/

Output: one JSON object per line on stdout (or -o FILE); progress, logs and
the summary go to stderr. Config: ./crawler.config.json is used when present
(see crawler.config.example.json for every option); flags override it.

Exit codes: 0 finished (some URL answered, even with 404); 1 internal error,
or a page handler failed with --handler-errors stop; 2 usage or config error;
3 nothing could be reached (every seed failed: refused, DNS failure, timeout;
no HTTP answer at all); 4 a file could not be written (disk full, read-only
file system, permission); 5 the shared state of a --redis crawl is gone from
Redis (restarted without persistence, flushed, evicted): the crawl stopped
partway; 130 SIGINT; 143 SIGTERM.
--max-time and a closed pipe (| head) end with 0.

Documentation: docs/cli-and-config.md, docs/records.md, docs/politeness.md,
docs/network-safety.md, docs/archives.md, docs/javascript-sites.md,
docs/long-crawls.md, docs/crawling-again.md, docs/redis.md, docs/report.md,
docs/identity.md, docs/library.md in the package
(node_modules/polite-crawler/docs/), or the README.`;

/** Builds the program; each of `handlers` (`crawl`, `check`, …) receives its command's parsed flags (tests call this with stubs). */
export function buildProgram(
  handlers: {
    crawl(seeds: string[], flags: CrawlFlags): Promise<number>;
    check(url: string, flags: CheckFlags): Promise<number>;
    status(flags: StatusFlags): Promise<number>;
    report(file: string | undefined, flags: ReportFlags): Promise<number>;
    /** `crawl keys new DIR` / `crawl keys check URL`. @default none: the commands exit 1 */
    keys?(action: 'new' | 'check', arg: string, flags: KeysFlags): Promise<number>;
  },
  result: { code: number },
): Command {
  const program = new Command('crawl')
    .description('A polite web crawler: exact per-host rates, robots.txt, Retry-After; JSON lines on stdout.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .argument('[seed-url...]', 'where to start crawling (http or https URLs)')
    .option('--config <file>', 'config file (default: ./crawler.config.json when present)')
    .option('-c, --concurrency <n>', 'requests in flight across all hosts (default 16)')
    .option('--rate <rate>', 'default per-host rate: "2/s", "30/min", a min delay "500ms" or "unlimited" (default 1/s)')
    .option('--host-concurrency <n>', 'default requests in flight per host (default 2)')
    .option('--ip-rate <rate>', 'per-IP rate: all hosts on one address together, e.g. --ip-rate 5/s (default off)')
    .option('--ip-concurrency <n>', 'requests in flight per IP address, all its hosts together (default off)')
    .option('--max-depth <n>', 'follow links at most this many steps from a seed (default 100)')
    .option('--max-pages <n>', 'stop after fetching this many URLs (default unlimited)')
    .option('--max-pages-per-host <n>', 'fetch at most this many URLs of one host (default 100,000)')
    .option('--max-queued <n>', 'queue at most this many URLs; more are skipped as queue-full (default 1,000,000)')
    .addOption(new Option('--scope <scope>', 'which links to follow (default host)').choices(['host', 'domain', 'any']))
    .option('--include <regex>', 'only follow URLs matching this (repeatable)', collect)
    .option('--exclude <regex>', 'never follow URLs matching this (repeatable)', collect)
    .option(
      '--user-agent <ua>',
      `User-Agent header; its product token picks the robots.txt group (default "crawl/${VERSION} (+URL)", URL the package's page https://www.npmjs.com/package/polite-crawler)`,
    )
    .option('--header <header>', 'send this header with every request (repeatable), e.g. --header "Accept-Language: de"', collect)
    .option('--cookie <name=value>', "send this cookie to the seeds' hosts (repeatable)", collect)
    .option('--cookie-jar <file>', 'start with the cookies of a Netscape cookies.txt (curl -c)')
    .option('--proxy <url>', 'proxy for every request, e.g. http://proxy:3128 (default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY)')
    .option('--insecure', 'accept any TLS certificate (self-signed staging servers)')
    .option('--ca <file>', 'also trust the CA certificates in this PEM file')
    .option('--sign-key <file>', 'sign every request with this key (crawl keys new DIR); twice in a key rotation: new, then old', collect)
    .option('--signature-agent <url>', 'with --sign-key: the https origin that publishes its public key (see crawl keys)')
    .option('--http2', 'use HTTP/2 with https servers that offer it: one connection per host, same rates and limits (default HTTP/1.1)')
    .option('--no-latency-backoff', "keep each host's rate when its response time climbs (default: slow it from 1.5x its baseline)")
    .option('--timeout <duration>', 'connect/headers/body timeout; a bare number is seconds: --timeout 5, "500ms" (default 10s connect, 30s headers and body)')
    .option('--max-body <size>', 'cap on decompressed body bytes, e.g. "1MiB" (default 10MiB)')
    .option('-o, --output <file>', 'write records to FILE ("-" = stdout)')
    .option('--seeds-file <file>', 'read seed URLs, one per line ("-" = stdin)')
    .option('--state <file>', 'keep the crawl in this SQLite file: survives crashes; run the same command again to resume')
    .option('--fresh', 'with --state: discard what the file holds and start over')
    .option(
      '--recrawl',
      'with --state or --redis: crawl every page the state knows again, asking only for changes (If-None-Match, If-Modified-Since); records say change: new, changed, unchanged or removed (docs/crawling-again.md)',
    )
    .option(
      '--revisit',
      'with --state or --redis: never finish; ask each page again (conditionally) after an interval that adapts to how often it changes: shorter after a change, longer after none (docs/crawling-again.md)',
    )
    .option('--revisit-min <duration>', 'with --revisit: the shortest interval; a bare number is seconds (default 1h; at least 1s)')
    .option('--revisit-max <duration>', 'with --revisit: the longest interval (default 30d)')
    .option('--since <file>', "without --state: compare with a previous run's records (JSON lines), requesting each page again with its validators")
    .option('--redis <url>', 'share the crawl through Redis (redis://host:6379/0) with every worker given the same --crawl-id')
    .option('--redis-ca <file>', 'with rediss://: trust the CA in this PEM file for Redis (--ca is for the crawled sites)')
    .option('--crawl-id <name>', "with --redis: the shared crawl's name")
    .option('--worker <name>', "with --redis: this worker's name in records (default: host-pid)")
    .option('--lease <duration>', "with --redis: a dead worker's requests go back to the queue after this (default 60s)")
    .option(
      '--wait-for-crawl <duration>',
      'with --redis and no seeds: wait this long for the crawl to appear (another worker gives the seeds; a bare number is seconds; default 30s, 0: none)',
    )
    .option('--max-time <duration>', 'stop cleanly after this long; a bare number is seconds: --max-time 90, "30m" (records flushed, summary printed, exit 0)')
    .option('--report <file>', 'when the crawl ends, write a self-contained HTML report of it (see crawl report)')
    .option('--stats <file>', 'when the crawl ends, write its summary as JSON')
    .option('--save-dir <dir>', "save each 2xx body (any type, up to --max-body) as DIR/host/path, named by the record's savedPath, e.g. --save-dir mirror")
    .option(
      '--render [mode]',
      'render pages in a browser (Chromium) first: links, content and extract read the rendered DOM; every browser request goes through its host\'s robots.txt and limits. "auto": only pages that look like an app shell',
    )
    .option('--render-concurrency <n>', 'pages rendered at once (default 4)')
    .option('--render-timeout <duration>', 'a page not rendered within this gets RENDER_TIMEOUT (default 30s)')
    .option('--render-block <types>', 'resource types the browser may not fetch, comma-separated, or "none" (default image,media,font)')
    .option('--browser <path>', 'the Chromium to render with (default: $CRAWL_BROWSER, else chromium on PATH)')
    .option('--warc <file>', 'also write requests and responses as WARC 1.1, e.g. --warc site.warc.gz')
    .option('--emit-skipped', 'also write a record for each URL skipped (robots, scope, depth, caps)')
    .option('--emit-robots', 'also write a record for each robots.txt request ("type": "robots")')
    .option('--links', 'include the list of extracted links in each record')
    .addOption(
      new Option('--content <format>', "put each HTML page's main content in its record, e.g. --content markdown (cap: --max-content)").choices([
        'text',
        'html',
        'markdown',
      ]),
    )
    .option('--max-content <size>', 'cap on content and on each extracted string (default 1MiB)')
    .option(
      '--extract <name=selector>',
      "add a record field read with a CSS selector (repeatable); name[]=… takes every match, ::attr(x) an attribute, ::html the markup, e.g. --extract 'img[]=img::attr(src)'",
      collect,
    )
    .option(
      '--handler <file>',
      'an ES module exporting handle(page, ctx): called for each page answered 2xx; it can enqueue URLs and push items (docs/handlers.md)',
    )
    .option('--handler-timeout <duration>', 'with --handler: a handler not settled within this gives HANDLER_TIMEOUT; a bare number is seconds (default 30s)')
    .addOption(
      new Option('--handler-errors <mode>', "with --handler: on a handler's error, record it on the page (default) or stop the crawl with exit 1").choices([
        'record',
        'stop',
      ]),
    )
    .option('--handler-concurrency <n>', 'with --handler: handlers running at once (default: --concurrency)')
    .option('--items-only', 'with --handler: write only the items handlers push ("type": "item"), not the page records')
    .option(
      '--purpose <uses>',
      'what the output is for, comma-separated: search, train-ai, ai-input, tdm; a page that states "n" for one keeps its record but not its content (docs/politeness.md)',
    )
    .option('--archive-noarchive', 'keep pages that say noarchive in --save-dir and --warc too')
    .option('--fetch-denied', 'with --purpose: request pages robots.txt denies for it anyway, for their links only')
    .option('--max-price <amount>', 'pay up to this per request to hosts that price pages (HTTP 402), e.g. 0.05 or "USD 0.05"; needs --sign-key')
    .option('--budget <total>', 'the most the crawl spends on priced pages (per currency, or "USD 5"); then they are skipped')
    .option('--follow-canonical', "dedupe by rel=canonical: a page's in-scope canonical URL is marked seen, not fetched again")
    .option(
      '--sitemap <url>',
      'also crawl the URLs this sitemap lists (XML, index, text, .gz; repeatable; no seed needed), e.g. --sitemap https://example.com/sitemap.xml',
      collect,
    )
    .option('--sitemaps', "also crawl the sitemaps named by the seeds' robots.txt (Sitemap: lines)")
    .option('--check-links', 'link checker: check each out-of-scope link with one HEAD (or GET) request, never followed; the summary counts broken links')
    .option('--no-robots', 'ignore robots.txt (loudly discouraged)')
    .option('--allow-private', "also connect to loopback, private and link-local addresses off the seeds' hosts")
    .option(
      '--metrics <[host:]port>',
      'serve Prometheus metrics at /metrics while crawling, e.g. --metrics 9464 (on 127.0.0.1 unless a host is given: 0.0.0.0:9464)',
    )
    .option('--metrics-hosts <n>', 'with --metrics: hosts with series of their own, the top N by requests (default 10)')
    .addOption(
      new Option('--log-format <format>', 'stderr as JSON lines (level, time, message, host, code), progress and summary as events').choices(['text', 'json']),
    )
    .option('-q, --quiet', 'no progress, info or summary on stderr')
    .option('-v, --verbose', 'also log on stderr each request a rendering browser makes, and what became of it')
    .addHelpText('after', EXAMPLES)
    .showSuggestionAfterError(true)
    // Options after a subcommand belong to it; those written before it are
    // merged in, or refused when it does not take them (parent-options.ts).
    .enablePositionalOptions()
    .helpCommand('help [command]', 'show help for crawl or one of its commands, e.g. crawl help check')
    .action(async (seeds: string[], flags: CrawlFlags) => {
      result.code = await handlers.crawl(seeds, flags);
    });

  program
    .command('status')
    .description('show a crawl kept with --state or --redis: progress, queues, paused and given-up hosts, robots.txt')
    .option('--state <file>', 'the state file')
    .option('--redis <url>', 'or a crawl shared through Redis (with --crawl-id)')
    .option('--redis-ca <file>', "with a rediss:// URL: the CA that signed Redis's certificate (PEM)")
    .option('--crawl-id <name>', "the shared crawl's name")
    .option('--json', 'print one JSON object instead of text')
    .option('--top <n>', 'hosts to list per table (default 10)')
    .option('--config <file>', "the crawl's config, for its hosts' quiet hours (default: ./crawler.config.json when present)")
    .option('--watch [interval]', 'print again every interval (default 2s; a bare number is seconds) until Ctrl-C or the crawl ends')
    .action(async (flags: StatusFlags, cmd: Command) => {
      result.code = await handlers.status(withParentOptions(program, cmd, flags));
    });

  program
    .command('report')
    .description('write a self-contained HTML report of a records file (or of a --state or --redis crawl): politeness per host, throughput, failures')
    .argument('[records]', 'JSON-lines records written by crawl ("-" = stdin)')
    .option('--state <file>', 'or the records a crawl kept in its --state file, e.g. crawl report --state crawl.db -o report.html')
    .option(
      '--redis <url>',
      "or every worker's records of a crawl shared through Redis (with --crawl-id), e.g. crawl report --redis redis://localhost:6379 --crawl-id shop -o shop.html",
    )
    .option('--redis-ca <file>', "with a rediss:// URL: the CA that signed Redis's certificate (PEM)")
    .option('--crawl-id <name>', "the shared crawl's name")
    .option('-o, --output <file>', 'the HTML file ("-" = stdout; default: the records file with .html)')
    .option('--config <file>', "the crawl's config file, for the configured rate per host")
    .option('--rate <rate>', "the crawl's --rate, likewise")
    .option('-q, --quiet', 'no message on stderr')
    .action(async (file: string | undefined, flags: ReportFlags, cmd: Command) => {
      result.code = await handlers.report(file, withParentOptions(program, cmd, flags));
    });

  program
    .command('check')
    .description('explain what the crawler would do with a URL, fetching nothing but robots.txt')
    .argument('<url>', 'the URL to explain')
    .option('--config <file>', 'config file (default: ./crawler.config.json when present)')
    .option('--seed <url>', 'seed the scope check is relative to (repeatable; default: the URL itself)', collect)
    .addOption(new Option('--scope <scope>', 'scope to check against').choices(['host', 'domain', 'any']))
    .option('--include <regex>', 'include pattern (repeatable)', collect)
    .option('--exclude <regex>', 'exclude pattern (repeatable)', collect)
    .option('--user-agent <ua>', 'User-Agent whose product token picks the robots.txt group')
    .option('--rate <rate>', 'default per-host rate, as for crawl (default 1/s)')
    .option('--host-concurrency <n>', 'default requests in flight per host (default 2)')
    .option('--ip-rate <rate>', 'per-IP rate, as for crawl (default off)')
    .option('--ip-concurrency <n>', 'requests in flight per IP address (default off)')
    .option('--allow-private', 'lift the SSRF guard, as for crawl')
    .option('--render [mode]', 'render the page once, politely, and list the hosts its browser asks: limits, robots.txt verdict')
    .option('--header <header>', 'a header requests carry, as for crawl (repeatable); shown in the request: line, secrets as ***', collect)
    .option('--cookie <name=value>', "a cookie sent to the seeds' hosts (repeatable)", collect)
    .option('--cookie-jar <file>', 'cookies of a Netscape cookies.txt, as for crawl')
    .option('--proxy <url>', 'proxy for robots.txt and the request: line, e.g. http://proxy:3128 (default: HTTP_PROXY, HTTPS_PROXY)')
    .option('--insecure', 'accept any TLS certificate when fetching robots.txt')
    .option('--ca <file>', 'also trust the CA certificates in this PEM file')
    .option('--sign-key <file>', 'a signing key, as for crawl: the request: lines show the signature headers', collect)
    .option('--signature-agent <url>', 'with --sign-key: the origin that publishes the public key')
    .option('--robots-file <file>', 'use this local robots.txt instead of fetching it')
    .option('--purpose <uses>', 'what the output is for, as for crawl: says whether robots.txt denies it')
    .option('--fetch-denied', 'as for crawl: a page robots.txt denies the purpose would be fetched anyway')
    .option('--no-robots', 'skip the robots.txt verdict')
    .option('--timeout <duration>', 'timeout for the robots.txt request (a bare number is seconds)')
    .addHelpText(
      'after',
      '\nOptions written before "check" (crawl --config c.json check URL) count too;\n' +
        'those after it win. Crawl-only options before it are refused.\n\n' +
        'Exit codes: 0 the URL would be fetched, 1 it would be skipped,\n2 usage or config error.',
    )
    .action(async (url: string, flags: CheckFlags, cmd: Command) => {
      result.code = await handlers.check(url, withParentOptions(program, cmd, flags));
    });

  const keys = program.command('keys').description('make and check the key that signs requests (Web Bot Auth), see docs/identity.md').helpCommand(false);
  keys
    .command('new')
    .description('make an Ed25519 key pair: DIR/private.jwk (mode 0600) and the key directory to publish')
    .argument('<dir>', 'where to write the two files (created if missing)')
    .option('--keep <file>', "a rotation: also list this older key's public half (its private.jwk or directory)", collect)
    .option('--force', 'replace a private.jwk already in DIR')
    .action(async (dir: string, flags: KeysFlags & { keep?: string[] }) => {
      result.code = (await handlers.keys?.('new', dir, flags)) ?? EXIT.internal;
    });
  keys
    .command('check')
    .description("fetch an origin's key directory: does it list the signing key, and is its response signed?")
    .argument('<origin>', 'the Signature-Agent origin, e.g. https://bot.example.com')
    .option('--sign-key <file>', 'the key in use, as for crawl (twice in a rotation: new, then old)', collect)
    .option('--user-agent <ua>', 'User-Agent of the request')
    .option('--timeout <duration>', 'for the request (a bare number is seconds; default 30s)')
    .option('--insecure', 'accept any TLS certificate')
    .option('--ca <file>', 'also trust the CA certificates in this PEM file')
    .addHelpText('after', '\nExit codes: 0 the directory lists every key given (or, without --sign-key,\nis a valid key set), 1 it does not, 2 usage error.')
    .action(async (origin: string, flags: KeysFlags) => {
      result.code = (await handlers.keys?.('check', origin, flags)) ?? EXIT.internal;
    });
  return program;
}

/** Runs the CLI; resolves with the exit code. Never throws. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const result = { code: EXIT.ok as number };
  // `crawl --help | head`: a reader that leaves early is not an error worth a stack trace.
  ignoreStreamErrors(io.stdout);
  ignoreStreamErrors(io.stderr);
  // --log-format json reaches the boundary's own lines too: a log shipper must not meet one plain line.
  let jsonLog = false;
  const errLine = (msg: string, code?: string) =>
    io.stderr.write(
      jsonLog
        ? JSON.stringify({ level: 'error', time: new Date().toISOString(), message: msg, ...(code !== undefined && { code }) }) + '\n'
        : `crawl: ${msg}\n`,
    );
  const program = buildProgram(
    {
      crawl: async (seeds, flags) => (await import('./crawl-command.js')).crawlCommand(seeds, flags, io),
      check: async (url, flags) => (await import('./check-command.js')).checkCommand(url, flags, io),
      status: async (flags) => (await import('./status-command.js')).statusCommand(flags, io),
      report: async (file, flags) => (await import('./report-command.js')).reportCommand(file, flags, io),
      keys: async (action, arg, flags) => (await import('./keys-command.js')).keysCommand(action, arg, flags, io),
    },
    result,
  );
  program.exitOverride();
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    // Commander prints "error: …"; we print "crawl: …" lines with a hint.
    outputError: (s, write) => write(`crawl: ${s.replace(/^error: /, '').trimEnd()} (see crawl --help)\n`),
  });
  for (const sub of [...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    sub.exitOverride();
    sub.configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`crawl: ${s.replace(/^error: /, '').trimEnd()} (see crawl ${sub.name()} --help)\n`),
    });
  }
  try {
    await program.parseAsync(withRenderMode(argv), { from: 'user' });
    return result.code;
  } catch (err) {
    jsonLog = program.opts<CrawlFlags>().logFormat === 'json';
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    const known = err as { code?: string; message?: string };
    if (known && known.code === 'REDIS_STATE_LOST') {
      errLine(String(known.message), known.code);
      return EXIT.stateLost;
    }
    if (
      known &&
      typeof known.code === 'string' &&
      [
        'USAGE',
        'CONFIG_INVALID',
        'OUTPUT_UNWRITABLE',
        'OUTPUT_EXISTS',
        'UNIT_INVALID',
        'STATE_INVALID',
        'REDIS_UNAVAILABLE',
        'REPORT_INPUT_INVALID',
        'BROWSER_MISSING',
      ].includes(known.code)
    ) {
      for (const line of String(known.message).split('\n')) errLine(line, known.code);
      return EXIT.usage;
    }
    if (known && known.code === 'HANDLER_ERROR' && known.message !== undefined) {
      errLine(`stopped: ${known.message} (--handler-errors stop)`, known.code);
      return EXIT.internal;
    }
    const ioLine = ioFailure(err);
    if (ioLine) {
      errLine(ioLine, (err as { code: string }).code);
      return EXIT.io;
    }
    errLine(`internal error: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.CRAWL_DEBUG && err instanceof Error && err.stack) io.stderr.write(err.stack + '\n');
    return EXIT.internal;
  }
}

/** The values `--render` takes; anything else after it is not its value. */
const RENDER_MODES = new Set(['auto', 'true', 'false', 'on', 'off']);

/**
 * `--render` takes an optional mode, and Commander would read the seed in
 * `crawl --render https://app.example/` as that mode: a bare `--render`
 * followed by anything but a mode is written `--render=true` first.
 */
function withRenderMode(argv: readonly string[]): string[] {
  return argv.map((arg, i) => (arg === '--render' && !RENDER_MODES.has(argv[i + 1] ?? '') ? '--render=true' : arg));
}

/** Errno codes that mean the machine refused a write: the environment, not a bug. */
const IO_ERRNO: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an I/O error',
  EFBIG: 'the file is too large',
};

/**
 * One line for an environment failure (an `IO_FAILED` error a writer raised,
 * or a raw errno error that reached the boundary), else undefined.
 */
function ioFailure(err: unknown): string | undefined {
  const e = err as { code?: string; message?: string; path?: string; syscall?: string };
  if (!e || typeof e.code !== 'string') return undefined;
  if (e.code === 'IO_FAILED') return String(e.message);
  const why = IO_ERRNO[e.code];
  if (!why) return undefined;
  return e.path ? `cannot write ${e.path}: ${why}` : `a write failed: ${why} (${e.code})`;
}

function defaultIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, signals: process, cwd: process.cwd() };
}
