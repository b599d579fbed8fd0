/**
 * The crawler's one archive hook: --save-dir and --warc behind a single
 * `keep()` per fetched page. The crawler asks the fetcher for a capture
 * (fetch/capture.ts) only when it has an archive, and calls `keep()` before
 * the page's record is written, so the record can name where its body went.
 *
 * What is kept: every page with a response goes into the WARC (redirects
 * and errors included: replay needs them; a re-crawl's unchanged page as a
 * revisit record); only a 2xx body is saved to the
 * save directory (a 404 page is not the URL's content). robots.txt and
 * requests that got no answer are in neither. What a rendering browser
 * fetched through the crawl goes into the WARC too (`keepResource`), once
 * per URL fetched.
 */
import type { FetchResult } from '../fetch/fetcher.js';
import type { PageRecord } from '../types.js';
import type { SaveDir } from './save-dir.js';
import type { WarcWriter } from './warc-writer.js';
import type { Revisit } from './warc-record.js';

/** The record fields an archive fills in. */
export type ArchivedFields = Pick<PageRecord, 'savedPath' | 'warcOffset'>;

export interface PageArchive {
  /** Keeps one fetched page; resolves with the fields for its record. Rejects with an OutputError when it cannot (the crawl stops). */
  keep(record: PageRecord, res: FetchResult): Promise<ArchivedFields>;
  /**
   * Keeps what a rendering browser fetched for a page (a script, a stylesheet,
   * an API answer): into the WARC only, which a replay of the page needs; the
   * save directory holds pages. `date` is ISO 8601. @default absent: not kept
   */
  keepResource?(res: FetchResult, date: string): Promise<void>;
}

export interface ClosableArchive extends PageArchive {
  /** Finishes the files (the WARC renamed into place). */
  close(): Promise<void>;
  /** Leaves the files as they are (a failed crawl): the WARC stays `.partial`. */
  abandon(): Promise<void>;
}

export function createPageArchive(parts: { saveDir?: SaveDir; warc?: WarcWriter }): ClosableArchive {
  const { saveDir, warc } = parts;
  return {
    async keep(record, res) {
      const capture = res.capture;
      if (capture === undefined) return {};
      const fields: ArchivedFields = {};
      const ok = res.status >= 200 && res.status < 300;
      const [savedPath, warcOffset] = await Promise.all([
        saveDir && ok ? saveDir.save(res.url, capture.body) : undefined,
        warc?.write({ url: withoutCredentials(res.url), date: record.fetchedAt, status: res.status, capture, revisit: revisitOf(record) }),
      ]);
      if (savedPath !== undefined) fields.savedPath = savedPath;
      if (warcOffset !== undefined) fields.warcOffset = warcOffset;
      return fields;
    },
    async keepResource(res, date) {
      if (res.capture === undefined || warc === undefined) return;
      await warc.write({ url: withoutCredentials(res.url), date, status: res.status, capture: res.capture });
    },
    async close() {
      await warc?.close();
    },
    async abandon() {
      await warc?.abandon();
    },
  };
}

/** A re-crawl's unchanged page repeats an earlier capture: a WARC revisit (warc-record.ts), not a second copy. */
function revisitOf(record: PageRecord): Revisit | undefined {
  if (record.change !== 'unchanged' || record.previousFetchedAt === undefined || record.status === null) return undefined;
  if (record.status === 304) return { profile: 'server-not-modified', refersToDate: record.previousFetchedAt };
  if (record.status >= 200 && record.status < 300 && record.digest !== undefined)
    return { profile: 'identical-payload-digest', refersToDate: record.previousFetchedAt };
  return undefined;
}

/** The URL as it goes into a WARC: user:password never leaves the crawler. */
function withoutCredentials(url: string): string {
  if (!url.includes('@')) return url;
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.href;
}
