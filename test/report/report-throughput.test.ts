/** Crawl-wide series: rates per second and the exact time-average in flight. */
import { describe, expect, it } from 'vitest';
import { Throughput } from '../../src/report/throughput.js';
import { viewRecord, type PageView } from '../../src/report/record-view.js';

function page(startMs: number, elapsedMs: number, extra: Record<string, unknown> = {}): PageView {
  return viewRecord({
    type: 'page',
    url: 'http://a.test/',
    status: 200,
    bytes: 1000,
    fetchedAt: new Date(startMs).toISOString(),
    elapsedMs,
    ...extra,
  }) as PageView;
}

describe('Throughput', () => {
  it('averages requests in flight exactly over each bucket', () => {
    const tp = new Throughput({ baseWidthMs: 100 });
    tp.add(page(1000, 250)); // open 1000..1250
    tp.add(page(1100, 100)); // open 1100..1200
    const d = tp.finish(1000);
    expect(d.t).toEqual([0, 0.1, 0.2]);
    // [1000,1100): A only → 1; [1100,1200): A and B → 2; [1200,1300): A for 50 ms → 0.5.
    expect(d.inFlight).toEqual([1, 2, 0.5]);
    // Both finish in the third bucket: 2 pages in 100 ms = 20/s, 2000 bytes → 20,000 B/s.
    expect(d.pagesPerSecond).toEqual([0, 0, 20]);
    expect(d.bytesPerSecond).toEqual([0, 0, 20_000]);
  });

  it('sorts failures by kind, throttle events at their own time', () => {
    const tp = new Throughput({ baseWidthMs: 1000 });
    tp.add(page(0, 0, { status: 404 }));
    tp.add(page(0, 0, { status: 500 }));
    tp.add(page(0, 0, { status: 429 }));
    tp.add(
      page(1000, 0, {
        status: null,
        error: { code: 'CONNECTION_RESET', message: 'x' },
        throttles: [{ at: 2000, status: 503, retryAfterMs: 1000, pauseMs: 1000 }],
      }),
    );
    const d = tp.finish(0);
    expect(d.t).toEqual([0, 1, 2]);
    expect(d.http4xxPerSecond).toEqual([1, 0, 0]);
    expect(d.http5xxPerSecond).toEqual([1, 0, 0]);
    expect(d.throttledPerSecond).toEqual([1, 0, 1]);
    expect(d.errorsPerSecond).toEqual([0, 1, 0]);
  });

  it('has no buckets without timed records', () => {
    const tp = new Throughput();
    tp.add(viewRecord({ type: 'page', url: 'http://a.test/', fetchedAt: 'not a date' }) as PageView);
    expect(tp.finish(0).t).toEqual([]);
  });
});
