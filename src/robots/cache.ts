/**
 * robots.txt per origin (RFC 9309 §2.3–2.4): fetched once, shared by every
 * concurrent caller, cached for a TTL.
 *
 * How each answer is read:
 * - 2xx: the body (its first `maxBytes`) is parsed; a longer file's state
 *   says where it was cut (`truncatedAt`), for the warning.
 * - 3xx: the Location is followed (relative to the current URL), to any
 *   host: RFC 9309 §2.3.1.2 says crawlers SHOULD follow at least five
 *   consecutive redirects, "even across authorities", and the rules found
 *   apply to `origin`, the host first asked (apex → www, or a CDN). Each hop
 *   is its own `fetchOne`, so it pays THAT host's limits. A sixth redirect
 *   ("more than five": §2.3.1.2 lets us assume the file unavailable), a loop
 *   (a URL already in the chain: it could never end, so it is not asked
 *   again), a missing or unusable Location: the file counts as unavailable,
 *   which §2.3.1.3 reads like a 4xx, so everything is allowed.
 * - 429: NOT a 4xx here. It means "slow down", not "no file"; reading it as
 *   allow-all would let a throttling server's pages be crawled unchecked, so it
 *   counts as unreachable like a 5xx.
 * - other 4xx: allow-all.
 * - A host that cannot be connected to at all (CONNECT_ERROR_CODES: refused,
 *   no DNS answer, connect timeout, TLS failure, a proxy refusing the
 *   tunnel): unreachable too, but
 *   retried after at most CONNECT_RETRY_DELAY_MS (doubling), so a dead host
 *   is given up in seconds; the state keeps the error (`connectError`), and
 *   the gate turns the host's URLs into page records carrying it (a dead
 *   link is reported as one, not as a robots skip). Nothing is fetched from
 *   the host either way, as §2.3.1.4 asks.
 * - 5xx, other statuses, other transport failures: unreachable, so the whole origin
 *   is disallowed (§2.3.1.4) and retried after `unavailableRetryDelayMs`,
 *   doubling, until `unavailableRetries` retries have failed; then given up
 *   (`retryAt: null`). Unreachable results are not cached for the TTL.
 * - Failures on OUR side are not the server's answer: a local resource
 *   shortage (`LOCAL_RESOURCE`: EMFILE and the like) waits
 *   `unavailableRetryDelayMs` and tries again without counting an attempt,
 *   so it never gives the host up; an address the SSRF guard refuses
 *   (`PRIVATE_ADDRESS`) is not fetched at all and counts like an unusable
 *   redirect (allow-all): the host's pages meet the same guard and are
 *   skipped as `private-address`, so nothing is fetched from it either way.
 * Time comes from the injected clock only.
 *
 * With a `records` store (a durable or shared CrawlStore), an origin missing
 * here is first looked up there, and every outcome is written there, so a
 * resumed crawl or another worker reuses the file instead of fetching it
 * again.
 */
import { sleep, type Clock } from '../clock.js';
import type { RobotsRecord, RobotsRecordStore, RobotsResponse, RobotsState } from './types.js';
import { loadUsageParser } from '../usage/page-usage.js';
import { mentionsUsage } from '../usage/robots-usage.js';
import { parseTdmrep, tdmrepUrl, type TdmrepFile } from '../usage/tdmrep.js';
import { capRobotsText, MAX_ROBOTS_REDIRECTS, MIN_ROBOTS_BYTES, parseRobots, productToken } from './rules.js';

const MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** How long one worker of a shared crawl may take to fetch an origin's robots.txt before another may (its host may be paused meanwhile). */
export const ROBOTS_LOCK_MS = 30_000;
/** How often the other workers look for its record meanwhile. */
export const ROBOTS_POLL_MS = 250;

