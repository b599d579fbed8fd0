/**
 * The command line: argv → flags as a table, every bad input as one line and
 * exit 2, `crawl check`, and (spawning the real bin/) stdout purity, broken
 * pipes and interruption.
 */
import { existsSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { memoryIo as sharedMemoryIo } from '../support/memory-io.js';
import { buildProgram, main, type CheckFlags, type CrawlFlags } from '../../src/cli/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'crawl.js');

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

function parse(argv: string[]) {
  const seen: { crawl?: [string[], CrawlFlags]; check?: [string, CheckFlags] } = {};
  const result = { code: 0 };
  const program = buildProgram(
    {
      crawl: async (seeds, flags) => ((seen.crawl = [seeds, flags]), 0),
      check: async (url, flags) => ((seen.check = [url, flags]), 0),
      status: async () => 0,
      report: async () => 0,
    },
    result,
  );
  program.exitOverride();
  return program.parseAsync(argv, { from: 'user' }).then(() => seen);
}

const memoryIo = (cwd = root) => sharedMemoryIo(cwd);

describe('argv → flags', () => {
  const table: Array<[string[], Partial<CrawlFlags>, string[]]> = [
    [['http://a/'], {}, ['http://a/']],
    [['-c', '8', '--rate', '2/s', 'http://a/', 'http://b/'], { concurrency: '8', rate: '2/s' }, ['http://a/', 'http://b/']],
    [['--include', 'x', '--include', 'y', '--exclude', 'z', 'http://a/'], { include: ['x', 'y'], exclude: ['z'] }, ['http://a/']],
    [['--no-robots', '--emit-skipped', '--links', '-q', 'http://a/'], { robots: false, emitSkipped: true, links: true, quiet: true }, ['http://a/']],
    [['--allow-private', 'http://a/'], { allowPrivate: true }, ['http://a/']],
    [['--no-latency-backoff', 'http://a/'], { latencyBackoff: false }, ['http://a/']],
    [['--max-pages-per-host', '50', '--max-queued', '1000', 'http://a/'], { maxPagesPerHost: '50', maxQueued: '1000' }, ['http://a/']],
    [['--state', 's.db', '--fresh', '--report', 'r.html', '--stats', 's.json'], { state: 's.db', fresh: true, report: 'r.html', stats: 's.json' }, []],
    [
      ['--max-depth', '2', '--max-pages', '10', '--scope', 'domain', '-o', 'out.jsonl', 'http://a/'],
      { maxDepth: '2', maxPages: '10', scope: 'domain', output: 'out.jsonl' },
      ['http://a/'],
    ],
    [
      ['--seeds-file', '-', '--host-concurrency', '3', '--timeout', '5s', '--max-body', '1MiB', '--user-agent', 'Bot/1'],
      { seedsFile: '-', hostConcurrency: '3', timeout: '5s', maxBody: '1MiB', userAgent: 'Bot/1' },
      [],
    ],
  ];
  for (const [argv, flags, seeds] of table) {
    it(argv.join(' '), async () => {
      const seen = await parse(argv);
      expect(seen.crawl![0]).toEqual(seeds);
      expect(seen.crawl![1]).toMatchObject(flags);
    });
  }

  it('routes `check` to its own command', async () => {
    const seen = await parse(['check', 'http://a/x', '--robots-file', 'r.txt', '--seed', 'http://a/']);
    expect(seen.check).toEqual(['http://a/x', expect.objectContaining({ robotsFile: 'r.txt', seed: ['http://a/'] })]);
  });
});

describe('bad input: one line, exit 2, nothing on stdout', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['unknown flag', ['--bogus', 'http://a/'], /^crawl: unknown option '--bogus'/],
    ['bad seed', ['not a url'], /^crawl: invalid seed URL "not a url"/],
    ['non-http seed', ['ftp://a/'], /^crawl: invalid seed URL "ftp:\/\/a\/"/],
    ['no seed', [], /^crawl: no seed URL given/],
    ['bad rate', ['--rate', 'fast', 'http://a/'], /^crawl: --rate: expected a rate like/],
    ['bad number', ['--max-pages', 'ten', 'http://a/'], /^crawl: --max-pages: expected an integer/],
    ['bad queue cap', ['--max-queued', '0', 'http://a/'], /^crawl: --max-queued: /],
    ['bad host budget', ['--max-pages-per-host', 'many', 'http://a/'], /^crawl: --max-pages-per-host: /],
    ['bad max time', ['--max-time', 'soon', 'http://a/'], /^crawl: --max-time: expected a duration/],
    ['bad scope', ['--scope', 'planet', 'http://a/'], /^crawl: option '--scope <scope>' argument 'planet' is invalid/],
    ['missing config', ['--config', 'missing.json', 'http://a/'], /^crawl: .*missing\.json: cannot read config/],
    ['bad regex', ['--include', '(', 'http://a/'], /^crawl: --include: invalid regular expression "\("/],
  ];
  for (const [name, argv, pattern] of cases) {
    it(name, async () => {
      const io = memoryIo();
      expect(await main(argv, io)).toBe(2);
      expect(io.out()).toBe('');
      const lines = io.err().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(pattern);
    });
  }

  it('reports every problem of a config file at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-cli-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ concurrency: 0, defaults: { rate: 'x' }, typo: 1 }));
    const io = memoryIo(dir);
    expect(await main(['--config', 'c.json', 'http://a/'], io)).toBe(2);
    const lines = io.err().trim().split('\n');
    expect(lines.length).toBe(3);
    expect(lines.every((l) => l.startsWith('crawl: ') && l.includes('c.json'))).toBe(true);
  });

  it('prints help and the version on stdout with exit 0', async () => {
    const io = memoryIo();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out().trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = memoryIo();
    expect(await main(['--help'], help)).toBe(0);
    expect(help.out()).toContain('Exit codes:');
  });
});

