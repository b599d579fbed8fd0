/**
 * `crawl status --state FILE`: how a crawl kept in a state file stands, while
 * it runs or after it stopped. Text for people, `--json` for scripts.
 *
 * `--watch [interval]` (for people without Prometheus) prints it again every
 * interval (default 2s) until Ctrl-C (exit 130, as for any command) or the
 * crawl ends: finished, or, for a state file, no process holding it any
 * more. On a terminal each print replaces the last; elsewhere each text
 * print starts with a time stamp line, and `--json` prints one object per line.
 */
import { interruptibleWait } from './interruptible-wait.js';
import { resolve } from 'node:path';
import { readCrawlStatus, recentRate, type CrawlStatus } from '../store/sqlite-status.js';
import { UsageError } from '../config/seeds.js';
import { integerProblem } from '../config/fields.js';
import { durationFlag, EXIT, type Io, type StatusFlags } from './flags.js';
import type { RedisStatusData } from '../store/redis-store.js';
import { checkRedisFlags, redactRedisUrl, redisConnection } from './state-target.js';
import { loadConfig } from '../config/load-config.js';
import { buildSettings } from '../config/settings.js';

export async function statusCommand(flags: StatusFlags, io: Io): Promise<number> {
  const topProblem = integerProblem(Number(flags.top ?? '10'), 1, undefined, flags.top ?? '10');
  if (topProblem) throw new UsageError(`--top: ${topProblem}`);
  const top = Number(flags.top ?? '10');
  if ((flags.state === undefined) === (flags.redis === undefined))
    throw new UsageError('crawl status needs --state FILE or --redis URL --crawl-id NAME (one of them)');
  checkRedisFlags(flags, 'the shared crawl to show');
  const everyMs = flags.watch === undefined ? undefined : watchInterval(flags.watch);
  const withQuiet = await quietHours(flags, io);
  if (flags.redis !== undefined) {
    const { RedisStore } = await import('../store/redis-store.js');
    const store = new RedisStore({ ...redisConnection(flags, io.cwd), crawlId: flags.crawlId! });
    try {
      const read = async (): Promise<CrawlStatus> => {
        const data = await store.status();
        if (!data.exists) throw new UsageError(`Redis holds no crawl named "${flags.crawlId}" at ${redactRedisUrl(flags.redis!)}`);
        return withQuiet(redisCrawlStatus(data, top, `Redis crawl "${flags.crawlId}"`));
      };
      // Workers come and go: a shared crawl has ended only once it is finished.
      return await show(read, (s) => s.finished, flags, io, everyMs);
    } finally {
      await store.close();
    }
  }
  const path = resolve(io.cwd, flags.state!);
  const read = async (): Promise<CrawlStatus> => withQuiet({ ...readCrawlStatus(path, { top }), file: flags.state! });
  return show(read, (s) => s.finished || s.heldBy === null, flags, io, everyMs);
}

/**
 * The crawl's config (`--config`, else ./crawler.config.json when present,
 * as `crawl` reads it): a status then names the queued hosts waiting for
 * their quiet hours, which the store does not keep (they are config). A
 * status without a config, or with one that sets no hours, is unchanged.
 */
async function quietHours(flags: StatusFlags, io: Io): Promise<(s: CrawlStatus) => CrawlStatus> {
  const file = await loadConfig(flags.config, io.cwd);
  const setsHours = file !== undefined && (file.defaults.hours !== undefined || Object.values(file.domains).some((entry) => entry.hours !== undefined));
  if (!setsHours) return (s) => s;
  const settings = buildSettings(file, {});
  return (s) => {
    const now = Date.now();
    const quiet: NonNullable<CrawlStatus['quiet']> = [];
    for (const { host } of s.topQueued) {
      const hours = settings.policyFor(host).hours;
      if (!hours || hours.isOpen(now)) continue;
      const open = hours.nextOpen(now);
      quiet.push({ host, opensAt: new Date(open).toISOString(), opensAtLocal: hours.clockAt(open), timezone: hours.toJSON().timezone });
    }
    return quiet.length > 0 ? { ...s, quiet } : s;
  };
}

