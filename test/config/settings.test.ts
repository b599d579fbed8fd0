import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, buildSettings, formatPath, loadConfigFile, validateConfig, type CliOverrides } from '../../src/config/settings.js';
import { fileDefaults, renderConfigJsonSchema } from '../../src/config/file-schema.js';
import { readSeedsFile } from '../../src/config/seeds.js';
import { VERSION } from '../../src/version.js';
import { problemsOf } from '../support/config-problems.js';

const rootFile = (name: string) => fileURLToPath(new URL(`../../${name}`, import.meta.url));

async function problemsOfAsync(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('validateConfig', () => {
  it('fills every default from an empty object', () => {
    const config = validateConfig({});
    expect(config).toMatchObject({
      concurrency: 16,
      hostKey: 'host',
      scope: 'host',
      include: [],
      exclude: [],
      timeout: { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 },
      maxBody: 10 * 1024 * 1024,
      maxRedirects: 10,
      maxUrlLength: 2048,
      respectNofollow: true,
      robots: { enabled: true, maxSize: 512 * 1024, cacheTtl: 86_400_000, unavailableRetries: 2, unavailableRetryDelay: 5000 },
      defaults: {
        rate: { intervalMs: 1000, label: '1/s' },
        limits: [],
        concurrency: 2,
        jitterMs: 0,
        crawlDelay: 'floor',
        maxCrawlDelayMs: 30_000,
      },
      domains: {},
    });
    // Exact, not toMatchObject: the defaults' transform is cast to PolicyFields, so
    // only this catches a field the schema forgets to fill.
    expect(config.defaults).toStrictEqual({
      rate: { intervalMs: 1000, label: '1/s' },
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
      maxPagesPerHost: 100_000,
      headers: {},
      render: false,
      http2: false,
      timezone: 'UTC',
    });
    // Every crawl ends by itself: a depth no real site needs, but a calendar trap reaches; a queue cap; trap defences.
    expect(config.maxDepth).toBe(100);
    expect(config.maxQueued).toBe(1_000_000);
    expect(config.traps).toEqual({ maxPathRepeats: 3, maxQueryParams: 32, maxQueryVariants: 10_000 });
    expect(config.maxPages).toBeUndefined();
    expect(config.userAgent).toBeUndefined();
  });

  it('starts a crawl without a file from exactly what the schema makes of an empty one', () => {
    // fileDefaults() stands in for parsing `{}` at start-up; a default changed in the schema must change it too.
    expect(fileDefaults()).toStrictEqual(validateConfig({}));
    // A fresh object each time: a caller changing its copy cannot change the next crawl's defaults.
    const first = fileDefaults();
    Object.assign(first.defaults.headers, { x: 'y' });
    expect(fileDefaults().defaults.headers).toEqual({});
  });

  it('normalises units, regexes and domain keys', () => {
    const config = validateConfig({
      timeout: '5s',
      maxBody: '1MB',
      include: ['^https://example\\.com/docs/'],
      robots: { cacheTtl: '1h' },
      defaults: { rate: '500ms', limits: ['100/min'], jitter: '1.5s' },
      domains: { 'Bücher.de': { rate: '2/s' }, '*.Example.com': { concurrency: 3 }, $comment: 'not a host' },
    });
    expect(config.timeout).toEqual({ connectMs: 5000, headersMs: 5000, bodyMs: 5000, totalMs: 180_000 });
    expect(config.maxBody).toBe(1_000_000);
    expect(String(config.include[0])).toBe('/^https:\\/\\/example\\.com\\/docs\\//');
    expect(config.include[0].test('https://example.com/docs/a')).toBe(true);
    expect(config.robots.cacheTtl).toBe(3_600_000);
    expect(config.defaults).toMatchObject({ rate: { intervalMs: 500 }, limits: [{ count: 100, windowMs: 60_000 }], jitterMs: 1500 });
    expect(config.domains).toEqual({
      'xn--bcher-kva.de': { rate: { intervalMs: 500, label: '2/s' } },
      '*.example.com': { concurrency: 3 },
    });
  });

  it('fills unset timeout phases from their defaults', () => {
    expect(validateConfig({ timeout: { connect: '2s' } }).timeout).toEqual({ connectMs: 2000, headersMs: 30_000, bodyMs: 30_000, totalMs: 180_000 });
  });

  it('has a total deadline: "3m" by default, its own field, raised to a single duration that is longer', () => {
    expect(validateConfig({}).timeout.totalMs).toBe(180_000);
    expect(validateConfig({ timeout: { total: '300ms' } }).timeout).toEqual({ connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000, totalMs: 300 });
    expect(validateConfig({ timeout: '10m' }).timeout).toEqual({ connectMs: 600_000, headersMs: 600_000, bodyMs: 600_000, totalMs: 600_000 });
    expect(problemsOf(() => validateConfig({ timeout: { total: '0s' } }, 'c.json'))).toEqual([
      'c.json: timeout.total: expected a duration greater than zero, got "0s"',
    ]);
  });

  it('guards the network by default; allowPrivate and allowNetworks (normalised CIDRs) lift it', () => {
    expect(validateConfig({})).toMatchObject({ allowPrivate: false, allowNetworks: [] });
    const config = validateConfig({ allowPrivate: true, allowNetworks: ['10.0.0.0/8', ' fd00::/8', '192.168.1.20', '::ffff:10.1.0.0/112'] });
    expect(config.allowPrivate).toBe(true);
    expect(config.allowNetworks).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.20/32', '10.1.0.0/16']);
    expect(buildSettings(config, {}).network).toEqual({ allowPrivate: true, allowNetworks: config.allowNetworks });
    expect(buildSettings(undefined, { allowPrivate: true }).network).toEqual({ allowPrivate: true, allowNetworks: [] });
    expect(buildSettings(undefined, {}).network).toEqual({ allowPrivate: false, allowNetworks: [] });
  });

  it('names every bad network in allowNetworks, at its index', () => {
    expect(
      problemsOf(() => validateConfig({ allowNetworks: ['10.0.0.1/8', 'localhost', '10.0.0.0/33', 'fd00::/129', 7], allowPrivate: 'yes' }, 'c.json')).sort(),
    ).toEqual(
      [
        'c.json: allowNetworks[0]: "10.0.0.1/8" has host bits set after /8; did you mean "10.0.0.0/8"?',
        'c.json: allowNetworks[1]: expected a network like "10.0.0.0/8" or "fd00::/8", or one IP address, got "localhost"',
        'c.json: allowNetworks[2]: prefix length must be 0-32 for IPv4, got "10.0.0.0/33"',
        'c.json: allowNetworks[3]: prefix length must be 0-128 for IPv6, got "fd00::/129"',
        'c.json: allowNetworks[4]: expected a network like "10.0.0.0/8" as a string, got 7',
        'c.json: allowPrivate: expected true or false, got "yes"',
      ].sort(),
    );
    expect(problemsOf(() => validateConfig({ allowNetworks: '10.0.0.0/8' }, 'c.json'))).toEqual([
      'c.json: allowNetworks: expected a list of networks like ["10.0.0.0/8"], got "10.0.0.0/8"',
    ]);
  });

  it('reports every problem in one pass, each at its path', () => {
    const problems = problemsOf(() =>
      validateConfig(
        {
          concurrency: 0,
          hostKey: 'ip',
          timeout: { connect: 'soon', headers: '0s' },
          maxBody: '10K',
          include: ['ok', '(unclosed'],
          robots: { cacheTtl: '48h', enabled: 'yes', maxSize: '100KiB' },
          defaults: { rate: 'fast', limits: ['100/min', '1.5/min'] },
          domains: {
            'a.com': { rate: 'fast', concurrency: 1.5 },
            'bad key': { rate: '1/s' },
            'night.com': { hours: '22-06', timezone: 'Europe/Atlantis' },
          },
        },
        'crawler.config.json',
      ),
    );
    expect(problems.sort()).toEqual(
      [
        'crawler.config.json: concurrency: expected an integer from 1 to 1000, got 0',
        'crawler.config.json: hostKey: expected one of "host", "domain", got "ip"',
        'crawler.config.json: timeout.connect: expected a duration like "30s" or "500ms", got "soon"',
        'crawler.config.json: timeout.headers: expected a duration greater than zero, got "0s"',
        'crawler.config.json: maxBody: expected a size like "10MiB", "500KB" or a number of bytes, got "10K"',
        'crawler.config.json: include[1]: invalid regular expression "(unclosed": missing closing ): `(unclosed`',
        'crawler.config.json: robots.enabled: expected true or false, got "yes"',
        'crawler.config.json: robots.cacheTtl: expected a duration of at most 24h, got "48h"',
        'crawler.config.json: robots.maxSize: expected at least 500KiB (RFC 9309 §2.5), got "100KiB"',
        'crawler.config.json: defaults.rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"',
        'crawler.config.json: defaults.limits[1]: expected a window like "100/min" or "2000/h", got "1.5/min" (the count must be a whole number of requests, at least 1)',
        'crawler.config.json: domains["a.com"].rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"',
        'crawler.config.json: domains["a.com"].concurrency: expected an integer from 1 to 1000, got 1.5',
        'crawler.config.json: domains["bad key"]: expected a hostname like "example.com", "example.com:8080" or "*.example.com", got "bad key"',
        'crawler.config.json: domains["night.com"].hours: expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got "22-06"',
        'crawler.config.json: domains["night.com"].timezone: unknown time zone "Europe/Atlantis" (expected an IANA name like "Europe/Berlin" or "UTC")',
      ].sort(),
    );
  });

  it('rejects unknown keys at every level, with a hint for near misses', () => {
    const problems = problemsOf(() =>
      validateConfig(
        {
          concurency: 4,
          rate: '2/s',
          timeout: { conect: '1s' },
          robots: { enabled: true, ttl: '1h' },
          defaults: { rate: '1/s', $schema: 'x' },
          domains: { 'a.com': { rates: '2/s' } },
        },
        'c.json',
      ),
    );
    expect(problems.sort()).toEqual(
      [
        'c.json: concurency: unknown key (did you mean "concurrency"?)',
        'c.json: rate: unknown key ("rate" belongs in "defaults" or a "domains" entry)',
        'c.json: timeout.conect: unknown key (did you mean "connect"?)',
        'c.json: robots.ttl: unknown key',
        'c.json: defaults.$schema: unknown key',
        'c.json: domains["a.com"].rates: unknown key (did you mean "rate"?)',
      ].sort(),
    );
  });

  it('accepts $comment in every object and $schema at the top', () => {
    const note = { $comment: 'why' };
    expect(() =>
      validateConfig({
        ...note,
        $schema: './crawler.config.schema.json',
        timeout: { ...note },
        robots: { ...note },
        defaults: { ...note, backoff: { ...note }, hostFailures: { ...note } },
        domains: { ...note, 'a.com': { ...note, backoff: { ...note }, hostFailures: { ...note } } },
      }),
    ).not.toThrow();
    expect(problemsOf(() => validateConfig({ $comment: 5 }, 'c.json'))).toEqual(['c.json: $comment: expected a string, got 5']);
  });

  it.each<[unknown, string]>([
    [[], 'c.json: expected a JSON object at the top level, got an array'],
    [null, 'c.json: expected a JSON object at the top level, got null'],
    ['{}', 'c.json: expected a JSON object at the top level, got "{}"'],
    [{ defaults: [] }, 'c.json: defaults: expected an object, got an array'],
    [{ include: 'x' }, 'c.json: include: expected a list of regular expressions, got "x"'],
    [{ timeout: true }, 'c.json: timeout: expected a duration like "30s" or an object with connect/headers/body/total, got true'],
    [{ timeout: 'abc' }, 'c.json: timeout: expected a duration like "30s" or "500ms", got "abc"'],
    [{ userAgent: 'bad\nagent' }, 'c.json: userAgent: expected printable ASCII starting with a product token like "mybot/1.0", got "bad\\nagent"'],
    [{ maxPages: 0 }, 'c.json: maxPages: expected an integer >= 1, got 0'],
    [{ maxDepth: -1 }, 'c.json: maxDepth: expected an integer >= 0, got -1'],
    [{ maxQueued: 0 }, 'c.json: maxQueued: expected an integer >= 1, got 0'],
    [{ traps: { maxPathRepeats: 0 } }, 'c.json: traps.maxPathRepeats: expected an integer >= 1, got 0'],
    [{ traps: { maxQueryVariant: 5 } }, 'c.json: traps.maxQueryVariant: unknown key (did you mean "maxQueryVariants"?)'],
    // A key named after its flag (--host-concurrency, --render-concurrency) is too far from the real one for a spelling hint.
    [{ defaults: { hostConcurrency: 2 } }, 'c.json: defaults.hostConcurrency: unknown key (did you mean "concurrency"?)'],
    [{ domains: { 'a.com': { hostConcurrency: 2 } } }, 'c.json: domains["a.com"].hostConcurrency: unknown key (did you mean "concurrency"?)'],
    [{ hostConcurrency: 2 }, 'c.json: hostConcurrency: unknown key (did you mean "defaults.concurrency"?)'],
    [{ renderConcurrency: 2 }, 'c.json: renderConcurrency: unknown key (did you mean "renderOptions.concurrency"?)'],
    [{ defaults: { maxPagesPerHost: 0 } }, 'c.json: defaults.maxPagesPerHost: expected an integer >= 1, got 0'],
    [{ domains: { 'a.com': { maxPagesPerHost: 'lots' } } }, 'c.json: domains["a.com"].maxPagesPerHost: expected an integer >= 1, got "lots"'],
  ])('rejects %j', (raw, problem) => {
    expect(problemsOf(() => validateConfig(raw, 'c.json'))).toEqual([problem]);
  });
});

describe('regular expressions in include and exclude (checked at start-up, not on the first link)', () => {
  it('refuses one longer than 1,000 characters in one short line, from a file or a flag', () => {
    const huge = 'a'.repeat(120 * 1024);
    const [problem, ...rest] = problemsOf(() => validateConfig({ include: ['ok', huge] }, 'c.json'));
    expect(rest).toEqual([]);
    expect(problem).toBe(
      `c.json: include[1]: a regular expression of 122,880 characters, over the limit of 1,000 ("${'a'.repeat(40)}…"); split it into several patterns`,
    );
    expect(problemsOf(() => buildSettings(undefined, { exclude: [huge] }))).toEqual([
      `--exclude: a regular expression of 122,880 characters, over the limit of 1,000 ("${'a'.repeat(40)}…"); split it into several patterns`,
    ]);
    expect(() => validateConfig({ include: ['x'.repeat(1000)] })).not.toThrow();
  });

  // Issue 22: these were refused as "catastrophic backtracking" when patterns ran on V8's RegExp;
  // matched in linear time (user-pattern.ts), they are harmless.
  it.each<[string, boolean]>([
    ['(a+)+$', false],
    ['^(?:\\w+\\s?)*$', false],
    ['(.*a){20}', true],
    ['/(.*/)*x', false],
    ['^((a|b)*b)+$', false],
    ['(?<n>[a-z]+-?)+\\.html', false],
  ])('accepts %s: a repetition inside a repetition costs linear time', (source, matches) => {
    const [pattern] = validateConfig({ exclude: [source] }, 'c.json').exclude;
    expect(pattern.test(`http://a.test/${'a'.repeat(10_000)}!`)).toBe(matches);
  });

  it.each([
    '\\.(?:zip|tar\\.gz|iso|dmg)$',
    '[?&](?:sessionid|sid)=',
    '^https://example\\.com/docs/',
    '^https://example\\.com/(?:[a-z0-9-]+/)*$',
    '(?:[^/]+/){2,}index\\.html$',
    '(?:\\d+\\.)+\\d+',
    '/page/\\d+$',
    'a{2,5}b*c+',
    '[(+*]+\\(x\\)',
    '(?:a|b)*c',
    '^((ab)*c)+$',
  ])('accepts %s', (source) => {
    expect(() => validateConfig({ include: [source] })).not.toThrow();
  });
});

describe('formatPath', () => {
  it.each<[PropertyKey[], string]>([
    [['concurrency'], 'concurrency'],
    [['robots', 'maxSize'], 'robots.maxSize'],
    [['include', 2], 'include[2]'],
    [['domains', 'a.com', 'limits', 0], 'domains["a.com"].limits[0]'],
    [['domains', 'localhost', 'rate'], 'domains["localhost"].rate'],
  ])('%j → %s', (path, text) => {
    expect(formatPath(path)).toBe(text);
  });
});

describe('loadConfigFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads, parses and validates a file, tolerating a byte-order mark', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '\uFEFF{ "concurrency": 4, "defaults": { "rate": "2/s" } }');
    const config = await loadConfigFile(file);
    expect(config.concurrency).toBe(4);
    expect(config.defaults.rate.intervalMs).toBe(500);
  });

  it('names the file and the line and column of a JSON syntax error', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{\n  "concurrency": 4,\n  "scope": "host"\n  "maxPages": 3\n}\n');
    const problems = await problemsOfAsync(loadConfigFile(file));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${file.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}: invalid JSON at line 4, column 3: `));
  });

  it('reports an empty file at its end', async () => {
    const file = join(dir, 'empty.json');
    await writeFile(file, '');
    expect(await problemsOfAsync(loadConfigFile(file))).toEqual([`${file}: invalid JSON at line 1, column 1: the file is empty`]);
  });

  it('reports a missing file and a directory without a stack of noise', async () => {
    const missing = join(dir, 'nope.json');
    expect(await problemsOfAsync(loadConfigFile(missing))).toEqual([`${missing}: cannot read config: file not found`]);
    expect(await problemsOfAsync(loadConfigFile(dir))).toEqual([`${dir}: cannot read config: is a directory, not a file`]);
  });

  it('prefixes validation problems with the path as given', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ domains: { 'a.com': { rate: 'fast' } } }));
    expect(await problemsOfAsync(loadConfigFile(file))).toEqual([
      `${file}: domains["a.com"].rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"`,
    ]);
  });
});

