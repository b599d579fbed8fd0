/** A page record as the report tests build them: a 200 HTML page of `url`, with `extra` fields on top. */
import type { PageRecord } from '../../src/types.js';

export function pageRecord(url: string, extra: Partial<PageRecord> = {}): PageRecord {
  return {
    type: 'page',
    url,
    host: new URL(url).host,
    status: 200,
    depth: 1,
    parent: null,
    contentType: 'text/html',
    bytes: 0,
    title: null,
    links: 0,
    fetchedAt: '2026-01-01T00:00:00.000Z',
    elapsedMs: 5,
    ...extra,
  };
}
