import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { capRobotsText, parseRobots, productToken } from '../../src/robots/rules.js';
import { RobotsCache, type RobotsCacheOptions } from '../../src/robots/cache.js';
import type { RobotsResponse, RobotsState } from '../../src/robots/types.js';
import type { RobotsRecord } from '../../src/robots/types.js';
import { canonicalPath } from '../../src/robots/rules.js';
import { FakeClock } from '../support/fake-clock.js';

const UA = 'MyBot/2.1 (+http://x)';
const ORIGIN = 'http://site.test';
const ROBOTS = `${ORIGIN}/robots.txt`;
const DAY = 24 * 60 * 60 * 1000;
const MAX_BYTES = 512 * 1024;

function rules(text: string, userAgent = UA) {
  return parseRobots(ROBOTS, text, userAgent, 0, DAY);
}

function res(status: number, body: string | null = null, location: string | null = null, truncated = false): Omit<RobotsResponse, 'url'> {
  return { status, body, location, truncated };
}

type Answer = Omit<RobotsResponse, 'url'> | Error;

/** A scripted fetchOne: each URL answers from its queue (the last answer repeats); every call is recorded. */
function fakeFetch(routes: Record<string, Answer | Answer[]>) {
  const calls: string[] = [];
  const served = new Map<string, number>();
  const fetchOne = async (url: string): Promise<RobotsResponse> => {
    calls.push(url);
    const route = routes[url];
    if (route === undefined) return { url, ...res(404) };
    const list = Array.isArray(route) ? route : [route];
    const n = served.get(url) ?? 0;
    served.set(url, n + 1);
    const answer = list[Math.min(n, list.length - 1)];
    if (answer instanceof Error) throw answer;
    return { url, ...answer };
  };
  return { calls, fetchOne };
}

function netError(code: string): Error {
  return Object.assign(new Error(`connect failed (${code})`), { code });
}

function cache(clock: FakeClock, fetchOne: RobotsCacheOptions['fetchOne'], extra: Partial<RobotsCacheOptions> = {}) {
  return new RobotsCache({
    clock,
    userAgent: UA,
    maxBytes: MAX_BYTES,
    cacheTtlMs: DAY,
    unavailableRetries: 2,
    unavailableRetryDelayMs: 1000,
    fetchOne,
    ...extra,
  });
}

function expectKind<K extends RobotsState['kind']>(state: RobotsState | undefined, kind: K): Extract<RobotsState, { kind: K }> {
  expect(state?.kind).toBe(kind);
  return state as Extract<RobotsState, { kind: K }>;
}

describe('productToken', () => {
  it.each([
    ['MyBot/2.1 (+http://x)', 'mybot'],
    ['MyBot (+http://x)', 'mybot'],
    ['  Crawl-Extended/1.0', 'crawl-extended'],
    ['plain', 'plain'],
    ['', ''],
  ])('%j -> %j', (ua, token) => expect(productToken(ua)).toBe(token));
});