describe('buildSettings', () => {
  it('uses the built-in defaults with no file and no flags', () => {
    const settings = buildSettings(undefined, {});
    expect(settings).toMatchObject({
      userAgent: `crawl/${VERSION} (+https://www.npmjs.com/package/polite-crawler)`,
      concurrency: 16,
      hostKey: 'host',
      maxDepth: 100,
      maxPages: Infinity,
      maxQueued: 1_000_000,
      traps: { maxPathRepeats: 3, maxQueryParams: 32, maxQueryVariants: 10_000 },
      scope: 'host',
      timeouts: { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 },
      maxBodyBytes: 10 * 1024 * 1024,
      maxUrlLength: 2048,
      maxRedirects: 10,
      robots: { enabled: true, maxBytes: 524_288, cacheTtlMs: 86_400_000, unavailableRetries: 2, unavailableRetryDelayMs: 5000 },
      respectNofollow: true,
      emitSkipped: false,
      emitLinks: false,
    });
    expect(settings.policyFor('example.com')).toMatchObject({ matched: 'defaults', intervalMs: 1000, concurrency: 2, maxPagesPerHost: 100_000 });
  });

  it('takes maxQueued and maxPagesPerHost from the file, and from flags over it (--max-queued, --max-pages-per-host)', () => {
    const file = validateConfig({
      maxQueued: 5000,
      defaults: { maxPagesPerHost: 300 },
      domains: { 'big.test': { maxPagesPerHost: 50_000 }, 'other.test': { rate: '2/s' } },
    });
    const fromFile = buildSettings(file, {});
    expect(fromFile.maxQueued).toBe(5000);
    expect(fromFile.policyFor('x.test').maxPagesPerHost).toBe(300);
    expect(fromFile.policyFor('big.test').maxPagesPerHost).toBe(50_000);
    const flagged = buildSettings(file, { maxQueued: '70', maxPagesPerHost: '9' });
    expect(flagged.maxQueued).toBe(70);
    // Like --rate: the flag replaces defaults, so an entry's own value still wins.
    expect(flagged.policyFor('x.test').maxPagesPerHost).toBe(9);
    expect(flagged.policyFor('other.test').maxPagesPerHost).toBe(9);
    expect(flagged.policyFor('big.test').maxPagesPerHost).toBe(50_000);
    expect(problemsOf(() => buildSettings(file, { maxQueued: '0', maxPagesPerHost: 'x' })).sort()).toEqual([
      '--max-pages-per-host: expected an integer >= 1, got "x"',
      '--max-queued: expected an integer >= 1, got 0',
    ]);
  });

  const file = validateConfig({
    userAgent: 'filebot/1.0',
    concurrency: 8,
    maxDepth: 3,
    maxPages: 50,
    scope: 'domain',
    include: ['file-include'],
    exclude: ['file-exclude'],
    timeout: { connect: '1s', headers: '2s', body: '3s' },
    maxBody: '1MB',
    robots: { enabled: true },
    defaults: { rate: '4/s', concurrency: 3 },
    domains: {
      'own.test': { rate: '10/s', concurrency: 5 },
      'inherits.test': { jitter: '100ms' },
    },
  });

  it('takes the file over the defaults', () => {
    const settings = buildSettings(file, {});
    expect(settings).toMatchObject({
      userAgent: 'filebot/1.0',
      concurrency: 8,
      maxDepth: 3,
      maxPages: 50,
      scope: 'domain',
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 3000 },
      maxBodyBytes: 1_000_000,
    });
    expect(settings.include.map(String)).toEqual(['/file-include/']);
    expect(settings.policyFor('other.test')).toMatchObject({ matched: 'defaults', intervalMs: 250, concurrency: 3 });
  });

  it('takes flags over the file', () => {
    const cli: CliOverrides = {
      userAgent: 'clibot/2.0',
      concurrency: '32',
      maxDepth: '0',
      maxPages: 7,
      scope: 'any',
      include: ['cli-include'],
      exclude: [],
      timeout: '9s',
      maxBody: '2KiB',
      robots: false,
      emitSkipped: true,
      links: true,
      allowPrivate: true,
    };
    const settings = buildSettings(file, cli);
    expect(settings).toMatchObject({
      userAgent: 'clibot/2.0',
      concurrency: 32,
      maxDepth: 0,
      maxPages: 7,
      scope: 'any',
      exclude: [],
      timeouts: { connectMs: 9000, headersMs: 9000, bodyMs: 9000, totalMs: 180_000 },
      maxBodyBytes: 2048,
      robots: { enabled: false },
      emitSkipped: true,
      emitLinks: true,
      network: { allowPrivate: true },
    });
    // --timeout says nothing about the total deadline: the file's stays, unless shorter than the flag.
    const long = validateConfig({ timeout: { total: '10m' } });
    expect(buildSettings(long, { timeout: '9s' }).timeouts.totalMs).toBe(600_000);
    expect(buildSettings(long, { timeout: '20m' }).timeouts.totalMs).toBe(1_200_000);
    expect(settings.include.map(String)).toEqual(['/cli-include/']);
  });

  it('applies --rate and --host-concurrency to defaults and to entries without their own value', () => {
    const settings = buildSettings(file, { rate: '20/s', hostConcurrency: '6' });
    // no entry: the flags
    expect(settings.policyFor('other.test')).toMatchObject({ matched: 'defaults', intervalMs: 50, rateLabel: '20/s', concurrency: 6 });
    // an entry that sets neither: the flags, plus its own jitter
    expect(settings.policyFor('inherits.test')).toMatchObject({ intervalMs: 50, concurrency: 6, jitterMs: 100 });
    // an entry's explicit values still win
    expect(settings.policyFor('own.test')).toMatchObject({ intervalMs: 100, rateLabel: '10/s', concurrency: 5 });
  });

  it('resolves server feedback per field: entry, else defaults, else built-in', () => {
    const settings = buildSettings(
      validateConfig({
        defaults: { retries: 4, backoff: { cap: '2m' } },
        domains: { 'a.test': { backoff: { base: '5s' }, hostFailures: { pause: 2 }, throttleStatuses: [429] } },
      }),
      {},
    );
    expect(settings.policyFor('a.test')).toMatchObject({
      retries: 4, // defaults
      backoffBaseMs: 5000, // entry
      backoffCapMs: 120_000, // defaults
      hostFailurePause: 2, // entry
      hostFailureGiveUp: 15, // built-in
      throttleStatuses: [429], // entry
      retryStatuses: [500, 502, 504], // built-in
      maxRetryAfterMs: 600_000, // built-in
    });
    expect(settings.policyFor('b.test')).toMatchObject({ matched: 'defaults', retries: 4, backoffBaseMs: 1000, backoffCapMs: 120_000 });
  });

  it('names every bad flag at once', () => {
    const problems = problemsOf(() =>
      buildSettings(file, {
        concurrency: 'lots',
        rate: 'fast',
        hostConcurrency: '0',
        maxDepth: '-1',
        maxPages: '1.5',
        scope: 'world',
        include: ['ok', '('],
        timeout: '0s',
        maxBody: 'big',
        userAgent: '',
      }),
    );
    expect(problems.sort()).toEqual(
      [
        '--concurrency: expected an integer from 1 to 1000, got "lots"',
        '--rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"',
        '--host-concurrency: expected an integer from 1 to 1000, got 0',
        '--max-depth: expected an integer >= 0, got -1',
        '--max-pages: expected an integer >= 1, got "1.5"',
        '--scope: expected one of "host", "domain", "any", got "world"',
        '--include: invalid regular expression "(": missing closing ): `(`',
        '--timeout: expected a duration greater than zero, got "0s"',
        '--max-body: expected a size like "10MiB", "500KB" or a number of bytes, got "big"',
        '--user-agent: expected printable ASCII starting with a product token like "mybot/1.0", got ""',
      ].sort(),
    );
  });
});

