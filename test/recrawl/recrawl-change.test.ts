import { describe, expect, it } from 'vitest';
import { changeOf, conditionalHeaders, nextHistory, type Answer } from '../../src/recrawl/recrawl-change.js';
import type { PageHistory } from '../../src/store/page-history.js';

const D1 = 'sha256:AAAA';
const D2 = 'sha256:BBBB';
const ok = (extra: Partial<PageHistory> = {}): PageHistory => ({ status: 200, fetchedAt: 1_000, ...extra });
const answer = (status: number, headers: Record<string, string> = {}, extra: Partial<Answer> = {}): Answer => ({ status, headers, ...extra });

describe('conditional headers', () => {
  it('sends what the last 2xx kept, as kept (a weak ETag weak), and nothing for other pages', () => {
    expect(conditionalHeaders(ok({ etag: '"a"', lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT' }))).toEqual({
      'if-none-match': '"a"',
      'if-modified-since': 'Tue, 14 Nov 2023 22:13:20 GMT',
    });
    expect(conditionalHeaders(ok({ etag: 'W/"a"' }))).toEqual({ 'if-none-match': 'W/"a"' });
    expect(conditionalHeaders(ok())).toBeUndefined();
    expect(conditionalHeaders(undefined)).toBeUndefined();
    expect(conditionalHeaders({ status: 301, fetchedAt: 0, etag: '"r"' })).toBeUndefined();
    expect(conditionalHeaders({ status: 404, fetchedAt: 0, etag: '"n"' })).toBeUndefined();
  });
});

describe('what changed', () => {
  it.each<[string, PageHistory | undefined, Answer, string | undefined, string?]>([
    ['no history: new', undefined, answer(200, {}, { digest: D1 }), 'new'],
    ['no history, even a 404: new', undefined, answer(404), 'new'],
    ['304 asked for: unchanged', ok({ etag: '"a"', digest: D1 }), answer(304), 'unchanged'],
    ['304 with no digest kept: unchanged, never an error', ok({ etag: '"a"' }), answer(304), 'unchanged'],
    ['304 not asked for (no validators kept): unchanged', ok({ digest: D1 }), answer(304), 'unchanged'],
    ['304 with no history at all: new', undefined, answer(304), 'new'],
    ['200 where a 304 was asked, same digest: unchanged', ok({ etag: '"a"', digest: D1 }), answer(200, { etag: '"a"' }, { digest: D1 }), 'unchanged'],
    ['same digest, ETag changed: unchanged', ok({ etag: '"a"', digest: D1 }), answer(200, { etag: '"b"' }, { digest: D1 }), 'unchanged'],
    ['same digest, ETag gone: unchanged', ok({ etag: '"a"', digest: D1 }), answer(200, {}, { digest: D1 }), 'unchanged'],
    ['other digest, same strong ETag: changed (the body says so)', ok({ etag: '"a"', digest: D1 }), answer(200, { etag: '"a"' }, { digest: D2 }), 'changed'],
    ['no digests, same strong ETag: unchanged', ok({ etag: '"a"' }), answer(200, { etag: '"a"' }), 'unchanged'],
    ['no digests, same weak ETag: changed (weak says nothing of bytes)', ok({ etag: 'W/"a"' }), answer(200, { etag: 'W/"a"' }), 'changed'],
    [
      'no digests, same Last-Modified: unchanged',
      ok({ lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT' }),
      answer(200, { 'last-modified': 'Tue, 14 Nov 2023 22:13:20 GMT' }),
      'unchanged',
    ],
    ['no digests, no validators: changed', ok(), answer(200), 'changed'],
    ['404 where there was a page: removed', ok({ digest: D1 }), answer(404), 'removed'],
    ['410 where there was a page: removed', ok({ digest: D1 }), answer(410), 'removed'],
    ['404 where there was a redirect: removed', { status: 301, fetchedAt: 0 }, answer(404), 'removed'],
    ['404 again: unchanged', { status: 404, fetchedAt: 0 }, answer(410), 'unchanged'],
    ['a page back after a 404: changed', { status: 404, fetchedAt: 0 }, answer(200, {}, { digest: D1 }), 'changed'],
    ['a redirect where there was a page: removed', ok({ digest: D1 }), answer(301, {}, { location: 'http://a/x' }), 'removed'],
    ['the same redirect: unchanged', { status: 301, fetchedAt: 0 }, answer(302, {}, { location: 'http://a/x' }), 'unchanged', 'http://a/x'],
    ['a redirect elsewhere: changed', { status: 301, fetchedAt: 0 }, answer(301, {}, { location: 'http://a/y' }), 'changed', 'http://a/x'],
    ['403 again: unchanged', { status: 403, fetchedAt: 0 }, answer(403), 'unchanged'],
    ['a 5xx tells nothing', ok({ digest: D1 }), answer(503), undefined],
    ['a 429 tells nothing', ok({ digest: D1 }), answer(429), undefined],
  ])('%s', (_name, prior, ans, expected, priorTarget) => {
    expect(changeOf(prior, ans, priorTarget)).toBe(expected);
  });
});

describe('the history kept', () => {
  it('takes the answer, keeps the last status and digest on a 304 (with any new validator), and nothing from a 5xx', () => {
    const prior = ok({ etag: '"a"', lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT', digest: D1, intervalMs: 60_000 });
    expect(nextHistory(prior, answer(304, { etag: '"a2"' }), 5_000)).toEqual({ ...prior, etag: '"a2"', fetchedAt: 5_000 });
    expect(nextHistory(undefined, answer(304), 5_000)).toEqual({ status: 200, fetchedAt: 5_000 });
    expect(nextHistory(prior, answer(200, { etag: 'W/"b"' }, { digest: D2 }), 6_000)).toEqual({
      status: 200,
      fetchedAt: 6_000,
      etag: 'W/"b"',
      digest: D2,
      intervalMs: 60_000,
    });
    expect(nextHistory(prior, answer(500), 6_000)).toBeUndefined();
  });

  it('keeps no validators from a Vary: * answer (no later request can match it)', () => {
    expect(
      nextHistory(undefined, answer(200, { etag: '"v"', 'last-modified': 'Tue, 14 Nov 2023 22:13:20 GMT', vary: 'Accept-Encoding, *' }, { digest: D1 }), 1),
    ).toEqual({ status: 200, fetchedAt: 1, digest: D1 });
    // Vary on request headers a crawler sends the same each pass keeps them.
    expect(nextHistory(undefined, answer(200, { etag: '"v"', vary: 'Accept-Encoding' }), 1)).toEqual({ status: 200, fetchedAt: 1, etag: '"v"' });
  });
});
