import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { createLogger } from '../../src/output/logger.js';
import { createProgress, estimate, formatProgressLine, RateWindow, truncate, type ProgressSnapshot } from '../../src/output/progress.js';
import { addNote, countPage, countRobotsRequest, countSkip, createStats, finishStats, formatSummary, hostStats } from '../../src/output/summary.js';
import type { PageRecord } from '../../src/types.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeCrawl } from '../support/fake-crawl.js';

/** A stderr stand-in: records every write; optionally looks like a terminal. */
function fakeStream(tty: { columns: number } | null = null) {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      writes.push(chunk.toString('utf8'));
      cb();
    },
  });
  if (tty) Object.assign(stream, { isTTY: true, columns: tty.columns });
  return { stream, writes };
}

function snapshot(over: Partial<ProgressSnapshot> = {}): ProgressSnapshot {
  return { fetched: 0, queued: 0, inFlight: 0, errors: 0, skipped: 0, hostsWaiting: 0, hostsActive: 0, elapsedMs: 0, ...over };
}

/** What a terminal would show after these writes: the text after the last \r, minus clear codes. */
function screenLine(writes: string[]): string {
  const all = writes.join('');
  return all.slice(all.lastIndexOf('\r') + 1).replace(/\x1b\[K/g, '');
}

describe('formatProgressLine', () => {
  it('shows the counts with thousands separators, rate, hosts and throttled hosts', () => {
    const s = snapshot({
      fetched: 1234,
      queued: 5678,
      inFlight: 8,
      errors: 3,
      skipped: 2,
      hostsActive: 12,
      hostsWaiting: 30,
      elapsedMs: 62_000,
      throttled: [{ host: 'a.example', rate: '0.5/s' }],
    });
    expect(formatProgressLine(s, 41.23)).toBe(
      '1:02 · fetched 1,234 · queued 5,678 · in flight 8 · 41.2 pages/s · errors 3 · skipped 2 · hosts 12 active, 30 waiting · throttled a.example 0.5/s',
    );
    expect(formatProgressLine(snapshot({ elapsedMs: 3_725_000 }), 0)).toMatch(
      /^1:02:05 · fetched 0 · .* · 0.0 pages\/s · errors 0 · hosts 0 active, 0 waiting$/,
    );
  });

  it('shows requests the crawl aborted itself apart, as the summary does', () => {
    expect(formatProgressLine(snapshot({ fetched: 3, errors: 1, aborted: 2 }), 0)).toBe(
      '0:00 · fetched 3 · queued 0 · in flight 0 · 0.0 pages/s · errors 1 · aborted 2 · hosts 0 active, 0 waiting',
    );
  });

  it('truncates with an ellipsis to exactly the width', () => {
    expect(truncate('abcdef', 10)).toBe('abcdef');
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abcdef', 0)).toBe('');
  });
});

describe('RateWindow', () => {
  it('measures the recent window, not the run average', () => {
    const w = new RateWindow(10_000);
    let count = 0;
    // 10 s at 10 pages/s, then 10 s at 2 pages/s, sampled every second.
    for (let t = 0; t <= 10_000; t += 1000) w.add(t, (count = t / 100));
    expect(w.perSecond({ count, elapsedMs: 10_000 })).toBeCloseTo(10, 5);
    for (let t = 11_000; t <= 20_000; t += 1000) w.add(t, (count += 2));
    expect(w.perSecond({ count, elapsedMs: 20_000 })).toBeCloseTo(2, 5);
  });

  it('falls back to the run average before it has a span', () => {
    const w = new RateWindow(10_000);
    expect(w.perSecond({ count: 0, elapsedMs: 0 })).toBe(0);
    w.add(5000, 20);
    expect(w.perSecond({ count: 20, elapsedMs: 4000 })).toBe(5);
  });
});

describe('createProgress on a terminal', () => {
  it('redraws one line about four times a second with \\r and clear-to-end', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 200 });
    let fetched = 0;
    const start = clock.now();
    const p = createProgress({ stream, clock }, () => snapshot({ fetched: (fetched += 1), elapsedMs: clock.now() - start }));
    p.start();
    expect(writes).toHaveLength(1); // drawn at once
    clock.advance(1000);
    expect(writes).toHaveLength(5);
    for (const w of writes) {
      expect(w.startsWith('\r\x1b[K')).toBe(true);
      expect(w).not.toContain('\n');
    }
    expect(screenLine(writes)).toContain('fetched 5 ·');
    p.stop();
    expect(writes.at(-1)).toBe('\r\x1b[K'); // erased, ready for the summary
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(5000);
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });

  it('reports pages/s over the sliding window, so a slowdown shows within seconds', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 200 });
    const start = clock.now();
    let fetched = 0;
    let perTick = 10; // pages per 1 s tick
    const p = createProgress({ stream, clock, intervalMs: 1000, rateWindowMs: 10_000 }, () => snapshot({ fetched, elapsedMs: clock.now() - start }));
    p.start();
    for (let i = 0; i < 30; i++) {
      if (i === 15) perTick = 1;
      fetched += perTick;
      clock.advance(1000);
    }
    // Run average would be 165 / 30 s = 5.5; the last 10 s ran at 1 page/s.
    expect(screenLine(writes)).toContain('1.0 pages/s');
    p.stop();
  });

  it('never draws wider than the terminal (last column left free)', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 40 });
    const p = createProgress({ stream, clock }, () => snapshot({ fetched: 123_456, queued: 7_890_123, hostsActive: 99 }));
    p.render();
    const line = screenLine(writes);
    expect(line).toHaveLength(39);
    expect(line.endsWith('…')).toBe(true);
    expect(line.startsWith('0:00 · fetched 123,456 · queued')).toBe(true);
  });

  it('follows a terminal resize', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 200 });
    const p = createProgress({ stream, clock }, () => snapshot({ fetched: 1, queued: 2 }));
    p.render();
    expect(screenLine(writes).length).toBeGreaterThan(60);
    Object.assign(stream, { columns: 30 });
    p.render();
    expect(screenLine(writes)).toHaveLength(29);
  });

  it('lets log lines pass cleanly: clear, print, redraw', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 200 });
    const logger = createLogger({ stream, clock });
    const p = createProgress({ stream, clock, logger }, () => snapshot({ fetched: 7 }));
    p.start();
    writes.length = 0;
    logger.warn('robots.txt for a.example answered 503');
    expect(writes).toHaveLength(3);
    expect(writes[0]).toBe('\r\x1b[K');
    expect(writes[1]).toBe('crawl: warning: robots.txt for a.example answered 503\n');
    expect(writes[2]).toMatch(/^\r\x1b\[K0:00 · fetched 7 ·/);
    p.stop();
    writes.length = 0;
    logger.info('done');
    expect(writes).toEqual(['crawl: done\n']); // detached: no clear, no redraw
  });
});

