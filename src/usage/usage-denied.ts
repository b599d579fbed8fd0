/**
 * A page whose use for the crawl's declared purpose (`--purpose`) was
 * stated `n` after its response came (its headers or its document): its
 * record keeps URL, status, links and what was stated, and says
 * `usageDenied`; its content, extracted fields, saved body and WARC records
 * are withheld, and no page handler runs on it. Its links are still
 * followed: they are the site's, not the page's content.
 */
import type { CrawlSettings, HostPolicy } from '../config/settings-types.js';
import { hostStats, type CrawlStats } from '../output/summary.js';
import type { PageRecord } from '../types.js';
import type { Purpose } from './usage-vocab.js';
import { malformedField } from './page-usage.js';

/** The purposes declared for a host with `policy`: its `domains` entry's own, else the crawl's (`--purpose`). */
export function purposesFor(settings: Pick<CrawlSettings, 'purpose'>, policy: Pick<HostPolicy, 'purpose'>): readonly Purpose[] {
  return policy.purpose ?? settings.purpose;
}

/** The first declared purpose the page's usage states `n` for, or undefined. */
export function deniedPurpose(purposes: readonly Purpose[], usage: PageRecord['usage']): Purpose | undefined {
  if (usage === undefined || purposes.length === 0) return undefined;
  return purposes.find((p) => usage[p] === 'n');
}

/** Takes the page's content off its record and says why. */
export function withhold(record: PageRecord, purpose: Purpose): void {
  delete record.content;
  delete record.contentTruncated;
  delete record.extract;
  record.usageDenied = purpose;
}

/**
 * The page's Content-Usage header when it does not parse (it states
 * nothing, as the drafts say), for a warning: undefined when it parsed or
 * there was none. Only a field that stated nothing is parsed again.
 */
export function malformedUsageHeader(record: PageRecord): string | undefined {
  const field = record.usageSources?.find((s) => s.source === 'header' && s.name === 'content-usage');
  if (field === undefined || Object.keys(field.states).length > 0) return undefined;
  return malformedField(field.value) ? field.value : undefined;
}

/** One more page of `host` denied `purpose` (withheld, or not requested), for the summary, --stats and the report. */
export function countDenied(stats: CrawlStats, purpose: Purpose, host: string): void {
  stats.usageDenied ??= {};
  stats.usageDenied[purpose] = (stats.usageDenied[purpose] ?? 0) + 1;
  const row = hostStats(stats, host);
  row.usageDenied ??= {};
  row.usageDenied[purpose] = (row.usageDenied[purpose] ?? 0) + 1;
}
