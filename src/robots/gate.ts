/**
 * robots.txt between the store and the scheduler: for the URL a host would
 * fetch next, says go, skip (with the deciding rule), or wait — never waits
 * itself. A missing robots.txt is loaded once per origin (through the host's
 * limits, by the cache's fetchOne); the hosts waiting on it are woken when it
 * arrives. Crawl-delay is applied to the host's limiter as a floor, capped,
 * once per robots.txt file and host record (a swept and recreated record
 * gets it again). A file cut at the size cap is warned about once per origin
 * in the crawl: its later rules are not obeyed, which the RFC allows but a
 * user would not guess.
 */
import type { Clock } from '../clock.js';
import type { HostTable } from '../politeness/host-state.js';
import type { RobotsCache } from './cache.js';
import type { RobotsState } from './types.js';
import type { SkipReason } from '../types.js';
import { originOf } from '../parse/url.js';
import type { UsageSource } from '../usage/page-usage.js';
import type { Purpose } from '../usage/usage-vocab.js';
import { tdmrepUsage } from '../usage/tdmrep.js';
import { ruleLabel } from '../usage/robots-usage.js';

/**
 * `fail`: the URL's host could not be connected to for its robots.txt and
 * was given up; the URL gets a page record with this transport error (status
 * null) instead of a skip, so a dead link reads as one. Not fetched.
 */
export type GateVerdict =
  | { kind: 'go' }
  | { kind: 'skip'; reason: SkipReason; detail?: string; usage?: DeniedUse }
  | { kind: 'wait'; until: number }
  | { kind: 'fail'; code: string; message: string };

/** A page not requested because robots.txt states `n` for a declared purpose: the purpose and the statements. */
export interface DeniedUse {
  purpose: Purpose;
  sources: UsageSource[];
}

export interface RobotsGateOptions {
  cache: RobotsCache;
  clock: Clock;
  hosts: HostTable;
  /** The host may go on: robots.txt it waited for has arrived. */
  wake(key: string): void;
  /** A robots.txt load finished (the crawl may be done now). */
  settled(): void;
  note(key: string, message: string): void;
  warn(message: string): void;
  /** An origin's robots.txt load finished (before the hosts waiting on it are woken): the crawl's sitemaps read its `Sitemap:` lines. @default none */
  loaded?(origin: string, state: RobotsState): void;
  /**
   * `--purpose` (or a `domains` entry's) of a host key: a page robots.txt
   * states `n` for one of these is skipped (`usage-denied`) rather than
   * requested, unless `fetchDenied`. @default none
   */
  purposes?: (key: string) => readonly Purpose[];
  /** `--fetch-denied`: request such pages anyway (their content is withheld after the response). @default false */
  fetchDenied?: boolean;
}

const GO: GateVerdict = { kind: 'go' };

export class RobotsGate {
  /** origin → host keys waiting on its robots.txt */
  private readonly loading = new Map<string, Set<string>>();
  /**
   * Origins already warned about: a dead host is one line, not one per retry
   * (30 dead links made 90 lines). Cleared when the file loads again.
   */
  private readonly warned = new Set<string>();
  /** Origins already warned about for a robots.txt cut at the cap (a reload after the TTL is not news). */
  private readonly warnedCut = new Set<string>();

  constructor(private readonly opts: RobotsGateOptions) {}

  /** robots.txt loads under way. */
  get pending(): number {
    return this.loading.size;
  }

  /** Loads the robots.txt of `url`'s origin now if it is not cached (for its Sitemap: lines); `key` is woken when it arrives. */
  preload(url: string, key: string): void {
    const origin = originOf(url);
    if (!this.opts.cache.peek(origin)) this.load(origin, key);
  }

  /** `page`: the URL is a page of the crawl, which a declared purpose robots.txt denies skips; a browser's subresource is not. */
  check(url: string, key: string, page = true): GateVerdict {
    const origin = originOf(url);
    const state = this.opts.cache.peek(origin);
    if (!state) {
      this.load(origin, key);
      return { kind: 'wait', until: Infinity };
    }
    switch (state.kind) {
      case 'allow-all':
        return page && state.tdmrep ? this.usageVerdict(url, key, state) : GO;
      case 'unavailable':
        if (state.retryAt !== null) return { kind: 'wait', until: state.retryAt };
        if (state.connectError) {
          const { code, message } = state.connectError;
          return {
            kind: 'fail',
            code,
            message: `${message} (robots.txt, ${state.attempts} attempt${state.attempts === 1 ? '' : 's'}; this URL was not requested)`,
          };
        }
        return { kind: 'skip', reason: 'robots-unavailable', detail: state.reason };
      case 'rules': {
        if (this.applyCrawlDelay(key, state)) {
          // A Crawl-delay just raised the gap: the start the scheduler was about to make may now be too soon.
          const now = this.opts.clock.now();
          const readyAt = this.opts.hosts.get(key).limiter.readyAt(now);
          if (readyAt > now) return { kind: 'wait', until: readyAt };
        }
        if (!state.isAllowed(url)) return { kind: 'skip', reason: 'robots', detail: state.explain(url).rule ?? undefined };
        return page ? this.usageVerdict(url, key, state) : GO;
      }
    }
  }

