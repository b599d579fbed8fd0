/**
 * The set-up blocks the system tests share, each one call that registers its
 * own vitest hooks, so a file states what it needs instead of repeating how:
 *
 * - `useRedisServer()`: one throwaway redis-server for the enclosing
 *   describe block (started in beforeAll, stopped in afterAll); call it inside
 *   a `describe.skipIf(redisServerMissing !== undefined)` block. Tests that
 *   share it keep apart by `newCrawlId(prefix)`, a fresh id per call.
 * - `useTempDir(prefix)`: a fresh temp dir per test, removed after it.
 * - `chromium`: the browser the rendering and report tests drive, found as
 *   the crawler finds it (CRAWL_BROWSER, else PATH), with the skip rule of
 *   redis-server.ts: skipped when missing, except under CI
 *   (CRAWL_REQUIRE_SERVICES=1), where a missing browser fails instead.
 *
 * Files running in parallel never share any of these: every server listens
 * on a random port of 127.0.0.1 and every dir is a new mkdtemp.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { findBrowser } from '../../src/render/browser-path.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

export { redisServerMissing } from './redis-server.js';

/** A fresh crawl id: tests sharing one Redis never share a crawl. */
export const newCrawlId = (prefix: string): string => `${prefix}-${randomUUID()}`;

export interface RedisFixture {
  /** The running server (throws outside a test: it starts in beforeAll). */
  readonly server: RedisServer;
  /** `redis://127.0.0.1:PORT` of the running server. */
  readonly url: string;
}

/** One redis-server for the enclosing describe block; `options.args` as for startRedisServer. */
export function useRedisServer(options: { args?: string[] } = {}): RedisFixture {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedisServer(5_000, options);
  });
  afterAll(async () => {
    await server?.stop();
    server = undefined;
  });
  return {
    get server() {
      if (server === undefined) throw new Error('useRedisServer: the server runs only inside the tests of its describe block');
      return server;
    },
    get url() {
      return this.server.url;
    },
  };
}

export interface TempDir {
  /** This test's directory. */
  readonly path: string;
}

/** A new temp dir (`prefix` + random) before each test, removed after it. */
export function useTempDir(prefix: string): TempDir {
  let path: string | undefined;
  beforeEach(async () => {
    path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (path !== undefined) await rm(path, { recursive: true, force: true });
    path = undefined;
  });
  return {
    get path() {
      if (path === undefined) throw new Error('useTempDir: the dir exists only inside a test');
      return path;
    },
  };
}

function locateChromium(): string | undefined {
  try {
    return findBrowser(null);
  } catch {
    return undefined;
  }
}

const chromiumPath = locateChromium();
const chromiumRequired = process.env.CRAWL_REQUIRE_SERVICES === '1';

/** The browser the rendering tests use; `missing` says why they are skipped (undefined: they run). */
export const chromium: { readonly path: string; readonly missing: string | undefined } = {
  // Under CI a missing browser must fail the tests, so they run and name the path that is not there.
  path: chromiumPath ?? process.env.CRAWL_BROWSER ?? '/usr/bin/chromium',
  missing:
    chromiumPath === undefined && !chromiumRequired
      ? 'no Chromium (CRAWL_BROWSER, or chromium on PATH; apt-get install chromium, .ci/run does it): the browser tests are skipped'
      : undefined,
};
