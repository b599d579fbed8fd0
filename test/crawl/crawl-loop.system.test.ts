/**
 * The crawl loop under fake time: a real Crawler against a scripted web
 * (test/support/scripted-fetcher.ts) on a FakeClock, driven to completion by
 * jumping from timer to timer. Everything the crawler decides about WHEN to
 * send is measured from the server side, as in crawl.test.ts, but exactly:
 * no scheduling noise, so a bound can be the documented one, and an instant
 * can be checked to the millisecond.
 *
 * Documented constants the assertions use (docs/politeness.md "Politeness, exactly" and
 * "When the server pushes back"): gaps carry a 1% + 3 ms margin; a pause a
 * server announces (Retry-After, an exhausted RateLimit budget) carries a
 * 10 ms margin for clocks ticking apart.
 */
import { describe, expect, it } from 'vitest';
import { duplicates, maxInWindow, minGap } from '../../fixtures/web.js';
import { FakeClock } from '../support/fake-clock.js';
import { EPS, fakeCrawl, pathOf, type FakeCrawlRun } from '../support/fake-crawl.js';
import { createScriptedFetcher, httpDate, type ScriptedLogEntry, type ScriptedResponse, type ServerRequest } from '../support/scripted-fetcher.js';
import { seededRandom } from '../support/seeded-random.js';
import { FetchError } from '../../src/fetch/fetch-error.js';
import { gapWithMargin } from '../../src/politeness/host-limiter.js';

/** The gap a host with `intervalMs` keeps between starts: the interval plus its margin (host-limiter.ts: 1% + 3 ms, the 3 ms at most a fifth of the interval). */
const gap = (intervalMs: number) => gapWithMargin(intervalMs);
/** Margin added to a server-announced pause. */
const PAUSE_MARGIN_MS = 10;

/** Consecutive differences of sorted times. */
function gaps(times: readonly number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((t, i) => t - sorted[i]);
}

/** The first arrival at `host` after `t` (exclusive), or undefined. */
function firstArrivalAfter(run: FakeCrawlRun, host: string, t: number): ScriptedLogEntry | undefined {
  return run.fetcher.requests(host).find((r) => r.at > t);
}