  /** What the robots.txt in force for `url`'s origin states its content may be used for; nothing when none is loaded. */
  usage(url: string): UsageSource[] {
    const state = this.opts.cache.peek(originOf(url));
    return state === undefined ? [] : statedBefore(state, url);
  }

  /**
   * The verdict for a request that cannot wait in a host's queue (a
   * browser's subresource, render/): robots.txt is loaded first when it is
   * not known yet. Never `wait`: a robots.txt that stays unavailable reads as
   * a skip (`robots-unavailable`), as it would for the host's pages.
   */
  async verdict(url: string, key: string): Promise<Exclude<GateVerdict, { kind: 'wait' }>> {
    const origin = originOf(url);
    for (let i = 0; i < 3; i++) {
      const v = this.check(url, key, false);
      if (v.kind !== 'wait') return v;
      // Infinity: a load is under way (check() started it); a time: a Crawl-delay was just applied, or a retry is due later.
      if (v.until === Infinity) await this.opts.cache.load(origin);
    }
    return { kind: 'skip', reason: 'robots-unavailable', detail: 'robots.txt unavailable' };
  }

  private load(origin: string, key: string): void {
    const waiting = this.loading.get(origin);
    if (waiting) {
      waiting.add(key);
      return;
    }
    const waiters = new Set([key]);
    this.loading.set(origin, waiters);
    void this.opts.cache.load(origin).then((state) => {
      this.loading.delete(origin);
      this.opts.loaded?.(origin, state);
      if (state.kind !== 'unavailable') this.warned.delete(origin);
      else if (!this.warned.has(origin)) {
        this.warned.add(origin);
        const when = state.retryAt === null ? 'giving up on it' : `retrying in ${Math.round((state.retryAt - this.opts.clock.now()) / 1000)}s`;
        this.opts.warn(`${origin}/robots.txt unavailable (${state.reason}); not crawling that host until it answers, ${when}`);
      }
      if (state.kind === 'rules' && state.truncatedAt !== undefined && !this.warnedCut.has(origin)) {
        this.warnedCut.add(origin);
        const message = robotsCutMessage(state.source, state.truncatedAt);
        this.opts.note(key, message);
        this.opts.warn(state.source === `${origin}/robots.txt` ? message : `${origin}: ${message}`);
      }
      for (const k of waiters) this.opts.wake(k);
      this.opts.settled();
    });
  }

  /** Go, or a `usage-denied` skip when robots.txt states `n` for a declared purpose (usage/robots-usage.ts). */
  private usageVerdict(url: string, key: string, state: RobotsState & { kind: 'rules' | 'allow-all' }): GateVerdict {
    const { fetchDenied } = this.opts;
    const purposes = this.opts.purposes?.(key);
    if (purposes === undefined || purposes.length === 0 || fetchDenied) return GO;
    const sources = statedBefore(state, url);
    if (sources.length === 0) return GO;
    const purpose = purposes.find((p) => sources.some((s) => s.states[p] === 'n'));
    if (purpose === undefined) return GO;
    const decided = sources.find((s) => s.states[purpose] === 'n')!;
    return { kind: 'skip', reason: 'usage-denied', detail: `${purpose}: ${whereStated(decided)}`, usage: { purpose, sources } };
  }

  /** True when it just raised the host's gap. */
  private applyCrawlDelay(key: string, state: RobotsState & { kind: 'rules' }): boolean {
    const host = this.opts.hosts.get(key);
    if (host.robotsApplied === state) return false;
    host.robotsApplied = state;
    const { policy } = host;
    if (state.crawlDelayMs === null || !policy.respectCrawlDelay) return false;
    let delay = state.crawlDelayMs;
    if (delay > policy.maxCrawlDelayMs) {
      this.opts.note(key, `robots.txt Crawl-delay ${delay / 1000}s capped to ${policy.maxCrawlDelayMs / 1000}s`);
      delay = policy.maxCrawlDelayMs;
    }
    host.limiter.setCrawlDelay(delay);
    this.opts.hosts.changed(key);
    return true;
  }
}

/** What robots.txt's usage rules and the origin's tdmrep.json state about `url` before it is requested. */
export function statedBefore(state: RobotsState, url: string): UsageSource[] {
  if (state.kind === 'unavailable') return [];
  const fromRobots = state.kind === 'rules' ? state.usage(url) : [];
  const fromTdmrep = tdmrepUsage(state.tdmrep, url);
  return fromTdmrep.length === 0 ? fromRobots : [...fromRobots, ...fromTdmrep];
}

/** Where a statement known before the request was made, in words (a skip's detail, `crawl check`). */
export function whereStated(s: UsageSource): string {
  if (s.source === 'robots') return `robots.txt line ${s.line}: ${ruleLabel(s.name)}: ${s.value}`;
  if (s.source === 'tdmrep') return `${s.url} reserves it: ${s.value}`;
  return `${s.name}: ${s.value}`;
}

/** What a robots.txt cut at the size cap means, in words (the crawl's warning, `crawl check`). */
export function robotsCutMessage(source: string, capBytes: number): string {
  const cap = capBytes % 1024 === 0 ? `${capBytes / 1024} KiB` : `${capBytes} bytes`;
  return `${source} is larger than the ${cap} cap (robots.maxSize): rules past it are ignored (RFC 9309 §2.5 allows the cap)`;
}
