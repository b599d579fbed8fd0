/**
 * What requests carry: --header and per-domain headers, cookies (--cookie,
 * --cookie-jar, the jar kept from Set-Cookie), per-domain auth, through the
 * real CLI against a local server that logs every request it gets. Host
 * names under .localhost all reach 127.0.0.1, so one server plays several
 * hosts (cookies ignore ports; hosts are told apart by name).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { crawl, explain } from '../../src/index.js';
import { parseNetscapeCookies, parseCookiePair } from '../../src/fetch/cookie-jar.js';
import { parseHeaderLine, describeHeaders } from '../../src/fetch/request-headers.js';
import { Secret } from '../../src/fetch/secret.js';
import { memoryIo } from '../support/memory-io.js';
import { parseRecords } from '../support/crawl-harness.js';

interface Seen {
  host: string;
  path: string;
  headers: IncomingHttpHeaders;
}

let server: Server;
let port = 0;
let seen: Seen[] = [];
let dir = '';
const url = (host: string, path = '/') => `http://${host}:${port}${path}`;

/** Pages by path; every host serves the same site, with links across hosts built from the Host header. */
function page(host: string, path: string): { status: number; headers?: Record<string, string | string[]>; body?: string } {
  const link = (h: string, p: string) => `<a href="http://${h}:${port}${p}">x</a>`;
  if (path === '/robots.txt') return { status: 404 };
  if (path === '/') {
    return {
      status: 200,
      headers: {
        'set-cookie': ['narrow=n1; Path=/', 'wide=w1; Domain=shop.localhost; Path=/', 'scoped=s1; Path=/docs', 'gone=x; Path=/; Max-Age=0'],
      },
      body: `<html><body>${link(host, '/next')}${link('img.shop.localhost', '/pic')}${link('other.localhost', '/elsewhere')}${link(host, '/docs/a')}${link(host, '/go-away')}</body></html>`,
    };
  }
  if (path === '/go-away') return { status: 302, headers: { location: url('other.localhost', '/landing') } };
  return { status: 200, body: '<html><body>leaf</body></html>' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'requests-'));
  server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    seen.push({ host, path, headers: req.headers });
    const answer = page(host, path);
    res.writeHead(answer.status, { 'content-type': 'text/html', ...answer.headers });
    res.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function run(args: string[], config?: Record<string, unknown>) {
  seen = [];
  const io = memoryIo(dir);
  const extra: string[] = [];
  if (config) {
    const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(config));
    extra.push('--config', file);
  }
  const code = await main([...extra, '--allow-private', '--scope', 'any', '--max-depth', '1', '--rate', 'unlimited', '-q', ...args], io);
  const lines = io
    .out()
    .split('\n')
    .filter((l) => l !== '');
  return { code, out: io.out(), err: io.err(), ...parseRecords(lines), seen };
}

const requestsTo = (host: string, path?: string) => seen.filter((s) => s.host === host && (path === undefined || s.path === path));

