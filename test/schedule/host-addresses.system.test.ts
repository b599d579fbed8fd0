/**
 * Hosts resolved before they are scheduled: the HostAddresses table (bounded
 * lookups, TTLs, failures asked again) and the fetcher's `resolveHost`, which
 * shares its DNS cache with the connect, under the same SSRF guard.
 */
import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { AddressRefusedError, createAddressGuard } from '../../src/fetch/address-guard.js';
import { FetchError } from '../../src/fetch/fetch-error.js';
import { createFetcher } from '../../src/fetch/fetcher.js';
import { createRequestExtras } from '../../src/fetch/request-extras.js';
import { HostAddresses, PENDING } from '../../src/schedule/host-addresses.js';
import { FakeClock } from '../support/fake-clock.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A lookup whose answers the test hands out by hand. */
function manualLookup() {
  const asked: string[] = [];
  const waiting = new Map<string, { resolve: (a: string | null) => void; reject: (e: Error) => void }>();
  const lookup = (key: string) =>
    new Promise<string | null>((resolve, reject) => {
      asked.push(key);
      waiting.set(key, { resolve, reject });
    });
  const answer = async (key: string, a: string | Error | null) => {
    const w = waiting.get(key)!;
    waiting.delete(key);
    if (a instanceof Error) w.reject(a);
    else w.resolve(a);
    await new Promise((r) => setImmediate(r));
  };
  return { lookup, asked, answer, running: () => waiting.size };
}

describe('HostAddresses', () => {
  it('answers PENDING at once, looks up in the background and wakes the host with the answer', async () => {
    const clock = new FakeClock(0);
    const dns = manualLookup();
    const woken: string[] = [];
    const table = new HostAddresses({ clock, lookup: dns.lookup, onResolved: (k) => woken.push(k) });
    expect(table.state('a.test', 0)).toBe(PENDING);
    expect(table.state('a.test', 0)).toBe(PENDING);
    expect(dns.asked).toEqual(['a.test']); // one question, however often asked meanwhile
    await dns.answer('a.test', '10.0.0.1');
    expect(woken).toEqual(['a.test']);
    expect(table.state('a.test', 0)).toBe('10.0.0.1');
    table.state('p.test', 0);
    await dns.answer('p.test', null); // proxied: no address counted
    expect(table.state('p.test', 0)).toBeNull();
  });

  it('runs at most maxLookups at once; the rest wait their turn in order', async () => {
    const dns = manualLookup();
    const table = new HostAddresses({ clock: new FakeClock(0), lookup: dns.lookup, onResolved: () => {}, maxLookups: 2 });
    for (const k of ['a', 'b', 'c', 'd']) table.state(k, 0);
    expect(dns.asked).toEqual(['a', 'b']);
    expect(table.pending).toBe(4);
    await dns.answer('b', '10.0.0.2');
    expect(dns.asked).toEqual(['a', 'b', 'c']);
    await dns.answer('a', '10.0.0.1');
    expect(dns.asked).toEqual(['a', 'b', 'c', 'd']);
    expect(dns.running()).toBe(2);
  });

  it('keeps a failure for the negative TTL, then asks again; an expired address serves while it is refreshed', async () => {
    const dns = manualLookup();
    const table = new HostAddresses({ clock: new FakeClock(0), lookup: dns.lookup, onResolved: () => {}, ttlMs: 1000, negativeTtlMs: 100 });
    table.state('gone', 0);
    const failure = new Error('gone could not be resolved');
    await dns.answer('gone', failure);
    expect(table.state('gone', 99)).toBe(failure);
    expect(table.failure('gone')).toBe(failure);
    expect(table.state('gone', 100)).toBe(PENDING); // asked again before anything more is recorded
    expect(table.failure('gone')).toBeUndefined();
    expect(dns.asked).toEqual(['gone', 'gone']);

    table.state('a', 0);
    await dns.answer('a', '10.0.0.1');
    expect(table.state('a', 1000)).toBe('10.0.0.1'); // expired: refresh asked, old answer used meanwhile
    expect(dns.asked.filter((k) => k === 'a')).toHaveLength(2);
    await dns.answer('a', '10.0.0.9');
    expect(table.state('a', 1000)).toBe('10.0.0.9');
  });

  it('sweeps settled answers of hosts the caller no longer keeps', async () => {
    const dns = manualLookup();
    const table = new HostAddresses({ clock: new FakeClock(0), lookup: dns.lookup, onResolved: () => {} });
    table.state('a', 0);
    table.state('b', 0);
    await dns.answer('a', '10.0.0.1');
    table.sweep(() => false);
    expect(table.size).toBe(1); // b's question is still out: kept
    expect(table.peek('a')).toBeUndefined();
  });
});

