/**
 * One robots.txt request for an origin's file (or one hop of its redirects),
 * run as the next request of that URL's host so it passes the host's limiter
 * like a page; the RobotsCache (robots/cache.ts) asks for each hop. A 429/503
 * pauses the host as it would for a page; with `recorded`, each request gets
 * its `type: "robots"` record (robots-fetch-record.ts).
 */
import type { FetchResult } from '../fetch/fetcher.js';
import { redactCredentials } from '../fetch/redact.js';
import type { HostFeedback } from '../politeness/index.js';
import { addNote, countRobotsRequest } from '../output/summary.js';
import type { HostPolicy } from '../types.js';
import { throttleEvent } from './attempt-history.js';
import { hostKey, type CrawlContext } from './crawl-context.js';
import type { CrawlRecords } from './crawl-records.js';
import type { FrontierIntake } from './frontier-intake.js';
import type { RequestSender } from './request-sender.js';
import { robotsFetchRecord } from './robots-fetch-record.js';
import type { Scheduler } from './scheduler.js';

/**
 * robots.txt is small: a server that cannot send it within this (in all, not
 * per silence: a file sent a byte a second is cut off too) is treated as
 * unreachable (RFC 9309 §2.3.1.4) rather than holding up its host for a full
 * page timeout on every attempt.
 */
export const ROBOTS_TIMEOUT_MS = 10_000;

/** What a robots.txt hop answers with when it would leave the crawl's scope (robots/cache.ts reads it as unavailable). */
export const OUT_OF_SCOPE_CODE = 'OUT_OF_SCOPE';

export interface RobotsHopParts {
  scheduler: Scheduler<HostPolicy>;
  sender: RequestSender;
  feedback: HostFeedback;
  records: CrawlRecords;
  /** Whose `robotsScope` says where a robots.txt redirect may go. */
  intake: FrontierIntake;
  /** Write a `type: "robots"` record per request. */
  recorded: boolean;
}

/**
 * One robots.txt request for `origin`'s file, run as the next request of
 * that URL's host. A redirect hop out of the crawl's scope is not made: it
 * rejects with OUT_OF_SCOPE, which the cache reads as "unavailable" (allow
 * all, RFC 9309 §2.3.1.2–3, as for a redirect chain too long to follow).
 */
export function fetchRobotsHop(ctx: CrawlContext, parts: RobotsHopParts, url: string, origin?: string): Promise<FetchResult> {
  const { clock, settings, hosts, stats } = ctx;
  const key = hostKey(ctx, url);
  // A host's own robots.txt may always be read (a checked link's or a sitemap's host may be out of scope); its redirects may not.
  if (url !== `${origin}/robots.txt` && !parts.intake.robotsScope(url).ok) {
    const message = `robots.txt redirects out of scope to ${url}: not followed; read as unavailable (all allowed, RFC 9309 §2.3.1.2)`;
    const from = origin === undefined ? key : hostKey(ctx, origin);
    addNote(stats, message, from);
    ctx.log?.warn(redactCredentials(`${from}: ${message}`));
    return Promise.reject(Object.assign(new Error(message), { code: OUT_OF_SCOPE_CODE }));
  }
  return new Promise((resolve, reject) => {
    parts.scheduler.submit(key, async (job) => {
      countRobotsRequest(stats, key);
      const beganAt = clock.now();
      const { recorded } = parts;
      try {
        const { res, startedAt, sinceLastMs } = await parts.sender.send(url, key, job, {
          read: 'text',
          maxBodyBytes: settings.robots.maxBytes,
          timeoutMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.headersMs),
          totalMs: Math.min(ROBOTS_TIMEOUT_MS, settings.timeouts.totalMs),
        });
        // A 429/503 on robots.txt pauses the host like any other (RobotsCache
        // treats it as unavailable and retries after its own delay too).
        const throttled = hosts.get(key).policy.throttleStatuses.includes(res.status);
        if (throttled) parts.feedback.throttled(key, res, startedAt, sinceLastMs);
        const now = clock.now();
        const throttle = throttled && recorded ? throttleEvent(res, now, clock.wallNow(), hosts.get(key).limiter.pausedUntil) : undefined;
        if (recorded) parts.records.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: now, res, startedAt, throttle }));
        resolve(res);
      } catch (err) {
        if (recorded) parts.records.write(robotsFetchRecord({ url, host: key, beganAt, endedAt: clock.now(), err }));
        reject(err);
      }
    });
  });
}
