/**
 * How the Redis store writes what it keeps, and reads it back: frontier
 * entries in the compact positional form the scripts take (redis-scripts.ts,
 * "A stored entry"), and a host record's fields every worker must honour.
 * Pure functions, no connection.
 */
import type { HostSaved } from '../politeness/host-state.js';
import type { FrontierEntry } from './crawl-store.js';

/** Redis could not be reached, or answered something this store cannot use. */
export class RedisStoreError extends Error {
  readonly code: string = 'REDIS_UNAVAILABLE';
}

/** What `saveHost` writes into a host's hash for every worker to honour. */
export type SharedFields = Record<'factor' | 'cdelay' | 'sgap' | 'suntil' | 'givenup' | 'failures', string>;

/** The shared fields of a saved record, on the saver's clock ('' for "never"). */
export function sharedFields(saved: HostSaved): SharedFields {
  const { limiter } = saved;
  return {
    factor: String(limiter.rateFactor),
    cdelay: String(limiter.crawlDelayMs),
    sgap: String(limiter.serverGapMs),
    suntil: limiter.serverGapUntil === null ? '' : String(limiter.serverGapUntil),
    givenup: saved.givenUp ? '1' : '0',
    failures: String(saved.feedback?.failures ?? 0),
  };
}

/**
 * A frontier entry as the scripts take it (redis-scripts.ts, "A stored
 * entry"): HEAD (`depth,hops,attempt,throttles,extraLen`, trailing defaults
 * left out), PARENT ('' for none, else `p` and the URL: the script interns
 * it) and TAIL (the extra's JSON, then the URL: `/PATH` for
 * `https://KEY/PATH`, `*` then `/PATH` for `http://KEY/PATH`, else whole).
 */
export function encodeEntry(entry: FrontierEntry, key: string): [head: string, parent: string, tail: string] {
  const extra = entry.extra === undefined ? '' : JSON.stringify(entry.extra);
  const head = [
    String(entry.depth),
    String(entry.hops),
    String(entry.attempt),
    entry.throttles === undefined ? '' : String(entry.throttles),
    String(extra.length),
  ];
  const defaults = ['', '0', '0', '', '0'];
  while (head.length > 1 && head[head.length - 1] === defaults[head.length - 1]) head.pop();
  const { url } = entry;
  let short = url;
  if (url.startsWith(key, 8) && url.startsWith('https://') && url[8 + key.length] === '/') short = url.slice(8 + key.length);
  else if (url.startsWith(key, 7) && url.startsWith('http://') && url[7 + key.length] === '/') short = `*${url.slice(7 + key.length)}`;
  return [head.join(','), entry.parent === null ? '' : `p${entry.parent}`, extra + short];
}

/** The entry a script answered with: its stored form, its PARENT and its queue's host key. */
export function decodeEntry(stored: string, parent: string, key: string): FrontierEntry {
  const a = stored.indexOf('|');
  const b = stored.indexOf('|', a + 1);
  if (a < 0 || b < 0) throw new RedisStoreError(`unexpected frontier entry in Redis: ${JSON.stringify(stored.slice(0, 200))}`);
  const [depth, hops = '0', attempt = '0', throttles = '', extraLength = '0'] = stored.slice(0, a).split(',');
  const tail = stored.slice(b + 1);
  const n = Number(extraLength);
  const short = tail.slice(n);
  const url = short[0] === '/' ? `https://${key}${short}` : short[0] === '*' ? `http://${key}${short.slice(1)}` : short;
  const entry: FrontierEntry = { url, depth: Number(depth), parent: parent === '' ? null : parent.slice(1), hops: Number(hops), attempt: Number(attempt) };
  if (throttles !== '') entry.throttles = Number(throttles);
  if (n > 0) entry.extra = JSON.parse(tail.slice(0, n)) as FrontierEntry['extra'];
  return entry;
}

/** entry, PARENT, host triples, as DRAIN and CLEAR answer. */
export function decodeTriples(flat: unknown[]): FrontierEntry[] {
  const out: FrontierEntry[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) out.push(decodeEntry(String(flat[i]), String(flat[i + 1]), String(flat[i + 2])));
  return out;
}

/** HostSaved is JSON-safe (host-state.ts writes null for "never"). */
export function parseSaved(json: string): HostSaved {
  return JSON.parse(json) as HostSaved;
}

/** Moves every clock time of a saved record by `delta` ms (durations stay). */
export function shiftSaved(saved: HostSaved, delta: number): HostSaved {
  if (delta === 0) return saved;
  const at = (t: number | null): number | null => (t === null || !Number.isFinite(t) ? t : t + delta);
  const l = saved.limiter;
  return {
    ...saved,
    limiter: {
      ...l,
      lastStart: at(l.lastStart),
      pausedUntil: at(l.pausedUntil),
      serverGapUntil: at(l.serverGapUntil),
      windows: l.windows.map((w) => ({ windowMs: w.windowMs, starts: w.starts.map((t) => t + delta) })),
    },
    feedback: saved.feedback && { ...saved.feedback, lastEventAt: at(saved.feedback.lastEventAt)! },
  };
}