/** Prints the status once, or (with `everyMs`) again every interval until Ctrl-C or `ended`. */
async function show(read: () => Promise<CrawlStatus>, ended: (s: CrawlStatus) => boolean, flags: StatusFlags, io: Io, everyMs?: number): Promise<number> {
  const print = (s: CrawlStatus): void => {
    io.stdout.write(flags.json ? JSON.stringify(s) + '\n' : formatStatus(s));
  };
  if (everyMs === undefined) {
    print(await read());
    return EXIT.ok;
  }
  const tty = Boolean((io.stdout as { isTTY?: boolean }).isTTY);
  const wait = interruptibleWait(io);
  try {
    for (;;) {
      const status = await read();
      // A terminal shows the latest print only; a log keeps each, stamped.
      if (tty && !flags.json) io.stdout.write('\x1b[H\x1b[2J');
      else if (!flags.json) io.stdout.write(`--- ${new Date().toISOString()}\n`);
      print(status);
      if (ended(status)) return EXIT.ok;
      await wait.sleep(everyMs);
      const stopped = wait.signalExit();
      if (stopped !== undefined) return stopped;
    }
  } finally {
    wait.dispose();
  }
}

/** How often `--watch` prints by default. */
const WATCH_DEFAULT_MS = 2_000;

/** `--watch [interval]`: a duration from 100ms to 1h, a bare number in seconds; no value: 2s. */
function watchInterval(value: string | true): number {
  if (value === true) return WATCH_DEFAULT_MS;
  const ms = durationFlag('--watch', value);
  if (!(ms >= 100 && ms <= 3_600_000))
    throw new UsageError(`--watch expects an interval from 100ms to 1h (a bare number is seconds), got ${JSON.stringify(value)}`);
  return ms;
}

/** The Redis crawl in the shape `crawl status --state` prints, plus the workers holding leases. */
export function redisCrawlStatus(d: RedisStatusData, top: number, file: string): CrawlStatus {
  const byKind: Record<string, number> = {};
  for (const { record } of d.robots) byKind[record.kind] = (byKind[record.kind] ?? 0) + 1;
  const doneTotal = Object.values(d.outcomes).reduce((a, b) => a + b, 0);
  return {
    file,
    heldBy: null,
    workers: d.workers,
    finished: d.finished,
    seeds: d.seeds,
    createdAt: iso(d.createdAt),
    lastCommitAt: null,
    done: d.outcomes,
    doneTotal,
    // Redis trims its log of completions to the last minute: a younger crawl's count covers its whole life.
    ...recentRate(d.now, d.createdAt ?? -Infinity, () => d.recentPerMinute),
    queued: d.counts.queued,
    delayed: d.counts.delayed,
    leased: d.counts.leased,
    topQueued: [...d.work].sort((a, b) => b.queued - a.queued || (a.host < b.host ? -1 : 1)).slice(0, top),
    paused: d.hosts
      .filter((h) => h.pausedUntil !== null && h.pausedUntil > d.now)
      .slice(0, top)
      .map((h) => ({ host: h.host, until: iso(h.pausedUntil)! })),
    throttled: d.hosts
      .filter((h) => h.rateFactor < 1)
      .sort((a, b) => a.rateFactor - b.rateFactor)
      .slice(0, top)
      .map((h) => ({ host: h.host, rateFactor: h.rateFactor })),
    givenUp: d.hosts.filter((h) => h.givenUp).map((h) => h.host),
    ...((d.pass > 1 || d.pagesKept > 0) && { passes: { pass: d.pass, startedAt: iso(d.passStartedAt ?? d.createdAt), pagesKept: d.pagesKept } }),
    robots: {
      byKind,
      unavailable: d.robots.flatMap(({ origin, record: r }) => (r.kind === 'unavailable' ? [{ origin, reason: r.reason, retryAt: iso(r.retryAt) }] : [])),
    },
  };
}

const iso = (ms: number | null): string | null => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

