/**
 * The records the crawler writes, as types: inferred from their one
 * declaration, the zod schemas of output/record-schema.ts. (The settings
 * every module reads live with config/: config/settings-types.ts.)
 */
import type { z } from 'zod';
import type {
  FETCH_ERROR_CODES,
  itemRecordSchema,
  PAGE_CHANGES,
  RECORD_ERROR_CODES,
  SKIP_REASONS,
  pageRecordSchema,
  robotsRecordSchema,
  skipRecordSchema,
  subrequestCountsSchema,
  throttleEventSchema,
} from './output/record-schema.js';

// ---------------------------------------------------------------- records
// Declared once, as zod schemas in output/record-schema.ts (which also
// generates record.schema.json and documents each field); the types are
// inferred from them. Type-only imports: nothing of zod loads for these.

/** Why a URL was not fetched. Stable strings: scripts match on them (the list, with what each means: output/record-schema.ts). */
export type SkipReason = (typeof SKIP_REASONS)[number];
/** Stable error codes of failed requests; group by these, never by message. */
export type ErrorCode = (typeof FETCH_ERROR_CODES)[number];
/** Error codes a record may carry: a failed request's (ErrorCode), or what the crawl concluded about an answer that arrived. */
export type RecordErrorCode = (typeof RECORD_ERROR_CODES)[number];
/** What a re-crawl found: `new`, `changed`, `unchanged` (a 304, or the same digest), `removed` (a 404/410, or a redirect elsewhere, where there was a page). */
export type PageChange = (typeof PAGE_CHANGES)[number];
/** What a rendered page's browser asked for (render/page-requests.ts says what each means). */
export type SubrequestCounts = z.output<typeof subrequestCountsSchema>;
/** A throttling answer (a status in `throttleStatuses`) and the pause it caused. */
export type ThrottleEvent = z.output<typeof throttleEventSchema>;
/** A URL that was requested (or whose host could not be connected to at all). */
export type PageRecord = z.output<typeof pageRecordSchema>;
/** A URL not fetched. */
export type SkipRecord = z.output<typeof skipRecordSchema>;
/** One robots.txt request (each redirect hop is one), written with `--emit-robots` (and always kept for the report). */
export type RobotsFetchRecord = z.output<typeof robotsRecordSchema>;

/** An item a page handler pushed (`ctx.push`), written just before its page's record. */
export type ItemRecord = z.output<typeof itemRecordSchema>;

export type OutputRecord = PageRecord | SkipRecord | RobotsFetchRecord | ItemRecord;
