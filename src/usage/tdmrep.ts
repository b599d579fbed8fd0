/**
 * `/.well-known/tdmrep.json` (W3C TDM Reservation Protocol): an origin's
 * text-and-data-mining reservations by path, read before its pages are
 * requested. Fetched once per origin, only when a declared purpose makes it
 * matter (`tdm`, `train-ai`, `ai-input`), through the host's limiter and
 * robots.txt like any request, and kept with the origin's robots.txt record
 * (robots/cache.ts), so every worker and every resumed run applies the copy
 * in force when a page was fetched.
 *
 * The file is a JSON array of rules `{ "location": "/path/*", "tdm-reservation":
 * 1, "tdm-policy": "…" }`. `location` is a path pattern, `*` standing for any
 * characters, matched against the whole path and query; the first rule that
 * matches applies (the protocol's order). `1` reserves the rights: `n` for
 * `tdm`, `train-ai` and `ai-input`; `0` states nothing. A file that is not
 * such an array, or a rule that is malformed, states nothing; a 404 (or any
 * answer but a 2xx) means no reservation.
 */
import type { UsageSource, UsageValue } from './page-usage.js';
import type { Purpose } from './usage-vocab.js';
import { matchLength } from './robots-usage.js';

/** One rule as the file gave it. */
export interface TdmRule {
  location: string;
  reservation: 0 | 1;
  policy?: string;
}

/** An origin's tdmrep.json as the crawl read it: JSON-safe, kept in a store with its robots.txt. */
export interface TdmrepFile {
  /** The tdmrep.json URL requested. */
  url: string;
  /** Clock time (`Clock.now()`) it was fetched. */
  fetchedAt: number;
  /** Its rules, in file order; empty when it answered with none (a 404, an error, no usable rule). */
  rules: TdmRule[];
}

/** The uses a declared purpose must be one of for tdmrep.json to be fetched. */
export const TDMREP_PURPOSES: readonly Purpose[] = ['tdm', 'train-ai', 'ai-input'];

/** The well-known path, for an origin. */
export function tdmrepUrl(origin: string): string {
  return `${origin}/.well-known/tdmrep.json`;
}

/** The usable rules of a tdmrep.json body; none when it is not a JSON array. */
export function parseTdmrep(text: string): TdmRule[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(data)) return [];
  const rules: TdmRule[] = [];
  for (const item of data) {
    if (item === null || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    const reservation = r['tdm-reservation'];
    if (typeof r.location !== 'string' || (reservation !== 0 && reservation !== 1)) continue;
    rules.push({ location: r.location, reservation, ...(typeof r['tdm-policy'] === 'string' && { policy: r['tdm-policy'] }) });
  }
  return rules;
}

/**
 * Whether `location` matches `path` (path and query): `*` any characters,
 * the rest literal, the whole path. robots.txt's matcher with the end
 * anchored (a `$` of the location's own stays a literal there).
 */
export function locationMatches(location: string, path: string): boolean {
  return matchLength(`${location}$`, path) >= 0;
}

const RESERVED: Partial<Record<Purpose, UsageValue>> = { tdm: 'n', 'train-ai': 'n', 'ai-input': 'n' };

/** What the file states about `url`'s path: the first matching rule, with where it came from; nothing when none matches. */
export function tdmrepUsage(file: TdmrepFile | null | undefined, url: string): UsageSource[] {
  if (!file || file.rules.length === 0) return [];
  let path: string;
  try {
    const u = new URL(url);
    path = u.pathname + u.search;
  } catch {
    return [];
  }
  const rule = file.rules.find((r) => locationMatches(r.location, path));
  if (rule === undefined) return [];
  const value = JSON.stringify({
    location: rule.location,
    'tdm-reservation': rule.reservation,
    ...(rule.policy !== undefined && { 'tdm-policy': rule.policy }),
  });
  return [
    {
      source: 'tdmrep',
      name: 'tdm-reservation',
      value,
      url: file.url,
      fetchedAt: new Date(file.fetchedAt).toISOString(),
      states: rule.reservation === 1 ? { ...RESERVED } : {},
    },
  ];
}
