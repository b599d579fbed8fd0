/**
 * Finds and reads the config file a command uses: the one named by
 * `--config`, else ./crawler.config.json when present, else none.
 */
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfigFile, type FileConfig } from './settings.js';

export const DEFAULT_CONFIG_FILE = 'crawler.config.json';

export async function loadConfig(path: string | undefined, cwd: string): Promise<FileConfig | undefined> {
  // Name the file as the user typed it in messages (the process cwd is io.cwd outside tests).
  if (path !== undefined) return loadConfigFile(cwd === process.cwd() ? path : resolve(cwd, path));
  const fallback = resolve(cwd, DEFAULT_CONFIG_FILE);
  try {
    await access(fallback);
  } catch {
    return undefined;
  }
  return loadConfigFile(fallback);
}