export interface RobotsCacheOptions {
  clock: Clock;
  /** Our full User-Agent; only its product token (text before the first "/" or space, lowercased) picks the group. */
  userAgent: string;
  /** Body cap in bytes; rules past it are ignored, what was read is used. At least 500 KiB (RFC 9309 §2.5); settings default 512 KiB. */
  maxBytes: number;
  /** How long a parsed file or an allow-all answer is reused, in ms; more than 0, at most 24 h (RFC 9309 §2.4). */
  cacheTtlMs: number;
  /** Retries after a 5xx/429/network failure before the origin is given up; 0 = give up at the first failure. */
  unavailableRetries: number;
  /** Delay before the first retry in ms; each further retry waits twice as long. */
  unavailableRetryDelayMs: number;
  /**
   * Performs ONE request for a robots.txt URL (no redirect following) through
   * that URL's host limits; `origin` is the origin whose robots.txt it is (the
   * URL differs after a redirect). May reject with an Error carrying a string
   * `code` (LOCAL_RESOURCE and PRIVATE_ADDRESS are read specially).
   */
  fetchOne(url: string, origin: string): Promise<RobotsResponse>;
  /** Keeps outcomes beyond this process. @default none (memory only) */
  records?: RobotsRecordStore;
  /** Called when the records store fails to keep an outcome (the crawl cannot trust its store then). @default ignored */
  onRecordError?: (err: unknown) => void;
  /** Whether to fetch an origin's tdmrep.json after its robots.txt, with the same `fetchOne` (a declared purpose needs it; usage/tdmrep.ts). @default never */
  tdmrep?: (origin: string) => boolean;
}

interface Entry {
  state?: RobotsState;
  /** The text `state` was parsed from, while a records store needs it. */
  text?: string;
  /** Consecutive failed attempts; reset by any answer that is not "unreachable". */
  failures: number;
  inflight?: Promise<RobotsState>;
}

type Outcome = RobotsState | { kind: 'unreachable'; reason: string; connectError?: { code: string; message: string } };

/** Transport failures that mean the host could not be connected to at all (see the header). */
export const CONNECT_ERROR_CODES: ReadonlySet<string> = new Set(['CONNECTION_REFUSED', 'DNS_FAILURE', 'CONNECT_TIMEOUT', 'TLS_ERROR', 'PROXY_ERROR']);

/** The longest wait before retrying a robots.txt whose host could not be connected to: 1 s, then 2 s (default retries), so a refused host is given up after ~3 s, not 15 s. */
export const CONNECT_RETRY_DELAY_MS = 1_000;

function invalidOption(name: string, expected: string, value: unknown): TypeError {
  const error = new TypeError(`Expected \`${name}\` to be ${expected}, got ${String(value)}`);
  return Object.assign(error, { code: 'ERR_INVALID_ARG_VALUE' });
}

function validate(opts: RobotsCacheOptions): void {
  if (productToken(opts.userAgent) === '') throw invalidOption('userAgent', 'a string starting with a product token', JSON.stringify(opts.userAgent));
  if (!Number.isInteger(opts.maxBytes) || opts.maxBytes < MIN_ROBOTS_BYTES) {
    throw invalidOption('maxBytes', `an integer of at least ${MIN_ROBOTS_BYTES} (500 KiB)`, opts.maxBytes);
  }
  if (!(opts.cacheTtlMs > 0 && opts.cacheTtlMs <= MAX_TTL_MS))
    throw invalidOption('cacheTtlMs', `a number of milliseconds above 0 and at most ${MAX_TTL_MS} (24 h)`, opts.cacheTtlMs);
  if (!Number.isInteger(opts.unavailableRetries) || opts.unavailableRetries < 0)
    throw invalidOption('unavailableRetries', 'an integer from 0 and up', opts.unavailableRetries);
  if (!(opts.unavailableRetryDelayMs >= 0 && Number.isFinite(opts.unavailableRetryDelayMs))) {
    throw invalidOption('unavailableRetryDelayMs', 'a finite number of milliseconds from 0 and up', opts.unavailableRetryDelayMs);
  }
}

/** "http://host:port" for an origin or any URL on it (default ports dropped, as URL.origin does); null if not http(s). */
function originKey(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'FETCH_FAILED';
}

