import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { AddressRefusedError, createAddressGuard } from '../../src/fetch/address-guard.js';
import { cachedLookup } from '../../src/fetch/dns-cache.js';
import { FetchError } from '../../src/fetch/fetch-error.js';
import { createFetcher } from '../../src/fetch/fetcher.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A resolver answering from a table (each name's answers in turn, the last repeated); unknown names fail with ENOTFOUND. */
function fakeLookup(table: Record<string, string[]>): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, a?: string | LookupAddress[], f?: number) => void) => {
    calls.push(hostname);
    const answers = table[hostname];
    setTimeout(() => {
      if (!answers) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      const address = answers.length > 1 ? answers.shift()! : answers[0];
      if (options.all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    }, 5);
  }) as unknown as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

function ask(lookup: LookupFunction, hostname: string, all = false): Promise<{ err: NodeJS.ErrnoException | null; answer: unknown; family?: number }> {
  return new Promise((resolve) => lookup(hostname, { all }, (err, answer, family) => resolve({ err, answer, family })));
}

describe('cachedLookup', () => {
  it('asks once per TTL, answers in the shape asked for, and asks again once the TTL has passed', async () => {
    let now = 0;
    const base = fakeLookup({ 'a.test': ['10.0.0.1', '10.0.0.2'] });
    const lookup = cachedLookup(base, { ttlMs: 1000, negativeTtlMs: 100, maxEntries: 10, now: () => now });
    expect(await ask(lookup, 'a.test')).toEqual({ err: null, answer: '10.0.0.1', family: 4 });
    now = 999;
    expect((await ask(lookup, 'A.TEST', true)).answer).toEqual([{ address: '10.0.0.1', family: 4 }]);
    expect(base.calls).toEqual(['a.test']);
    now = 1000;
    expect((await ask(lookup, 'a.test')).answer).toBe('10.0.0.2');
    expect(base.calls).toEqual(['a.test', 'a.test']);
  });

  it('shares one question among concurrent lookups of a name', async () => {
    const base = fakeLookup({ 'b.test': ['10.0.0.3'] });
    const lookup = cachedLookup(base);
    const answers = await Promise.all([ask(lookup, 'b.test'), ask(lookup, 'b.test', true), ask(lookup, 'b.test')]);
    expect(answers.map((a) => a.err)).toEqual([null, null, null]);
    expect(answers[1].answer).toEqual([{ address: '10.0.0.3', family: 4 }]);
    expect(base.calls).toEqual(['b.test']);
  });

  it('caches a failure for the negative TTL: a name that does not resolve fails at once, without asking again', async () => {
    let now = 0;
    const base = fakeLookup({});
    const lookup = cachedLookup(base, { ttlMs: 1000, negativeTtlMs: 100, maxEntries: 10, now: () => now });
    expect((await ask(lookup, 'nowhere.test')).err?.code).toBe('ENOTFOUND');
    expect((await ask(lookup, 'nowhere.test')).err?.code).toBe('ENOTFOUND');
    expect(base.calls).toHaveLength(1); // from the cache: the resolver was not asked again
    now = 100;
    await ask(lookup, 'nowhere.test');
    expect(base.calls).toHaveLength(2);
  });

  it('answers a cached name asynchronously, as net.connect expects', async () => {
    const lookup = cachedLookup(fakeLookup({ 'c.test': ['10.0.0.4'] }));
    await ask(lookup, 'c.test');
    let answered = false;
    lookup('c.test', {}, () => (answered = true));
    expect(answered).toBe(false);
    await new Promise((r) => process.nextTick(r));
    expect(answered).toBe(true);
  });

  it('keeps at most maxEntries names, dropping the oldest', async () => {
    const base = fakeLookup({ 'a.test': ['10.0.0.1'], 'b.test': ['10.0.0.2'], 'c.test': ['10.0.0.3'] });
    const lookup = cachedLookup(base, { ttlMs: 60_000, negativeTtlMs: 1000, maxEntries: 2 });
    for (const name of ['a.test', 'b.test', 'c.test']) await ask(lookup, name);
    expect(lookup.size).toBe(2);
    await ask(lookup, 'a.test');
    expect(base.calls).toEqual(['a.test', 'b.test', 'c.test', 'a.test']);
  });

  it('turns a resolver that throws into a cached failure instead of a question left unanswered', async () => {
    const lookup = cachedLookup(() => {
      throw Object.assign(new Error('bad name'), { code: 'EINVAL' });
    });
    expect((await ask(lookup, 'x.test')).err?.code).toBe('EINVAL');
  });
});

