import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
 * Also the heaviest browser file, which would take the cores from others.
 */
const serialFiles = [
  'test/crawl/crawl.system.test.ts',
  'test/web.system.test.ts',
  'test/fetch/http2.system.test.ts',
  // Not for millisecond gaps but for their weight: ~30 pages rendered, popups included, at 4 at once; beside the
  // other browser files it starved them (render timeouts in render.system.test.ts, late Redis answers). And a
  // browser at --host-concurrency 8, which beside the Redis files left `status --watch` two prints.
  'test/render/escape.system.test.ts',
  'test/render/fetch-ahead.system.test.ts',
];

/**
 * System files that take 15 s or more (seconds, one full run on 2 cores),
 * started first, longest first. Vitest orders files by the durations it
 * cached from the last run, or by size when it has none (a fresh clone, as
 * in CI); either way a 30 s file could start when the others were nearly
 * done: in one run recrawl's 31 s began at 140 s of 171, with every other
 * system file over at 145. The rest keep Vitest's order. A slow file
 * missing here costs time, never a result.
 */
const slowFirst = [
  'test/store/redis-workers.system.test.ts', // 42
  'test/handler/handler-crash.system.test.ts', // 39
  'test/render/render.system.test.ts', // 35
  'test/crawl/recrawl.system.test.ts', // 31
  'test/usage/robots-usage.system.test.ts', // 32 under load
  'test/cli/build.system.test.ts', // 31 under load
  'test/crawl/revisit.system.test.ts', // 28
  'test/store/redis-workers-control.system.test.ts', // 28
  'test/store/state.system.test.ts', // 25
  'test/package.system.test.ts', // 23
  'test/store/state-files.system.test.ts', // 23
  'test/handler/handler-cli.system.test.ts', // 25 under load
  'test/store/redis-restart.system.test.ts', // 23
  'test/cli/status-live.system.test.ts', // 21
  'test/store/redis-tls-acl.system.test.ts', // 21 under load
  'test/store/state-safety.system.test.ts', // 20
  'test/store/redis-cluster.system.test.ts', // 19
  'test/cli/status-watch.system.test.ts', // 18
  'test/render/render-redis.system.test.ts', // 17
  'test/output/metrics.system.test.ts', // 17
  'test/cli/output-after-crash.system.test.ts', // 17 under load
  'test/render/browser-memory.system.test.ts', // 15
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = slowFirst.indexOf(relative(spec.project.config.root, spec.moduleId));
      return at === -1 ? slowFirst.length : at;
    };
    // Stable: within a project group (groupOrder) the listed files move ahead, the rest keep their places.
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder || rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: ['test/support/temp-root.ts'],
    sequence: { sequencer: SlowFirst },
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
