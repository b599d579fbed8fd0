/**
 * Resolved addresses cached per host name for the crawl.
 *
 * Contract:
 * - `cachedLookup(lookup, opts)` is a LookupFunction like `lookup`: it asks
 *   `lookup` for every address of a name (`all: true`) at most once per
 *   `ttlMs`, and answers from the cache in the shape each caller asks for
 *   (one address, or all). The system resolver (`dns.lookup`) gives no TTL,
 *   so the cache keeps its own; a short one still catches DNS changes within
 *   a crawl.
 * - Concurrent lookups of one name share one question (a broad crawl opens
 *   its hosts' first connections all at once).
 * - A failure (ENOTFOUND, …) is cached for `negativeTtlMs`: a host that does
 *   not resolve fails at once, with the same error and so the same
 *   `DNS_FAILURE` code, on its retries and its robots.txt, instead of asking
 *   again each time.
 * - Lookups are asynchronous, cached answers too (on the next tick, as
 *   `net` expects), so nothing here ever blocks the event loop or the
 *   scheduler. The cache sits under the address guard (address-guard.ts):
 *   every connect still has every cached address judged.
 * - At most `maxEntries` names are kept; the oldest is dropped first.
 *
 * Keyed by lowercased name and the address family asked for.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

export interface DnsCacheOptions {
  /** How long a resolved answer is reused. */
  ttlMs: number;
  /** How long a failure is reused. */
  negativeTtlMs: number;
  /** Names kept at most. */
  maxEntries: number;
  /** The clock the TTLs are measured on. @default performance.now */
  now?: () => number;
}

export const DNS_CACHE_DEFAULTS: DnsCacheOptions = { ttlMs: 300_000, negativeTtlMs: 30_000, maxEntries: 200_000 };

type Reply = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

interface Entry {
  expiresAt: number;
  addresses: LookupAddress[] | null;
  error: NodeJS.ErrnoException | null;
  /** Callers waiting while the question is out; null once answered. */
  waiting: Array<{ all: boolean; reply: Reply }> | null;
}

export interface CachedLookup extends LookupFunction {
  /** Names cached (answered or being asked). */
  readonly size: number;
}

export function cachedLookup(lookup: LookupFunction, opts: DnsCacheOptions = DNS_CACHE_DEFAULTS): CachedLookup {
  const now = opts.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();

  const answer = (entry: Entry, all: boolean, reply: Reply): void => {
    if (entry.error) return reply(entry.error);
    const list = entry.addresses!;
    if (all)
      reply(
        null,
        list.map((a) => ({ ...a })),
      );
    else reply(null, list[0].address, list[0].family);
  };

  const fn = ((hostname: string, options: Parameters<LookupFunction>[1], callback: Parameters<LookupFunction>[2]) => {
    const reply = callback as unknown as Reply;
    const all = options.all === true;
    const family = typeof options.family === 'number' ? options.family : options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : 0;
    const key = `${family}/${hostname.toLowerCase()}`;
    const at = now();
    const cached = entries.get(key);
    if (cached) {
      if (cached.waiting) {
        cached.waiting.push({ all, reply });
        return;
      }
      if (cached.expiresAt > at) {
        process.nextTick(answer, cached, all, reply);
        return;
      }
      entries.delete(key);
    }
    const entry: Entry = { expiresAt: Infinity, addresses: null, error: null, waiting: [{ all, reply }] };
    entries.set(key, entry);
    if (entries.size > opts.maxEntries) {
      for (const [old, e] of entries) {
        if (entries.size <= opts.maxEntries) break;
        if (e.waiting === null) entries.delete(old); // never drop a question still out
      }
    }
    const settle = (err: NodeJS.ErrnoException | null, result?: unknown): void => {
      const list = (Array.isArray(result) ? result : []) as LookupAddress[];
      if (err || list.length === 0) {
        entry.error = err ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
        entry.expiresAt = now() + opts.negativeTtlMs;
      } else {
        entry.addresses = list.map((a) => ({ address: a.address, family: a.family }));
        entry.expiresAt = now() + opts.ttlMs;
      }
      const waiting = entry.waiting!;
      entry.waiting = null;
      for (const w of waiting) answer(entry, w.all, w.reply);
    };
    try {
      lookup(hostname, { ...options, all: true }, settle);
    } catch (err) {
      process.nextTick(settle, err); // an invalid name: a failure like any other, never a question left out
    }
  }) as CachedLookup;
  Object.defineProperty(fn, 'size', { get: () => entries.size });
  return fn;
}