/** A page linking to /p/0 … /p/{n-1}. */
const linksTo = (n: number) => Array.from({ length: n }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(' ');

describe('test support: the clock runner and the scripted fetcher', () => {
  it('runUntilDone jumps from timer to timer and lets continuations run between timers due at the same instant', async () => {
    const clock = new FakeClock(0);
    const order: string[] = [];
    const first = new Promise<void>((resolve) => clock.setTimer(resolve, 5_000)).then(() => order.push(`first's continuation @${clock.now()}`));
    clock.setTimer(() => order.push(`second timer @${clock.now()}`), 5_000);
    const last = new Promise<void>((resolve) => clock.setTimer(resolve, 3_600_000)).then(() => 'done');
    await expect(clock.runUntilDone(Promise.all([first, last]).then(([, value]) => value))).resolves.toBe('done');
    // Node runs microtasks between timer callbacks; firing both timers in one go would invert these two.
    expect(order).toEqual([`first's continuation @5000`, 'second timer @5000']);
    expect(clock.now()).toBe(3_600_000);
  });

  it('runUntilDone fails a stall, a run past its simulated-time bound and one past its step bound instead of hanging', async () => {
    const clock = new FakeClock(0);
    await expect(clock.runUntilDone(new Promise(() => {}), { describe: () => 'nothing here' })).rejects.toThrow(
      /^stalled: nothing scheduled and not done, after 0 ms .*nothing here$/,
    );

    const ticking = new FakeClock(0);
    const tick = () => ticking.setTimer(tick, 1_000);
    tick();
    await expect(ticking.runUntilDone(new Promise(() => {}), { maxMs: 60_000 })).rejects.toThrow(/not done within 60000 ms of simulated time/);
    expect(ticking.now()).toBe(60_000);

    const busy = new FakeClock(0);
    const spin = () => busy.setTimer(spin, 0);
    spin();
    await expect(busy.runUntilDone(new Promise(() => {}), { maxSteps: 500 })).rejects.toThrow(/not done within 500 timers/);
  });

  it('runUntilDone passes a rejection through', async () => {
    const clock = new FakeClock(0);
    const failing = new Promise((_, reject) => clock.setTimer(() => reject(new Error('boom')), 10));
    await expect(clock.runUntilDone(failing)).rejects.toThrow('boom');
    expect(clock.now()).toBe(10);
  });

  const timeouts = { connectMs: 1_000, headersMs: 2_000, bodyMs: 500 };

  it('times connect, headers and body on the clock and logs the exchange on both sides', async () => {
    const clock = new FakeClock(1_000);
    const fetcher = createScriptedFetcher({
      clock,
      timeouts,
      maxBodyBytes: 1_000,
      serverClockSkewMs: -61_500,
      sites: { 'a.test': { connectMs: 5, pages: { '/x': { latencyMs: 20, bodyMs: 7, body: '<title>x</title>', headers: { 'x-extra': '1' } } } } },
    });
    const seen: string[] = [];
    const done = fetcher.fetch('http://a.test/x', {
      read: 'html',
      onDispatched: (at) => seen.push(`dispatched@${at}`),
      onResponse: (at) => seen.push(`response@${at}`),
    });
    const res = await clock.runUntilDone(done);
    expect(seen).toEqual(['dispatched@1005', 'response@1025']);
    expect(clock.now()).toBe(1_032);
    expect(res).toMatchObject({ status: 200, contentType: 'text/html', body: '<title>x</title>', bytes: 16, elapsedMs: 32, truncated: false, location: null });
    expect(res.headers).toMatchObject({ 'x-extra': '1', date: httpDate(clock.wallNow() - 61_500) });
    const [entry] = fetcher.requests('a.test');
    expect(entry).toMatchObject({ host: 'a.test', path: '/x', at: 1_005, inFlight: 1, status: 200, respondedAt: 1_025, endedAt: 1_032 });
    expect(fetcher.attempts()).toEqual([expect.objectContaining({ startedAt: 1_000, dispatchedAt: 1_005, endedAt: 1_032, outcome: 'ok' })]);
  });

  it('fails like a wire: refused before arrival, hanging after the headers timeout, slow bodies after the body timeout, and aborts at once', async () => {
    const clock = new FakeClock(0);
    const fetcher = createScriptedFetcher({
      clock,
      timeouts,
      maxBodyBytes: 1_000,
      sites: {
        'down.test': { connectFail: 'CONNECTION_REFUSED' },
        'hang.test': { pages: { '/': { hang: true }, '/drip': { bodyMs: 501 }, '/reset': { latencyMs: 30, fail: 'CONNECTION_RESET' } } },
      },
    });
    const failure = async (p: Promise<unknown>) => {
      const err = await clock.runUntilDone(
        p.then(
          () => null,
          (e: unknown) => e,
        ),
      );
      expect(err).toBeInstanceOf(FetchError);
      return { code: (err as FetchError).code, at: clock.now() };
    };
    expect(await failure(fetcher.fetch('http://down.test/', { read: 'html' }))).toEqual({ code: 'CONNECTION_REFUSED', at: 0 });
    expect(fetcher.count('down.test')).toBe(0);
    expect(await failure(fetcher.fetch('http://nowhere.test/', { read: 'html' }))).toEqual({ code: 'DNS_FAILURE', at: 0 });
    expect(await failure(fetcher.fetch('http://hang.test/', { read: 'html' }))).toEqual({ code: 'HEADERS_TIMEOUT', at: 2_000 });
    expect(await failure(fetcher.fetch('http://hang.test/', { read: 'text', timeoutMs: 300 }))).toEqual({ code: 'HEADERS_TIMEOUT', at: 2_300 });
    expect(await failure(fetcher.fetch('http://hang.test/drip', { read: 'html' }))).toEqual({ code: 'BODY_TIMEOUT', at: 2_300 + 1 + 500 });
    expect(await failure(fetcher.fetch('http://hang.test/reset', { read: 'html' }))).toEqual({ code: 'CONNECTION_RESET', at: 2_801 + 30 });

    const controller = new AbortController();
    clock.setTimer(() => controller.abort(), 250);
    expect(await failure(fetcher.fetch('http://hang.test/', { read: 'html', signal: controller.signal }))).toEqual({ code: 'ABORTED', at: 2_831 + 250 });
    expect(await failure(fetcher.fetch('http://hang.test/', { read: 'html', signal: controller.signal }))).toEqual({ code: 'ABORTED', at: 3_081 });
    const hangLog = fetcher.requests('hang.test');
    expect(hangLog.map((r) => [r.path, r.status, r.endedAt! - r.at])).toEqual([
      ['/', null, 2_000],
      ['/', null, 300],
      ['/drip', 200, 501],
      ['/reset', null, 30],
      ['/', null, 250],
    ]);
    expect(fetcher.pending).toBe(0);
    expect(fetcher.attempts().map((a) => a.outcome)).toEqual([
      'CONNECTION_REFUSED',
      'DNS_FAILURE',
      'HEADERS_TIMEOUT',
      'HEADERS_TIMEOUT',
      'BODY_TIMEOUT',
      'CONNECTION_RESET',
      'ABORTED',
      'ABORTED',
    ]);
  });

  it('routes limit, robots, handler, pages, generate and 404 like fixtures/web.js, and counts in-flight requests at arrival', async () => {
    const clock = new FakeClock(0);
    const fetcher = createScriptedFetcher({
      clock,
      timeouts,
      maxBodyBytes: 1_000,
      sites: {
        'a.test': {
          latencyMs: 100,
          robots: 'User-agent: *\nDisallow: /no\n',
          limit: { perSecond: 3, status: 429, retryAfter: (req) => `${req.nth}` },
          handler: (req, next) => {
            if (req.path === '/dyn') return { status: 201, body: `at ${req.at}` };
            const page = next();
            return { ...page, headers: { ...page.headers, 'x-seen': 'yes' } };
          },
          pages: { '/pdf': { headers: { 'content-type': 'application/pdf' }, body: '%PDF' } },
          generate: { pages: 2, linksPerPage: 1 },
        },
      },
    });
    const get = (path: string, read: 'html' | 'text' = 'html') => fetcher.fetch(`http://a.test${path}`, { read });
    const all = await clock.runUntilDone(Promise.all([get('/robots.txt', 'text'), get('/dyn'), get('/p/1'), get('/missing'), get('/pdf')]));
    expect(all.map((r) => r.status)).toEqual([200, 201, 200, 429, 429]);
    expect(all[0].body).toBe('User-agent: *\nDisallow: /no\n');
    expect(all[1].body).toBe('at 0');
    expect(all[2].body).toContain('<title>a.test page 1</title>');
    expect(all[2].headers['x-seen']).toBe('yes');
    expect(all[3].headers['retry-after']).toBe('1');
    expect(fetcher.requests('a.test').map((r) => r.inFlight)).toEqual([1, 2, 3, 4, 5]);
    expect(fetcher.maxInFlight('a.test')).toBe(5);
    clock.advance(1_000);
    const later = await clock.runUntilDone(Promise.all([get('/missing'), get('/pdf'), get('/dyn'), get('/missing')]));
    expect(later.map((r) => r.status)).toEqual([404, 200, 201, 429]); // the window's budget of 3 is used again
    expect(later[1]).toMatchObject({ contentType: 'application/pdf', body: null, bytes: 4 });
    expect(later[3].headers['retry-after']).toBe('3'); // the third arrival at /missing
  });

  it('replays a crawl exactly: the same script and seed give the same requests at the same times', async () => {
    const once = () => {
      const connect = seededRandom(7);
      return fakeCrawl({
        sites: { 'a.test': { generate: { pages: 30, linksPerPage: 4 }, limit: { perSecond: 5, status: 429 }, connectMs: () => Math.floor(connect() * 20) } },
        seeds: ['http://a.test/'],
        config: { domains: { 'a.test': { rate: '20/s', concurrency: 3, backoff: { base: '300ms', cap: '2s' } } } },
        seed: 42,
      });
    };
    const [a, b] = [await once(), await once()];
    const trace = (run: FakeCrawlRun) => run.fetcher.requests().map((r) => `${r.at - run.startedAt} ${r.path} ${r.status}`);
    expect(trace(a).length).toBeGreaterThan(31);
    expect(trace(b)).toEqual(trace(a));
    expect(b.records).toEqual(a.records);
  });
});

/**
 * A server-side announcer of pauses, as in server-feedback.test.ts, on the
 * scripted server's clocks: every announced window is [arrival, end] on the
 * monotonic scale, `end` being when the server's own clock reaches what it
 * announced.
 */
function announcer(form: 'seconds' | 'date' | 'none') {
  const windows: Array<[number, number]> = [];
  const make = (req: ServerRequest) => {
    if (form === 'seconds') {
      windows.push([req.at, req.at + 1000]);
      return '1';
    }
    // HTTP-dates have 1 s resolution: announce the next whole second at least 1 s away on the server's clock.
    const target = Math.ceil((req.wall + 1000) / 1000) * 1000;
    windows.push([req.at, req.at + (target - req.wall)]);
    return httpDate(target);
  };
  return { windows, retryAfter: form === 'none' ? undefined : make };
}

/** When the crawler may next start a request after this throttling answer: its Retry-After from receipt, measured against its Date. */
function announcedPauseEnd(e: ScriptedLogEntry): number {
  const value = e.responseHeaders!['retry-after'];
  const delay = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.parse(e.responseHeaders!.date);
  return e.endedAt! + delay + PAUSE_MARGIN_MS;
}

describe('429/503 and Retry-After', () => {
  // The server's clock runs 90.5 s behind ours: an HTTP-date Retry-After read
  // against our own clock instead of the response's Date would be long past,
  // and the crawler would come straight back.
  const SKEW = -90_500;
  const cases: Array<[429 | 503, 'seconds' | 'date' | 'none']> = [
    [429, 'seconds'],
    [429, 'date'],
    [503, 'seconds'],
    [429, 'none'],
  ];
  for (const [status, form] of cases) {
    it(`${status} with ${form === 'none' ? 'no Retry-After' : `Retry-After as ${form}`}: every page ends 200, nothing arrives before a pause ends, few throttles`, async () => {
      const a = announcer(form);
      const run = await fakeCrawl({
        sites: {
          'strict.test': { generate: { pages: 20, linksPerPage: 3 }, limit: { perSecond: 4, status, ...(a.retryAfter ? { retryAfter: a.retryAfter } : {}) } },
        },
        seeds: ['http://strict.test/'],
        config: { domains: { 'strict.test': { rate: '20/s', concurrency: 2, backoff: { base: '500ms', cap: '4s' } } } },
        serverClockSkewMs: SKEW,
      });
      expect(run.pages).toHaveLength(21);
      expect(run.pages.every((p) => p.status === 200)).toBe(true);
      const log = run.fetcher.requests('strict.test');
      const refusals = log.filter((r) => r.status === status);
      expect(refusals.length).toBeGreaterThan(0); // the server really was stricter than the config
      expect(refusals.length).toBeLessThanOrEqual(12); // the rate converged instead of bouncing
      expect(log.filter((r) => a.windows.some(([from, until]) => r.at > from && r.at < until))).toEqual([]);
      for (const refused of refusals) {
        // Exact: nothing starts before the announced pause (plus its margin) or, without one, the least backoff (base / 2).
        const earliest = form === 'none' ? refused.endedAt! + 500 / 2 : announcedPauseEnd(refused);
        const next = firstArrivalAfter(run, 'strict.test', refused.endedAt!)!;
        expect(next.at).toBeGreaterThanOrEqual(earliest - EPS);
      }
      expect(run.stats.perHost.get('strict.test')!.rate).toMatch(/^20\/s, throttled \d+×/);
      expect(duplicates(log.filter((r) => r.status === 200))).toEqual([]);
    });
  }

  it('gives a URL an error record once its throttle budget is spent, each retry waiting out Retry-After: 0 plus the margin', async () => {
    const run = await fakeCrawl({
      sites: { 'wall.test': { latencyMs: 30, pages: { '/': { status: 429, headers: { 'retry-after': '0' } } } } },
      seeds: ['http://wall.test/'],
      config: { domains: { 'wall.test': { rate: '50/s', throttleRetries: 3, adaptive: false } } },
    });
    expect(run.pages).toHaveLength(1);
    expect(run.pages[0]).toMatchObject({ status: 429, attempts: 4, error: { code: 'THROTTLED' } });
    const tries = run.fetcher.requests('wall.test').filter((r) => r.path === '/');
    expect(tries).toHaveLength(4);
    // Receipt + 0 s + 10 ms (the 50/s gap, 23.2 ms from the previous start, is shorter than the 30 ms answer + 10 ms).
    for (let i = 1; i < tries.length; i++) expect(tries[i].at).toBeCloseTo(tries[i - 1].endedAt! + PAUSE_MARGIN_MS, 6);
  });

  it('paces a host to its announced RateLimit budget instead of waiting for a 429', async () => {
    // A fixed window of 5 requests per 2 s on the server's clock, announced on every response.
    let windowStart = -Infinity;
    let used = 0;
    const run = await fakeCrawl({
      sites: {
        'budget.test': {
          generate: { pages: 14, linksPerPage: 2 },
          handler: (req, next): ScriptedResponse => {
            if (req.wall - windowStart >= 2000) {
              windowStart = req.wall;
              used = 0;
            }
            const reset = String(Math.max(1, Math.ceil((windowStart + 2000 - req.wall) / 1000)));
            if (used >= 5) return { status: 429, headers: { 'retry-after': reset } };
            used++;
            const page = next();
            return { ...page, headers: { ...page.headers, 'ratelimit-limit': '5', 'ratelimit-remaining': String(5 - used), 'ratelimit-reset': reset } };
          },
        },
      },
      seeds: ['http://budget.test/'],
      config: { domains: { 'budget.test': { rate: '100/s', concurrency: 1 } } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(15);
    const log = run.fetcher.requests('budget.test').filter((r) => r.path !== '/robots.txt');
    expect(log.filter((r) => r.status === 429)).toHaveLength(0);
  });
});

describe('retries and failing hosts', () => {
  it('retries 5xx through the scheduler with backoff and records the attempts', async () => {
    const run = await fakeCrawl({
      sites: {
        'flaky.test': {
          pages: { '/': '<a href="/sometimes">s</a> <a href="/never">n</a>', '/never': { status: 500 } },
          handler: (req, next) => (req.path !== '/sometimes' ? next() : req.nth <= 2 ? { status: 502, body: 'bad gateway' } : 'ok'),
        },
      },
      seeds: ['http://flaky.test/'],
      config: { domains: { 'flaky.test': { rate: '20/s', retries: 2, backoff: { base: '100ms', cap: '400ms' } } } },
    });
    const byPath = new Map(run.pages.map((p) => [pathOf(p.url), p]));
    expect(byPath.get('/sometimes')).toMatchObject({ status: 200, attempts: 3 });
    expect(byPath.get('/never')).toMatchObject({ status: 500, attempts: 3 });
    const log = run.fetcher.requests('flaky.test');
    expect(run.fetcher.count('flaky.test', '/never')).toBe(3);
    expect(run.fetcher.count('flaky.test', '/sometimes')).toBe(3);
    // Retries paid the host's gap like everything else…
    expect(minGap(log.map((r) => r.at))).toBeGreaterThanOrEqual(gap(50) - EPS);
    // …after a backoff of [step / 2, step], step 100 ms then 200 ms, plus at most two gaps (the other URL's retry may go first).
    for (const path of ['/sometimes', '/never']) {
      const tries = log.filter((r) => r.path === path);
      tries.slice(1).forEach((t, i) => {
        const waited = t.at - tries[i].endedAt!;
        const step = 100 * 2 ** i;
        expect(waited).toBeGreaterThanOrEqual(step / 2 - EPS);
        expect(waited).toBeLessThanOrEqual(step + 2 * gap(50) + EPS);
      });
    }
  });

  it('gives up a host that never answers, in bounded time, while another host runs at full speed', async () => {
    const run = await fakeCrawl({
      sites: {
        'hang.test': {
          pages: { '/': '<a href="/1">1</a><a href="/2">2</a><a href="/3">3</a><a href="/4">4</a><a href="/5">5</a>' },
          handler: (req, next) => (req.path === '/' ? next() : { hang: true }),
        },
        'fine.test': { generate: { pages: 20, linksPerPage: 2 } },
      },
      seeds: ['http://hang.test/', 'http://fine.test/'],
      config: {
        timeout: { connect: '1s', headers: '600ms', body: '600ms' },
        domains: {
          'hang.test': { rate: '20/s', concurrency: 2, retries: 1, backoff: { base: '100ms', cap: '200ms' }, hostFailures: { pause: 2, giveUp: 4 } },
          'fine.test': { rate: '20/s' },
        },
      },
    });
    const hangPages = run.pages.filter((p) => p.url.includes('hang.test') && p.status !== 200);
    const hostFailed = run.skipped.filter((s) => s.reason === 'host-failed');
    expect(hangPages.length).toBeGreaterThan(0);
    expect(hangPages.length + hostFailed.length).toBe(5);
    expect(hangPages.every((p) => p.error?.code === 'HEADERS_TIMEOUT')).toBe(true);
    expect(run.stats.perHost.get('hang.test')!.notes.join()).toMatch(/gave up after 4 failures in a row/);
    const hung = run.fetcher.requests('hang.test').filter((r) => r.path !== '/' && r.path !== '/robots.txt');
    expect(hung).toHaveLength(4); // one per failure up to giveUp; nothing after it
    expect(hung.every((r) => r.status === null && r.endedAt! - r.at === 600)).toBe(true); // each ended by the headers timeout
    // Bounded: even one at a time, each of the 4 failures costs at most the timeout, the largest backoff and a gap.
    expect(run.wallMs).toBeLessThanOrEqual(4 * (600 + 200 + gap(50)));
    expect(run.pages.filter((p) => p.url.includes('fine.test') && p.status === 200)).toHaveLength(21);
    // Not slowed by the hung host at all: 22 requests (robots.txt first) one 20/s gap apart, the first gap timed from robots.txt's answer (1 ms).
    const fine = run.fetcher.arrivals('fine.test');
    expect(Math.max(...fine) - Math.min(...fine)).toBeLessThanOrEqual(1 + 21 * gap(50) + EPS);
  });

  it('retries a refused connection, then gives the host up after exactly hostFailures.giveUp attempts (robots.txt off)', async () => {
    const run = await fakeCrawl({
      sites: { 'down.test': { connectFail: 'CONNECTION_REFUSED' } },
      seeds: ['http://down.test/', 'http://down.test/a', 'http://down.test/b'],
      config: {
        robots: { enabled: false },
        defaults: { rate: '50/s', retries: 1, backoff: { base: '50ms', cap: '100ms' }, hostFailures: { pause: 2, giveUp: 3 } },
      },
    });
    expect(run.pages.length).toBeGreaterThan(0);
    expect(run.pages.every((p) => p.error?.code === 'CONNECTION_REFUSED')).toBe(true);
    expect(run.pages.length + run.skipped.filter((s) => s.reason === 'host-failed').length).toBe(3);
    expect(run.stats.perHost.get('down.test')!.notes.join()).toMatch(/gave up after 3 failures/);
    const attempts = run.fetcher.attempts('down.test');
    expect(attempts).toHaveLength(3);
    expect(run.fetcher.count('down.test')).toBe(0); // nothing ever reached a server
    expect(minGap(attempts.map((a) => a.startedAt))).toBeGreaterThanOrEqual(gap(20) - EPS);
  });
});

describe('politeness measured at the server', () => {
  it('keeps each host gap, window and concurrency limit, robots.txt included, timing gaps from when requests are written', async () => {
    // Connections take 0–30 ms to set up, differently for every request, and
    // win.test answers slower than its gap, so its next start is decided while
    // the last request is still out: a gap timed from the decision to send
    // instead of from the write would show at the server.
    const connect = () => {
      const r = seededRandom(3);
      return () => r() * 30;
    };
    const run = await fakeCrawl({
      sites: {
        'gap.test': { generate: { pages: 12, linksPerPage: 3 }, connectMs: connect() },
        'win.test': { generate: { pages: 12, linksPerPage: 3 }, connectMs: connect(), latencyMs: 60 },
        'par.test': { generate: { pages: 30, linksPerPage: 5 }, latencyMs: 40 },
      },
      seeds: ['http://gap.test/', 'http://win.test/', 'http://par.test/'],
      config: {
        concurrency: 16,
        domains: {
          'gap.test': { rate: '10/s', concurrency: 4 },
          'win.test': { rate: '25/s', limits: ['5/s'], concurrency: 4 },
          'par.test': { rate: 'unlimited', concurrency: 3 },
        },
      },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(13 + 13 + 31);
    expect(duplicates(run.fetcher.requests())).toEqual([]);
    expect(minGap(run.fetcher.arrivals('gap.test'))).toBeGreaterThanOrEqual(gap(100) - EPS);
    expect(minGap(run.fetcher.arrivals('win.test'))).toBeGreaterThanOrEqual(gap(40) - EPS);
    const win = run.fetcher.arrivals('win.test');
    expect(maxInWindow(win, 1000)).toBe(5); // at most 5 in any second, and it does use them
    const sorted = [...win].sort((a, b) => a - b);
    for (let i = 5; i < sorted.length; i++) expect(sorted[i] - sorted[i - 5]).toBeGreaterThanOrEqual(1000);
    expect(run.fetcher.maxInFlight('par.test')).toBe(3); // exactly its concurrency: never more, and it does use it
    expect(run.fetcher.maxInFlight('gap.test')).toBe(1);
  });

  it('with a slow host first, finishes at the politeness bound and the fast hosts long before', async () => {
    const sites: Record<string, { generate: { pages: number; linksPerPage: number } }> = { 'slow.test': { generate: { pages: 11, linksPerPage: 3 } } };
    const fast = Array.from({ length: 12 }, (_, i) => `fast${i}.test`);
    for (const h of fast) sites[h] = { generate: { pages: 14, linksPerPage: 3 } };
    const domains: Record<string, unknown> = { 'slow.test': { rate: '4/s', concurrency: 1 } };
    for (const h of fast) domains[h] = { rate: '30/s', concurrency: 1 };
    const run = await fakeCrawl({ sites, seeds: ['http://slow.test/', ...fast.map((h) => `http://${h}/`)], config: { concurrency: 4, domains } });
    expect(run.pages).toHaveLength(12 + 12 * 15);
    // The politeness bound: 12 gaps of 250 ms + margin between the slow host's 13 requests (robots.txt
    // and 12 pages), the first timed from robots.txt's 1 ms answer, and the last page's 1 ms answer.
    // The fast hosts may keep it from a slot for at most one 1 ms answer per page.
    const bound = 1 + 12 * gap(250) + 1;
    expect(run.wallMs).toBeGreaterThanOrEqual(bound - EPS);
    expect(run.wallMs).toBeLessThanOrEqual(bound + 12 * 1 + EPS);
    const start = Math.min(...run.fetcher.requests().map((r) => r.at));
    const slowEnd = Math.max(...run.fetcher.arrivals('slow.test'));
    for (const h of fast) {
      expect(Math.max(...run.fetcher.arrivals(h)) - start).toBeLessThan((slowEnd - start) / 2);
      expect(minGap(run.fetcher.arrivals(h))).toBeGreaterThanOrEqual(gap(1000 / 30) - EPS);
    }
    expect(minGap(run.fetcher.arrivals('slow.test'))).toBeGreaterThanOrEqual(gap(250) - EPS);
  });
});

describe('robots.txt and failing hosts', () => {
  it('fetches nothing but robots.txt from a host whose robots.txt answers 5xx, retrying it only after the retry delay and the 503 pause', async () => {
    const run = await fakeCrawl({
      sites: {
        'down.test': { robots: { status: 503, body: 'busy' }, generate: { pages: 5, linksPerPage: 2 } },
        'gone.test': { generate: { pages: 3, linksPerPage: 1 } },
      },
      seeds: ['http://down.test/', 'http://gone.test/'],
      config: { defaults: { rate: '50/s' }, robots: { unavailableRetries: 1, unavailableRetryDelay: '300ms' } },
    });
    const down = run.fetcher.requests('down.test');
    expect(down.map((r) => r.path)).toEqual(['/robots.txt', '/robots.txt']); // first try + one retry, nothing else
    // A 503 is also a throttling answer: without Retry-After the host pauses for a backoff of [0.5 s, 1 s] (base 1 s), longer than the 300 ms retry delay.
    const waited = down[1].at - down[0].endedAt!;
    expect(waited).toBeGreaterThanOrEqual(500 - EPS);
    expect(waited).toBeLessThanOrEqual(1000 + EPS);
    expect(run.skipped).toContainEqual(expect.objectContaining({ url: 'http://down.test/', reason: 'robots-unavailable' }));
    expect(run.pages.filter((p) => p.url.includes('gone.test'))).toHaveLength(4); // 404 robots.txt: allow all
    expect(run.pages.filter((p) => p.url.includes('down.test'))).toEqual([]);
  });

  it('writes error records for refused and hanging hosts, retrying each exactly as configured, and carries on with the others', async () => {
    const run = await fakeCrawl({
      sites: {
        'dead.test': { connectFail: 'CONNECTION_REFUSED' },
        'hang.test': { pages: { '/': { hang: true } } },
        'ok.test': { generate: { pages: 5, linksPerPage: 2 } },
      },
      seeds: ['http://dead.test/', 'http://hang.test/', 'http://ok.test/'],
      config: {
        defaults: { rate: '100/s' },
        timeout: { connect: '2s', headers: '1s', body: '1s' },
        robots: { unavailableRetries: 1, unavailableRetryDelay: '200ms' },
      },
    });
    const byUrl = new Map(run.pages.map((p) => [p.url, p]));
    expect(byUrl.get('http://hang.test/')).toMatchObject({ status: null, attempts: 3, error: { code: 'HEADERS_TIMEOUT' } });
    // robots.txt of the refused host is unavailable, so the host is given up (no page request is ever made):
    // two robots.txt attempts, the second exactly the retry delay after the first failed; the seed gets a
    // page record with the connection's error (a dead link), not a robots-unavailable skip.
    expect(byUrl.get('http://dead.test/')).toMatchObject({ status: null, error: { code: 'CONNECTION_REFUSED' } });
    expect(run.skipped.find((s) => s.url === 'http://dead.test/')).toBeUndefined();
    const dead = run.fetcher.attempts('dead.test');
    expect(dead.map((a) => [a.path, a.outcome])).toEqual([
      ['/robots.txt', 'CONNECTION_REFUSED'],
      ['/robots.txt', 'CONNECTION_REFUSED'],
    ]);
    expect(dead[1].startedAt).toBeCloseTo(dead[0].endedAt! + 200, 6);
    // The hanging page: three tries (retries: 2), each ended by the 1 s headers timeout, after backoffs of [0.5, 1] s and [1, 2] s (base 1 s).
    const hang = run.fetcher.requests('hang.test').filter((r) => r.path === '/');
    expect(hang.map((r) => r.endedAt! - r.at)).toEqual([1000, 1000, 1000]);
    hang.slice(1).forEach((r, i) => {
      const waited = r.at - hang[i].endedAt!;
      expect(waited).toBeGreaterThanOrEqual(500 * 2 ** i - EPS);
      expect(waited).toBeLessThanOrEqual(1000 * 2 ** i + gap(10) + EPS);
    });
    expect(run.pages.filter((p) => p.url.includes('ok.test') && p.status === 200)).toHaveLength(6);
  });
});

describe('exact server feedback (only fake time can check these)', () => {
  it('obeys a Retry-After in seconds to the millisecond, for the whole host, and halves its rate', async () => {
    const run = await fakeCrawl({
      sites: {
        'once.test': {
          pages: { '/': '<a href="/a">a</a> <a href="/b">b</a>', '/a': 'a', '/b': 'b' },
          handler: (req, next) => (req.path === '/a' && req.nth === 1 ? { status: 429, headers: { 'retry-after': '3' } } : next()),
        },
      },
      seeds: ['http://once.test/'],
      config: { domains: { 'once.test': { rate: '10/s' } } },
    });
    expect(run.pages.map((p) => [pathOf(p.url), p.status, p.attempts])).toEqual([
      ['/', 200, undefined],
      ['/a', 200, 2],
      ['/b', 200, undefined],
    ]);
    const refused = run.fetcher.requests('once.test').find((r) => r.status === 429)!;
    const after = run.fetcher.requests('once.test').filter((r) => r.at > refused.at);
    // The throttled URL goes first, the moment the pause (3 s + 10 ms from receipt) ends…
    expect(after.map((r) => r.path)).toEqual(['/a', '/b']);
    expect(after[0].at).toBeCloseTo(refused.endedAt! + 3000 + PAUSE_MARGIN_MS, 6);
    // …and the host then runs at half its rate: 5/s.
    expect(after[1].at - after[0].at).toBeCloseTo(gap(200), 6);
    expect(run.stats.perHost.get('once.test')!.rate).toBe('10/s, throttled 1× (now 5/s)');
  });

  for (const [label, skew] of [
    ['90.5 s behind', -90_500],
    ['7 min ahead of', 420_250],
  ] as const) {
    it(`measures an HTTP-date Retry-After against the response's Date, with the server's clock ${label} ours`, async () => {
      const run = await fakeCrawl({
        sites: {
          'dated.test': {
            pages: { '/': '<a href="/a">a</a>', '/a': 'a' },
            handler: (req, next) => (req.path === '/a' && req.nth === 1 ? { status: 503, headers: { 'retry-after': httpDate(req.wall + 2500) } } : next()),
          },
        },
        seeds: ['http://dated.test/'],
        config: { domains: { 'dated.test': { rate: '10/s' } } },
        serverClockSkewMs: skew,
      });
      const [refused, retried] = run.fetcher.requests('dated.test').filter((r) => r.path === '/a');
      expect(refused.status).toBe(503);
      expect(retried.status).toBe(200);
      // 2.5 s on the server's clock give or take the second resolution of both stamps, whatever ours says.
      const pause = retried.at - refused.endedAt!;
      expect(pause).toBeGreaterThan(1500);
      expect(pause).toBeLessThan(3500 + PAUSE_MARGIN_MS);
      expect(retried.at).toBeCloseTo(announcedPauseEnd(refused), 6);
      expect(run.wallMs).toBeLessThan(5_000);
    });
  }

  it('counts a burst of 429s to requests already in flight as one event, then recovers the rate after every 10 successes up to 90% of the rate that was too fast', async () => {
    let refused = 0;
    let crawler: FakeCrawlRun['crawler'] | undefined;
    let throttledAfterPause: unknown;
    const run = await fakeCrawl({
      sites: {
        'burst.test': {
          latencyMs: 40, // longer than the 13.1 ms gap: four requests are out when the first 429 comes back
          pages: { '/': linksTo(40) },
          generate: { pages: 40, linksPerPage: 2 },
          handler: (req, next) => {
            if (!req.path.startsWith('/p/')) return next();
            if (refused < 4) {
              refused++;
              return { status: 429, headers: { 'retry-after': '1' } };
            }
            throttledAfterPause ??= crawler!.progress().throttled; // as the first page after the burst arrives
            return next();
          },
        },
      },
      seeds: ['http://burst.test/'],
      config: { domains: { 'burst.test': { rate: '100/s', concurrency: 4 } } },
      onCrawler: (c) => (crawler = c),
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(41);
    const log = run.fetcher.requests('burst.test');
    const burst = log.filter((r) => r.status === 429);
    expect(burst).toHaveLength(4);
    // All four were sent before the first 429 reached the crawler: one burst.
    expect(burst.every((r) => r.at < burst[0].respondedAt!)).toBe(true);
    expect(run.fetcher.maxInFlight('burst.test')).toBe(4);
    // Every answer in the burst re-announces the pause; the last one ends it.
    const pauseEnd = Math.max(...burst.map((r) => r.endedAt!)) + 1000 + PAUSE_MARGIN_MS;
    const after = log.filter((r) => r.at > burst.at(-1)!.at);
    expect(after[0].at).toBeCloseTo(pauseEnd, 6);
    // Halved once (50/s), not once per 429 (6.25/s).
    expect(throttledAfterPause).toEqual([{ host: 'burst.test', rate: '50/s', factor: 0.5 }]);
    const tenth = after.filter((r) => r.status === 200).sort((a, b) => a.endedAt! - b.endedAt!)[9];
    // Started before the 10th success was counted (a start at that very instant comes after it, at the raised rate).
    const before = after.filter((r) => r.at < tenth.endedAt!);
    expect(before.length).toBeGreaterThanOrEqual(10);
    for (const g of gaps(before.map((r) => r.at))) expect(g).toBeCloseTo(gap(20), 6);
    // The 10th success raises the rate ×1.25 (62.5/s): the next start is that gap after the last, or at once if it has passed.
    const next = after[before.length];
    expect(next.at).toBeCloseTo(Math.max(tenth.endedAt!, before.at(-1)!.at + gap(16)), 6);
    expect(next.at - before.at(-1)!.at).toBeLessThan(gap(20) - 1);
    // Never faster than configured; and it ends at the ceiling, 90% of the rate that drew the 429s.
    expect(minGap(log.map((r) => r.at))).toBeGreaterThanOrEqual(gap(10) - EPS);
    expect(run.stats.perHost.get('burst.test')!.rate).toBe('100/s, throttled 1× (now 90/s)');
  });

  // Regression (issue 10): a challenge wall refuses the first requests of every page whatever the
  // pace; each refusal halved the rate, down to the floor (20/s → 38/min), and 16 pages took > 2 min.
  it('a challenge wall (429 to the first three requests of every page, whatever the rate) pauses the host for each Retry-After but does not drive its rate to the floor', async () => {
    const run = await fakeCrawl({
      sites: {
        'wall.test': {
          pages: { '/': linksTo(15) },
          generate: { pages: 15, linksPerPage: 0 },
          handler: (req, next) => (req.nth <= 3 ? { status: 429, headers: { 'retry-after': '1' } } : next()),
        },
      },
      seeds: ['http://wall.test/'],
      config: { domains: { 'wall.test': { rate: '20/s' } } },
    });
    expect(run.pages).toHaveLength(16);
    expect(run.pages.every((p) => p.status === 200 && p.attempts === 4)).toBe(true);
    const log = run.fetcher.requests('wall.test');
    // Never inside an announced pause: every refusal's Retry-After (plus its margin) was waited out.
    for (const refused of log.filter((r) => r.status === 429)) {
      expect(firstArrivalAfter(run, 'wall.test', refused.endedAt!)!.at).toBeGreaterThanOrEqual(announcedPauseEnd(refused) - EPS);
    }
    // The refusals came whatever the pace: the rate ends at least at half the configured one, far from the floor (20/s × 1/32).
    const rate = run.stats.perHost.get('wall.test')!.rate;
    const now = /\(now ([\d.]+)\/(s|min)\)/.exec(rate);
    const perSecond = now === null ? 20 : Number(now[1]) / (now[2] === 'min' ? 60 : 1);
    expect(perSecond, rate).toBeGreaterThanOrEqual(10);
    // 48 refusals, each a pause of 1 s + 10 ms: bounded by the pauses, not by a crawl slowed to the floor.
    expect(run.wallMs).toBeLessThan(60_000);
  });

  it('cuts a Retry-After longer than maxRetryAfter, and says so', async () => {
    const run = await fakeCrawl({
      sites: {
        'long.test': {
          pages: { '/': '<a href="/a">a</a>', '/a': 'a' },
          handler: (req, next) => (req.path === '/a' && req.nth === 1 ? { status: 429, headers: { 'retry-after': '3600' } } : next()),
        },
      },
      seeds: ['http://long.test/'],
      config: { domains: { 'long.test': { rate: '10/s', maxRetryAfter: '2s' } } },
    });
    const [refused, retried] = run.fetcher.requests('long.test').filter((r) => r.path === '/a');
    expect(retried.at).toBeCloseTo(refused.endedAt! + 2000 + PAUSE_MARGIN_MS, 6);
    expect(run.stats.perHost.get('long.test')!.notes.join()).toMatch(/Retry-After of 3600s capped to 2s/);
  });

  it('holds robots.txt itself to a pause its 429 announced, though its own retry delay is shorter', async () => {
    const run = await fakeCrawl({
      sites: {
        'rob.test': {
          robots: (req) => (req.nth === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { body: 'User-agent: *\nDisallow: /private\n' }),
          pages: { '/': '<a href="/private">p</a> <a href="/open">o</a>', '/open': 'open' },
        },
      },
      seeds: ['http://rob.test/'],
      config: { domains: { 'rob.test': { rate: '10/s' } }, robots: { unavailableRetries: 2, unavailableRetryDelay: '100ms' } },
    });
    const log = run.fetcher.requests('rob.test');
    expect(log.map((r) => [r.path, r.status])).toEqual([
      ['/robots.txt', 429],
      ['/robots.txt', 200],
      ['/', 200],
      ['/open', 200],
    ]);
    expect(log[1].at).toBeCloseTo(log[0].endedAt! + 2000 + PAUSE_MARGIN_MS, 6);
    expect(run.skipped).toContainEqual(expect.objectContaining({ url: 'http://rob.test/private', reason: 'robots' }));
  });

  it('takes robots.txt Crawl-delay as a floor on the gap, capped by maxCrawlDelay, unless told to ignore it', async () => {
    const site = (robots: string) => ({ robots, generate: { pages: 4, linksPerPage: 1 } });
    const run = await fakeCrawl({
      sites: {
        'slower.test': site('User-agent: *\nCrawl-delay: 2\n'),
        'faster.test': site('User-agent: *\nCrawl-delay: 0.5\n'),
        'huge.test': site('User-agent: *\nCrawl-delay: 120\n'),
        'ignored.test': site('User-agent: *\nCrawl-delay: 2\n'),
      },
      seeds: ['http://slower.test/', 'http://faster.test/', 'http://huge.test/', 'http://ignored.test/'],
      config: {
        domains: {
          'slower.test': { rate: '10/s' },
          'faster.test': { rate: '1/s' },
          'huge.test': { rate: '10/s', maxCrawlDelay: '30s' },
          'ignored.test': { rate: '10/s', crawlDelay: 'ignore' },
        },
      },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(4 * 5);
    // Page to page: the Crawl-delay is applied when robots.txt is first consulted, by which time the first page's start is decided.
    const pageGaps = (host: string) =>
      gaps(
        run.fetcher
          .requests(host)
          .filter((r) => r.path !== '/robots.txt')
          .map((r) => r.at),
      );
    const expected: Array<[string, number]> = [
      ['slower.test', gap(2000)], // raised to the Crawl-delay
      ['faster.test', gap(1000)], // a floor never lowers the configured gap
      ['huge.test', gap(30_000)], // capped
      ['ignored.test', gap(100)],
    ];
    for (const [host, want] of expected) {
      const got = pageGaps(host);
      expect(got, host).toHaveLength(4);
      for (const g of got) expect(g, host).toBeCloseTo(want, 6);
    }
    expect(run.stats.perHost.get('huge.test')!.notes.join()).toMatch(/Crawl-delay 120s capped to 30s/);
  });

  it('pauses a host whose RateLimit budget is spent until the reset, in either header form', async () => {
    let resetEpochS = 0;
    const run = await fakeCrawl({
      sites: {
        'spent.test': {
          pages: {
            '/': { body: '<a href="/a">a</a> <a href="/b">b</a>', headers: { 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': '3' } },
            '/a': 'a',
            '/b': 'b',
          },
        },
        'xspent.test': {
          pages: { '/a': 'a' },
          handler: (req, next) => {
            if (req.path !== '/') return next();
            resetEpochS = Math.ceil(req.wall / 1000) + 4;
            return { body: '<a href="/a">a</a>', headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetEpochS) } };
          },
        },
      },
      seeds: ['http://spent.test/', 'http://xspent.test/'],
      config: { defaults: { rate: '10/s' } },
    });
    const spent = run.fetcher.requests('spent.test').filter((r) => r.path !== '/robots.txt');
    expect(spent.map((r) => r.path)).toEqual(['/', '/a', '/b']);
    expect(spent[1].at).toBeCloseTo(spent[0].endedAt! + 3000 + PAUSE_MARGIN_MS, 6);
    expect(spent[2].at - spent[1].at).toBeCloseTo(gap(100), 6); // advice, not a throttle: the rate is untouched
    // An epoch-seconds reset is read against our wall clock at receipt.
    const [home, a] = run.fetcher.requests('xspent.test').filter((r) => r.path !== '/robots.txt');
    const wallOffset = run.clock.wallNow() - run.clock.now();
    expect(a.at).toBeCloseTo(home.endedAt! + (resetEpochS * 1000 - (home.endedAt! + wallOffset)) + PAUSE_MARGIN_MS, 6);
    expect(run.stats.perHost.get('spent.test')!.rate).toBe('10/s');
  });

  it('spreads a RateLimit budget evenly until its reset, then returns to the configured rate', async () => {
    const run = await fakeCrawl({
      sites: {
        'spread.test': {
          pages: { '/': { body: linksTo(16), headers: { 'ratelimit-remaining': '9', 'ratelimit-reset': '10' } } },
          generate: { pages: 40, linksPerPage: 0 },
        },
      },
      seeds: ['http://spread.test/'],
      config: { domains: { 'spread.test': { rate: '10/s' } } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(17);
    const log = run.fetcher.requests('spread.test').filter((r) => r.path !== '/robots.txt');
    const until = log[0].endedAt! + 10_000;
    // 9 left × 0.9 safety = 8 requests over 10 s: one per 1250 ms.
    const during = log.filter((r) => r.at < until);
    expect(during.length).toBeGreaterThanOrEqual(8);
    for (const g of gaps(during.map((r) => r.at))) expect(g).toBeCloseTo(gap(1250), 6);
    const afterwards = log.filter((r) => r.at >= until);
    expect(afterwards.length).toBeGreaterThanOrEqual(5);
    for (const g of gaps(afterwards.map((r) => r.at))) expect(g).toBeCloseTo(gap(100), 6);
  });

  it('stop() starts nothing new and abort() ends a hanging request at once; the rest is reported interrupted', async () => {
    const run = await fakeCrawl({
      sites: { 'hang.test': { pages: { '/': { hang: true } } }, 'ok.test': { generate: { pages: 20, linksPerPage: 1 } } },
      seeds: ['http://hang.test/', 'http://ok.test/'],
      config: { defaults: { rate: '10/s' }, timeout: { headers: '30s' } },
      onCrawler: (crawler, clock) =>
        clock.setTimer(() => {
          crawler.stop();
          crawler.abort();
        }, 500),
    });
    expect(run.wallMs).toBe(500);
    expect(run.stats.interrupted).toBe(true);
    expect(run.pages.find((p) => p.url === 'http://hang.test/')).toMatchObject({ status: null, error: { code: 'ABORTED' } });
    expect(run.fetcher.requests().every((r) => r.at <= run.startedAt + 500 && r.endedAt! <= run.startedAt + 500)).toBe(true);
    const fetched = run.pages.filter((p) => p.url.includes('ok.test'));
    expect(fetched.length).toBeGreaterThan(0);
    // Each generated page links to the next only, so exactly one URL was queued when the crawl stopped.
    expect(run.skipped.filter((s) => s.reason === 'interrupted').map((s) => s.url)).toEqual([expect.stringContaining('ok.test/p/')]);
  });
});

describe('politeness holes found under fake time', () => {
  // Regression: the Crawl-delay was applied when robots.txt was first consulted, after the
  // scheduler had already decided to start the first page: it went out 105 ms after robots.txt.
  it('waits the Crawl-delay between robots.txt and the first page too', async () => {
    const run = await fakeCrawl({
      sites: { 'slow.test': { robots: 'User-agent: *\nCrawl-delay: 2\n', generate: { pages: 2, linksPerPage: 1 } } },
      seeds: ['http://slow.test/'],
      config: { domains: { 'slow.test': { rate: '10/s' } } },
    });
    const times = run.fetcher.requests('slow.test').map((r) => r.at);
    expect(run.fetcher.requests('slow.test').map((r) => r.path)[0]).toBe('/robots.txt');
    expect(times).toHaveLength(4);
    for (const g of gaps(times)) expect(g).toBeGreaterThanOrEqual(gap(2000) - EPS);
  });

  // Regression: a start still connecting did not hold back the next one. With concurrency 3 and a
  // fresh connection taking 150 ms while a reused one takes 0, two requests arrived 46 ms apart at 10/s.
  it('starts nothing else on a host with a gap while a started request is still connecting', async () => {
    let n = 0;
    const run = await fakeCrawl({
      sites: { 'conn.test': { robots: { status: 404 }, generate: { pages: 20, linksPerPage: 4 }, connectMs: () => (n++ % 2 === 0 ? 150 : 0) } },
      seeds: ['http://conn.test/'],
      config: { domains: { 'conn.test': { rate: '10/s', concurrency: 3 } } },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(21);
    const arrivals = run.fetcher.requests('conn.test').map((r) => r.at);
    expect(minGap(arrivals)).toBeGreaterThanOrEqual(gap(100) - EPS);
  });
});

describe('progress as the crawl loop reports it', () => {
  it('lists a host paused by Retry-After with the time left, and the --max-pages bound', async () => {
    const snapshots: Array<ReturnType<FakeCrawlRun['crawler']['progress']>> = [];
    const run = await fakeCrawl({
      sites: {
        'p.test': {
          pages: { '/': '<a href="/a">a</a>', '/a': 'a' },
          handler: (req, next) => (req.path === '/a' && req.nth === 1 ? { status: 429, headers: { 'retry-after': '5' } } : next()),
        },
      },
      seeds: ['http://p.test/'],
      config: { defaults: { rate: '10/s' }, maxPages: 10 },
      onCrawler: (c, clock) => {
        clock.setTimer(() => snapshots.push(c.progress()), 2_000);
      },
    });
    expect(run.pages.filter((p) => p.status === 200)).toHaveLength(2);
    const refused = run.fetcher.requests('p.test').find((r) => r.status === 429)!;
    const [during] = snapshots;
    expect(during.limit).toBe(10);
    expect(during.paused).toHaveLength(1);
    expect(during.paused![0].host).toBe('p.test');
    // Paused until the 429's answer + 5 s + the 10 ms margin; the snapshot was taken 2 s after the crawl began.
    expect(during.paused![0].leftMs).toBeCloseTo(refused.endedAt! + 5_000 + PAUSE_MARGIN_MS - (run.startedAt + 2_000), 6);
  });
});