export class RobotsCache {
  private readonly opts: RobotsCacheOptions;
  private readonly entries = new Map<string, Entry>();

  constructor(opts: RobotsCacheOptions) {
    validate(opts);
    this.opts = opts;
  }

  /** Synchronous look-up: the current state for an origin, or undefined if never fetched / expired / due for a retry. */
  peek(origin: string): RobotsState | undefined {
    // Callers pass origins as URL.origin spells them (the keys), so the map is tried before the URL parser (~2 µs a page).
    const state = (this.entries.get(origin) ?? this.entryOf(origin))?.state;
    if (!state) return undefined;
    const now = this.opts.clock.now();
    if (state.kind === 'unavailable') return state.retryAt === null || now < state.retryAt ? state : undefined;
    return now < state.expiresAt ? state : undefined;
  }

  private entryOf(origin: string): Entry | undefined {
    const key = originKey(origin);
    return key === null ? undefined : this.entries.get(key);
  }

  /** Fetches (once; concurrent callers share one in-flight promise) if peek() would return undefined, and resolves to the state. Never rejects. */
  load(origin: string): Promise<RobotsState> {
    const key = originKey(origin);
    if (key === null) {
      return Promise.resolve({ kind: 'unavailable', reason: `not an http(s) origin: ${origin}`, retryAt: null, attempts: 0 });
    }
    const current = this.peek(key);
    if (current) return Promise.resolve(current);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { failures: 0 };
      this.entries.set(key, entry);
    }
    if (entry.inflight) return entry.inflight;
    const settled = entry;
    settled.inflight = this.stored(key, settled)
      .then((known) => known ?? this.fetchOnce(key, settled))
      .then((outcome) => this.withTdmrep(key, outcome))
      .catch((err: unknown): Outcome => ({ kind: 'unreachable', reason: `robots.txt handling failed: ${String(err)}` }))
      .then((outcome) => {
        const state = this.settle(key, settled, outcome);
        settled.inflight = undefined;
        return state;
      });
    return settled.inflight;
  }

  /** Number of origins cached, for the summary. */
  size(): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.state) count++;
    return count;
  }

  /**
   * With a shared store, robots.txt is fetched once per crawl: the worker
   * that takes the origin's lock fetches, the others read its record when it
   * appears. A lock left by a worker that died expires, and the next asker
   * fetches. The taker reads the store once more first: a record written
   * since its first look (the writer lets the lock go with it) is used.
   */
  private async fetchOnce(origin: string, entry: Entry): Promise<Outcome> {
    const { records, clock } = this.opts;
    if (!records?.lockRobots) return this.fetchRobots(origin, entry);
    for (;;) {
      // Between our look in the store and our lock, another worker may have written its record and let the lock go: look again.
      if (await records.lockRobots(origin, ROBOTS_LOCK_MS)) return (await this.stored(origin, entry)) ?? this.fetchRobots(origin, entry);
      await sleep(clock, ROBOTS_POLL_MS);
      const known = await this.stored(origin, entry);
      if (known) return known;
    }
  }

  /** A still-valid record from the records store, restored into `entry`; undefined if none. */
  private async stored(origin: string, entry: Entry): Promise<Outcome | undefined> {
    const { records, clock } = this.opts;
    if (!records) return undefined;
    const record = await records.getRobots(origin);
    if (!record) return undefined;
    const now = clock.now();
    if (record.kind === 'unavailable') {
      entry.failures = record.attempts;
      if (record.retryAt === null || now < record.retryAt) {
        return {
          kind: 'unavailable',
          reason: record.reason,
          retryAt: record.retryAt,
          attempts: record.attempts,
          ...(record.connectError && { connectError: record.connectError }),
        };
      }
      return undefined; // due for a retry: fetch, counting the earlier failures
    }
    if (now >= record.expiresAt) return undefined;
    if (record.kind === 'allow-all') return { ...record };
    entry.text = record.text;
    await loadUsageParserFor(record.text);
    const rules = parseRobots(record.source, record.text, this.opts.userAgent, record.fetchedAt, this.opts.cacheTtlMs);
    return {
      ...rules,
      expiresAt: record.expiresAt,
      ...(record.truncatedAt !== undefined && { truncatedAt: record.truncatedAt }),
      ...(record.tdmrep && { tdmrep: record.tdmrep }),
    };
  }

  private record(entry: Entry, state: RobotsState): RobotsRecord | undefined {
    switch (state.kind) {
      case 'rules':
        if (entry.text === undefined) return undefined;
        return {
          kind: 'rules',
          source: state.source,
          text: entry.text,
          fetchedAt: state.fetchedAt,
          expiresAt: state.expiresAt,
          ...(state.truncatedAt !== undefined && { truncatedAt: state.truncatedAt }),
          ...(state.tdmrep && { tdmrep: state.tdmrep }),
        };
      case 'allow-all':
        return {
          kind: 'allow-all',
          reason: state.reason,
          fetchedAt: state.fetchedAt,
          expiresAt: state.expiresAt,
          ...(state.tdmrep && { tdmrep: state.tdmrep }),
        };
      case 'unavailable':
        return {
          kind: 'unavailable',
          reason: state.reason,
          retryAt: state.retryAt,
          attempts: state.attempts,
          ...(state.connectError && { connectError: state.connectError }),
        };
    }
  }

  private settle(origin: string, entry: Entry, outcome: Outcome): RobotsState {
    const state = this.settleState(entry, outcome);
    const { records } = this.opts;
    const record = records ? this.record(entry, state) : undefined;
    if (record) {
      const report = (err: unknown) => this.opts.onRecordError?.(err);
      try {
        const written = records!.putRobots(origin, record);
        if (written instanceof Promise) written.catch(report);
      } catch (err) {
        report(err);
      }
    }
    return state;
  }

  private settleState(entry: Entry, outcome: Outcome): RobotsState {
    if (outcome.kind !== 'unreachable') {
      entry.failures = outcome.kind === 'unavailable' ? outcome.attempts : 0;
      entry.state = outcome;
      return outcome;
    }
    const attempts = entry.failures + 1;
    const { unavailableRetries, unavailableRetryDelayMs, clock } = this.opts;
    const givenUp = attempts > unavailableRetries;
    const delayMs = outcome.connectError ? Math.min(unavailableRetryDelayMs, CONNECT_RETRY_DELAY_MS) : unavailableRetryDelayMs;
    const state: RobotsState = {
      kind: 'unavailable',
      reason: givenUp && attempts > 1 ? `${outcome.reason}; gave up after ${attempts} attempts` : outcome.reason,
      retryAt: givenUp ? null : clock.now() + delayMs * 2 ** (attempts - 1),
      attempts,
    };
    if (outcome.connectError) state.connectError = outcome.connectError;
    entry.failures = attempts;
    entry.state = state;
    return state;
  }

  /**
   * The origin's tdmrep.json beside an answered robots.txt, when asked for
   * and not already there (a record of another worker or an earlier run may
   * carry it): requested only where robots.txt allows it, and any answer but
   * a 2xx, or a failure, is read as no reservation.
   */
  private async withTdmrep(origin: string, outcome: Outcome): Promise<Outcome> {
    if (!this.opts.tdmrep?.(origin) || (outcome.kind !== 'rules' && outcome.kind !== 'allow-all') || outcome.tdmrep) return outcome;
    const url = tdmrepUrl(origin);
    const none = (): TdmrepFile => ({ url, fetchedAt: this.opts.clock.now(), rules: [] });
    if (outcome.kind === 'rules' && !outcome.isAllowed(url)) return { ...outcome, tdmrep: none() };
    try {
      const res = await this.opts.fetchOne(url, origin);
      const ok = res.status >= 200 && res.status < 300 && res.body !== null && !res.truncated;
      return { ...outcome, tdmrep: ok ? { ...none(), rules: parseTdmrep(res.body!) } : none() };
    } catch {
      return { ...outcome, tdmrep: none() };
    }
  }

  /** Requests robots.txt for `origin`, following redirects, and classifies the answer. */
  private async fetchRobots(origin: string, entry: Entry): Promise<Outcome> {
    const first = `${origin}/robots.txt`;
    let url = first;
    const chain = new Set([first]);
    for (let hop = 0; ; hop++) {
      const where = url === first ? 'robots.txt' : `robots.txt (via redirect to ${url})`;
      let res: RobotsResponse;
      try {
        res = await this.opts.fetchOne(url, origin);
      } catch (err) {
        const code = errorCode(err);
        if (code === 'LOCAL_RESOURCE') return this.retryLocal(`${where} not fetched yet: out of a local resource (not the server's fault)`, entry);
        if (code === 'PRIVATE_ADDRESS') return this.allowAll(`${where} not fetched: its address is refused (private-address)`);
        const reason = `${where} could not be fetched: ${code}`;
        if (!CONNECT_ERROR_CODES.has(code)) return { kind: 'unreachable', reason };
        return { kind: 'unreachable', reason, connectError: { code, message: err instanceof Error ? err.message : String(err) } };
      }
      const { status } = res;
      if (status >= 200 && status < 300) {
        await loadUsageParserFor(res.body ?? '');
        return this.parse(url, res, entry);
      }
      if (status >= 300 && status < 400) {
        if (hop === MAX_ROBOTS_REDIRECTS)
          return this.allowAll(`robots.txt redirected more than ${MAX_ROBOTS_REDIRECTS} times: read as unavailable, all allowed (RFC 9309 §2.3.1.2)`);
        const next = res.location === null ? null : resolveLocation(res.location, url);
        if (next === null) return this.allowAll(`${where} answered ${status} without a usable Location`);
        if (chain.has(next)) return this.allowAll(`robots.txt redirects in a loop (back to ${next}): read as unavailable, all allowed`);
        chain.add(next);
        url = next;
        continue;
      }
      if (status === 429) return { kind: 'unreachable', reason: `${where} answered 429 (treated as unreachable)` };
      if (status >= 400 && status < 500) return this.allowAll(`${where} answered ${status}`);
      return { kind: 'unreachable', reason: `${where} answered ${status}` };
    }
  }

  private parse(url: string, res: RobotsResponse, entry: Entry): RobotsState {
    const { text, truncated } = capRobotsText(res.body ?? '', this.opts.maxBytes, res.truncated);
    entry.text = this.opts.records ? text : undefined;
    const rules = parseRobots(url, text, this.opts.userAgent, this.opts.clock.now(), this.opts.cacheTtlMs);
    if (truncated) rules.truncatedAt = this.opts.maxBytes;
    return rules;
  }

  /** Waits and retries without counting an attempt: the failure was ours, not the server's. */
  private retryLocal(reason: string, entry: Entry): RobotsState {
    // At least a second: with a delay of 0, a shortage that lasts would be retried in a tight loop.
    const delay = Math.max(this.opts.unavailableRetryDelayMs, 1000);
    return { kind: 'unavailable', reason, retryAt: this.opts.clock.now() + delay, attempts: entry.failures };
  }

  private allowAll(reason: string): RobotsState {
    const now = this.opts.clock.now();
    return { kind: 'allow-all', fetchedAt: now, expiresAt: now + this.opts.cacheTtlMs, reason };
  }
}

/** Loads the RFC 9651 parser when a robots.txt has usage rules to read (usage/robots-usage.ts); most files have none and load nothing. */
export async function loadUsageParserFor(text: string): Promise<void> {
  if (mentionsUsage(text)) await loadUsageParser();
}

/** Resolves a Location header against the URL that sent it; null unless it yields an http(s) URL. */
function resolveLocation(location: string, base: string): string | null {
  try {
    const url = new URL(location, base);
    url.hash = '';
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