describe('--header and per-domain headers', () => {
  it('sends --header on every request, robots.txt included; a domain entry adds its own for its host only', async () => {
    const r = await run(['--header', 'X-Team: crawl', '--header', 'accept-language: de', url('www.shop.localhost')], {
      defaults: { headers: { 'X-From-File': 'yes' } },
      domains: { 'other.localhost': { headers: { 'X-Other': 'only-here', 'X-Team': 'their-own' } } },
    });
    expect(r.code).toBe(0);
    const www = requestsTo('www.shop.localhost');
    expect(www.map((s) => s.path)).toContain('/robots.txt');
    for (const s of www) {
      expect(s.headers['x-team']).toBe('crawl');
      expect(s.headers['accept-language']).toBe('de');
      expect(s.headers['x-from-file']).toBe('yes');
      expect(s.headers['x-other']).toBeUndefined();
    }
    const other = requestsTo('other.localhost', '/elsewhere');
    expect(other).toHaveLength(1);
    expect(other[0].headers['x-other']).toBe('only-here');
    expect(other[0].headers['x-team']).toBe('their-own');
    expect(other[0].headers['x-from-file']).toBe('yes');
  });

  it.each([
    [['--header', 'no colon here'], '--header: expected "Name: value", got "no colon here"'],
    [['--header', 'Host: evil.example'], '--header: Host cannot be set as a header: the crawler sets it from the URL'],
    [['--header', 'Content-Length: 5'], '--header: Content-Length cannot be set as a header'],
    [['--header', 'Connection: close'], '--header: Connection cannot be set as a header'],
    [['--header', 'User-Agent: x'], 'use --user-agent'],
    [['--header', 'Authorization: Bearer x'], 'use `auth` in a `domains` entry'],
    [['--header', 'Bad Name: x'], 'is not a valid header name'],
  ])('%j is refused with one line and exit 2', async (args, message) => {
    const r = await run([...args, url('www.shop.localhost')]);
    expect(r.code).toBe(2);
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(message);
    expect(r.seen).toHaveLength(0);
  });

  it('refuses a reserved header in the config, naming where it is', async () => {
    const r = await run([url('www.shop.localhost')], { domains: { 'a.localhost': { headers: { Host: 'x' } } } });
    expect(r.code).toBe(2);
    expect(r.err).toContain('domains["a.localhost"].headers.Host: Host cannot be set as a header');
  });

  it('parses header lines as curl does', () => {
    expect(parseHeaderLine('X-A:  spaced value ')).toEqual({ name: 'x-a', value: 'spaced value' });
    expect(parseHeaderLine('X-Empty:')).toEqual({ name: 'x-empty', value: '' });
    expect(parseHeaderLine('X-Bad: a\r\nInjected: 1')).toEqual({ problem: expect.stringContaining('control characters') });
    expect(describeHeaders({ 'x-team': 'crawl', 'x-api-key': 'plain-secret', 'x-env': new Secret('hidden', 'environment variable E') })).toEqual([
      'x-team: crawl',
      'x-api-key: ***',
      'x-env: *** (from environment variable E)',
    ]);
  });
});

describe('cookies', () => {
  it('keeps Set-Cookie per RFC 6265: host-only stays on its host, Domain= reaches the domain, Path= limits, Max-Age=0 deletes', async () => {
    const r = await run([url('www.shop.localhost')]);
    expect(r.code).toBe(0);
    // Sorted: cookies of equal path length go in creation order, and these were created in one millisecond.
    const cookieOf = (host: string, path: string) => requestsTo(host, path)[0]?.headers.cookie?.split('; ').sort().join('; ');
    expect(requestsTo('www.shop.localhost', '/')[0].headers.cookie).toBeUndefined();
    expect(cookieOf('www.shop.localhost', '/next')).toBe('narrow=n1; wide=w1');
    expect(requestsTo('www.shop.localhost', '/docs/a')[0].headers.cookie).toMatch(/^scoped=s1; /);
    expect(cookieOf('www.shop.localhost', '/docs/a')).toBe('narrow=n1; scoped=s1; wide=w1');
    expect(cookieOf('img.shop.localhost', '/pic')).toBe('wide=w1');
    expect(cookieOf('other.localhost', '/elsewhere')).toBeUndefined();
  });

  it("--cookie goes to the seeds' hosts only", async () => {
    const r = await run(['--cookie', 'session=abc', '--cookie', 'lang=de', url('other.localhost', '/leaf')]);
    expect(r.code).toBe(0);
    expect(requestsTo('other.localhost', '/leaf')[0].headers.cookie).toBe('session=abc; lang=de');
    const bad = await run(['--cookie', 'novalue', url('other.localhost')]);
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe('crawl: --cookie: expected "name=value", got "novalue"');
  });

  it('--cookie-jar reads a Netscape cookies.txt: subdomains, path, secure and expiry honoured', async () => {
    const future = Math.floor(Date.now() / 1000) + 3600;
    const jar = join(dir, 'cookies.txt');
    await writeFile(
      jar,
      [
        '# Netscape HTTP Cookie File',
        `.shop.localhost\tTRUE\t/\tFALSE\t${future}\tall\t1`,
        `www.shop.localhost\tFALSE\t/docs\tFALSE\t0\tdocs\t2`,
        `#HttpOnly_www.shop.localhost\tFALSE\t/\tTRUE\t0\tsecureonly\t3`,
        `www.shop.localhost\tFALSE\t/\tFALSE\t1000\texpired\t4`,
        '',
      ].join('\n'),
    );
    const r = await run(['--cookie-jar', 'cookies.txt', url('www.shop.localhost', '/docs/a')]);
    expect(r.code).toBe(0);
    expect(requestsTo('www.shop.localhost', '/docs/a')[0].headers.cookie).toBe('docs=2; all=1');
    const missing = await run(['--cookie-jar', 'nope.txt', url('www.shop.localhost')]);
    expect(missing.code).toBe(2);
    expect(missing.err.trim()).toBe('crawl: cannot read cookie jar nope.txt: file not found');
  });

  it('parses cookies.txt lines, and names the line of a bad one', () => {
    expect(parseNetscapeCookies('#HttpOnly_.a.example\tTRUE\t/\tTRUE\t0\tn\t\n', 'c.txt')).toEqual([
      { domain: 'a.example', includeSubdomains: true, path: '/', secure: true, httpOnly: true, expires: 0, name: 'n', value: '' },
    ]);
    expect(() => parseNetscapeCookies('# x\na.example\tTRUE\t/\n', 'c.txt')).toThrow('c.txt: line 2: expected 7 tab-separated fields');
    expect(() => parseNetscapeCookies('a.example\tYES\t/\tFALSE\t0\tn\tv', 'c.txt')).toThrow(
      'c.txt: line 1: the include-subdomains field must be TRUE or FALSE',
    );
    expect(parseCookiePair('a=b=c')).toEqual({ name: 'a', value: 'b=c' });
    expect(parseCookiePair('a=b; c')).toEqual({ problem: expect.stringContaining('semicolons') });
  });
});

