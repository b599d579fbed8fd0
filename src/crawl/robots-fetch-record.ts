/**
 * The record of one robots.txt request (`type: "robots"`, types.ts
 * RobotsFetchRecord): robots.txt requests pass their host's limiter like
 * pages do, so a report that shows a host's request starts must see them too.
 * Written with `--emit-robots`, and always into the report and a state
 * file's record log (report/record-routes.ts).
 */
import { FetchError } from '../fetch/fetch-error.js';
import type { FetchResult } from '../fetch/fetcher.js';
import type { RobotsFetchRecord } from '../types.js';
import type { ThrottleMark } from './attempt-history.js';
import { isoInstant } from './iso-time.js';

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
