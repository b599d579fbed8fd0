/**
 * `--log-format json` (issue 21): the logger and the progress as JSON lines,
 * one object per message, for log shippers.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/output/logger.js';
import { createProgress } from '../../src/output/progress.js';
import { FakeClock } from '../support/fake-clock.js';

function capture(): { stream: PassThrough; lines: () => Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('the JSON logger', () => {
  it('writes one object per message: level, ISO time, message, host and code when known', () => {
    const { stream, lines } = capture();
    const log = createLogger({ stream, format: 'json' });
    log.info('crawling 1 seed');
    log.warn('a.example:8080: Retry-After of 900s capped to 600s (maxRetryAfter)');
    log.warn('shop.example.com: given up after 10 failures in a row');
    log.warn('robots.txt is IGNORED (--no-robots)\nsecond line');
    log.error('cannot write out.jsonl: the disk is full', { code: 'IO_FAILED' });
    log.event('finished', { summary: { pages: 3 } });
    const got = lines();
    expect(got).toHaveLength(6);
    for (const l of got) expect(new Date(l.time as string).toISOString()).toBe(l.time);
    expect(got.map(({ time: _t, ...rest }) => rest)).toEqual([
      { level: 'info', message: 'crawling 1 seed' },
      { level: 'warn', message: 'a.example:8080: Retry-After of 900s capped to 600s (maxRetryAfter)', host: 'a.example:8080' },
      { level: 'warn', message: 'shop.example.com: given up after 10 failures in a row', host: 'shop.example.com' },
      { level: 'warn', message: 'robots.txt is IGNORED (--no-robots)\nsecond line' },
      { level: 'error', message: 'cannot write out.jsonl: the disk is full', code: 'IO_FAILED' },
      { level: 'info', message: 'finished', summary: { pages: 3 } },
    ]);
  });

  it('quiet drops info and events, keeps warnings and errors', () => {
    const { stream, lines } = capture();
    const log = createLogger({ stream, format: 'json', quiet: true });
    log.info('hello');
    log.event('progress', { progress: {} });
    log.warn('careful');
    expect(lines().map((l) => l.message)).toEqual(['careful']);
  });
});

describe('progress as JSON events', () => {
  it('emits the snapshot and pages/s every interval, never a live line', () => {
    const clock = new FakeClock();
    const { stream } = capture();
    let written = '';
    stream.on('data', (c: Buffer) => (written += c.toString()));
    const events: Array<[string, Record<string, unknown>]> = [];
    let fetched = 0;
    const progress = createProgress({ stream, isTTY: true, clock, logIntervalMs: 5000, event: (m, d) => events.push([m, d]) }, () => ({
      fetched,
      queued: 4,
      inFlight: 1,
      errors: 0,
      skipped: 2,
      hostsWaiting: 0,
      hostsActive: 1,
      elapsedMs: clock.now(),
      throttled: [{ host: 'a', rate: '1/s' }],
      paused: [],
    }));
    progress.start();
    fetched = 10;
    clock.advance(5000);
    fetched = 20;
    clock.advance(5000);
    progress.stop();
    expect(written).toBe('');
    expect(events.map(([m]) => m)).toEqual(['progress', 'progress']);
    expect(events[1][1].progress).toMatchObject({ fetched: 20, queued: 4, inFlight: 1, skipped: 2, throttledHosts: 1, pausedHosts: 0 });
    expect((events[1][1].progress as { pagesPerSecond: number }).pagesPerSecond).toBeGreaterThan(0);
  });
});