describe('auth per domain', () => {
  const config = (password: unknown) => ({
    domains: { 'www.shop.localhost': { auth: { basic: { user: 'alice', password } } }, 'img.shop.localhost': { auth: { bearer: 'tok-123' } } },
  });

  it('sends credentials to their host only, drops them on a redirect elsewhere, and never writes them out', async () => {
    process.env.TEST_SHOP_PASS = 's3cret-pass';
    try {
      const r = await run([url('www.shop.localhost')], config({ env: 'TEST_SHOP_PASS' }));
      expect(r.code).toBe(0);
      const basic = `Basic ${Buffer.from('alice:s3cret-pass').toString('base64')}`;
      for (const s of requestsTo('www.shop.localhost')) expect(s.headers.authorization).toBe(basic);
      expect(requestsTo('img.shop.localhost', '/pic')[0].headers.authorization).toBe('Bearer tok-123');
      // /go-away redirects to other.localhost: that request goes without.
      expect(requestsTo('other.localhost', '/landing')).toHaveLength(1);
      for (const s of requestsTo('other.localhost')) expect(s.headers.authorization).toBeUndefined();
      for (const text of [r.out, r.err]) {
        expect(text).not.toContain('s3cret-pass');
        expect(text).not.toContain(basic.slice(6));
        expect(text).not.toContain('tok-123');
      }
    } finally {
      delete process.env.TEST_SHOP_PASS;
    }
  });

  it('an unset environment variable is one line naming it, exit 2', async () => {
    delete process.env.TEST_SHOP_PASS;
    const r = await run([url('www.shop.localhost')], config({ env: 'TEST_SHOP_PASS' }));
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('crawl: domains["www.shop.localhost"].auth.basic.password: environment variable TEST_SHOP_PASS is not set (or is empty)');
    expect(r.seen).toHaveLength(0);
  });

  it('refuses an auth object with neither or both kinds', async () => {
    const r = await run([url('www.shop.localhost')], { domains: { 'a.localhost': { auth: {} } } });
    expect(r.code).toBe(2);
    expect(r.err).toContain('domains["a.localhost"].auth: expected exactly one of "basic" or "bearer"');
  });

  it('crawl check shows headers (redacted), the auth kind and the proxy, never a secret', async () => {
    process.env.TEST_SHOP_PASS = 's3cret-pass';
    try {
      const file = join(dir, 'check.json');
      await writeFile(
        file,
        JSON.stringify({
          ...config({ env: 'TEST_SHOP_PASS' }),
          defaults: { headers: { 'X-Team': 'crawl', 'X-Api-Key': 'k-999' }, proxy: 'http://user:pw@127.0.0.1:9' },
        }),
      );
      const io = memoryIo(dir);
      await main(['check', '--config', file, '--no-robots', url('www.shop.localhost', '/x')], io);
      const out = io.out();
      expect(out).toContain('auth: basic (user "alice")');
      expect(out).toContain('header x-team: crawl');
      expect(out).toContain('header x-api-key: ***');
      expect(out).toContain('via proxy http://***@127.0.0.1:9 ');
      expect(out).not.toContain('s3cret-pass');
      expect(out).not.toContain('k-999');
      expect(out).not.toContain('pw@');
    } finally {
      delete process.env.TEST_SHOP_PASS;
    }
  });
});

