/**
 * Per-host totals of what rendering browsers asked for, in the crawl's stats
 * (the summary's "browser requests" lines, `--stats` JSON `hosts[].subrequests`):
 * each request counted at the host it was for, not the page's host.
 */
import { hostStats, type CrawlStats } from '../output/summary.js';
import type { SubrequestEvent } from './page-requests.js';

export function countSubrequest(stats: CrawlStats, event: SubrequestEvent): void {
  if (event.outcome === 'failed' || event.host === '') return;
  const row = hostStats(stats, event.host);
  row.subrequests ??= { fetched: 0, cached: 0, blocked: 0, disallowed: 0 };
  row.subrequests[event.outcome]++;
}