describe('parseRobots: group choice', () => {
  const file = ['User-agent: *', 'Disallow: /', '', 'User-agent: MyBot', 'Disallow: /private', 'Crawl-delay: 2'].join('\n');

  it('picks the group named by the product token, case-insensitively, and not the * group', () => {
    const r = rules(file);
    expect(r.isAllowed(`${ORIGIN}/public`)).toBe(true);
    expect(r.isAllowed(`${ORIGIN}/private/x`)).toBe(false);
    expect(r.crawlDelayMs).toBe(2000);
    expect(r.explain(`${ORIGIN}/private/x`)).toEqual({ allowed: false, rule: 'Disallow: /private', line: 5, group: 'User-agent: MyBot' });
    expect(r.explain(`${ORIGIN}/public`)).toEqual({ allowed: true, rule: null, line: null, group: 'User-agent: MyBot' });
  });

  it('falls back to the * group when no group names the token', () => {
    const r = rules(file, 'OtherBot/1.0');
    expect(r.isAllowed(`${ORIGIN}/public`)).toBe(false);
    expect(r.explain(`${ORIGIN}/public`)).toEqual({ allowed: false, rule: 'Disallow: /', line: 2, group: 'User-agent: *' });
    expect(r.crawlDelayMs).toBeNull();
  });

  it('matches the token exactly: a "crawl-extended" group does not apply to "crawl"', () => {
    const r = rules(['User-agent: crawl-extended', 'Disallow: /ext', 'User-agent: *', 'Disallow: /star'].join('\n'), 'crawl/1.0');
    expect(r.isAllowed('/ext')).toBe(true);
    expect(r.isAllowed('/star')).toBe(false);
    const ext = rules(['User-agent: crawl-extended', 'Disallow: /ext'].join('\n'), 'Crawl-Extended/0.1');
    expect(ext.isAllowed('/ext')).toBe(false);
  });

  it('reduces a user-agent line to its product token ("MyBot/1.0", "mybot images")', () => {
    expect(rules('User-agent: MyBot/1.0\nDisallow: /a').isAllowed('/a')).toBe(false);
    expect(rules('User-agent: mybot images\nDisallow: /a').isAllowed('/a')).toBe(false);
  });

  it('merges several groups for the same token (RFC 9309 §2.2.1)', () => {
    const r = rules(['User-agent: mybot', 'Disallow: /a', 'User-agent: *', 'Disallow: /', 'User-agent: MYBOT', 'Disallow: /b'].join('\n'));
    expect(r.isAllowed('/a')).toBe(false);
    expect(r.isAllowed('/b')).toBe(false);
    expect(r.isAllowed('/c')).toBe(true);
    expect(r.explain('/b')).toMatchObject({ line: 6, group: 'User-agent: MYBOT' });
  });

  it('lets several user-agent lines share one group, and a Sitemap line does not split them', () => {
    const r = rules(['User-agent: other', 'Sitemap: http://site.test/sitemap.xml', 'User-agent: mybot', 'Disallow: /shared'].join('\n'), 'other');
    expect(r.explain('/shared')).toEqual({ allowed: false, rule: 'Disallow: /shared', line: 4, group: 'User-agent: other' });
  });

  it('allows everything when no group applies', () => {
    const r = rules('User-agent: someone-else\nDisallow: /');
    expect(r.explain('/x')).toEqual({ allowed: true, rule: null, line: null, group: null });
  });

  it('reads an empty Disallow as "allow everything" for that group', () => {
    const r = rules('User-agent: mybot\nDisallow:\n\nUser-agent: *\nDisallow: /');
    expect(r.isAllowed('/anything')).toBe(true);
  });
});

describe('parseRobots: matching', () => {
  it('longest match wins; Allow wins a tie', () => {
    const r = rules(['User-agent: *', 'Disallow: /shop', 'Allow: /shop/public', 'Disallow: /tie', 'Allow: /tie'].join('\n'));
    expect(r.explain('/shop/cart')).toMatchObject({ allowed: false, line: 2 });
    expect(r.explain('/shop/public/x')).toMatchObject({ allowed: true, rule: 'Allow: /shop/public', line: 3 });
    expect(r.explain('/tie')).toMatchObject({ allowed: true, rule: 'Allow: /tie', line: 5 });
  });

  it('supports * and $', () => {
    const r = rules(['User-agent: *', 'Disallow: /*.pdf$', 'Disallow: /tmp*/cache', 'Allow: /$', 'Disallow: /'].join('\n'));
    expect(r.isAllowed('/files/a.pdf')).toBe(false);
    expect(r.isAllowed('/files/a.pdf?x=1')).toBe(false); // "/" still applies
    expect(r.explain('/files/a.pdf.html')).toMatchObject({ rule: 'Disallow: /' });
    expect(r.explain('/tmp123/cache/x')).toMatchObject({ rule: 'Disallow: /tmp*/cache' });
    expect(r.isAllowed('/')).toBe(true);
    expect(r.isAllowed('/index.html')).toBe(false);
  });

  it('always allows /robots.txt, even under Disallow: /', () => {
    const r = rules('User-agent: *\nDisallow: /');
    expect(r.explain(`${ORIGIN}/robots.txt`)).toEqual({ allowed: true, rule: 'Allow: /robots.txt (implicit)', line: null, group: null });
    expect(r.isAllowed(`${ORIGIN}/robots.txt?x=1`)).toBe(false);
    expect(r.isAllowed(`${ORIGIN}/`)).toBe(false);
  });

  it('normalises percent-encoding on both sides (RFC 9309 §2.2.2)', () => {
    const r = rules(
      [
        'User-agent: *',
        'Disallow: /%7Euser',
        'Disallow: /~other',
        'Disallow: /ツ',
        'Disallow: /%e3%83%84b',
        'Disallow: /a|b',
        "Disallow: /q?x='y'",
        'Disallow: /sp ace',
      ].join('\n'),
    );
    expect(r.isAllowed('http://site.test/~user/x')).toBe(false);
    expect(r.isAllowed('http://site.test/%7eother')).toBe(false);
    expect(r.explain('http://site.test/%E3%83%84')).toMatchObject({ allowed: false, line: 4 });
    expect(r.explain('http://site.test/ツb')).toMatchObject({ allowed: false, line: 5 }); // lower-case hex in the file
    expect(r.isAllowed('http://site.test/a|b')).toBe(false);
    expect(r.isAllowed("http://site.test/q?x='y'")).toBe(false);
    expect(r.isAllowed('http://site.test/sp%20ace')).toBe(false);
    expect(r.isAllowed('http://site.test/%7Fuser')).toBe(true);
  });

  it('keeps an encoded reserved character distinct from the literal one', () => {
    const r = rules('User-agent: *\nDisallow: /a%2Fb');
    expect(r.isAllowed('/a%2fb')).toBe(false);
    expect(r.isAllowed('/a/b')).toBe(true);
  });

  it('matches paths only, whatever origin the URL names', () => {
    const r = rules('User-agent: *\nDisallow: /x');
    expect(r.isAllowed('https://elsewhere.test:8443/x')).toBe(false);
    expect(r.isAllowed('/x')).toBe(false);
  });
});

