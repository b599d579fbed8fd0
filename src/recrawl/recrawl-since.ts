/**
 * `--since FILE`: a previous run's records (JSON lines, as `-o` wrote them)
 * as the history of a re-crawl without a state file. Each page record with
 * an answer that tells something (recrawl-change.ts `isTelling`) gives its
 * URL's validators (`etag`, `lastModified`), `digest`, status, `fetchedAt`
 * and its `linkList` when it has one (a redirect: its `location`); the
 * latest record of a URL wins.
 * Other lines (skips, robots.txt records, a summary) are passed over; a line
 * that is not JSON, or a file with no page record at all, is a usage error
 * naming the file and line, as is a file that cannot be read.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { PageHistory } from '../store/page-history.js';
import { isTelling } from './recrawl-change.js';

export interface SinceEntry {
  url: string;
  depth: number;
  parent: string | null;
  page: PageHistory;
  /** The record's linkList, or null: none kept. */
  outlinks: string[] | null;
}

/** Thrown for a file that cannot be used; its message is one line for the user. */
export class SinceError extends Error {}

export async function readSince(path: string, label = path): Promise<SinceEntry[]> {
  const byUrl = new Map<string, SinceEntry>();
  let lineNo = 0;
  try {
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new SinceError(`--since ${label}: line ${lineNo} is not JSON (expected the JSON lines a crawl wrote with -o)`);
      }
      const entry = sinceEntry(value);
      if (entry !== undefined) byUrl.set(entry.url, entry);
    }
  } catch (err) {
    if (err instanceof SinceError) throw err;
    const code = (err as { code?: string }).code;
    throw new SinceError(
      `--since ${label}: cannot read it (${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : code === 'EACCES' ? 'permission denied' : (code ?? (err as Error).message)})`,
    );
  }
  if (byUrl.size === 0) throw new SinceError(`--since ${label}: no page records in it (expected the JSON lines a crawl wrote with -o)`);
  return [...byUrl.values()];
}

/** One line's history, or undefined for a line that is not a usable page record. */
export function sinceEntry(value: unknown): SinceEntry | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const r = value as Record<string, unknown>;
  if (r.type !== 'page' || typeof r.url !== 'string' || typeof r.status !== 'number' || !isTelling(r.status)) return undefined;
  if (r.kind !== undefined) return undefined; // sitemaps and link checks are not pages to compare
  const fetchedAt = Date.parse(typeof r.fetchedAt === 'string' ? r.fetchedAt : '');
  const page: PageHistory = { status: r.status === 304 ? 200 : r.status, fetchedAt: Number.isFinite(fetchedAt) ? fetchedAt : 0 };
  // Validators of an answer that said `Vary: *` are never sent again (recrawl-change.ts), from a state file or from here.
  if (r.varyAll !== true) {
    if (typeof r.etag === 'string') page.etag = r.etag;
    if (typeof r.lastModified === 'string') page.lastModified = r.lastModified;
  }
  if (typeof r.digest === 'string') page.digest = r.digest;
  // A redirect's one outlink is its target (what a later pass compares a redirect with).
  const links =
    typeof r.location === 'string' && r.status >= 300 && r.status < 400
      ? [r.location]
      : Array.isArray(r.linkList)
        ? r.linkList.filter((l): l is string => typeof l === 'string')
        : null;
  const depth = typeof r.depth === 'number' && Number.isInteger(r.depth) && r.depth >= 0 ? r.depth : 0;
  return { url: r.url, depth, parent: typeof r.parent === 'string' ? r.parent : null, page, outlinks: links };
}
