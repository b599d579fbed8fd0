/**
 * The SSRF guard (issue 10, "hostile web"): a crawl never connects to a
 * special-purpose address (loopback, private, link-local and cloud metadata,
 * unique-local, …) that a page, a redirect or a robots.txt points it at,
 * except on the exact hosts its seeds name; `allowPrivate` and
 * `allowNetworks` lift it. Checked on the address actually connected to.
 *
 * Safety of these tests: only 127.0.0.1 servers. Names are mapped to
 * non-loopback special addresses (10.x, 169.254.169.254, …) only in unit
 * tests of the resolver wrapper, which open no socket at all; everything that
 * reaches the connect step resolves to loopback, so a broken guard could only
 * ever reach our own test server, whose request log then fails the test.
 */
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { systemClock } from '../../src/clock.js';
import { explain } from '../../src/api/check.js';
import { AddressRefusedError, createAddressGuard, guardLookup } from '../../src/fetch/address-guard.js';
import { describeRefusal, parseNetwork, refusalFor } from '../../src/fetch/address-ranges.js';
import { createFetcher, lookupWithLocalhost, type Fetcher } from '../../src/fetch/fetcher.js';
import { crawl, pathOf } from '../support/crawl-harness.js';

let web: Web | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await web?.close();
  web = undefined;
});

function fetcher(lookup?: LookupFunction): Fetcher {
  const f = createFetcher({
    userAgent: 'ssrf-test/1.0',
    timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000, totalMs: 2000 },
    maxBodyBytes: 1 << 20,
    clock: systemClock,
    lookup,
  });
  cleanups.push(() => f.close());
  return f;
}

/** A plain server on 127.0.0.1 that counts TCP connections. */
async function server(handler: http.RequestListener = (_req, res) => res.end('<p>ok</p>')): Promise<{ port: number; connections: () => number }> {
  const s = http.createServer(handler);
  let connections = 0;
  s.on('connection', () => connections++);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))));
  return { port: (s.address() as AddressInfo).port, connections: () => connections };
}

/** A resolver answering from a table (each name's answers, in order, one per lookup); anything else fails. */
function fakeLookup(table: Record<string, string[]>): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, a?: string | LookupAddress[], f?: number) => void) => {
    calls.push(hostname);
    const answers = table[hostname];
    process.nextTick(() => {
      if (!answers || answers.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      const address = answers.length > 1 ? answers.shift()! : answers[0];
      const list = address.split(',').map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 }));
      if (options.all) callback(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  }) as unknown as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

function lookupOnce(lookup: LookupFunction, hostname: string, all: boolean): Promise<{ err: unknown; answer: unknown; family?: number }> {
  return new Promise((resolve) => lookup(hostname, { all }, (err, answer, family) => resolve({ err, answer, family })));
}

async function refusal(promise: Promise<unknown>): Promise<AddressRefusedError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the guard to refuse the connection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AddressRefusedError);
  return err as AddressRefusedError;
}

// ---------------------------------------------------------------- which addresses

