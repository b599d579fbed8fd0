/** Redirect chains followed through the records. */
import { describe, expect, it } from 'vitest';
import { RedirectTracker } from '../../src/report/redirects.js';
import { viewRecord, type PageView, type SkipView } from '../../src/report/record-view.js';

const page = (url: string, status: number | null, location?: string, error?: string): PageView =>
  viewRecord({
    type: 'page',
    url,
    status,
    location,
    error: error ? { code: error, message: '' } : undefined,
    fetchedAt: '2026-01-01T00:00:00Z',
    elapsedMs: 1,
  }) as PageView;
const skip = (url: string, reason: string): SkipView => viewRecord({ type: 'skipped', url, reason }) as SkipView;

describe('RedirectTracker', () => {
  it('follows a chain to its end, through unrelated records in between', () => {
    const t = new RedirectTracker();
    t.add(page('http://a.test/1', 301, 'http://a.test/2'));
    t.add(page('http://a.test/other', 200));
    t.add(page('http://a.test/2', 302, 'http://b.test/3'));
    t.add(page('http://b.test/3', 200));
    const s = t.finish();
    expect(s.chains).toBe(1);
    expect(s.byLength).toEqual([['2', 1]]);
    expect(s.byEnd).toEqual([['200', 1]]);
    expect(s.longest).toEqual([
      {
        hops: [
          { url: 'http://a.test/1', status: 301 },
          { url: 'http://a.test/2', status: 302 },
          { url: 'http://b.test/3', status: 200 },
        ],
        end: '200',
      },
    ]);
  });

  it('ends chains at a loop, a skip, an error, and "not fetched" at the end of the file', () => {
    const t = new RedirectTracker();
    t.add(page('http://a.test/x', 301, 'http://a.test/y'));
    t.add(page('http://a.test/y', 301, 'http://a.test/x')); // back to the start: a loop
    t.add(page('http://a.test/r', 307, 'http://a.test/private'));
    t.add(skip('http://a.test/private', 'robots'));
    t.add(page('http://a.test/deep', 301, 'http://a.test/deeper', 'REDIRECT_LIMIT'));
    t.add(page('http://a.test/gone', 308, 'http://a.test/never'));
    const s = t.finish();
    expect(s.chains).toBe(4);
    expect(s.byEnd).toEqual([
      ['loop', 1],
      ['not fetched', 1],
      ['REDIRECT_LIMIT', 1],
      ['skipped: robots', 1],
    ]);
    expect(s.byLength).toEqual([
      ['1', 3],
      ['2', 1],
    ]);
    expect(s.longest[0]).toMatchObject({ end: 'loop', target: 'http://a.test/x' });
    expect(s.longest.find((c) => c.end === 'not fetched')).toEqual({
      hops: [{ url: 'http://a.test/gone', status: 308 }],
      end: 'not fetched',
      target: 'http://a.test/never',
    });
  });

  it('closes the oldest waiting chain when too many wait', () => {
    const t = new RedirectTracker({ maxPending: 2 });
    t.add(page('http://a.test/1', 301, 'http://a.test/1b'));
    t.add(page('http://a.test/2', 301, 'http://a.test/2b'));
    t.add(page('http://a.test/3', 301, 'http://a.test/3b')); // evicts 1's chain
    t.add(page('http://a.test/1b', 200)); // no longer waited for: not a chain of its own
    t.add(page('http://a.test/2b', 200));
    expect(t.finish().byEnd).toEqual([
      ['not fetched', 2],
      ['200', 1],
    ]);
  });
});