describe('the fetcher with a DNS cache', () => {
  async function server(): Promise<{ port: number; connections: () => number; open: () => number }> {
    const s = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>'));
    s.keepAliveTimeout = 60_000; // the server would keep it: whatever closes the socket is the client
    let connections = 0;
    let open = 0;
    s.on('connection', (socket) => {
      connections++;
      open++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))));
    return { port: (s.address() as AddressInfo).port, connections: () => connections, open: () => open };
  }

  function fetcher(lookup: LookupFunction, extra: { idleOriginMs?: number } = {}) {
    const f = createFetcher({
      userAgent: 'dns-test/1.0',
      timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
      maxBodyBytes: 1 << 20,
      clock: systemClock,
      lookup,
      dnsCache: { ttlMs: 60_000, negativeTtlMs: 60_000, maxEntries: 100 },
      ...extra,
    });
    cleanups.push(() => f.close());
    return f;
  }

  it('fails a host that does not resolve with DNS_FAILURE, and its next request at once, from the cache', async () => {
    const base = fakeLookup({});
    const f = fetcher(base);
    for (let i = 0; i < 3; i++) {
      const err = await f.fetch('http://nowhere.test/', { read: 'html' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(FetchError);
      expect((err as FetchError).code).toBe('DNS_FAILURE');
    }
    expect(base.calls).toEqual(['nowhere.test']);
  });

  it('resolves a host once for many connections, and the guard still judges the cached address at every connect', async () => {
    const s = await server();
    const base = fakeLookup({ 'ok.test': ['127.0.0.1'], 'evil.test': ['127.0.0.1'] });
    const f = fetcher(base, { idleOriginMs: 50 });
    const guard = createAddressGuard({ allowUrls: [`http://ok.test:${s.port}/`] });
    for (let i = 0; i < 3; i++) {
      expect((await f.fetch(`http://ok.test:${s.port}/${i}`, { read: 'html', guard })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 120)); // the idle socket closes: the next request connects again
    }
    expect(s.connections()).toBe(3);
    for (let i = 0; i < 2; i++) {
      const err = await f.fetch(`http://evil.test:${s.port}/`, { read: 'html', guard }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AddressRefusedError);
    }
    expect(base.calls).toEqual(['ok.test', 'evil.test']);
    expect(s.connections()).toBe(3);
  });
});

describe('idle origins', () => {
  it('close their keep-alive sockets after idleOriginMs whatever the server hints, and reuse them before', async () => {
    const s = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>'));
    s.keepAliveTimeout = 60_000;
    let connections = 0;
    let open = 0;
    s.on('connection', (socket) => {
      connections++;
      open++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))));
    const port = (s.address() as AddressInfo).port;
    const f = createFetcher({
      userAgent: 'idle-test/1.0',
      timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
      maxBodyBytes: 1 << 20,
      clock: systemClock,
      idleOriginMs: 300,
    });
    cleanups.push(() => f.close());
    await f.fetch(`http://a.localhost:${port}/1`, { read: 'html' });
    await new Promise((r) => setTimeout(r, 50));
    await f.fetch(`http://a.localhost:${port}/2`, { read: 'html' });
    expect(connections).toBe(1); // reused within the idle time
    expect(open).toBe(1);
    await new Promise((r) => setTimeout(r, 600));
    expect(open).toBe(0); // closed by the client, long before the server's 60 s
    await f.fetch(`http://a.localhost:${port}/3`, { read: 'html' });
    expect(connections).toBe(2);
  });

  it('rejects an idleOriginMs that is not a positive number', () => {
    expect(() =>
      createFetcher({ userAgent: 'x', timeouts: { connectMs: 1, headersMs: 1, bodyMs: 1 }, maxBodyBytes: 1, clock: systemClock, idleOriginMs: 0 }),
    ).toThrow(/idleOriginMs/);
  });
});