describe('crawl check', () => {
  it('explains scope, the matching policy and the deciding robots rule, fetching only robots.txt', async () => {
    web = await startWeb({ sites: { 'shop.localhost': { robots: 'User-agent: *\nDisallow: /cart\n', pages: { '/': 'home' } } } });
    const io = memoryIo();
    const code = await main(['check', '--config', join(root, 'crawler.config.example.json'), web.url('shop.localhost', '/cart/1')], io);
    expect(code).toBe(1);
    expect(io.out()).toContain('config entry "shop.localhost"');
    expect(io.out()).toMatch(/robots: +disallowed by "Disallow: \/cart" \(line 2\)/);
    expect(io.out()).toContain('would be skipped');
    expect(web.requests().map((r) => r.path)).toEqual(['/robots.txt']);

    const ok = memoryIo();
    expect(await main(['check', web.url('shop.localhost', '/'), '--seed', web.url('shop.localhost', '/')], ok)).toBe(0);
    expect(ok.out()).toContain('would be fetched');
  });

  it('says when the SSRF guard would refuse the host, naming the address, and exits 1', async () => {
    web = await startWeb({ sites: { 'shop.localhost': { pages: { '/': 'home' } }, 'evil.localhost': { pages: { '/x': 'x' } } } });
    const io = memoryIo();
    const code = await main(['check', '--no-robots', '--scope', 'any', '--seed', web.url('shop.localhost', '/'), web.url('evil.localhost', '/x')], io);
    expect(code).toBe(1);
    expect(io.out()).toMatch(
      /^network: refused: evil\.localhost resolves to 127\.0\.0\.1 \(loopback, 127\.0\.0\.0\/8\), a special-purpose address; --allow-private or allowNetworks lifts it$/m,
    );
    expect(io.out()).toContain('would be skipped');
    const seed = memoryIo();
    expect(await main(['check', '--no-robots', web.url('shop.localhost', '/')], seed)).toBe(0);
    expect(seed.out()).toMatch(/^network: not checked: a seed's host \(host and port\) is exempt$/m);
    expect(web.requests()).toEqual([]);
  });

  it('tests a local robots file and an out-of-scope URL without any request', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-check-'));
    await writeFile(join(dir, 'robots.txt'), 'User-agent: crawl\nAllow: /\n\nUser-agent: *\nDisallow: /\n');
    const io = memoryIo(dir);
    const code = await main(['check', 'http://b.example/page', '--seed', 'http://a.example/', '--robots-file', 'robots.txt'], io);
    expect(code).toBe(1);
    expect(io.out()).toMatch(/scope: +out of scope: host b\.example/);
    expect(io.out()).toMatch(/robots: +allowed by "Allow: \/"/);
  });
});

