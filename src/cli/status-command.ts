/**
 * `crawl status --state FILE`: how a crawl kept in a state file stands, while
 * it runs or after it stopped. Text for people, `--json` for scripts.
 */
import { resolve } from 'node:path';
import { readCrawlStatus, type CrawlStatus } from '../store/sqlite-status.js';
import { UsageError } from '../config/seeds.js';
import { EXIT, type Io, type StatusFlags } from './flags.js';

export async function statusCommand(flags: StatusFlags, io: Io): Promise<number> {
  const top = Number(flags.top ?? '10');
  if (!Number.isInteger(top) || top < 1) throw new UsageError(`--top expects a whole number from 1 up, got ${JSON.stringify(flags.top)}`);
  const status = readCrawlStatus(resolve(io.cwd, flags.state), { top });
  io.stdout.write(flags.json ? JSON.stringify({ ...status, file: flags.state }) + '\n' : formatStatus({ ...status, file: flags.state }));
  return EXIT.ok;
}

export function formatStatus(s: CrawlStatus): string {
  const lines: string[] = [];
  const state = s.finished ? 'finished' : s.heldBy !== null ? `running (process ${s.heldBy})` : 'stopped (run the same crawl command to resume)';
  lines.push(`${s.file}: ${state}`);
  lines.push(`  started ${s.createdAt ?? '?'}, last written ${s.lastCommitAt ?? '?'}; ${s.seeds.length} seed(s)`);
  const outcomes = Object.entries(s.done).map(([k, n]) => `${k} ${n}`).join(', ');
  lines.push(`  done:     ${s.doneTotal}${outcomes ? ` (${outcomes})` : ''}; ${s.recentRate}/s over the last minute`);
  lines.push(`  queued:   ${s.queued}, waiting to retry ${s.delayed}, claimed ${s.leased}${s.heldBy === null && s.leased > 0 ? ' (left by a stop or crash; back in the queue on resume)' : ''}`);
  if (s.topQueued.length > 0) lines.push(`  top queues: ${s.topQueued.map((h) => `${h.host} ${h.queued}`).join(', ')}`);
  if (s.paused.length > 0) lines.push(`  paused:   ${s.paused.map((h) => `${h.host} until ${h.until}`).join(', ')}`);
  if (s.throttled.length > 0) lines.push(`  slowed:   ${s.throttled.map((h) => `${h.host} at ${Math.round(h.rateFactor * 1000) / 10}% of its rate`).join(', ')}`);
  if (s.givenUp.length > 0) lines.push(`  given up: ${s.givenUp.join(', ')}`);
  const kinds = Object.entries(s.robots.byKind).map(([k, n]) => `${k} ${n}`).join(', ');
  lines.push(`  robots.txt: ${kinds || 'none fetched yet'}`);
  for (const u of s.robots.unavailable) lines.push(`    ${u.origin}: ${u.reason}${u.retryAt ? `, retry at ${u.retryAt}` : ', given up'}`);
  return lines.join('\n') + '\n';
}