describe('the library takes the same fields', () => {
  it('crawl() sends config headers and cookies; explain() describes them without secrets', async () => {
    seen = [];
    const seed = url('www.shop.localhost', '/leaf');
    const options = {
      seeds: [seed],
      defaults: { rate: 'unlimited', headers: { 'X-Lib': 'yes' } },
      cookies: { send: ['k=v'] },
      domains: { 'www.shop.localhost': { auth: { bearer: 'lib-token' } } },
    };
    const records = [];
    for await (const record of crawl(options)) records.push(record);
    expect(records).toHaveLength(1);
    const got = requestsTo('www.shop.localhost', '/leaf')[0].headers;
    expect([got['x-lib'], got.cookie, got.authorization]).toEqual(['yes', 'k=v', 'Bearer lib-token']);
    const result = await explain(seed, { ...options, robots: { enabled: false } });
    expect(result.requests).toEqual({ headers: ['x-lib: yes'], auth: 'bearer token', proxy: null, proxySource: 'none', cookies: ['k'] });
    expect(JSON.stringify(result)).not.toContain('lib-token');
  });
});

describe("credential headers stay on the seeds' hosts (issue 24)", () => {
  const withheld = (host: string) => requestsTo(host).filter((s) => s.headers['x-api-key'] !== undefined);

  it("--header X-Api-Key goes to the seed's host only (robots.txt included); other hosts, robots.txt and redirects included, get only the plain headers", async () => {
    const r = await run(['--header', 'X-Api-Key: SECRET', '--header', 'X-Team: crawl', url('www.shop.localhost')]);
    expect(r.code).toBe(0);
    const www = requestsTo('www.shop.localhost');
    expect(www.map((s) => s.path)).toContain('/robots.txt');
    for (const s of www) expect(s.headers['x-api-key']).toBe('SECRET');
    // other.localhost: robots.txt, a link, and the target of /go-away's redirect.
    expect(
      requestsTo('other.localhost')
        .map((s) => s.path)
        .sort(),
    ).toEqual(['/elsewhere', '/landing', '/robots.txt']);
    expect(requestsTo('img.shop.localhost', '/pic')).toHaveLength(1);
    for (const host of ['other.localhost', 'img.shop.localhost']) {
      expect(withheld(host)).toEqual([]);
      for (const s of requestsTo(host)) expect(s.headers['x-team']).toBe('crawl');
    }
    // One line says so, naming the header and the scope.
    const warnings = r.err.split('\n').filter((l) => l.includes('x-api-key'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^crawl: warning: .*x-api-key.*credential.*seeds' hosts.*--scope any/);
    expect(r.err).not.toContain('SECRET');
  });

  it('config headers read from the environment count as credentials too; a domains entry sends its own to its hosts', async () => {
    process.env.TEST_CLIENT_ID = 'client-42';
    try {
      const r = await run([url('www.shop.localhost')], {
        defaults: { headers: { 'X-Client': { env: 'TEST_CLIENT_ID' }, 'X-Session-Id': 'sess-1', 'X-Plain': 'p' } },
        domains: { 'other.localhost': { headers: { 'X-Session-Id': 'their-session' } } },
      });
      expect(r.code).toBe(0);
      for (const s of requestsTo('www.shop.localhost'))
        expect([s.headers['x-client'], s.headers['x-session-id'], s.headers['x-plain']]).toEqual(['client-42', 'sess-1', 'p']);
      for (const s of requestsTo('other.localhost'))
        expect([s.headers['x-client'], s.headers['x-session-id'], s.headers['x-plain']]).toEqual([undefined, 'their-session', 'p']);
      for (const s of requestsTo('img.shop.localhost'))
        expect([s.headers['x-client'], s.headers['x-session-id'], s.headers['x-plain']]).toEqual([undefined, undefined, 'p']);
    } finally {
      delete process.env.TEST_CLIENT_ID;
    }
  });

  it('--check-links: the checked links on other hosts go without, and the warning names --check-links', async () => {
    seen = [];
    const io = memoryIo(dir);
    const code = await main(
      ['--allow-private', '--check-links', '--max-depth', '1', '--rate', 'unlimited', '--header', 'X-Api-Key: SECRET', url('www.shop.localhost')],
      io,
    );
    expect(code).toBe(0);
    expect(requestsTo('other.localhost', '/elsewhere')).toHaveLength(1);
    expect(withheld('other.localhost')).toEqual([]);
    expect(withheld('img.shop.localhost')).toEqual([]);
    for (const s of requestsTo('www.shop.localhost')) expect(s.headers['x-api-key']).toBe('SECRET');
    expect(
      io
        .err()
        .split('\n')
        .filter((l) => l.includes('x-api-key')),
    ).toEqual([expect.stringMatching(/--check-links/)]);
  });

  it("no warning when the scope stays on the seeds' hosts", async () => {
    const io = memoryIo(dir);
    await main(['--allow-private', '--max-depth', '0', '--header', 'X-Api-Key: SECRET', url('www.shop.localhost')], io);
    expect(io.err()).not.toContain('x-api-key');
  });

  it('a resumed crawl (--state, no seed on the command line) still sends them to the seeds it holds', async () => {
    const state = join(dir, `resume-${Math.random().toString(36).slice(2)}.db`);
    const args = ['--allow-private', '--scope', 'any', '--max-depth', '1', '--rate', '1/s', '--header', 'X-Api-Key: SECRET', '-q', '--state', state];
    seen = [];
    // Stopped between the seed page (at 1 s, after robots.txt) and the next (at 2 s): the rest is left in the state.
    expect(await main([...args, '--max-time', '1.5', url('www.shop.localhost')], memoryIo(dir))).toBe(0);
    expect(requestsTo('www.shop.localhost', '/next')).toEqual([]);
    seen = [];
    expect(await main(args, memoryIo(dir))).toBe(0);
    const www = requestsTo('www.shop.localhost');
    expect(www.map((s) => s.path)).toContain('/next');
    for (const s of www) expect(s.headers['x-api-key'], s.path).toBe('SECRET');
    expect(withheld('other.localhost')).toEqual([]);
  });

  it('--cookie on a resumed crawl (--state, no seed on the command line) still goes to the seeds it holds', async () => {
    const state = join(dir, `resume-${Math.random().toString(36).slice(2)}.db`);
    const args = ['--allow-private', '--max-depth', '1', '--rate', '1/s', '--cookie', 'given=c1', '-q', '--state', state];
    seen = [];
    expect(await main([...args, '--max-time', '1.5', url('www.shop.localhost')], memoryIo(dir))).toBe(0);
    expect(requestsTo('www.shop.localhost', '/next')).toEqual([]);
    seen = [];
    expect(await main(args, memoryIo(dir))).toBe(0);
    const next = requestsTo('www.shop.localhost', '/next');
    expect(next).toHaveLength(1);
    expect((next[0].headers.cookie ?? '').split('; ')).toContain('given=c1');
  });

  it("the library option keeps them on the seeds' hosts too", async () => {
    seen = [];
    const options = {
      seeds: [url('www.shop.localhost')],
      scope: 'any' as const,
      maxDepth: 1,
      defaults: { rate: 'unlimited', headers: { 'X-Api-Key': 'LIB' } },
      allowPrivate: true,
    };
    for await (const record of crawl(options)) void record;
    expect(requestsTo('www.shop.localhost', '/')[0].headers['x-api-key']).toBe('LIB');
    expect(requestsTo('other.localhost', '/elsewhere')).toHaveLength(1);
    expect(withheld('other.localhost')).toEqual([]);
  });

  it('crawl check on another host shows the credential header as not sent, and fetches its robots.txt without it', async () => {
    seen = [];
    const io = memoryIo(dir);
    await main(
      ['check', '--allow-private', '--scope', 'any', '--seed', url('www.shop.localhost'), '--header', 'X-Api-Key: SECRET', url('other.localhost', '/x')],
      io,
    );
    expect(io.out()).toMatch(/header x-api-key: \*\*\* \(not sent to this host: a credential goes to the seeds' hosts only/);
    expect(requestsTo('other.localhost', '/robots.txt')).toHaveLength(1);
    expect(withheld('other.localhost')).toEqual([]);
    expect(io.out()).not.toContain('SECRET');
  });
});