describe('crawl --allow-private', () => {
  it('lifts the SSRF guard: a link to another local host is refused without it and fetched with it', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<a href="{{origin:b.localhost}}/">b</a>' } }, 'b.localhost': { pages: { '/': 'b' } } } });
    const args = ['-q', '--scope', 'any', '--rate', 'unlimited', '--emit-skipped', web.url('a.localhost', '/')];
    const guarded = memoryIo();
    expect(await main(args, guarded)).toBe(0);
    const refused = guarded
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; reason?: string; detail?: string });
    expect(refused).toContainEqual(
      expect.objectContaining({ url: web.url('b.localhost', '/'), reason: 'private-address', detail: '127.0.0.1 (loopback, 127.0.0.0/8)' }),
    );
    expect(web.count('b.localhost')).toBe(0);
    const open = memoryIo();
    expect(await main(['--allow-private', ...args], open)).toBe(0);
    expect(open.out()).not.toContain('private-address');
    expect(web.count('b.localhost', '/')).toBe(1);
  });
});

/** Spawns the real binary (needs `npm run build`, which `npm test` runs first). */
function run(args: string[], opts: { stdin?: string; pipeToHead?: boolean; signalWhen?: (stdout: string) => boolean } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (opts.pipeToHead && stdout.includes('\n')) child.stdout.destroy(); // like `| head -1`
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(opts.stdin ?? '');
    // Signal once the crawl is under way (a record is out), not after a fixed time: on a loaded
    // machine start-up alone can take longer than any fixed delay, and the signal would then
    // meet a process that has not installed its handler yet.
    const poll = opts.signalWhen
      ? setInterval(() => {
          if (!opts.signalWhen!(stdout)) return;
          clearInterval(poll);
          child.kill('SIGINT');
        }, 20)
      : undefined;
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the real binary', () => {
  beforeAll(async () => {
    await readFile(join(root, 'dist', 'cli', 'cli.js')).catch(() => {
      throw new Error('dist/ is missing: run `npm run build` (npm test does it)');
    });
  });

  it('crawls to stdout with only JSON lines there, summary on stderr, exit 0', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 8, linksPerPage: 2 } } } });
    const r = await run(['--rate', '100/s', web.url('a.localhost', '/')]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(9);
    for (const l of lines) expect(JSON.parse(l)).toHaveProperty('url');
    expect(r.stderr).toMatch(/finished in/);
  });

  it('reads seeds from stdin and writes a complete file with -o', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'a' } }, 'b.localhost': { pages: { '/': 'b' } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-out-'));
    const out = join(dir, 'pages.jsonl');
    const r = await run(['--seeds-file', '-', '-q', '-o', out, '--rate', '100/s'], {
      stdin: `# seeds\n${web.url('a.localhost')}\n\n${web.url('b.localhost')}\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('');
    expect(
      (await readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).url)
        .sort(),
    ).toEqual([web.url('a.localhost'), web.url('b.localhost')]);
  });

  it('ends quietly with exit 0 when the reader goes away (| head -1)', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 300, linksPerPage: 3 } } } });
    const r = await run(['--rate', 'unlimited', '--host-concurrency', '4', web.url('a.localhost', '/')], { pipeToHead: true });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
    expect(web.count('a.localhost')).toBeLessThan(301);
  });

  it('writes the summary as JSON with --stats and an HTML report with --report when the crawl ends', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 6, linksPerPage: 2 }, pages: { '/gone': { status: 404 } } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-out-'));
    const r = await run([
      '--rate',
      '100/s',
      '-q',
      '--stats',
      join(dir, 'stats.json'),
      '--report',
      join(dir, 'report.html'),
      web.url('a.localhost', '/'),
      web.url('a.localhost', '/gone'),
    ]);
    expect(r.code).toBe(0);
    const stats = JSON.parse(await readFile(join(dir, 'stats.json'), 'utf8'));
    expect(stats).toMatchObject({ interrupted: false, resumed: null, pages: 8, pagesByStatus: { '200': 7, '404': 1 } });
    expect(stats.hosts).toEqual([expect.objectContaining({ host: `a.localhost:${web.port}`, fetched: 8, errors: 0, robotsRequests: 1 })]);
    expect(Number.isNaN(Date.parse(stats.startedAt))).toBe(false);
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    expect(html.startsWith('<!doctype html>') || html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('a.localhost');
    expect(r.stdout.trim().split('\n')).toHaveLength(8); // the records still go to stdout
    // A bad path is found before anything is crawled.
    const bad = await run(['-q', '--stats', join(dir, 'no', 'such', 'stats.json'), web.url('a.localhost', '/')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^crawl: cannot write --stats .*: directory does not exist\n$/);
  });

  it('ends cleanly at --max-time: whole records, the summary, exit 0, and an output named as incomplete', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 200, linksPerPage: 3 } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-out-'));
    const out = join(dir, 'pages.jsonl');
    // 2 s: at 800 ms a loaded machine's start-up left the crawl 3 records.
    const r = await run(['--rate', '20/s', '--max-time', '2s', '-o', out, web.url('a.localhost', '/')]);
    expect(r.code).toBe(0);
    // That it stopped early is read from the server's count below (200 pages at 20/s are 10 s of crawl),
    // not from a wall-clock bound a loaded machine stretches.
    expect(r.stderr).toMatch(/--max-time 2s reached: stopping/);
    expect(r.stderr).toMatch(/interrupted after/);
    const lines = (await readFile(`${out}.partial`, 'utf8')).trim().split('\n');
    for (const l of lines) JSON.parse(l);
    expect(lines.length).toBeGreaterThan(3);
    expect(web.count('a.localhost')).toBeLessThan(60);
  });

  it('leaves FILE.partial when stopped by SIGINT, so an incomplete output is recognisable', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 200, linksPerPage: 3 } } } });
    const dir = await mkdtemp(join(tmpdir(), 'crawl-out-'));
    const out = join(dir, 'pages.jsonl');
    const written = () => existsSync(`${out}.partial`) && statSync(`${out}.partial`).size > 0;
    const r = await run(['--rate', '20/s', '-o', out, web.url('a.localhost', '/')], { signalWhen: written });
    expect(r.code).toBe(130);
    expect(existsSync(out)).toBe(false);
    const text = await readFile(`${out}.partial`, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    for (const l of text.trim().split('\n')) JSON.parse(l);
    expect(r.stderr).toMatch(/records so far in .*pages\.jsonl\.partial/);
  });

  it('stops on SIGINT: flushes whole records, prints the summary, exits 130', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 200, linksPerPage: 3 } } } });
    const r = await run(['--rate', '20/s', web.url('a.localhost', '/')], { signalWhen: (stdout) => stdout.includes('\n') });
    expect(r.code).toBe(130);
    expect(r.stdout.endsWith('\n')).toBe(true);
    for (const l of r.stdout.trim().split('\n')) JSON.parse(l);
    expect(r.stderr).toMatch(/SIGINT: stopping/);
    expect(r.stderr).toMatch(/interrupted/);
  });
});

describe('options before a subcommand, help', () => {
  it('honours options written before `check` (they were silently ignored) and takes the policy flags on it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crawl-check-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ userAgent: 'filebot/1.0', domains: { 'a.example': { rate: '5/s' } } }));
    const before = memoryIo(dir);
    expect(await main(['--config', 'c.json', '--host-concurrency', '3', 'check', '--no-robots', 'http://a.example/'], before)).toBe(0);
    expect(before.out()).toMatch(/^policy: +host key a\.example: rate 5\/s, 3 at once.* — from config entry "a\.example"$/m);
    const after = memoryIo(dir);
    expect(await main(['--rate', '2/s', 'check', '--rate', '4/s', '--host-concurrency', '7', '--no-robots', 'http://b.example/'], after)).toBe(0);
    expect(after.out()).toMatch(/^policy: +host key b\.example: rate 4\/s, 7 at once/m); // the option after `check` wins
    const ua = memoryIo(dir);
    await writeFile(join(dir, 'robots.txt'), 'User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nAllow: /\n');
    expect(await main(['--user-agent', 'otherbot/2', 'check', '--robots-file', 'robots.txt', 'http://b.example/'], ua)).toBe(1);
    expect(ua.out()).toMatch(/robots: +disallowed by "Disallow: \/"/);
  });

  it('refuses a crawl-only option before `check` with one line and exit 2', async () => {
    const io = memoryIo();
    expect(await main(['--max-pages', '3', 'check', 'http://a.example/'], io)).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toBe('crawl: --max-pages does not apply to `crawl check` (see crawl check --help for the options it takes)\n');
  });

  it('`crawl help` and `crawl help check` print help with exit 0 (help was read as a seed URL)', async () => {
    const top = memoryIo();
    expect(await main(['help'], top)).toBe(0);
    expect(top.out()).toMatch(/^Usage: crawl \[options\] \[command\] \[seed-url\.\.\.\]/);
    expect(top.err()).toBe('');
    const check = memoryIo();
    expect(await main(['help', 'check'], check)).toBe(0);
    expect(check.out()).toMatch(/^Usage: crawl check \[options\] <url>/);
  });

  it('--help shows defaults, `unlimited` for --rate, every exit code, within 80 columns', async () => {
    const io = memoryIo();
    expect(await main(['--help'], io)).toBe(0);
    const text = io.out();
    expect(text).toMatch(/--rate <rate> .*\n.*"unlimited" \(default 1\/s\)/);
    expect(text).toMatch(/--concurrency <n> .*\(default 16\)/);
    expect(text).toMatch(/--host-concurrency <n> .*\(default 2\)/);
    expect(text).toMatch(/a bare number is\s+seconds/);
    expect(text).toMatch(/Exit codes: 0 finished[^]*3 nothing could be reached[^]*130 SIGINT; 143 SIGTERM/);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});

describe('--max-time', () => {
  it('reads a bare number as seconds, as curl does (--max-time 1 stopped after 1 ms)', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 200, linksPerPage: 3 } } } });
    const io = memoryIo();
    const started = performance.now();
    const code = await main(['--rate', '20/s', '--max-time', '1', web.url('a.localhost', '/')], io);
    const took = performance.now() - started;
    expect(code).toBe(0);
    expect(io.err()).toMatch(/--max-time 1 reached: stopping/);
    // Seconds, not ms: it ran for the second (1 ms would have ended before the first page), and stopped
    // well before the 10 s that 200 pages at 20/s take, whatever the machine's load.
    expect(took).toBeGreaterThanOrEqual(950);
    expect(web.count('a.localhost')).toBeLessThan(60);
    expect(io.out().trim().split('\n').length).toBeGreaterThan(1);
  });

  it('says so in --help', async () => {
    const io = memoryIo();
    await main(['--help'], io);
    expect(io.out()).toMatch(/--max-time <duration> +stop cleanly after this long; a bare number is\s+seconds: --max-time 90/);
  });
});