describe('crawler.config.example.json', () => {
  it('loads and resolves the demo hosts as documented', async () => {
    const settings = buildSettings(await loadConfigFile(rootFile('crawler.config.example.json')), {});
    const policy = (host: string) => settings.policyFor(host);

    expect(policy('news.localhost:4321')).toMatchObject({ matched: 'news.localhost', rateLabel: '5/s', intervalMs: 200, concurrency: 2, windows: [] });
    expect(policy('shop.localhost')).toMatchObject({
      matched: 'shop.localhost',
      intervalMs: 500,
      concurrency: 1,
      windows: [{ count: 30, windowMs: 60_000, label: '30/min' }],
    });
    expect(policy('docs.localhost')).toMatchObject({ matched: 'docs.localhost', intervalMs: 100, concurrency: 4 });
    expect(policy('blog.localhost')).toMatchObject({ matched: '*.localhost', rateLabel: '3/s', concurrency: 2 });
    expect(policy('localhost')).toMatchObject({ matched: '*.localhost' });
    expect(policy('www.example.com')).toMatchObject({ matched: '*.example.com', intervalMs: 2000, jitterMs: 250, maxCrawlDelayMs: 10_000 });
    expect(policy('staging.example.com:8443')).toMatchObject({ matched: 'staging.example.com:8443', intervalMs: 0, respectCrawlDelay: false });
    // Quiet hours: the entry's window in its own zone; a host without hours is crawled at any time.
    expect(policy('archive.example.org').hours?.toJSON()).toEqual({ hours: '22:00-06:00', timezone: 'Europe/Berlin' });
    expect(policy('www.example.com').hours).toBeNull();
    expect(policy('elsewhere.test')).toMatchObject({ matched: 'defaults', rateLabel: '1/s', intervalMs: 1000, concurrency: 2, http2: false });
    // Server feedback: the defaults as written, the shop's own pause cap and backoff base.
    expect(policy('elsewhere.test')).toMatchObject({
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
    });
    expect(policy('shop.localhost')).toMatchObject({ maxRetryAfterMs: 30_000, throttleRetries: 20, backoffBaseMs: 2000, backoffCapMs: 60_000 });
    expect(policy('staging.example.com:8443')).toMatchObject({
      retryStatuses: [500, 502, 503, 504],
      throttleStatuses: [429],
      adaptive: false,
      latencyBackoff: false,
      hostFailurePause: 2,
      hostFailureGiveUp: 4,
    });
    // The demo web has about 60 pages; the caps must not cut it short.
    expect(settings.maxPages).toBeGreaterThanOrEqual(200);
    // Its hosts all resolve to 127.0.0.1 and the demo seeds only two of them: the guard must let loopback through.
    expect(settings.network).toEqual({ allowPrivate: false, allowNetworks: ['127.0.0.0/8', '::1/128'] });
    expect(settings.timeouts.totalMs).toBe(180_000);
  });

  it('points editors at the committed schema, whose key pattern accepts its domain keys', async () => {
    const example = JSON.parse(await readFile(rootFile('crawler.config.example.json'), 'utf8')) as {
      $schema: string;
      domains: Record<string, unknown>;
    };
    expect(example.$schema).toBe('./crawler.config.schema.json');
    const schema = JSON.parse(await readFile(rootFile('crawler.config.schema.json'), 'utf8')) as {
      properties: { domains: { propertyNames: { pattern: string } } };
    };
    const keyPattern = new RegExp(schema.properties.domains.propertyNames.pattern);
    for (const key of Object.keys(example.domains)) expect(keyPattern.test(key), key).toBe(true);
    for (const bad of ['https://example.com', 'bad key', '**.example.com']) expect(keyPattern.test(bad), bad).toBe(false);
  });
});

