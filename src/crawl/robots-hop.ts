/**
 * One robots.txt request for an origin's file (or one hop of its redirects),
 * run as the next request of that URL's host so it passes the host's limiter
 * like a page; the RobotsCache (robots/cache.ts) asks for each hop. A hop to
 * another host is made whatever the crawl's scope (RFC 9309 §2.3.1.2: follow
 * redirects "even across authorities"): it is paced by, and counts against,
 * THAT host's limits and concurrency, and meets the SSRF guard like any
 * request; its rules still apply only to the origin that asked. A 429/503
 * pauses the host as it would for a page; with `recorded`, each request gets
 * its `type: "robots"` record (below).
 */
import type { FetchResult } from '../fetch/fetcher.js';
import type { HostFeedback } from '../politeness/server-feedback.js';
import { countRobotsRequest } from '../output/summary.js';
import type { HostPolicy } from '../config/settings-types.js';
import { throttleEvent } from './attempt-history.js';
import { hostKey, type CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { RequestSender } from './request-sender.js';
import type { Scheduler } from '../schedule/scheduler.js';
import { FetchError } from '../fetch/fetch-error.js';
import type { RobotsFetchRecord } from '../types.js';
import type { ThrottleMark } from './attempt-history.js';
import { isoInstant } from '../util/iso-time.js';

/**
 * robots.txt is small: a server that cannot send it within this (in all, not
 * per silence: a file sent a byte a second is cut off too) is treated as
 * unreachable (RFC 9309 §2.3.1.4) rather than holding up its host for a full
 * page timeout on every attempt.
 */
export const ROBOTS_TIMEOUT_MS = 10_000;

export interface RobotsHopParts {
  scheduler: Scheduler<HostPolicy>;
  sender: RequestSender;
  feedback: HostFeedback;
  records: CrawlRecords;
  /** Write a `type: "robots"` record per request. */
  recorded: boolean;
}

/** One robots.txt request (`origin`'s file or a hop of its redirects), run as the next request of that URL's host. */
export function fetchRobotsHop(ctx: CrawlContext, parts: RobotsHopParts, url: string): Promise<FetchResult> {
  const { clock, settings, hosts, stats } = ctx;
  const key = hostKey(ctx, url);
  return parts.sender.submit(parts.scheduler, key, async (job, slot) => {
    countRobotsRequest(stats, key);
    const beganAt = clock.now();
    const { recorded } = parts;
    try {
      const { res, startedAt, sinceLastMs } = await parts.sender.send(
        url,
        key,
        job,
        {
          read: 'text',
          maxBodyBytes: settings.robots.maxBytes,
          timeoutMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.headersMs),
          totalMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.totalMs),
        },
        slot,
      );
      // A 429/503 on robots.txt pauses the host like any other (RobotsCache
      // treats it as unavailable and retries after its own delay too).
      const throttled = hosts.get(key).policy.throttleStatuses.includes(res.status);
      if (throttled) parts.feedback.throttled(key, res, startedAt, sinceLastMs);
      const now = clock.now();
      const throttle = throttled && recorded ? throttleEvent(res, now, clock.wallNow(), hosts.get(key).limiter.pausedUntil) : undefined;
      if (recorded) parts.records.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: now, res, startedAt, throttle }));
      return res;
    } catch (err) {
      if (recorded) parts.records.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: clock.now(), err }));
      throw err;
    }
  });
}

/*
 * The record of one robots.txt request (`type: "robots"`, types.ts
 * RobotsFetchRecord): robots.txt requests pass their host's limiter like
 * pages do, so a report that shows a host's request starts must see them too.
 * Written with `--emit-robots`, and always into the report and a state
 * file's record log (report/record-routes.ts).
 */
export interface RobotsFetchOutcome {
  url: string;
  /** The host key whose limiter paced it. */
  host: string;
  /** When the attempt began (the fallback start when it was never sent), and when it ended. */
  beganAt: number;
  endedAt: number;
  /** The answer, with when the request was sent… */
  res?: FetchResult;
  startedAt?: number;
  /** …or why none came. */
  err?: unknown;
  /** The pause a 429/503 answer caused. */
  throttle?: ThrottleMark;
}

export function robotsFetchRecord(o: RobotsFetchOutcome): RobotsFetchRecord {
  const record: RobotsFetchRecord = {
    type: 'robots',
    url: o.url,
    host: o.host,
    status: o.res?.status ?? null,
    startedAt: isoInstant(o.startedAt ?? o.beganAt),
    elapsedMs: Math.round(o.res ? o.res.elapsedMs : o.endedAt - o.beganAt),
    bytes: o.res?.bytes ?? 0,
  };
  if (o.throttle) {
    record.pausedUntil = isoInstant(o.throttle.pausedUntil);
    if (o.throttle.retryAfterMs !== undefined) record.retryAfterMs = o.throttle.retryAfterMs;
  }
  if (!o.res) {
    const err = o.err;
    const code = err instanceof FetchError ? err.code : typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'FETCH_FAILED';
    record.error = { code, message: err instanceof Error ? err.message : String(err) };
  }
  return record;
}
