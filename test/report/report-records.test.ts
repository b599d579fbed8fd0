/** Reading records: the view of one record (today's fields and future ones), and the streaming reader. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, ReportInputError, readRecords } from '../../src/report/record-reader.js';
import { viewRecord, type RecordView } from '../../src/report/record-view.js';

describe('viewRecord', () => {
  it('derives the start from fetchedAt and the host key from the URL', () => {
    const v = viewRecord({
      type: 'page',
      url: 'http://Shop.Example:8080/a',
      status: 200,
      depth: 1,
      parent: null,
      contentType: 'text/html',
      bytes: 10,
      title: null,
      links: 0,
      fetchedAt: '2026-11-21T10:00:00.000Z',
      elapsedMs: 41,
    });
    expect(v).toMatchObject({
      kind: 'page',
      host: 'shop.example:8080',
      startMs: Date.parse('2026-11-21T10:00:00.000Z'),
      elapsedMs: 41,
      attempts: 1,
      exactStart: false,
      intervalMs: null,
    });
  });

  it('uses the fields future records carry when present', () => {
    const v = viewRecord({
      type: 'page',
      url: 'http://a.example/',
      status: 200,
      fetchedAt: '2026-11-21T10:00:00.000Z',
      elapsedMs: 5,
      startedAt: 1_800_000_000_123,
      host: 'example',
      attempts: 3,
      attemptStarts: [1_799_999_990_000, 'x'],
      throttles: [{ at: 1_799_999_995_000, status: 429, retryAfterMs: 5000, pauseMs: 5000 }, { bogus: true }],
      intervalMs: 500,
      effectiveIntervalMs: 1000,
      rateLabel: '2/s',
    });
    expect(v).toMatchObject({
      host: 'example',
      startMs: 1_800_000_000_123,
      exactStart: true,
      attempts: 3,
      attemptStarts: [1_799_999_990_000],
      throttles: [{ at: 1_799_999_995_000, status: 429, retryAfterMs: 5000, pauseMs: 5000 }],
      intervalMs: 500,
      effectiveIntervalMs: 1000,
      rateLabel: '2/s',
    });
  });

  it('reads throttle events as the crawler writes them (pausedUntil) and robots.txt records', () => {
    const v = viewRecord({
      type: 'page',
      url: 'http://a.test/',
      status: 200,
      fetchedAt: '2026-11-21T10:00:00.000Z',
      elapsedMs: 5,
      startedAt: 1_800_000_009_000,
      throttles: [{ at: 1_800_000_000_000, status: 503, pausedUntil: 1_800_000_002_500 }],
    });
    expect(v).toMatchObject({ throttles: [{ at: 1_800_000_000_000, status: 503, retryAfterMs: null, pauseMs: 2500 }] });
    const robots = {
      type: 'robots',
      url: 'http://a.test/robots.txt',
      host: 'a.test',
      status: 429,
      startedAt: 1_800_000_000_000,
      elapsedMs: 40,
      bytes: 0,
      pausedUntil: 1_800_000_005_050,
      retryAfterMs: 5000,
    };
    expect(viewRecord(robots)).toEqual({
      kind: 'robots',
      url: 'http://a.test/robots.txt',
      host: 'a.test',
      status: 429,
      startMs: 1_800_000_000_000,
      elapsedMs: 40,
      errorCode: null,
      throttle: { at: 1_800_000_000_040, status: 429, retryAfterMs: 5000, pauseMs: 5010 },
    });
    expect(viewRecord({ ...robots, status: null, pausedUntil: undefined, error: { code: 'DNS_FAILURE', message: 'x' } })).toMatchObject({
      status: null,
      errorCode: 'DNS_FAILURE',
      throttle: null,
    });
    expect(viewRecord({ ...robots, startedAt: 'soon' })).toBeNull();
  });

  it('reads instants as ISO strings (records since the time convention) exactly as the epoch ms older records hold', () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const oldPage = {
      type: 'page',
      url: 'http://a.test/',
      host: 'a.test',
      status: 200,
      fetchedAt: '2026-11-21T10:00:00.000Z',
      elapsedMs: 5,
      startedAt: 1_800_000_009_123,
      attempts: 3,
      attemptStarts: [1_800_000_000_001, 1_800_000_004_000],
      throttles: [{ at: 1_800_000_000_000, status: 503, retryAfterMs: 2000, pausedUntil: 1_800_000_002_500 }],
    };
    const newPage = {
      ...oldPage,
      startedAt: iso(oldPage.startedAt),
      attemptStarts: oldPage.attemptStarts.map(iso),
      throttles: [{ at: iso(1_800_000_000_000), status: 503, retryAfterMs: 2000, pausedUntil: iso(1_800_000_002_500) }],
    };
    expect(viewRecord(newPage)).toEqual(viewRecord(oldPage));
    expect(viewRecord(newPage)).toMatchObject({
      startMs: 1_800_000_009_123,
      exactStart: true,
      attemptStarts: [1_800_000_000_001, 1_800_000_004_000],
      throttles: [{ at: 1_800_000_000_000, pauseMs: 2500 }],
    });
    const oldRobots = {
      type: 'robots',
      url: 'http://a.test/robots.txt',
      host: 'a.test',
      status: 429,
      startedAt: 1_800_000_000_000,
      elapsedMs: 40,
      bytes: 0,
      pausedUntil: 1_800_000_005_050,
      retryAfterMs: 5000,
    };
    const newRobots = { ...oldRobots, startedAt: iso(oldRobots.startedAt), pausedUntil: iso(oldRobots.pausedUntil) };
    expect(viewRecord(newRobots)).toEqual(viewRecord(oldRobots));
    expect(viewRecord({ ...newRobots, startedAt: '2026-13-45T99:00:00.000Z' })).toBeNull();
  });

  it('refuses what is not a record, and survives wrong types', () => {
    expect(viewRecord([1])).toBeNull();
    expect(viewRecord({ type: 'page' })).toBeNull();
    expect(viewRecord({ type: 'summary', url: 'http://a/' })).toBeNull();
    expect(viewRecord({ type: 'skipped', url: 'http://a.test/x', reason: 'robots' })).toEqual({
      kind: 'skipped',
      url: 'http://a.test/x',
      host: 'a.test',
      reason: 'robots',
      detail: null,
      usageDenied: null,
    });
    const odd = viewRecord({ type: 'page', url: 'not a url', status: '200', elapsedMs: 'slow', bytes: -3, error: { code: 5 } });
    expect(odd).toMatchObject({ host: '(invalid url)', status: null, elapsedMs: 0, bytes: 0, errorCode: 'UNKNOWN' });
    expect(Number.isNaN((odd as { startMs: number }).startMs)).toBe(true);
  });
});

async function read(chunks: Array<string | Buffer>) {
  const views: RecordView[] = [];
  const bad: number[] = [];
  const result = await readRecords(Readable.from(chunks), 'pages.jsonl', { record: (v) => views.push(v), badLine: (n) => bad.push(n) });
  return { views, bad, result };
}

const line = (url: string) => JSON.stringify({ type: 'page', url, status: 200, fetchedAt: '2026-01-01T00:00:00Z', elapsedMs: 1 });

describe('readRecords', () => {
  it('splits lines across chunks, accepts CRLF, a BOM and blank lines, and counts a torn last line', async () => {
    const text = `\ufeff${line('http://a.test/1')}\r\n\n${line('http://a.test/2')}\n{"type":"page","url":"http://a.te`;
    const { views, bad, result } = await read([text.slice(0, 17), text.slice(17, 60), text.slice(60)]);
    expect(views.map((v) => v.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
    expect(bad).toEqual([4]);
    expect(result).toEqual({ records: 2, lines: 4 });
  });

  it('refuses a file whose first line is not a record, or that holds none', async () => {
    await expect(read(['<html>\n'])).rejects.toThrow(
      new ReportInputError('pages.jsonl: line 1 is not a crawl record (expected JSON lines with "type": "page" or "skipped", as crawl writes them)'),
    );
    await expect(read(['{"a":1}\n'])).rejects.toMatchObject({ code: 'REPORT_INPUT_INVALID' });
    await expect(read(['\n\n'])).rejects.toThrow('pages.jsonl: no crawl records in it');
    await expect(read([])).rejects.toThrow('no crawl records');
  });

  it('drops an overlong line without holding it', async () => {
    const big = Buffer.alloc(1024 * 1024, 0x61);
    const chunks: Buffer[] = [Buffer.from(line('http://a.test/1') + '\n')];
    for (let i = 0; i <= MAX_LINE_BYTES / big.length; i++) chunks.push(big);
    chunks.push(Buffer.from('\n' + line('http://a.test/2') + '\n'));
    const { views, bad } = await read(chunks);
    expect(views.map((v) => v.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
    expect(bad).toEqual([2]);
  });
});