describe('canonicalPath', () => {
  it.each([
    ['/%7e%41', '/~A'],
    ['/%2f%3f', '/%2F%3F'],
    ['/100%', '/100%25'],
    ['/%zz', '/%25zz'],
    ['/é', '/%C3%A9'],
    ["/it's", '/it%27s'],
    ['/*.pdf$', '/*.pdf$'],
  ])('%j -> %j', (input, output) => expect(canonicalPath(input)).toBe(output));
});

describe('parseRobots: Crawl-delay', () => {
  it.each([
    ['10', 10_000],
    ['0.5', 500],
    ['.25', 250],
    ['0', 0],
    ['', null],
    ['-1', null],
    ['0x10', null],
    ['1e3', null],
    ['soon', null],
  ])('Crawl-delay: %j -> %j', (value, ms) => {
    expect(rules(`User-agent: mybot\nCrawl-delay: ${value}\nDisallow: /x`).crawlDelayMs).toBe(ms);
  });

  it('takes the largest valid value of merged groups and ignores other groups', () => {
    const r = rules(
      [
        'User-agent: *',
        'Crawl-delay: 30',
        'User-agent: mybot',
        'Crawl-delay: 1',
        'User-agent: other',
        'Disallow: /',
        'User-agent: mybot',
        'Crawl-delay: 3',
      ].join('\n'),
    );
    expect(r.crawlDelayMs).toBe(3000);
  });

  it('lets a Crawl-delay-only group select the group (its rules: none)', () => {
    const r = rules('User-agent: *\nDisallow: /\n\nUser-agent: mybot\nCrawl-delay: 4');
    expect(r.crawlDelayMs).toBe(4000);
    expect(r.isAllowed('/anything')).toBe(true);
  });
});

describe('parseRobots: malformed input never throws', () => {
  it.each([
    ['binary noise', '\u0000\u0001\uFFFD\uD800:::\n\r\r\n:'],
    ['html', '<!doctype html><html><body>Not found: sorry</body></html>'],
    ['rules before any user-agent', 'Disallow: /\nAllow: /x'],
    ['keys without values', 'User-agent:\nDisallow\nAllow:\n:'],
    ['lone surrogate in a pattern', 'User-agent: *\nDisallow: /\uD800x'],
  ])('%s', (_name, text) => {
    const r = rules(text);
    expect(typeof r.isAllowed('/x')).toBe('boolean');
  });

  it('reads the first line despite a byte-order mark', () => {
    expect(rules('\uFEFFUser-agent: *\nDisallow: /').isAllowed('/x')).toBe(false);
  });

  it('refuses a URL it cannot parse', () => {
    expect(rules('').explain('http://[')).toEqual({ allowed: false, rule: null, line: null, group: null });
  });

  it('honours CR-only and CRLF line endings with the right line numbers', () => {
    expect(rules('User-agent: *\r\nAllow: /a\rDisallow: /b').explain('/b')).toMatchObject({ allowed: false, line: 3 });
  });
});

