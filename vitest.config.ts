import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (pure and fake-clock tests: no build, no sockets, no
 * spawned process; `npm run test:unit`, the inner loop) and `system` (real
 * HTTP servers, the spawned binary from dist/, redis-server, Chromium, tmpfs
 * mounts; named `*.system.test.ts`). `npm test` builds and runs both.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      // Without isolation the unit files share one module graph: 16 s instead of 77 s on 2 cores,
      // almost all of it was importing the same modules again per file. They keep no global state.
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.system.test.ts'], isolate: false } },
      { extends: true, test: { name: 'system', include: ['test/**/*.system.test.ts'] } },
    ],
  },
});