describe('crawler.config.schema.json', () => {
  it('is what the zod schema generates (run `npm run schema` after changing config-schema.ts)', async () => {
    expect(await readFile(rootFile('crawler.config.schema.json'), 'utf8')).toBe(renderConfigJsonSchema());
  });
});

describe('invalid JSON: one line, at the right line and column', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-json-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const table: Array<[string, string, string]> = [
    // V8 names no position for a bad word, and quoted the whole file over several lines
    [
      'a misspelt literal',
      '{\n  "robots": { "enabled": tru }\n}\n',
      'line 2, column 26: unexpected word "tru" (strings take double quotes; true, false and null are lowercase)',
    ],
    ['a trailing comma', '{\n  "concurrency": 4,\n}\n', 'line 3, column 1: trailing comma before }'],
    ['a missing comma', '{\r\n  "concurrency": 4\r\n  "maxDepth": 2\r\n}', `line 3, column 3: expected ',' or '}' after a property value, got '"'`],
    ['a comment', '{\n  // politeness\n  "concurrency": 4\n}', 'line 2, column 3: comments are not allowed in JSON'],
    ['single quotes', "{ 'concurrency': 4 }", 'line 1, column 3: property names take double quotes, not single'],
    ['a line break in a string', '{\n  "userAgent": "bot/1\n"}', 'line 2, column 22: unterminated string (a line break inside a string must be written \\n)'],
    ['an empty file', '  \n', 'line 2, column 1: the file is empty'],
    ['text after the value', '{}\n}', 'line 2, column 1: unexpected "}" after the end of the JSON value'],
  ];
  for (const [name, text, where] of table) {
    it(name, async () => {
      const file = join(dir, 'bad.json');
      await writeFile(file, text);
      expect(await problemsOfAsync(loadConfigFile(file))).toEqual([`${file}: invalid JSON at ${where}`]);
    });
  }
});

