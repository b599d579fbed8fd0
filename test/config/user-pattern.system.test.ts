/**
 * Issue 22: user-supplied URL patterns (`--include`, `--exclude`, the config
 * file's `include` / `exclude`) are matched by a linear-time engine (RE2
 * semantics), so no pattern can freeze `crawl check` or a crawl; the
 * constructs such an engine cannot run are refused at start-up in one line.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { ConfigError, buildSettings, validateConfig } from '../../src/config/settings.js';
import { FUZZ_TIMEOUT, fuzzParams } from '../properties/fuzz.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

/** The probe's pattern: exponential for a backtracking engine on a run of "a" not followed by "b". */
const EVIL = '(a|a)*b';
const RUN = 'a'.repeat(40);

let web: Web | undefined;
let dir = '';
const children: Array<ReturnType<typeof startCrawl>['child']> = [];
beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-pattern-'));
});
afterEach(async () => {
  // A test that failed by timing out leaves its child spinning: stop it.
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

function run(args: string[]) {
  const started = startCrawl(args, dir);
  children.push(started.child);
  return started.done;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('a pattern that backtracks exponentially in a JavaScript RegExp', () => {
  it('is accepted and tested against a long URL at once', () => {
    const settings = buildSettings(undefined, { exclude: [EVIL], include: ['^(\\w+\\s?)*$', '(a+)+$'] });
    const url = `http://a.test/${'a'.repeat(5000)}c`;
    expect(settings.exclude[0].test(url)).toBe(false);
    expect(settings.exclude[0].test(`${url}b`)).toBe(true);
    expect(settings.include[0].test(url)).toBe(false);
    expect(settings.include[1].test(url)).toBe(false);
  }, 5_000);

  it('does not freeze `crawl check` (exit 0: the URL would be fetched)', async () => {
    web = await startWeb({ sites: { 'a.localhost': { robots: null, pages: { '/': 'home' } } } });
    const r = await run(['check', '--exclude', EVIL, web.url('a.localhost', `/${RUN}c`)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/in scope: .*matches no --exclude pattern/);
  }, 20_000);

  it('does not freeze a crawl that finds a long URL; the filter still applies', async () => {
    web = await startWeb({
      sites: {
        'a.localhost': {
          robots: null,
          pages: { '/': `<a href="/${RUN}c">long</a> <a href="/${RUN}b">excluded</a>`, [`/${RUN}c`]: 'deep' },
        },
      },
    });
    await writeFile(join(dir, 'c.json'), JSON.stringify({ include: ['^http://a\\.localhost:\\d+/(a|a)*(b|c)?$'] }));
    const r = await run(['--config', 'c.json', '--exclude', EVIL, '--rate', '50/s', '-q', web.url('a.localhost', '/')]);
    expect(r.code).toBe(0);
    const urls = jsonLines<{ url: string; status: number }>(r.stdout).map((rec) => new URL(rec.url).pathname);
    expect(urls.sort()).toEqual(['/', `/${RUN}c`]);
    expect(web.count('a.localhost', `/${RUN}b`)).toBe(0);
  }, 20_000);
});

describe('constructs a linear-time engine cannot run', () => {
  it.each([
    ['(?<=/)admin', 'a lookbehind ("(?<=")'],
    ['(?<!/)admin', 'a negative lookbehind ("(?<!")'],
    ['/(?=admin)', 'a lookahead ("(?=")'],
    ['/(?!public/)', 'a negative lookahead ("(?!")'],
    ['/(\\w+)/\\1/', 'a backreference ("\\1")'],
    ['/(?<dir>\\w+)/\\k<dir>/', 'a backreference ("\\k<dir>")'],
  ])('refuses %s in one line naming it', (source, construct) => {
    expect(problemsOf(() => buildSettings(undefined, { exclude: [source] }))).toEqual([
      `--exclude: ${JSON.stringify(source)} uses ${construct}, which is not supported: URL patterns are matched in linear time (RE2 syntax: no lookaround, no backreferences)`,
    ]);
    expect(problemsOf(() => validateConfig({ include: ['ok', source] }, 'c.json'))).toEqual([
      `c.json: include[1]: ${JSON.stringify(source)} uses ${construct}, which is not supported: URL patterns are matched in linear time (RE2 syntax: no lookaround, no backreferences)`,
    ]);
  });

  it('takes the same characters escaped or in a class as plain characters', () => {
    const settings = buildSettings(undefined, { include: ['\\(\\?=x\\)', '[(?=]\\\\1'] });
    expect(settings.include[0].test('http://a.test/(?=x)')).toBe(true);
    expect(settings.include[1].test('http://a.test/=\\1')).toBe(true);
  });

  it('stops `crawl` and `crawl check` with one line and exit 2, before any request', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'home' } } } });
    for (const args of [
      ['--exclude', '(?<!/)admin', web.url('a.localhost', '/')],
      ['check', '--include', '/(\\w+)/\\1/', web.url('a.localhost', '/')],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^crawl: --(exclude|include): ".*" uses a (negative lookbehind|backreference) .*not supported/);
      expect(r.stdout).toBe('');
    }
    expect(web.requests()).toEqual([]);
  }, 20_000);
});

