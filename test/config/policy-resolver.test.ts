import { describe, expect, it } from 'vitest';
import {
  createPolicyResolver,
  matchDomainKey,
  parseDomainKey,
  policyConflicts,
  resolveHostPolicy,
  splitHostPort,
  type DomainPolicies,
  type PolicyConflict,
  type PolicyFields,
  type PolicyOverride,
} from '../../src/config/policy-resolver.js';
import { parseRate, parseWindow } from '../../src/config/rate.js';

const defaults: PolicyFields = {
  rate: parseRate('1/s'),
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
};

/** What requests carry, resolved from `defaults` alone (no headers, credentials or proxy). */
const requestDefaults = { headers: {}, auth: null, proxy: null, render: false, http2: false, hours: null };

/** The server-feedback part of a policy resolved from `defaults` alone. */
const feedbackDefaults = {
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
};

const domains: DomainPolicies = {
  'example.com': { rate: parseRate('5/s') },
  'example.com:8080': { rate: parseRate('unlimited'), crawlDelay: 'ignore' },
  '*.example.com': { rate: parseRate('2/s'), concurrency: 4 },
  '*.api.example.com': { rate: parseRate('30/min'), limits: [parseWindow('100/h')] },
  'shop.api.example.com': { jitterMs: 250 },
  'flaky.example.com': { retries: 5, retryStatuses: [500, 503], throttleStatuses: [429], backoffCapMs: 300_000, hostFailureGiveUp: 40 },
  'calm.example.com': {
    retries: 0,
    retryStatuses: [],
    backoffBaseMs: 250,
    backoffCapMs: 5000,
    throttleStatuses: [429, 503, 509],
    maxRetryAfterMs: 30_000,
    throttleRetries: 100,
    adaptive: false,
    hostFailurePause: 1,
    hostFailureGiveUp: 2,
  },
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
      ...feedbackDefaults,
      ...requestDefaults,
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
      ...feedbackDefaults,
      ...requestDefaults,
    });
    const staging = resolveHostPolicy(domains, defaults, 'example.com', '8080');
    expect(staging).toMatchObject({ intervalMs: 0, rateLabel: 'unlimited', respectCrawlDelay: false });
  });

  it('resolves every server-feedback field an entry sets', () => {
    expect(resolveHostPolicy(domains, defaults, 'calm.example.com')).toMatchObject({
      matched: 'calm.example.com',
      retries: 0,
      retryStatuses: [],
      backoffBaseMs: 250,
      backoffCapMs: 5000,
      throttleStatuses: [429, 503, 509],
      maxRetryAfterMs: 30_000,
      throttleRetries: 100,
      adaptive: false,
      hostFailurePause: 1,
      hostFailureGiveUp: 2,
      ...requestDefaults,
    });
  });

  it('falls back per field for server feedback, one half of backoff and hostFailures included', () => {
    // flaky.example.com sets backoff's cap but not its base, hostFailures' giveUp but not its pause.
    expect(resolveHostPolicy(domains, defaults, 'flaky.example.com')).toEqual({
      matched: 'flaky.example.com',
      intervalMs: 1000,
      rateLabel: '1/s',
      windows: [],
      concurrency: 2,
      jitterMs: 0,
      respectCrawlDelay: true,
      maxCrawlDelayMs: 30_000,
      retries: 5,
      retryStatuses: [500, 503],
      backoffBaseMs: 1000,
      backoffCapMs: 300_000,
      throttleStatuses: [429],
      maxRetryAfterMs: 600_000,
      throttleRetries: 10,
      adaptive: true,
      latencyBackoff: true,
      hostFailurePause: 5,
      hostFailureGiveUp: 40,
      maxPagesPerHost: 100_000,
      ...requestDefaults,
    });
  });

  it('keeps retries: 0, adaptive: false and an empty status list rather than falling back', () => {
    // `??`, not `||`: falsy settings are settings.
    const policy = resolveHostPolicy(domains, defaults, 'calm.example.com');
    expect([policy.retries, policy.adaptive, policy.retryStatuses]).toEqual([0, false, []]);
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
    expect(Object.isFrozen(a.retryStatuses)).toBe(true);
    expect(Object.isFrozen(a.throttleStatuses)).toBe(true);
    expect(policyFor('unmatched.test')).toBe(policyFor('other.test'));
  });

  it('copies status lists, so changing the config afterwards cannot change a policy', () => {
    const ownDefaults: PolicyFields = { ...defaults, retryStatuses: [500], throttleStatuses: [429] };
    const ownDomains: Record<string, PolicyOverride> = { 'a.test': { retryStatuses: [502] } };
    const policyFor = createPolicyResolver(ownDomains, ownDefaults);
    ownDefaults.retryStatuses.push(503);
    ownDefaults.throttleStatuses.push(503);
    ownDomains['a.test'].retryStatuses!.push(504);
    expect(policyFor('other.test')).toMatchObject({ retryStatuses: [500], throttleStatuses: [429] });
    expect(policyFor('a.test')).toMatchObject({ retryStatuses: [502], throttleStatuses: [429] });
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

describe('policyConflicts', () => {
  const WHY_STATUS = 'a status either throttles the host or is retried as a failure, not both';
  const WHY_FAILURES = 'the host would be given up before it is ever paused';

  it.each<[string, PolicyOverride, PolicyOverride, PolicyConflict[]]>([
    // backoff: base <= cap
    [
      'base above cap, both its own',
      { backoffBaseMs: 120_000, backoffCapMs: 60_000 },
      {},
      [{ field: 'backoff', message: 'base "2m" is longer than cap "1m"' }],
    ],
    ['base equal to cap', { backoffBaseMs: 5000, backoffCapMs: 5000 }, {}, []],
    [
      'own base above the inherited cap',
      { backoffBaseMs: 90_000 },
      defaults,
      [{ field: 'backoff', message: 'base "90s" is longer than cap "1m" (from defaults)' }],
    ],
    [
      'own cap below the inherited base',
      { backoffCapMs: 500 },
      defaults,
      [{ field: 'backoff', message: 'base "1s" (from defaults) is longer than cap "500ms"' }],
    ],
    ['own base, defaults unknown', { backoffBaseMs: 90_000 }, {}, []],
    ["inherited conflict only: the defaults' problem, not the entry's", { retries: 1 }, { backoffBaseMs: 9000, backoffCapMs: 1000 }, []],
    [
      'odd durations shown in ms',
      { backoffBaseMs: 1500, backoffCapMs: 1250 },
      {},
      [{ field: 'backoff', message: 'base "1500ms" is longer than cap "1250ms"' }],
    ],
    // hostFailures: pause <= giveUp
    [
      'pause above giveUp, both its own',
      { hostFailurePause: 20, hostFailureGiveUp: 10 },
      {},
      [{ field: 'hostFailures', message: `pause 20 is more than giveUp 10: ${WHY_FAILURES}` }],
    ],
    [
      'own pause above the inherited giveUp',
      { hostFailurePause: 16 },
      defaults,
      [{ field: 'hostFailures', message: `pause 16 is more than giveUp 15 (from defaults): ${WHY_FAILURES}` }],
    ],
    [
      'own giveUp below the inherited pause',
      { hostFailureGiveUp: 3 },
      defaults,
      [{ field: 'hostFailures', message: `pause 5 (from defaults) is more than giveUp 3: ${WHY_FAILURES}` }],
    ],
    ['pause equal to giveUp', { hostFailurePause: 4, hostFailureGiveUp: 4 }, defaults, []],
    // statuses: never in both lists
    [
      'own retryStatuses meet the inherited throttleStatuses',
      { retryStatuses: [500, 503] },
      defaults,
      [{ field: 'retryStatuses', message: `503 is also in throttleStatuses (from defaults): ${WHY_STATUS}` }],
    ],
    [
      'own throttleStatuses meet the inherited retryStatuses',
      { throttleStatuses: [429, 500, 502] },
      defaults,
      [{ field: 'throttleStatuses', message: `500, 502 are also in retryStatuses (from defaults): ${WHY_STATUS}` }],
    ],
    [
      'both lists its own: reported at throttleStatuses',
      { retryStatuses: [503], throttleStatuses: [503] },
      defaults,
      [{ field: 'throttleStatuses', message: `503 is also in retryStatuses: ${WHY_STATUS}` }],
    ],
    ['503 moved from one list to the other', { retryStatuses: [500, 503], throttleStatuses: [429] }, defaults, []],
    ['an empty list never conflicts', { throttleStatuses: [] }, defaults, []],
    // several at once, in a stable order
    [
      'every rule broken',
      { backoffBaseMs: 2000, hostFailurePause: 99, retryStatuses: [429] },
      { ...defaults, backoffCapMs: 1000 },
      [
        { field: 'backoff', message: 'base "2s" is longer than cap "1s" (from defaults)' },
        { field: 'hostFailures', message: `pause 99 is more than giveUp 15 (from defaults): ${WHY_FAILURES}` },
        { field: 'retryStatuses', message: `429 is also in throttleStatuses (from defaults): ${WHY_STATUS}` },
      ],
    ],
    ['complete defaults checked on their own', defaults, {}, []],
  ])('%s', (_name, entry, fallback, conflicts) => {
    expect(policyConflicts(entry, fallback)).toEqual(conflicts);
  });
});