describe('special-purpose addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private (RFC 1918)'],
    ['172.31.255.255', 'private (RFC 1918)'],
    ['192.168.0.1', 'private (RFC 1918)'],
    ['100.64.0.1', 'shared address space (CGNAT; some cloud metadata)'],
    ['100.100.100.200', 'shared address space (CGNAT; some cloud metadata)'],
    ['169.254.169.254', 'link-local (cloud metadata, 169.254.169.254)'],
    ['0.0.0.0', '"this network" (0.0.0.0 reaches the local host)'],
    ['192.0.0.192', 'IETF protocol assignments'],
    ['198.18.0.1', 'benchmarking'],
    ['203.0.113.9', 'documentation (TEST-NET-3)'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved (and broadcast)'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00:ec2::254', 'unique-local (fd00:ec2::254 is cloud metadata)'],
    ['fc00::1', 'unique-local (fd00:ec2::254 is cloud metadata)'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['::7f00:1', 'IPv4-compatible (deprecated)'],
  ])('refuses %s (%s)', (address, name) => {
    expect(refusalFor(address)?.range.name).toBe(name);
  });

  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '172.32.0.1', '100.128.0.1'])(
    'allows the public address %s',
    (address) => {
      expect(refusalFor(address)).toBeNull();
    },
  );

  it('judges IPv4-mapped and NAT64 addresses by the IPv4 address they carry', () => {
    expect(describeRefusal(refusalFor('::ffff:7f00:1')!)).toBe('::ffff:7f00:1 (IPv4 127.0.0.1: loopback, 127.0.0.0/8)');
    expect(refusalFor('::ffff:169.254.169.254')?.embedded).toBe('169.254.169.254');
    expect(refusalFor('64:ff9b::a00:1')?.range.cidr).toBe('10.0.0.0/8');
  });

  it('covers every spelling of an address by parsing it, as the connect step sees it', () => {
    // WHATWG URL parsing normalises IPv4 spellings; what reaches the connect step is the hostname.
    const spellings = [
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://%31%32%37.0.0.1/',
      'http://127.0.0.1./',
      'http://[::ffff:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
    ];
    for (const spelling of spellings) {
      const host = new URL(spelling).hostname.replace(/^\[|\]$/g, '');
      expect(refusalFor(host)?.range.name, spelling).toBe('loopback');
    }
    expect(refusalFor(new URL('http://0/').hostname)?.range.cidr).toBe('0.0.0.0/8');
  });

  it('lets allowNetworks through, and nothing else', () => {
    const allowed = ['10.0.0.0/8', 'fd00::/8'].map(parseNetwork);
    expect(refusalFor('10.9.8.7', allowed)).toBeNull();
    expect(refusalFor('::ffff:10.9.8.7', allowed)).toBeNull();
    expect(refusalFor('fd12::1', allowed)).toBeNull();
    expect(refusalFor('192.168.1.1', allowed)?.range.cidr).toBe('192.168.0.0/16');
    expect(refusalFor('127.0.0.1', allowed)?.range.cidr).toBe('127.0.0.0/8');
  });

  it('parses networks strictly, with messages that say what to write', () => {
    expect(parseNetwork('10.0.0.0/8').cidr).toBe('10.0.0.0/8');
    expect(parseNetwork('192.168.1.20').cidr).toBe('192.168.1.20/32');
    expect(parseNetwork('FD00::/8').cidr).toBe('fd00::/8');
    expect(() => parseNetwork('10.0.0.1/8')).toThrow('"10.0.0.1/8" has host bits set after /8; did you mean "10.0.0.0/8"?');
    expect(() => parseNetwork('10.0.0.0/-1')).toThrow('prefix length must be 0-32');
    expect(() => parseNetwork('example.com/8')).toThrow('expected a network like "10.0.0.0/8"');
  });
});

// ---------------------------------------------------------------- the resolver wrapper (no sockets)