export function formatStatus(s: CrawlStatus): string {
  const lines: string[] = [];
  // A claim whose lease has not expired is one a live worker keeps renewing.
  const liveWorkers = (s.workers ?? []).filter((w) => w.leases > w.expired);
  const state = s.finished
    ? 'finished'
    : s.workers !== undefined
      ? liveWorkers.length > 0
        ? `running (${liveWorkers.length} worker(s) holding requests: ${liveWorkers.map((w) => `${w.name} ${w.leases - w.expired}`).join(', ')})`
        : "no worker holding a request now (workers may be waiting on a host's pace, or none is running)"
      : s.heldBy !== null
        ? `running (process ${s.heldBy})`
        : 'stopped (run the same crawl command to resume)';
  lines.push(`${s.file}: ${state}`);
  lines.push(
    `  started ${s.createdAt ?? '?'}${s.lastCommitAt === null && s.workers !== undefined ? '' : `, last written ${s.lastCommitAt ?? '?'}`}; ${s.seeds.length} seed(s)`,
  );
  const outcomes = Object.entries(s.done)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const over = s.recentWindowMs >= 60_000 ? 'minute' : `${Math.round(s.recentWindowMs / 1000)}s`;
  lines.push(`  done:     ${s.doneTotal}${outcomes ? ` (${outcomes})` : ''}; ${s.recentRate}/s over the last ${over}`);
  lines.push(`  queued:   ${s.queued}, waiting to retry ${s.delayed - (s.revisits?.waiting ?? 0)}, claimed ${s.leased}${claims(s)}`);
  if (s.topQueued.length > 0) lines.push(`  top queues: ${s.topQueued.map((h) => `${h.host} ${h.queued}`).join(', ')}`);
  if (s.paused.length > 0) lines.push(`  paused:   ${s.paused.map((h) => `${h.host} until ${h.until}`).join(', ')}`);
  if (s.quiet !== undefined)
    lines.push(`  quiet:    ${s.quiet.map((h) => `${h.host} until ${h.opensAtLocal} ${h.timezone} (${h.opensAt}, quiet hours)`).join(', ')}`);
  if (s.throttled.length > 0)
    lines.push(`  slowed:   ${s.throttled.map((h) => `${h.host} at ${Math.round(h.rateFactor * 1000) / 10}% of its rate`).join(', ')}`);
  if (s.givenUp.length > 0) lines.push(`  given up: ${s.givenUp.join(', ')}`);
  if (s.passes !== undefined) {
    const next = s.finished ? `; crawl ${s.workers === undefined ? '--state FILE' : '--redis URL --crawl-id ID'} --recrawl begins the next` : '';
    lines.push(`  pass:     ${s.passes.pass}, begun ${s.passes.startedAt ?? '?'}; ${s.passes.pagesKept} page(s) with history${next}`);
  }
  if (s.revisits !== undefined)
    lines.push(`  revisits: ${s.revisits.waiting} page(s) waiting; next due ${s.revisits.nextAt ?? '?'}, ${s.revisits.dueWithinHour} within the hour`);
  const kinds = Object.entries(s.robots.byKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  lines.push(`  robots.txt: ${kinds || 'none fetched yet'}`);
  for (const u of s.robots.unavailable) lines.push(`    ${u.origin}: ${u.reason}${u.retryAt ? `, retry at ${u.retryAt}` : ', given up'}`);
  return lines.join('\n') + '\n';
}

/** Whose the claimed URLs are: a running process's, live workers', or left behind by a stop. */
function claims(s: CrawlStatus): string {
  if (s.leased === 0) return '';
  if (s.workers === undefined) return s.heldBy === null ? ' (left by a stop or crash; back in the queue on resume)' : '';
  const expired = s.workers.reduce((n, w) => n + w.expired, 0);
  const live = s.leased - expired;
  const left = `${expired} expired: left by a stopped worker; back in the queue when a worker runs`;
  if (expired === 0) return ' (all held by live workers)';
  return live > 0 ? ` (${live} held by live workers; ${left})` : ` (${left})`;
}
