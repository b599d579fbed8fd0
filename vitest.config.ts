import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (pure and fake-clock tests: no build, no sockets, no
 * spawned process; `npm run test:unit`, the inner loop) and `system` (real
 * HTTP servers, the spawned binary from dist/, redis-server, Chromium, tmpfs
 * mounts; named `*.system.test.ts`). `npm test` builds and runs both: the
 * unit project first, then the system files several at a time.
 */

/**
 * System files at once. Most of their time is waiting in real time (a
 * spawned crawl at 5/s, Redis restarting, a browser): with 3 at once the
 * whole suite kept 2 cores only ~60% busy (173 s of wall time, 211 s of
 * CPU). 4 take 137 s, 5 take 128 s; 4 leave headroom for the timing of
 * any one of them, and every gap a parallel file checks is judged as the
 * crawler wrote its requests, which a busy core cannot shorten. Each file
 * owns its servers (random ports) and temp dirs, so files never share
 * state. CRAWL_TEST_WORKERS overrides it (1 runs them one by one).
 */
const systemWorkers = Number(process.env.CRAWL_TEST_WORKERS ?? 4);

/**
 * System files that judge millisecond gaps with the server and the crawl in
 * one process (200/s: a 5 ms gap; 2,000 pages in under 3 s). The server
 * stamps an arrival on its own event loop, so a core taken by a parallel
 * file shortens a measured gap without any request being early. They run
 * last, one at a time, on a quiet machine: their assertions stay exact.
 */
const serialFiles = ['test/crawl/crawl.system.test.ts', 'test/web.system.test.ts', 'test/fetch/http2.system.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: ['test/support/temp-root.ts'],
    projects: [
      // Without isolation the unit files share one module graph: 16 s instead of 77 s on 2 cores,
      // almost all of it was importing the same modules again per file. They keep no global state.
      // Two workers, one per core: each imports the modules once (10.4 s with one worker, 7.8 s with two).
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.system.test.ts'],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.system.test.ts'],
          exclude: serialFiles,
          // No fresh module graph per file either: 72 files each importing the fixtures, the spawn helpers and
          // (for the in-process API tests) dist/ again cost ~60 s of worker time, 160 s -> 142 s of wall time.
          // Each file owns its servers, temp dirs and Redis; the library keeps no global state between crawls.
          isolate: false,
          maxWorkers: systemWorkers,
          sequence: { groupOrder: 1 },
          // A test's own bound on how long it may take is a fact about load, not about the crawler.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'system-serial',
          include: serialFiles,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
