/** The failures table: exact counts, capped rows. */
import { describe, expect, it } from 'vitest';
import { FailureTable, failureKind } from '../../src/report/failures.js';
import { viewRecord, type PageView } from '../../src/report/record-view.js';

const page = (url: string, status: number | null, code?: string, message = 'boom'): PageView =>
  viewRecord({
    type: 'page',
    url,
    status,
    error: code ? { code, message } : undefined,
    fetchedAt: '2026-01-01T00:00:01.000Z',
    elapsedMs: 5,
    attempts: 3,
  }) as PageView;

describe('FailureTable', () => {
  it('names each failure by its error code or its HTTP status, and ignores successes', () => {
    expect(failureKind(page('http://a.test/', 200))).toBeNull();
    expect(failureKind(page('http://a.test/', 301))).toBeNull();
    expect(failureKind(page('http://a.test/', 404))).toBe('HTTP 404');
    expect(failureKind(page('http://a.test/', null, 'DNS_FAILURE'))).toBe('DNS_FAILURE');
    expect(failureKind(page('http://a.test/', 429, 'THROTTLED'))).toBe('THROTTLED');
  });

  it('counts every failure, keeps the first rows of each kind up to the caps', () => {
    const t = new FailureTable({ maxRows: 4, maxPerKind: 2 });
    for (let i = 0; i < 5; i++) t.add(page(`http://a.test/404/${i}`, 404));
    t.add(page('http://a.test/ok', 200));
    t.add(page('http://b.test/', null, 'TLS_ERROR', 'x'.repeat(500)));
    t.add(page('http://c.test/', null, 'CONNECTION_REFUSED'));
    t.add(page('http://d.test/', null, 'DNS_FAILURE')); // over maxRows
    const s = t.finish();
    expect(s.total).toBe(8);
    expect(s.byKind).toEqual([
      ['HTTP 404', 5],
      ['CONNECTION_REFUSED', 1],
      ['DNS_FAILURE', 1],
      ['TLS_ERROR', 1],
    ]);
    expect(s.rows.map((r) => r.url)).toEqual(['http://a.test/404/0', 'http://a.test/404/1', 'http://b.test/', 'http://c.test/']);
    expect(s.omitted).toBe(4);
    expect(s.rows[2].message).toHaveLength(240);
    expect(s.rows[0]).toMatchObject({ host: 'a.test', kind: 'HTTP 404', status: 404, attempts: 3, atMs: Date.parse('2026-01-01T00:00:01.000Z') });
  });
});
