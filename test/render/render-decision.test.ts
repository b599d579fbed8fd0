/**
 * The pure parts of rendering: which pages `render: "auto"` renders and why
 * (render/render-decision.ts), and what the crawl-wide subresource cache may
 * keep and for how long (render/subresource-cache.ts). Tables, no browser.
 */
import { describe, expect, it } from 'vitest';
import { renderDecision } from '../../src/render/render-decision.js';
import { FAILURE_TTL_S, MAX_FAILURES, NEGATIVE_TTL_S, reusableUntil, SubresourceCache } from '../../src/render/subresource-cache.js';

const html = (body: string, status = 200, contentType: string | null = 'text/html') => ({ status, contentType, body });
const text = 'Words a reader came for, enough of them to be a page of their own. '.repeat(10);

describe('renderDecision', () => {
  it.each([
    ['configured: every HTML page', true, html('<p>static</p>'), true, 'configured'],
    ['a redirect is never rendered', true, html('', 301), false, 'not-html'],
    ['a PDF is never rendered', 'auto', html('%PDF', 200, 'application/pdf'), false, 'not-html'],
    ['a body not read (null) is never rendered', true, { status: 200, contentType: 'text/html', body: null }, false, 'not-html'],
    ['an empty React mount and a bundle', 'auto', html(`<div id="root"></div><script src="/main.js"></script>${text}`), true, 'empty-mount'],
    ['an empty Next.js mount with a comment', 'auto', html('<div id="__next"> <!-- app --> </div><script>boot()</script>'), true, 'empty-mount'],
    [
      'a mount that server rendering filled is static',
      'auto',
      html(
        `<div id="root"><h1>Hi</h1>${text}<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/d">d</a><a href="/e">e</a></div><script src="/main.js"></script>`,
      ),
      false,
      'static',
    ],
    ['a noscript asking for JavaScript', 'auto', html(`<noscript>You need to enable JavaScript to run this app.</noscript>${text}`), true, 'noscript'],
    ['a noscript with a tracking pixel is not a shell', 'auto', html(`<noscript><img src="/px.gif"></noscript>${text}`), false, 'static'],
    [
      'a bundle, two links and little text',
      'auto',
      html('<nav><a href="/">Home</a><a href="/about">About</a></nav><script src="/app.js"></script>'),
      true,
      'script-shell',
    ],
    [
      'hash-only links do not count as links',
      'auto',
      html(
        `<a href="#/a">a</a><a href="#/b">b</a><a href="#/c">c</a><a href="#/d">d</a><a href="#/e">e</a><a href="/">home</a><script src="/app.js"></script>`,
      ),
      true,
      'script-shell',
    ],
    ['a bundle on a page full of text is static', 'auto', html(`<script src="/analytics.js"></script><p>${text}</p><a href="/">home</a>`), false, 'static'],
    ['few links and little text but no script is static', 'auto', html('<p>Short.</p><a href="/">home</a>'), false, 'static'],
  ] as const)('%s', (_name, mode, res, render, reason) => {
    expect(renderDecision(mode, res)).toEqual({ render, reason });
  });
});

describe('the subresource cache', () => {
  it.each([
    [200, {}, 0, Infinity],
    [200, { 'cache-control': 'public, max-age=3600' }, 1000, 1000 + 3_600_000],
    [200, { 'cache-control': 's-maxage=60' }, 0, 60_000],
    [200, { 'cache-control': 'max-age=5' }, 0, null], // "stale in seconds" means it
    [200, { 'cache-control': 'no-store' }, 0, null],
    [200, { 'cache-control': 'no-cache, max-age=600' }, 0, null],
    [200, { 'cache-control': 'private' }, 0, null],
    [206, {}, 0, null],
    [500, {}, 0, null],
    // Negative caching: a missing file is reused as missing, for NEGATIVE_TTL_S without a stated lifetime.
    [404, {}, 1000, 1000 + NEGATIVE_TTL_S * 1000],
    [410, { 'cache-control': 'max-age=30' }, 0, 30_000],
    [404, { 'cache-control': 'no-store' }, 0, null],
  ])('status %s with %j at %s: reusable until %s', (status, headers, now, until) => {
    expect(reusableUntil(status, headers as Record<string, string>, now)).toBe(until);
  });

  it('serves a kept response until its max-age, and evicts the least recently used past its byte budget', () => {
    const cache = new SubresourceCache(4_000);
    const body = (n: number) => Buffer.alloc(n, 1);
    expect(cache.put('u:a', { status: 200, headers: { 'cache-control': 'max-age=60' }, body: body(500) }, 0)).toBe(true);
    expect(cache.get('u:a', 59_999)?.body.length).toBe(500);
    expect(cache.get('u:a', 60_000)).toBeUndefined();
    expect(cache.put('u:nostore', { status: 200, headers: { 'cache-control': 'no-store' }, body: body(10) }, 0)).toBe(false);
    expect(cache.put('u:huge', { status: 200, headers: {}, body: body(2_000) }, 0)).toBe(false); // over a quarter of the budget
    for (const name of ['b', 'c', 'd', 'e']) cache.put(`u:${name}`, { status: 200, headers: {}, body: body(700) }, 0);
    cache.get('u:b', 0); // b is used again: c is the oldest now
    cache.put('u:f', { status: 200, headers: {}, body: body(700) }, 0);
    expect(cache.get('u:c', 0)).toBeUndefined();
    expect(cache.get('u:b', 0)).toBeDefined();
    expect(cache.storedBytes).toBeLessThanOrEqual(4_000);
  });

  it('remembers a failed request for FAILURE_TTL_S, and at most MAX_FAILURES of them, the oldest dropped first', () => {
    const cache = new SubresourceCache(4_000);
    const failure = { kind: 'failed' as const, host: 'gone.example', detail: 'DNS_FAILURE: getaddrinfo ENOTFOUND gone.example' };
    cache.putFailure('http://gone.example/a.js', failure, 1_000);
    expect(cache.failure('http://gone.example/a.js', 1_000 + FAILURE_TTL_S * 1000 - 1)).toEqual(failure);
    expect(cache.failure('http://gone.example/a.js', 1_000 + FAILURE_TTL_S * 1000)).toBeUndefined();
    expect(cache.failure('http://gone.example/a.js', 0)).toBeUndefined(); // dropped once expired
    for (let i = 0; i <= MAX_FAILURES; i++) cache.putFailure(`http://gone.example/${i}.js`, failure, 0);
    expect(cache.failure('http://gone.example/0.js', 1)).toBeUndefined();
    expect(cache.failure('http://gone.example/1.js', 1)).toEqual(failure);
    expect(cache.failure(`http://gone.example/${MAX_FAILURES}.js`, 1)).toEqual(failure);
  });
});
