/**
 * Seed URLs from the command line and from a seeds file, checked before the
 * crawl starts: a bad seed is a usage error, not a record.
 */
import { readFile } from 'node:fs/promises';
import { canonicalize, urlProblem } from '../parse/url.js';

export class UsageError extends Error {
  readonly code = 'USAGE';
}

/**
 * Reads one URL per line; blank lines and `#` comments are ignored. `-` is
 * stdin. Returns the URLs canonical (as checkSeeds would: each is parsed
 * once), in file order, repeats kept. Throws UsageError naming the line of
 * the first bad URL, or saying the file holds none.
 */
export async function readSeedsFile(path: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string[]> {
  let text: string;
  try {
    text = path === '-' ? await readAll(stdin) : await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read seeds file ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(err))}`);
  }
  const name = path === '-' ? 'seeds from stdin' : `seeds file ${path}`;
  const seeds: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === '' || line.startsWith('#')) continue;
    const url = canonicalize(parseAbsolute(line));
    if (url === null) {
      throw new UsageError(`${name}, line ${n + 1}: invalid seed URL ${JSON.stringify(line)}: ${urlProblem(line)}`);
    }
    seeds.push(url);
  }
  if (seeds.length === 0) throw new UsageError(`${name} is empty: no URL in it (blank lines and # comments are ignored)`);
  return seeds;
}

/**
 * Canonical seeds in the given order, duplicates removed; throws UsageError
 * naming the first bad one. `canonical` are seeds already canonical (a
 * seeds file's, from readSeedsFile): added after `raw`, not parsed again.
 */
export function checkSeeds(raw: readonly string[], canonical: readonly string[] = []): string[] {
  if (raw.length === 0 && canonical.length === 0) throw new UsageError('no seed URL given (usage: crawl [options] <seed-url...>)');
  const out: string[] = [];
  const seen = new Set<string>();
  const keep = (url: string): void => {
    if (seen.has(url)) return;
    seen.add(url);
    out.push(url);
  };
  for (const s of raw) {
    const url = canonicalize(parseAbsolute(s));
    if (url === null) throw new UsageError(`invalid seed URL ${JSON.stringify(s)}: ${urlProblem(s)}`);
    keep(url);
  }
  for (const url of canonical) keep(url);
  return out;
}

function parseAbsolute(s: string): string {
  try {
    return new URL(s).href;
  } catch {
    return 'invalid:';
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}