describe('pattern syntax', () => {
  it('keeps JavaScript spellings users have written: escapes, classes, named groups, braces', () => {
    const s = buildSettings(undefined, {
      include: ['^https://example\\.com/', '\\/blog\\/\\d+$', '(?<year>\\d{4})/\\u0041', '[^]x', 'x{1,2', '\\.(?:zip|tar\\.gz)$'],
    });
    const [host, blog, named, anyChar, brace, ext] = s.include;
    expect(host.test('https://example.com/a')).toBe(true);
    expect(host.test('https://example.org/a')).toBe(false);
    expect(blog.test('http://a.test/blog/12')).toBe(true);
    expect(named.test('http://a.test/2024/A')).toBe(true);
    expect(anyChar.test('http://a.test/x')).toBe(true);
    expect(brace.test('http://a.test/x{1,2')).toBe(true);
    expect(ext.test('http://a.test/f.tar.gz')).toBe(true);
  });

  it('offers case-insensitive matching inline with (?i)', () => {
    const [pdf] = buildSettings(undefined, { exclude: ['(?i)\\.pdf$'] }).exclude;
    expect(pdf.test('http://a.test/A.PDF')).toBe(true);
    expect(pdf.test('http://a.test/a.html')).toBe(false);
  });

  it("labels a pattern as a JavaScript RegExp prints it (messages, a stored crawl's fingerprint)", () => {
    const s = buildSettings(undefined, { include: ['/blog/', 'x'], exclude: [''] });
    expect(s.include.map(String)).toEqual(['/\\/blog\\//', '/x/']);
    expect(s.exclude.map(String)).toEqual(['/(?:)/']);
  });

  it('words a syntax error in one line', () => {
    expect(problemsOf(() => buildSettings(undefined, { include: ['('] }))).toEqual(['--include: invalid regular expression "(": missing closing ): `(`']);
    expect(problemsOf(() => buildSettings(undefined, { include: ['a{1001}'] }))).toEqual([
      '--include: invalid regular expression "a{1001}": invalid repeat count: `{1001}`',
    ]);
  });

  it('loads the engine only when a pattern is given', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = `
      import { createRequire } from 'node:module';
      const { buildSettings } = await import('./dist/config/settings.js');
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('re2js'));
      buildSettings(undefined, {});
      const before = loaded();
      buildSettings(undefined, { include: ['x'] });
      console.log(JSON.stringify([before, loaded()]));`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    expect(JSON.parse(out)).toEqual([false, true]);
  }, 20_000);
});

/** Simple patterns on which JavaScript and RE2 agree by definition: literals, classes, anchors, groups, alternation, repetition. */
const atom = fc.oneof(fc.constantFrom('a', 'b', '/', '-', '\\.', '\\d', '\\w', '[a-c]', '[^/]', '.', '[0-9]', '%2F', '\\?', '='));
const pattern: fc.Arbitrary<string> = fc
  .letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => x + y),
      fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `(?:${x}|${y})`),
      fc.tuple(tie('expr'), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '*?')).map(([x, q]) => `(?:${x})${q}`),
      tie('expr').map((x) => `(${x})`),
    ),
  }))
  .expr.chain((body) => fc.constantFrom(body, `^${body}`, `${body}$`, `^${body}$`));
const subject = fc
  .array(fc.constantFrom('a', 'b', 'c', '/', '.', '-', '1', '9', '?', '=', '%2F', 'é', '_'), { maxLength: 12 })
  .map((parts) => `http://a.test/${parts.join('')}`);

describe('properties', () => {
  it(
    'the engine agrees with JavaScript RegExp on simple patterns',
    () => {
      fc.assert(
        fc.property(pattern, fc.array(subject, { minLength: 1, maxLength: 5 }), (source, urls) => {
          const [compiled] = buildSettings(undefined, { include: [source] }).include;
          const js = new RegExp(source);
          for (const url of urls) expect(compiled.test(url), `${source} on ${url}`).toBe(js.test(url));
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
