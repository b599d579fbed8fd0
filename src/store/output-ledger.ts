/**
 * Exactly once in `-o` across a crash (`--state`). A record is written (and
 * confirmed) before its URL is completed in the state file, and the file
 * commits every 50 ms; a `kill -9` in between leaves a record whose page the
 * resumed crawl fetches and writes again. The state file therefore notes, at
 * each commit, how far the output is known to be settled (`mark`); on resume
 * the records after that point are kept only if the state says their page
 * was done (`keepAfterCrash`), so each page's record appears once.
 */

/** Where an output file stands, in bytes from its start, whole lines only. */
export interface OutputPosition {
  /** What the stream has confirmed (its write callbacks ran). */
  confirmed(): number;
  /** What has been handed to it, confirmed or not: where the next record starts. */
  queued(): number;
}

/** What a state target offers to keep `-o` exact (SQLite; absent for Redis and memory). */
export interface OutputLedger {
  /** Where the output stood at the state's last commit (path resolved), if it was followed. */
  mark(): { path: string; offset: number } | undefined;
  /** Follow this output from now on, by its position in bytes from the file's start. */
  track(path: string, position: OutputPosition): void;
  /** The state holds this URL as done; `claimedAt` (a page record's fetchedAt, ms): done by that fetch or a later one. */
  isDone(url: string, claimedAt?: number): boolean;
  /** The state will hand this URL out again, never having completed it (queued, delayed or claimed): its record is written again. */
  willHandOut(url: string): boolean;
}

/**
 * Whether a record line found after the mark stays: a page record if its
 * URL is done; a skip record if its URL is done or the page it was found on
 * is (its page is not fetched again, so neither is it written again),
 * unless the state will hand its URL out again (`willHandOut`: a URL
 * skipped when claimed, robots.txt forbidding it, whose completion the
 * crash lost), which writes it again; an item (a page handler's) as its
 * page's record. Other records, and lines that do not parse, stay. A page waiting for its revisit (`--revisit`) is no longer
 * done: its record stays when the state completed it after the record's
 * claim.
 */
export function keepAfterCrash(line: string, state: Pick<OutputLedger, 'isDone' | 'willHandOut'>): boolean {
  let record: CrashRecord;
  try {
    record = JSON.parse(line) as CrashRecord;
  } catch {
    return true;
  }
  return keepRecordAfterCrash(record, state);
}

/** The fields of a record `keepAfterCrash` looks at. */
export type CrashRecord = { type?: unknown; url?: unknown; parent?: unknown; fetchedAt?: unknown; startedAt?: unknown };

/** `keepAfterCrash` of a record already parsed (the state file's record log parses its rows itself). */
export function keepRecordAfterCrash(record: CrashRecord, state: Pick<OutputLedger, 'isDone' | 'willHandOut'>): boolean {
  if (typeof record.url !== 'string') return true;
  const isDone = (url: string, claimedAt?: number) => state.isDone(url, claimedAt);
  // An item goes with its page's fetch: written again when that page is.
  if (record.type === 'page' || record.type === 'item') return pageRecordDone({ ...record, url: record.url }, isDone);
  if (record.type === 'skipped') {
    if (state.willHandOut(record.url)) return false;
    return isDone(record.url) || (typeof record.parent === 'string' && isDone(record.parent));
  }
  return true;
}

/**
 * Whether the state holds a page record's URL as done by the fetch it
 * records or a later one: claimed at its `fetchedAt`, else its `startedAt`
 * (a state file's record log keeps only that one).
 */
export function pageRecordDone(
  record: { url: string; fetchedAt?: unknown; startedAt?: unknown },
  isDone: (url: string, claimedAt?: number) => boolean,
): boolean {
  const at = typeof record.fetchedAt === 'string' ? record.fetchedAt : typeof record.startedAt === 'string' ? record.startedAt : undefined;
  return isDone(record.url, at === undefined ? undefined : Date.parse(at));
}
