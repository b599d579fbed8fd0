/**
 * vitest global setup: every temp dir a test makes (mkdtemp under os.tmpdir(), the spawned crawler's,
 * Chromium's profile, redis-server's dir) goes under one directory for the run, removed when the run
 * ends. Without it each `npm test` left ~80 directories in the system's temp dir for good.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Set while a run's directory exists: vitest runs this setup once per project, and they share one. */
const MARK = 'CRAWL_TEST_TEMP_ROOT';

export default function setup(): (() => void) | undefined {
  // A directory inside another would also lengthen every path in it: Chromium refuses to start when its
  // singleton socket's path passes the 108 bytes a Unix socket's path may have.
  if (process.env[MARK] !== undefined) return undefined;
  const before = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'crawl-tests-'));
  // os.tmpdir() reads TMPDIR on each call; workers and the processes tests spawn inherit it.
  process.env.TMPDIR = root;
  process.env[MARK] = root;
  return () => {
    delete process.env[MARK];
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      // A tmpfs a failed test left mounted, say: say where, do not fail a run that passed.
      process.stderr.write(`tests left ${root}: ${(err as Error).message}\n`);
    }
  };
}
