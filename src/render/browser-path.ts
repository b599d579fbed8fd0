/**
 * Where the browser is: `--browser PATH` (or the config's `renderOptions.browser`),
 * else CRAWL_BROWSER, else the first Chromium found on PATH. Synchronous and
 * done before the crawl starts, so a crawl that cannot render fails with one
 * line (BrowserMissingError, code BROWSER_MISSING; the CLI exits 2) before it
 * has sent a single request, rather than after fetching its first page.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Names Debian, Ubuntu, Fedora and Google ship the browser under, in the order tried. */
export const BROWSER_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'] as const;

export const INSTALL_HINT = 'install Chromium (Debian/Ubuntu: apt-get install chromium), or name one with --browser PATH or CRAWL_BROWSER';

export class BrowserMissingError extends Error {
  readonly code = 'BROWSER_MISSING';

  constructor(message: string) {
    super(message);
    this.name = 'BrowserMissingError';
  }
}

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browser's executable. `named` (the flag or config) wins, then
 * `env.CRAWL_BROWSER`; a path named there must exist (a typo is not
 * silently replaced by another browser). Throws BrowserMissingError.
 */
export function findBrowser(named: string | null | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const explicit = named ?? (env.CRAWL_BROWSER !== undefined && env.CRAWL_BROWSER !== '' ? env.CRAWL_BROWSER : undefined);
  if (explicit !== undefined) {
    const from = named != null ? '--browser' : 'CRAWL_BROWSER';
    const path = isAbsolute(explicit) || explicit.includes('/') ? resolve(cwd, explicit) : onPath(explicit, env);
    if (path !== undefined && executable(path)) return path;
    throw new BrowserMissingError(`rendering needs a browser: ${from} ${JSON.stringify(explicit)} is not an executable file; ${INSTALL_HINT}`);
  }
  for (const name of BROWSER_NAMES) {
    const path = onPath(name, env);
    if (path !== undefined) return path;
  }
  throw new BrowserMissingError(`rendering needs a browser and none was found on PATH (${BROWSER_NAMES.join(', ')}); ${INSTALL_HINT}`);
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  return undefined;
}