describe('capRobotsText', () => {
  it('keeps text within the cap untouched', () => {
    expect(capRobotsText('a\nb', 3)).toEqual({ text: 'a\nb', truncated: false });
  });

  it('drops a line cut by the cap', () => {
    expect(capRobotsText('Allow: /a\nAllow: /public/x\n', 12)).toEqual({ text: 'Allow: /a\n', truncated: true });
  });

  it('keeps the last line when the cap falls right before its line break', () => {
    expect(capRobotsText('Allow: /a\nAllow: /b\n', 9)).toEqual({ text: 'Allow: /a', truncated: true });
  });

  it('counts bytes, not characters', () => {
    expect(capRobotsText('ä\nbb', 3)).toEqual({ text: 'ä\n', truncated: true });
    expect(capRobotsText('éééé', 3).text).toBe('');
  });

  it('drops the last line of text that was already cut short upstream', () => {
    expect(capRobotsText('a\nAllow: /p', 100, true)).toEqual({ text: 'a\n', truncated: true });
  });
});

describe('RobotsCache', () => {
  it('shares one fetch among concurrent loads', async () => {
    const clock = new FakeClock();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const c = cache(clock, async (url) => {
      calls++;
      await gate;
      return { url, ...res(200, 'User-agent: *\nDisallow: /private') };
    });
    const loads = Array.from({ length: 10 }, () => c.load(ORIGIN));
    expect(c.peek(ORIGIN)).toBeUndefined();
    release();
    const states = await Promise.all(loads);
    expect(calls).toBe(1);
    expect(new Set(states).size).toBe(1);
    const state = expectKind(states[0], 'rules');
    expect(state.isAllowed(`${ORIGIN}/private/1`)).toBe(false);
    expect(c.peek(ORIGIN)).toBe(state);
    expect(await c.load(ORIGIN)).toBe(state);
    expect(calls).toBe(1);
  });

  it('parses a 200 and caches it for the TTL, then refetches', async () => {
    const clock = new FakeClock();
    const { calls, fetchOne } = fakeFetch({
      [ROBOTS]: [res(200, 'User-agent: mybot\nDisallow: /a\nCrawl-delay: 1.5'), res(200, 'User-agent: mybot\nDisallow: /b')],
    });
    const c = cache(clock, fetchOne, { cacheTtlMs: 60_000 });
    const first = expectKind(await c.load(ORIGIN), 'rules');
    expect(first).toMatchObject({ fetchedAt: clock.now(), expiresAt: clock.now() + 60_000, source: ROBOTS, crawlDelayMs: 1500 });
    expect(first.explain(`${ORIGIN}/a`)).toEqual({ allowed: false, rule: 'Disallow: /a', line: 2, group: 'User-agent: mybot' });
    clock.advance(59_999);
    expect(c.peek(ORIGIN)).toBe(first);
    clock.advance(1);
    expect(c.peek(ORIGIN)).toBeUndefined();
    const second = expectKind(await c.load(ORIGIN), 'rules');
    expect(calls).toEqual([ROBOTS, ROBOTS]);
    expect(second.isAllowed(`${ORIGIN}/a`)).toBe(true);
    expect(second.isAllowed(`${ORIGIN}/b`)).toBe(false);
  });

  it.each([404, 401, 403, 410])('reads %i as allow-all, cached for the TTL', async (status) => {
    const clock = new FakeClock();
    const { calls, fetchOne } = fakeFetch({ [ROBOTS]: res(status) });
    const c = cache(clock, fetchOne);
    const state = await c.load(ORIGIN);
    expect(state).toEqual({ kind: 'allow-all', fetchedAt: clock.now(), expiresAt: clock.now() + DAY, reason: `robots.txt answered ${status}` });
    clock.advance(DAY - 1);
    await c.load(ORIGIN);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['500', res(500), 'robots.txt answered 500'],
    ['503', res(503), 'robots.txt answered 503'],
    ['429', res(429), 'robots.txt answered 429 (treated as unreachable)'],
    ['a rejected fetch', netError('CONNECTION_RESET'), 'robots.txt could not be fetched: CONNECTION_RESET'],
    ['a rejection without a code', new Error('boom'), 'robots.txt could not be fetched: FETCH_FAILED'],
  ])('reads %s as unavailable, retries after the delay (not before), doubling, then gives up', async (_name, answer, reason) => {
    const clock = new FakeClock();
    const { calls, fetchOne } = fakeFetch({ [ROBOTS]: answer });
    const c = cache(clock, fetchOne, { unavailableRetries: 2, unavailableRetryDelayMs: 1000 });
    const t0 = clock.now();
    expect(await c.load(ORIGIN)).toEqual({ kind: 'unavailable', reason, retryAt: t0 + 1000, attempts: 1 });

    clock.advance(999);
    expect(c.peek(ORIGIN)).toMatchObject({ kind: 'unavailable', attempts: 1 });
    await c.load(ORIGIN);
    expect(calls).toHaveLength(1);

    clock.advance(1);
    expect(c.peek(ORIGIN)).toBeUndefined();
    expect(await c.load(ORIGIN)).toEqual({ kind: 'unavailable', reason, retryAt: t0 + 1000 + 2000, attempts: 2 });
    expect(calls).toHaveLength(2);

    clock.advance(1999);
    await c.load(ORIGIN);
    expect(calls).toHaveLength(2);
    clock.advance(1);
    const last = await c.load(ORIGIN);
    expect(last).toEqual({ kind: 'unavailable', reason: `${reason}; gave up after 3 attempts`, retryAt: null, attempts: 3 });
    expect(calls).toHaveLength(3);

    clock.advance(10 * DAY);
    expect(c.peek(ORIGIN)).toBe(last);
    await c.load(ORIGIN);
    expect(calls).toHaveLength(3);
  });

  it.each(['CONNECTION_REFUSED', 'DNS_FAILURE', 'CONNECT_TIMEOUT', 'TLS_ERROR'])(
    'gives a host it cannot connect to (%s) up in 3 s, not 15 s, keeping the error for its page records',
    async (code) => {
      const clock = new FakeClock();
      const { calls, fetchOne } = fakeFetch({ [ROBOTS]: netError(code) });
      // The defaults: 2 retries, 5 s apart and doubling, for a 5xx.
      const c = cache(clock, fetchOne, { unavailableRetries: 2, unavailableRetryDelayMs: 5000 });
      const t0 = clock.now();
      const connectError = { code, message: `connect failed (${code})` };
      expect(await c.load(ORIGIN)).toEqual({
        kind: 'unavailable',
        reason: `robots.txt could not be fetched: ${code}`,
        retryAt: t0 + 1000,
        attempts: 1,
        connectError,
      });
      clock.advance(1000);
      expect(await c.load(ORIGIN)).toMatchObject({ retryAt: t0 + 3000, attempts: 2 });
      clock.advance(2000);
      expect(await c.load(ORIGIN)).toMatchObject({ retryAt: null, attempts: 3, connectError });
      expect(calls).toHaveLength(3);
    },
  );

  it('gives up at the first failure when no retries are allowed', async () => {
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(502) });
    const c = cache(new FakeClock(), fetchOne, { unavailableRetries: 0 });
    expect(await c.load(ORIGIN)).toEqual({ kind: 'unavailable', reason: 'robots.txt answered 502', retryAt: null, attempts: 1 });
  });

  it('forgets past failures once robots.txt answers', async () => {
    const clock = new FakeClock();
    const { fetchOne } = fakeFetch({ [ROBOTS]: [res(503), res(200, 'User-agent: *\nDisallow: /x'), res(503)] });
    const c = cache(clock, fetchOne, { cacheTtlMs: 10_000 });
    expectKind(await c.load(ORIGIN), 'unavailable');
    clock.advance(1000);
    expectKind(await c.load(ORIGIN), 'rules');
    clock.advance(10_000);
    expect(await c.load(ORIGIN)).toMatchObject({ kind: 'unavailable', attempts: 1, retryAt: clock.now() + 1000 });
  });

  it('follows a redirect with a relative Location and parses the target', async () => {
    const clock = new FakeClock();
    const { calls, fetchOne } = fakeFetch({
      [ROBOTS]: res(301, null, 'https://www.site.test/robots.txt'),
      'https://www.site.test/robots.txt': res(302, null, '../files/robots-live.txt'),
      'https://www.site.test/files/robots-live.txt': res(200, 'User-agent: *\nDisallow: /nope'),
    });
    const state = expectKind(await cache(clock, fetchOne).load(ORIGIN), 'rules');
    expect(calls).toEqual([ROBOTS, 'https://www.site.test/robots.txt', 'https://www.site.test/files/robots-live.txt']);
    expect(state.source).toBe('https://www.site.test/files/robots-live.txt');
    expect(state.isAllowed(`${ORIGIN}/nope`)).toBe(false);
  });

  function chain(redirects: number): Record<string, Answer> {
    const routes: Record<string, Answer> = {};
    for (let i = 0; i < redirects; i++) routes[i === 0 ? ROBOTS : `${ORIGIN}/r${i}`] = res(301, null, `/r${i + 1}`);
    routes[`${ORIGIN}/r${redirects}`] = res(200, 'User-agent: *\nDisallow: /');
    return routes;
  }

  it('follows five redirects', async () => {
    const { calls, fetchOne } = fakeFetch(chain(5));
    const state = expectKind(await cache(new FakeClock(), fetchOne).load(ORIGIN), 'rules');
    expect(calls).toHaveLength(6);
    expect(state.source).toBe(`${ORIGIN}/r5`);
  });

  it('treats a sixth redirect as "no robots.txt" (allow-all, RFC 9309 §2.3.1.2) without requesting it', async () => {
    const { calls, fetchOne } = fakeFetch(chain(6));
    const state = await cache(new FakeClock(), fetchOne).load(ORIGIN);
    expect(state).toMatchObject({ kind: 'allow-all', reason: 'robots.txt redirected more than 5 times: read as unavailable, all allowed (RFC 9309 §2.3.1.2)' });
    expect(calls).toHaveLength(6);
    expect(calls).not.toContain(`${ORIGIN}/r6`);
  });

  it.each([
    ['no Location', null],
    ['a non-http Location', 'ftp://site.test/robots.txt'],
    ['an unparsable Location', 'http://['],
  ])('treats a redirect with %s as allow-all', async (_name, location) => {
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(302, null, location) });
    expect(await cache(new FakeClock(), fetchOne).load(ORIGIN)).toMatchObject({
      kind: 'allow-all',
      reason: 'robots.txt answered 302 without a usable Location',
    });
  });

  it('reports where a redirected fetch failed', async () => {
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(301, null, 'http://cdn.test/r.txt'), 'http://cdn.test/r.txt': netError('HEADERS_TIMEOUT') });
    expect(await cache(new FakeClock(), fetchOne).load(ORIGIN)).toMatchObject({
      kind: 'unavailable',
      reason: 'robots.txt (via redirect to http://cdn.test/r.txt) could not be fetched: HEADERS_TIMEOUT',
    });
  });

  it('ignores rules past maxBytes but uses what was read', async () => {
    const head = 'User-agent: *\nDisallow: /early\n';
    const filler = `# ${'x'.repeat(MAX_BYTES)}\n`;
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(200, `${head}${filler}Disallow: /late\n`) });
    const state = expectKind(await cache(new FakeClock(), fetchOne).load(ORIGIN), 'rules');
    expect(state.isAllowed(`${ORIGIN}/early`)).toBe(false);
    expect(state.isAllowed(`${ORIGIN}/late`)).toBe(true);
    expect(state.truncatedAt).toBe(MAX_BYTES);
  });

  it('keeps where a file was cut through a records store, so a resumed crawl or another worker says it too', async () => {
    const kept = new Map<string, RobotsRecord>();
    const records = { getRobots: (o: string) => kept.get(o), putRobots: (o: string, r: RobotsRecord) => void kept.set(o, r) };
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(200, `User-agent: *\n# ${'x'.repeat(MAX_BYTES)}\nDisallow: /late\n`) });
    expect(expectKind(await cache(new FakeClock(), fetchOne, { records }).load(ORIGIN), 'rules').truncatedAt).toBe(MAX_BYTES);
    const again = fakeFetch({});
    const restored = expectKind(await cache(new FakeClock(), again.fetchOne, { records }).load(ORIGIN), 'rules');
    expect(again.calls).toEqual([]);
    expect(restored.truncatedAt).toBe(MAX_BYTES);
    const small = fakeFetch({ [ROBOTS]: res(200, 'User-agent: *\nDisallow: /a\n') });
    expect(expectKind(await cache(new FakeClock(), small.fetchOne).load(ORIGIN), 'rules').truncatedAt).toBeUndefined();
  });

  it('drops the last, possibly partial, line of a body the fetcher truncated', async () => {
    const { fetchOne } = fakeFetch({ [ROBOTS]: res(200, 'User-agent: *\nDisallow: /a\nAllow: /', null, true) });
    const state = expectKind(await cache(new FakeClock(), fetchOne).load(ORIGIN), 'rules');
    expect(state.isAllowed(`${ORIGIN}/a`)).toBe(false);
    expect(state.explain(`${ORIGIN}/b`).rule).toBeNull();
  });

  it('keys by origin: default port, case and path do not matter', async () => {
    const { calls, fetchOne } = fakeFetch({ [ROBOTS]: res(404) });
    const c = cache(new FakeClock(), fetchOne);
    await c.load('http://SITE.test:80');
    expect(c.peek('http://site.test/some/page?q=1')).toMatchObject({ kind: 'allow-all' });
    await c.load('http://site.test');
    expect(calls).toEqual([ROBOTS]);
    expect(c.peek('http://site.test:8080')).toBeUndefined();
    expect(c.size()).toBe(1);
  });

  it('resolves, never rejects, for an origin it cannot fetch', async () => {
    const { calls, fetchOne } = fakeFetch({});
    const c = cache(new FakeClock(), fetchOne);
    expect(await c.load('mailto:x@y')).toMatchObject({ kind: 'unavailable', retryAt: null });
    expect(await c.load('not a url')).toMatchObject({ kind: 'unavailable', retryAt: null });
    expect(calls).toEqual([]);
    expect(c.size()).toBe(0);
  });

  it('counts cached origins', async () => {
    const { fetchOne } = fakeFetch({ 'http://b.test/robots.txt': res(503) });
    const c = cache(new FakeClock(), fetchOne);
    expect(c.size()).toBe(0);
    await Promise.all([c.load('http://a.test'), c.load('http://b.test'), c.load('https://a.test')]);
    expect(c.size()).toBe(3);
  });

  it.each([
    [{ userAgent: ' /1.0' }, /`userAgent`/],
    [{ maxBytes: 1000 }, /`maxBytes` to be an integer of at least 512000/],
    [{ cacheTtlMs: DAY + 1 }, /`cacheTtlMs`/],
    [{ cacheTtlMs: 0 }, /`cacheTtlMs`/],
    [{ unavailableRetries: -1 }, /`unavailableRetries`/],
    [{ unavailableRetries: 1.5 }, /`unavailableRetries`/],
    [{ unavailableRetryDelayMs: Number.NaN }, /`unavailableRetryDelayMs`/],
  ])('rejects bad options %j', (bad, message) => {
    expect(() => cache(new FakeClock(), fakeFetch({}).fetchOne, bad as Partial<RobotsCacheOptions>)).toThrow(message);
  });
});

describe('RobotsCache over real HTTP', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('fetches, follows a redirect and applies the rules', async () => {
    const hits: string[] = [];
    server = createServer((req, reply) => {
      hits.push(req.url ?? '');
      if (req.url === '/robots.txt') reply.writeHead(301, { location: '/real-robots.txt' }).end();
      else if (req.url === '/real-robots.txt') reply.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: mybot\nDisallow: /admin\n');
      else reply.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const fetchOne = async (url: string): Promise<RobotsResponse> => {
      const r = await request(url);
      const body = await r.body.text();
      const location = r.headers.location;
      return { url, status: r.statusCode, location: typeof location === 'string' ? location : null, body, truncated: false };
    };
    const c = new RobotsCache({
      clock: new FakeClock(),
      userAgent: UA,
      maxBytes: MAX_BYTES,
      cacheTtlMs: DAY,
      unavailableRetries: 1,
      unavailableRetryDelayMs: 1000,
      fetchOne,
    });
    const state = expectKind(await c.load(origin), 'rules');
    expect(hits).toEqual(['/robots.txt', '/real-robots.txt']);
    expect(state.isAllowed(`${origin}/admin/users`)).toBe(false);
    expect(state.isAllowed(`${origin}/home`)).toBe(true);
  });
});