describe('guardLookup', () => {
  const guard = createAddressGuard({});

  it('refuses a name that resolves to cloud metadata or private addresses, naming the address', async () => {
    const lookup = guardLookup(guard, fakeLookup({ 'metadata.test': ['169.254.169.254'], 'intranet.test': ['10.0.0.5'] }));
    const metadata = await lookupOnce(lookup, 'metadata.test', true);
    expect(metadata.err).toBeInstanceOf(AddressRefusedError);
    expect((metadata.err as AddressRefusedError).detail).toBe('169.254.169.254 (link-local (cloud metadata, 169.254.169.254), 169.254.0.0/16)');
    expect((metadata.err as Error).message).toMatch(/^metadata\.test resolves to refused special-purpose address 169\.254\.169\.254/);
    expect((await lookupOnce(lookup, 'intranet.test', false)).err).toBeInstanceOf(AddressRefusedError);
  });

  it('drops refused answers and keeps the rest, in the shape asked for', async () => {
    const lookup = guardLookup(guard, fakeLookup({ 'mixed.test': ['10.0.0.5,93.184.216.34,::1'] }));
    expect((await lookupOnce(lookup, 'mixed.test', true)).answer).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await lookupOnce(lookup, 'mixed.test', false)).toMatchObject({ err: null, answer: '93.184.216.34', family: 4 });
  });

  it('passes resolver failures through unchanged', async () => {
    const { err } = await lookupOnce(guardLookup(guard, fakeLookup({})), 'nowhere.test', true);
    expect((err as { code?: string }).code).toBe('ENOTFOUND');
  });

  it('allows what allowNetworks lists, and everything with allowPrivate', async () => {
    const base = fakeLookup({ 'intranet.test': ['10.0.0.5'] });
    expect((await lookupOnce(guardLookup(createAddressGuard({ allowNetworks: ['10.0.0.0/8'] }), base), 'intranet.test', true)).answer).toEqual([
      { address: '10.0.0.5', family: 4 },
    ]);
    expect(createAddressGuard({ allowPrivate: true }).refusal('169.254.169.254')).toBeNull();
  });

  it('exempts exactly the hosts (and ports) the seeds name', () => {
    const seeded = createAddressGuard({ allowUrls: ['http://site.localhost:8080/', 'https://[::1]/x', 'http://127.0.0.1/'] });
    expect(seeded.exempts('site.localhost', 8080)).toBe(true);
    expect(seeded.exempts('SITE.localhost', 8080)).toBe(true);
    expect(seeded.exempts('site.localhost', 8081)).toBe(false);
    expect(seeded.exempts('other.localhost', 8080)).toBe(false);
    expect(seeded.exempts('::1', 443)).toBe(true);
    expect(seeded.exempts('127.0.0.1', 80)).toBe(true);
    expect(seeded.exempts('127.0.0.1', 8080)).toBe(false);
  });
});

// ---------------------------------------------------------------- the fetcher's connect step

describe('the connect step', () => {
  it('refuses a *.localhost name that is not a seed before any socket reaches the server', async () => {
    const s = await server();
    const guard = createAddressGuard({ allowUrls: [`http://seed.localhost:${s.port}/`] });
    const err = await refusal(fetcher().fetch(`http://evil.localhost:${s.port}/`, { read: 'html', guard }));
    expect(err.detail).toBe('127.0.0.1 (loopback, 127.0.0.0/8)');
    expect(err.hostname).toBe('evil.localhost');
    expect(s.connections()).toBe(0);
    // The seed's own host is exempt.
    expect((await fetcher().fetch(`http://seed.localhost:${s.port}/`, { read: 'html', guard })).status).toBe(200);
    expect(s.connections()).toBe(1);
  });

  it('refuses every spelling of a loopback IP literal, and the same host on another port than the seed', async () => {
    const s = await server();
    const guard = createAddressGuard({ allowUrls: ['http://127.0.0.1:1/'] });
    const f = fetcher();
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
      const err = await refusal(f.fetch(`http://${host}:${s.port}/`, { read: 'html', guard }));
      expect(err.refused.range.name, host).toBe('loopback');
    }
    expect(s.connections()).toBe(0);
  });

  it('checks the address at each connect, so a name that rebinds to a refused address is caught', async () => {
    // The server closes every connection, so each request connects (and resolves) afresh.
    const s = await server((_req, res) => res.writeHead(200, { connection: 'close', 'content-type': 'text/html' }).end('<p>ok</p>'));
    const lookup = fakeLookup({ 'rebind.test': ['127.0.0.1', '127.0.0.2'] });
    const guard = createAddressGuard({ allowNetworks: ['127.0.0.1/32'] });
    const f = fetcher(lookup);
    expect((await f.fetch(`http://rebind.test:${s.port}/first`, { read: 'html', guard })).status).toBe(200);
    const err = await refusal(f.fetch(`http://rebind.test:${s.port}/second`, { read: 'html', guard }));
    expect(err.refused.address).toBe('127.0.0.2');
    expect(lookup.calls).toEqual(['rebind.test', 'rebind.test']);
    expect(s.connections()).toBe(1);
  });

  it('keeps pools apart: a socket opened without the guard never serves a guarded request', async () => {
    const s = await server();
    const f = fetcher();
    expect((await f.fetch(`http://evil.localhost:${s.port}/`, { read: 'html' })).status).toBe(200);
    await refusal(f.fetch(`http://evil.localhost:${s.port}/`, { read: 'html', guard: createAddressGuard({}) }));
    expect(s.connections()).toBe(1);
  });
});