describe('the fetcher resolves ahead through the cache the connect uses', () => {
  function fakeLookup(table: Record<string, string>): LookupFunction & { calls: string[] } {
    const calls: string[] = [];
    const lookup = ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, a?: string | LookupAddress[], f?: number) => void) => {
      calls.push(hostname);
      setTimeout(() => {
        const address = table[hostname];
        if (!address) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
        if (options.all) callback(null, [{ address, family: 4 }]);
        else callback(null, address, 4);
      }, 5);
    }) as unknown as LookupFunction & { calls: string[] };
    lookup.calls = calls;
    return lookup;
  }

  it('asks once for the pre-resolution and the connect, and the guard still refuses at connect', async () => {
    const s = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>'));
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))));
    const port = (s.address() as AddressInfo).port;
    const base = fakeLookup({ 'ok.test': '127.0.0.1', 'evil.test': '127.0.0.1' });
    const f = createFetcher({
      userAgent: 'dns-test/1.0',
      timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
      maxBodyBytes: 1 << 20,
      clock: systemClock,
      lookup: base,
      dnsCache: { ttlMs: 60_000, negativeTtlMs: 60_000, maxEntries: 100 },
    });
    cleanups.push(() => f.close());
    const guard = createAddressGuard({ allowUrls: [`http://ok.test:${port}/`] });
    expect(await f.resolveHost!(`ok.test:${port}`)).toBe('127.0.0.1');
    expect(await f.resolveHost!(`evil.test:${port}`)).toBe('127.0.0.1'); // resolving is not connecting: the guard judges at connect
    expect((await f.fetch(`http://ok.test:${port}/`, { read: 'html', guard })).status).toBe(200);
    const err = await f.fetch(`http://evil.test:${port}/`, { read: 'html', guard }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect(base.calls).toEqual(['ok.test', 'evil.test']);

    const gone = await f.resolveHost!('gone.test').then(
      () => null,
      (e: unknown) => e,
    );
    expect(gone).toBeInstanceOf(FetchError);
    expect(gone).toMatchObject({ code: 'DNS_FAILURE', message: expect.stringContaining('gone.test could not be resolved (ENOTFOUND)') });
    expect(await f.resolveHost!('[::1]:8080')).toBe('::1');
    expect(await f.resolveHost!('192.0.2.1')).toBe('192.0.2.1');
    expect(base.calls).toEqual(['ok.test', 'evil.test', 'gone.test']);
  });

  it('answers null for a host whose requests go through a proxy (it is never connected to)', async () => {
    const f = createFetcher({
      userAgent: 'dns-test/1.0',
      timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
      maxBodyBytes: 1 << 20,
      clock: systemClock,
      lookup: fakeLookup({}),
      extras: createRequestExtras({ policyFor: (host) => ({ headers: {}, auth: null, proxy: host.startsWith('via.') ? 'http://127.0.0.1:3128' : false }) }),
    });
    cleanups.push(() => f.close());
    expect(await f.resolveHost!('via.test')).toBeNull();
    expect(await f.resolveHost!('192.0.2.1')).toBe('192.0.2.1');
  });
});
