import { describe, expect, it } from 'vitest';
import {
  createPolicyResolver,
  matchDomainKey,
  parseDomainKey,
  resolveHostPolicy,
  splitHostPort,
  type DomainPolicies,
  type PolicyFields,
} from '../src/policy.js';
import { parseRate, parseWindow } from '../src/rate.js';

const defaults: PolicyFields = {
  rate: parseRate('1/s'),
  limits: [],
  concurrency: 2,
  jitterMs: 0,
  crawlDelay: 'floor',
  maxCrawlDelayMs: 30_000,
};

const domains: DomainPolicies = {
  'example.com': { rate: parseRate('5/s') },
  'example.com:8080': { rate: parseRate('unlimited'), crawlDelay: 'ignore' },
  '*.example.com': { rate: parseRate('2/s'), concurrency: 4 },
  '*.api.example.com': { rate: parseRate('30/min'), limits: [parseWindow('100/h')] },
  'shop.api.example.com': { jitterMs: 250 },
  '*.org': { concurrency: 1 },
  '*.localhost': { rate: parseRate('3/s') },
};

describe('resolveHostPolicy', () => {
  it.each<[string, string | undefined, string]>([
    // exact host beats the wildcard that also covers it
    ['example.com', undefined, 'example.com'],
    // host:port beats the plain host, but only on that port
    ['example.com', '8080', 'example.com:8080'],
    ['example.com', '9090', 'example.com'],
    // "*.example.com" covers subdomains at any depth…
    ['www.example.com', undefined, '*.example.com'],
    ['a.b.c.example.com', undefined, '*.example.com'],
    // …but the longest suffix wins
    ['v1.api.example.com', undefined, '*.api.example.com'],
    ['api.example.com', undefined, '*.api.example.com'],
    ['shop.api.example.com', undefined, 'shop.api.example.com'],
    // a wildcard covers the bare suffix itself
    ['org', undefined, '*.org'],
    ['localhost', undefined, '*.localhost'],
    ['blog.localhost', '4000', '*.localhost'],
    // suffix matching is by whole labels, not by string ending
    ['notexample.com', undefined, 'defaults'],
    ['example.com.evil.net', undefined, 'defaults'],
    ['example.net', undefined, 'defaults'],
    // case and a trailing root dot do not matter
    ['WWW.Example.COM', undefined, '*.example.com'],
    ['example.com.', undefined, 'example.com'],
  ])('%s (port %s) → %s', (host, port, matched) => {
    expect(resolveHostPolicy(domains, defaults, host, port).matched).toBe(matched);
  });

  it('takes each field the entry leaves unset from defaults, not from a wider wildcard', () => {
    // shop.api.example.com sets only jitter; *.api.example.com would say 30/min,
    // but fallback goes straight to defaults.
    expect(resolveHostPolicy(domains, defaults, 'shop.api.example.com')).toEqual({
      matched: 'shop.api.example.com',
      intervalMs: 1000,
      rateLabel: '1/s',
      windows: [],
      concurrency: 2,
      jitterMs: 250,
      respectCrawlDelay: true,
      maxCrawlDelayMs: 30_000,
    });
  });

  it('resolves every field of a full entry', () => {
    expect(resolveHostPolicy(domains, defaults, 'x.api.example.com')).toEqual({
      matched: '*.api.example.com',
      intervalMs: 2000,
      rateLabel: '30/min',
      windows: [{ count: 100, windowMs: 3_600_000, label: '100/h' }],
      concurrency: 2,
      jitterMs: 0,
      respectCrawlDelay: true,
      maxCrawlDelayMs: 30_000,
    });
    const staging = resolveHostPolicy(domains, defaults, 'example.com', '8080');
    expect(staging).toMatchObject({ intervalMs: 0, rateLabel: 'unlimited', respectCrawlDelay: false });
  });

  it('uses defaults when there are no entries at all', () => {
    expect(resolveHostPolicy({}, defaults, 'anything.test')).toMatchObject({ matched: 'defaults', intervalMs: 1000, concurrency: 2 });
  });

  it('does not treat inherited object properties as entries', () => {
    expect(resolveHostPolicy({}, defaults, 'constructor').matched).toBe('defaults');
    expect(resolveHostPolicy({}, defaults, '__proto__').matched).toBe('defaults');
  });
});