describe('progress: how far along, honestly', () => {
  it('shows the share of --max-pages and the time left at the recent pace, first', () => {
    const s = snapshot({ fetched: 250, queued: 9000, limit: 1000, elapsedMs: 10_000 });
    expect(estimate(s, 25, null)).toEqual({ basis: 'max-pages', fraction: 0.25, leftMs: 30_000 });
    expect(formatProgressLine(s, 25, estimate(s, 25, null))).toMatch(/^0:10 · 25% · 0:30 left · fetched 250 · queued 9,000 ·/);
    // No pace yet: the share, but no time.
    expect(estimate(s, 0, null)).toEqual({ basis: 'max-pages', fraction: 0.25, leftMs: undefined });
  });

  it('gives an ETA without a cap only while the queue shrinks over a whole window', () => {
    const s = snapshot({ fetched: 500, queued: 300, inFlight: 4 });
    expect(estimate(s, 20, null)).toBeUndefined(); // not measured over a window yet
    expect(estimate(s, 20, -5)).toBeUndefined(); // growing: no honest ETA
    expect(estimate(s, 20, 8)).toEqual({ basis: 'draining', leftMs: (304 / 8) * 1000 });
    expect(formatProgressLine(s, 20, estimate(s, 20, 8))).toMatch(/^0:00 · ~0:38 left · fetched 500 ·/);
  });

  it('measures the drain on the live line once a window has passed, and keeps the important part in 80 columns', () => {
    const clock = new FakeClock(0);
    const { stream, writes } = fakeStream({ columns: 80 });
    let queued = 1000;
    const long = Array.from({ length: 12 }, (_, i) => ({ host: `host-${i}.example.com`, rate: '0.5/s' }));
    const p = createProgress({ stream, clock }, () =>
      snapshot({ fetched: 1000 - queued, queued, elapsedMs: clock.now(), throttled: long, paused: [{ host: 'p.example', leftMs: 4_200 }] }),
    );
    p.start();
    for (let t = 0; t < 12; t++) {
      clock.advance(1000);
      queued -= 50; // 50 a second, steadily
    }
    p.render();
    const line = screenLine(writes);
    expect(line).toHaveLength(79);
    // Window 2 s..12 s: the tick at 2 s saw 950 queued (the count drops after each second's ticks),
    // this render 400: 55 a second, so 400 take 7.3 s.
    expect(line).toMatch(/^0:12 · ~0:07 left · fetched 600 · queued 400 · in flight 0 · 55\.0 pages\/s/);
    p.stop();
    expect(formatProgressLine(snapshot({ paused: [{ host: 'p.example', leftMs: 4_200 }] }), 0)).toMatch(/ · paused p\.example 5s$/);
  });
});