describe('--timeout: a bare number is seconds (it was milliseconds)', () => {
  const timeouts = (timeout: string) => buildSettings(undefined, { timeout }).timeouts;
  it.each([
    ['5', 5000],
    ['1.5', 1500],
    ['500ms', 500],
    ['2m', 120_000],
  ])('--timeout %s is %i ms', (flag, ms) => {
    expect(timeouts(flag)).toMatchObject({ connectMs: ms, headersMs: ms, bodyMs: ms });
  });
  it('still refuses zero and nonsense, naming the flag', () => {
    expect(problemsOf(() => timeouts('0'))).toEqual(['--timeout: expected a duration greater than zero, got "0s"']);
    expect(problemsOf(() => timeouts('soon'))).toEqual(['--timeout: expected a duration like "30s" or "500ms", got "soon"']);
  });
  it('leaves the file alone: a bare JSON number there is milliseconds, like every duration in the file', () => {
    expect(validateConfig({ timeout: 5000 }).timeout.connectMs).toBe(5000);
  });
});

describe('seeds files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crawl-seeds-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const seedsOf = async (text: string) => {
    const file = join(dir, 'seeds.txt');
    await writeFile(file, text);
    return readSeedsFile(file).then(
      (seeds) => seeds,
      (err: Error) => err.message.replace(file, 'FILE'),
    );
  };

  it('reads URLs, skipping blank lines and comments', async () => {
    expect(await seedsOf('# start\nhttp://a.example/\n\n  https://b.example/x  \r\n')).toEqual(['http://a.example/', 'https://b.example/x']);
  });
  it('names the line of a bad URL', async () => {
    expect(await seedsOf('# start\nhttp://a.example/\n\nexample.com/page\n')).toBe(
      'seeds file FILE, line 4: invalid seed URL "example.com/page": expected an absolute http:// or https:// URL',
    );
  });
  it('says an empty file is empty', async () => {
    expect(await seedsOf('')).toBe('seeds file FILE is empty: no URL in it (blank lines and # comments are ignored)');
    expect(await seedsOf('# only comments\n\n')).toBe('seeds file FILE is empty: no URL in it (blank lines and # comments are ignored)');
  });
});