describe('createPolicyResolver', () => {
  it('agrees with resolveHostPolicy and reads the port from URL.host', () => {
    const policyFor = createPolicyResolver(domains, defaults);
    for (const host of ['example.com', 'www.example.com', 'v1.api.example.com', 'org', 'example.net']) {
      expect(policyFor(host)).toEqual(resolveHostPolicy(domains, defaults, host));
    }
    expect(policyFor(new URL('http://example.com:8080/x').host).matched).toBe('example.com:8080');
    expect(policyFor(new URL('http://example.com:80/x').host).matched).toBe('example.com');
    expect(policyFor(new URL('http://blog.localhost:5173/').host).matched).toBe('*.localhost');
    expect(policyFor(new URL('http://[::1]:8080/').host).matched).toBe('defaults');
  });

  it('hands out one frozen object per entry', () => {
    const policyFor = createPolicyResolver(domains, defaults);
    const a = policyFor('a.example.com');
    expect(policyFor('b.example.com')).toBe(a);
    expect(policyFor('a.example.com')).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(policyFor('x.api.example.com').windows)).toBe(true);
    expect(policyFor('unmatched.test')).toBe(policyFor('other.test'));
  });

  it('keeps at most cacheSize hosts and still answers correctly after eviction', () => {
    const policyFor = createPolicyResolver(domains, defaults, { cacheSize: 2 });
    const hosts = ['a.example.com', 'b.org', 'c.net', 'a.example.com', 'example.com'];
    expect(hosts.map((h) => policyFor(h).matched)).toEqual(['*.example.com', '*.org', 'defaults', '*.example.com', 'example.com']);
  });
});

describe('splitHostPort', () => {
  it.each<[string, string, string | undefined]>([
    ['example.com', 'example.com', undefined],
    ['example.com:8080', 'example.com', '8080'],
    ['[::1]:8080', '[::1]', '8080'],
    ['[::1]', '[::1]', undefined],
    ['::1', '::1', undefined],
  ])('%s', (input, hostname, port) => {
    expect(splitHostPort(input)).toEqual(port === undefined ? { hostname } : { hostname, port });
  });
});

describe('matchDomainKey', () => {
  it('walks from the most to the least specific wildcard', () => {
    const asked: string[] = [];
    matchDomainKey((k) => (asked.push(k), false), 'a.b.example.com', '81');
    expect(asked).toEqual(['a.b.example.com:81', 'a.b.example.com', '*.a.b.example.com', '*.b.example.com', '*.example.com', '*.com']);
  });
});

describe('parseDomainKey', () => {
  it.each<[string, string]>([
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['example.com:8080', 'example.com:8080'],
    ['*.example.com', '*.example.com'],
    ['*.localhost', '*.localhost'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['*.bücher.de', '*.xn--bcher-kva.de'],
    ['127.0.0.1', '127.0.0.1'],
    ['127.0.0.1:3000', '127.0.0.1:3000'],
    ['[::1]:8080', '[::1]:8080'],
  ])('%s → %s', (raw, key) => {
    expect(parseDomainKey(raw)).toEqual({ key });
  });

  it.each<[string, string]>([
    ['bad key', 'expected a hostname'],
    ['http://example.com', 'expected a hostname'],
    ['example.com/path', 'expected a hostname'],
    ['user@example.com', 'expected a hostname'],
    ['', 'expected a hostname'],
    ['a..com', 'empty label'],
    ['**.example.com', 'leading "*."'],
    ['*example.com', 'leading "*."'],
    ['www.*.example.com', 'leading "*."'],
    ['*', 'leading "*."'],
    ['*.', 'expected a hostname'],
    ['*.example.com:8080', 'cannot name a port'],
    ['example.com:0', 'port must be 1-65535'],
    ['example.com:70000', 'port must be 1-65535'],
    ['example.com:443', 'default port'],
    ['example.com:80', 'default port'],
  ])('rejects %j', (raw, fragment) => {
    const result = parseDomainKey(raw);
    expect(result).toHaveProperty('problem');
    expect((result as { problem: string }).problem).toContain(fragment);
  });
});