// ---------------------------------------------------------------- crawls

describe('a crawl', () => {
  function site(extraPages: Record<string, string | import('../../fixtures/web.js').RouteSpec> = {}) {
    return startWeb({
      sites: {
        'site.localhost': {
          pages: {
            '/': `<a href="{{origin:evil.localhost}}/secret">x</a> <a href="http://2130706433:{{port}}/a">y</a> <a href="http://[::ffff:127.0.0.1]:{{port}}/b">z</a> <a href="/ok">ok</a>`,
            '/ok': 'fine',
            ...extraPages,
          },
        },
        'evil.localhost': { pages: { '/secret': 'metadata', '/robots.txt': 'User-agent: *\nAllow: /' } },
      },
    });
  }

  it("skips links to special-purpose addresses off the seeds' hosts as private-address, naming the address, and connects nowhere else", async () => {
    web = await site();
    const run = await crawl([web.url('site.localhost', '/')], { scope: 'any', defaults: { rate: 'unlimited' } });
    expect(run.pages.map((p) => [p.url, p.status])).toEqual([
      [web.url('site.localhost', '/'), 200],
      [web.url('site.localhost', '/ok'), 200],
    ]);
    const refused = run.skipped.filter((s) => s.reason === 'private-address');
    expect(refused.map((s) => [s.url, s.detail]).sort()).toEqual(
      [
        [web.url('evil.localhost', '/secret'), '127.0.0.1 (loopback, 127.0.0.0/8)'],
        [`http://127.0.0.1:${web.port}/a`, '127.0.0.1 (loopback, 127.0.0.0/8)'],
        [`http://[::ffff:7f00:1]:${web.port}/b`, '::ffff:7f00:1 (IPv4 127.0.0.1: loopback, 127.0.0.0/8)'],
      ].sort(),
    );
    // Not one request reached anything but the seed's host: no page, no robots.txt.
    expect(new Set(web.requests().map((r) => r.host))).toEqual(new Set(['site.localhost']));
    expect(run.stats.skippedByReason.get('private-address')).toBe(3);
  });

  it('does not spend maxPages on refused URLs', async () => {
    web = await site({ '/ok': '<a href="/last">last</a>', '/last': 'last' });
    // Without robots.txt to wait for, the refused hosts (queued first) are tried before /ok.
    const run = await crawl([web.url('site.localhost', '/')], {
      maxPages: 3,
      concurrency: 1,
      scope: 'any',
      robots: { enabled: false },
      defaults: { rate: 'unlimited' },
    });
    expect(run.pages.map((p) => pathOf(p.url))).toEqual(['/', '/ok', '/last']);
  });

  it('crawls them with allowPrivate, or with allowNetworks covering the address', async () => {
    web = await site();
    for (const config of [{ allowPrivate: true }, { allowNetworks: ['127.0.0.0/8', '::1/128'] }]) {
      web.reset();
      const run = await crawl([web.url('site.localhost', '/')], { ...config, scope: 'any', defaults: { rate: 'unlimited' } });
      expect(
        run.skipped.filter((s) => s.reason === 'private-address'),
        JSON.stringify(config),
      ).toEqual([]);
      expect(web.count('evil.localhost', '/secret')).toBe(1);
    }
  });

  it('reports a refused redirect target even without emitSkipped, and never fetches it', async () => {
    web = await site({ '/go': { status: 302, headers: { location: '{{origin:evil.localhost}}/secret' } } });
    const run = await crawl([web.url('site.localhost', '/go')], { scope: 'any', defaults: { rate: 'unlimited' } }, { emitSkipped: false });
    expect(run.pages.map((p) => [p.status, p.location])).toEqual([[302, web.url('evil.localhost', '/secret')]]);
    expect(run.skipped).toEqual([
      expect.objectContaining({
        url: web.url('evil.localhost', '/secret'),
        reason: 'private-address',
        detail: '127.0.0.1 (loopback, 127.0.0.0/8)',
        parent: web.url('site.localhost', '/go'),
      }),
    ]);
    expect(web.count('evil.localhost')).toBe(0);
  });

  it('does not follow a robots.txt redirect to a refused address (read as an unusable redirect: allow all)', async () => {
    web = await startWeb({
      sites: {
        'site.localhost': { robots: { status: 301, headers: { location: '{{origin:evil.localhost}}/robots.txt' } }, pages: { '/': 'home' } },
        'evil.localhost': { robots: 'User-agent: *\nDisallow: /' },
      },
    });
    const run = await crawl([web.url('site.localhost', '/')], { defaults: { rate: 'unlimited' } });
    expect(run.pages.map((p) => p.status)).toEqual([200]);
    expect(web.count('evil.localhost')).toBe(0);
  });

  it('resolves names at connect time, through the resolver the fetcher was given', async () => {
    web = await startWeb({ sites: { 'site.localhost': { pages: { '/': `<a href="http://intranet.test:{{port}}/x">x</a>` } } } });
    const lookup = fakeLookup({ 'intranet.test': ['127.0.0.2'] });
    const run = await crawl(
      [web.url('site.localhost', '/')],
      { scope: 'any', defaults: { rate: 'unlimited' } },
      {},
      { lookup: (h, o, cb) => (h.endsWith('.localhost') ? lookupWithLocalhost(h, o, cb) : lookup(h, o, cb)) },
    );
    expect(run.skipped).toEqual([
      expect.objectContaining({ url: `http://intranet.test:${web.port}/x`, reason: 'private-address', detail: '127.0.0.2 (loopback, 127.0.0.0/8)' }),
    ]);
    expect(lookup.calls.length).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------- crawl check

describe('explain()', () => {
  it('says the guard would refuse a non-seed host, with the address, and that the seed host is exempt', async () => {
    web = await startWeb({ sites: { 'site.localhost': { pages: { '/': 'home' } }, 'evil.localhost': { pages: { '/x': 'x' } } } });
    const refused = await explain(web.url('evil.localhost', '/x'), { seeds: [web.url('site.localhost', '/')], scope: 'any', robots: { enabled: false } });
    expect(refused.network).toMatchObject({ allowed: false, checked: true, addresses: ['127.0.0.1'] });
    expect(refused.network.explanation).toBe(
      'refused: evil.localhost resolves to 127.0.0.1 (loopback, 127.0.0.0/8), a special-purpose address; --allow-private or allowNetworks lifts it',
    );
    expect(refused.wouldFetch).toBe(false);
    // Out of scope, the guard's verdict is still given: it said "allowed, not checked" (issue 42, item 14).
    const outOfScope = await explain(web.url('evil.localhost', '/x'), { seeds: [web.url('site.localhost', '/')], robots: { enabled: false } });
    expect(outOfScope.scope.inScope).toBe(false);
    expect(outOfScope.network).toMatchObject({ allowed: false, checked: true, addresses: ['127.0.0.1'] });
    const seed = await explain(web.url('site.localhost', '/'), { robots: { enabled: false } });
    expect(seed.network).toMatchObject({ allowed: true, checked: false });
    expect(seed.wouldFetch).toBe(true);
    const allowed = await explain(web.url('evil.localhost', '/x'), {
      seeds: [web.url('site.localhost', '/')],
      scope: 'any',
      robots: { enabled: false },
      allowNetworks: ['127.0.0.0/8'],
    });
    expect(allowed.network.explanation).toBe('allowed: 127.0.0.1 (special-purpose, allowed by allowNetworks 127.0.0.0/8)');
    expect(allowed.wouldFetch).toBe(true);
    expect(web.requests()).toEqual([]);
  });
});