describe('createProgress off a terminal', () => {
  it('prints one plain line every 5 s and nothing for short runs', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream();
    const p = createProgress({ stream, clock }, () => snapshot({ fetched: 42, elapsedMs: 5000 }));
    p.start();
    clock.advance(4999);
    expect(writes).toEqual([]);
    clock.advance(10_001);
    expect(writes).toHaveLength(3);
    for (const w of writes) {
      expect(w).toMatch(/^crawl: 0:05 · fetched 42 · .*\n$/);
      expect(w).not.toMatch(/[\r\x1b]/);
    }
    p.stop();
    expect(writes).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('createProgress quiet', () => {
  it('writes nothing and sets no timer', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream({ columns: 80 });
    const p = createProgress({ stream, clock, quiet: true }, () => snapshot());
    p.start();
    p.render();
    clock.advance(60_000);
    p.stop();
    expect(writes).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('createProgress timers', () => {
  it('unrefs system-clock timers so progress never keeps the process alive', () => {
    let unrefs = 0;
    const timers: Array<() => void> = [];
    const clock: Clock = {
      now: () => 0,
      wallNow: () => 0,
      setTimer(fn) {
        timers.push(fn);
        return { id: { unref: () => unrefs++ } };
      },
      clearTimer() {},
    };
    const { stream } = fakeStream({ columns: 80 });
    const p = createProgress({ stream, clock }, () => snapshot());
    p.start();
    timers.shift()!();
    expect(unrefs).toBe(2);
    p.stop();
  });
});

describe('createLogger', () => {
  it('prefixes lines and keeps warnings and errors under --quiet', () => {
    const { stream, writes } = fakeStream();
    const log = createLogger({ stream, quiet: true, clock: new FakeClock() });
    log.info('starting');
    log.debug('detail');
    log.block('summary\n');
    log.warn('slow host');
    log.error('bad config\nsecond line');
    expect(writes).toEqual(['crawl: warning: slow host\n', 'crawl: error: bad config\n  second line\n']);
  });

  it('prints debug lines with an elapsed stamp only when verbose', () => {
    const clock = new FakeClock();
    const { stream, writes } = fakeStream();
    const log = createLogger({ stream, verbose: true, clock });
    clock.advance(1234);
    log.debug('picked a.example');
    log.info('hello');
    expect(writes).toEqual(['crawl: [1.234s] debug: picked a.example\n', 'crawl: [1.234s] hello\n']);
    const { stream: s2, writes: w2 } = fakeStream();
    createLogger({ stream: s2, clock }).debug('hidden');
    expect(w2).toEqual([]);
  });
});

function page(url: string, status: number | null, extra: Partial<PageRecord> = {}): PageRecord {
  return {
    type: 'page',
    url,
    host: new URL(url).host,
    status,
    depth: 0,
    parent: null,
    contentType: 'text/html',
    bytes: 1024,
    title: null,
    links: 0,
    fetchedAt: '2026-01-01T00:00:00.000Z',
    elapsedMs: 1,
    ...extra,
  };
}

describe('formatSummary', () => {
  it('renders totals, histograms, the host table and notes', () => {
    const clock = new FakeClock();
    const stats = createStats(clock);
    for (let i = 0; i < 812; i++) countPage(stats, page(`http://a.example/${i}`, 200));
    for (let i = 0; i < 3; i++) countPage(stats, page(`http://b.example:8080/${i}`, 404));
    for (let i = 0; i < 2; i++) countPage(stats, page(`http://a.example/r${i}`, 301));
    countPage(stats, page('http://c.example/', null, { bytes: 0, error: { code: 'CONNECTION_REFUSED', message: 'refused' } }));
    countSkip(stats, { url: 'http://a.example/private', reason: 'robots' });
    countSkip(stats, { url: 'http://a.example/deep', reason: 'max-depth' });
    countSkip(stats, 'max-depth', 'a.example'); // the crawler's form: reason + its host key
    countSkip(stats, 'interrupted'); // no host: only the by-reason total
    countRobotsRequest(stats, 'a.example');
    countRobotsRequest(stats, 'b.example:8080');
    hostStats(stats, 'a.example').rate = '2/s';
    hostStats(stats, 'b.example:8080').rate = '1/s (throttled to 0.5/s)';
    addNote(stats, 'Crawl-delay 60s capped at 10s', 'a.example');
    addNote(stats, 'Crawl-delay 60s capped at 10s', 'a.example');
    addNote(stats, 'Retry-After 3600s capped at 300s', 'b.example:8080');
    clock.advance(62_000);
    finishStats(stats, clock);

    expect(formatSummary(stats)).toBe(
      [
        'crawl: finished in 1m 02s: 818 pages (13.2 pages/s), 1 error, 4 skipped, 817.0 KiB',
        '  status   200 ×812, 404 ×3, 301 ×2, error ×1',
        '  errors   CONNECTION_REFUSED ×1',
        '  skipped  max-depth ×2, interrupted ×1, robots ×1',
        '  host            fetched  errors  skipped  robots  rate',
        '  a.example           814       0        3       1  2/s',
        '  b.example:8080        3       0        0       1  1/s (throttled to 0.5/s)',
        '  +1 host with nothing fetched (1 error)',
        '  notes',
        '    a.example: Crawl-delay 60s capped at 10s',
        '    b.example:8080: Retry-After 3600s capped at 300s',
        '',
      ].join('\n'),
    );
  });

  it('lists the top 20 hosts by fetched and folds the rest into "+N more"', () => {
    const clock = new FakeClock();
    const stats = createStats(clock);
    for (let h = 1; h <= 23; h++) for (let i = 0; i < h; i++) countPage(stats, page(`http://h${h}.example/${i}`, 200));
    finishStats(stats, clock, { interrupted: true });
    const lines = formatSummary(stats).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^crawl: interrupted after 0\.0s: 276 pages \(0\.0 pages\/s\), 0 errors, 0 skipped, 276\.0 KiB$/);
    const table = lines.slice(lines.findIndex((l) => l.trimStart().startsWith('host')) + 1);
    expect(table).toHaveLength(21);
    expect(table[0]).toMatch(/^ {2}h23\.example\s+23\s/);
    expect(table[19]).toMatch(/^ {2}h4\.example\s+4\s/);
    expect(table[20]).toBe('  +3 more hosts (6 fetched)');
  });

  it('stays short for an empty crawl', () => {
    const clock = new FakeClock();
    const stats = createStats(clock);
    clock.advance(1500);
    finishStats(stats, clock);
    expect(formatSummary(stats)).toBe('crawl: finished in 1.5s: 0 pages (0.0 pages/s), 0 errors, 0 skipped, 0 B\n');
  });
});

describe('Crawler.progress() and the summary agree', () => {
  it('does not count aborted requests as fetched pages or errors (regression: the live line said "fetched 3" for 1 page)', async () => {
    let during: ProgressSnapshot | undefined;
    const run = await fakeCrawl({
      sites: {
        'slow.test': {
          pages: {
            '/': { body: '<a href="/a">a</a><a href="/b">b</a>', latencyMs: 1 },
            '/a': { body: 'a', latencyMs: 60_000 },
            '/b': { body: 'b', latencyMs: 60_000 },
          },
        },
      },
      seeds: ['http://slow.test/'],
      config: { defaults: { rate: 'unlimited', concurrency: 4 } },
      onCrawler: (crawler, clock) => {
        clock.setTimer(() => {
          during = crawler.progress();
          crawler.stop();
          crawler.abort();
        }, 5_000);
      },
    });
    expect(during).toMatchObject({ fetched: 1, inFlight: 2, errors: 0 });
    expect(run.pages.map((p) => p.error?.code ?? p.status)).toEqual([200, 'ABORTED', 'ABORTED']);
    expect(run.stats.aborted).toBe(2);
    const after = run.crawler.progress();
    expect(after).toMatchObject({ fetched: 1, errors: 0, aborted: 2, inFlight: 0 });
    const summary = formatSummary(run.stats);
    expect(summary).toMatch(/: 1 page \(.*\), 0 errors, 0 skipped, 2 aborted,/);
  });
});
