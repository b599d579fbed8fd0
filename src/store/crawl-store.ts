/**
 * The state seam: everything a crawl must not lose, behind one interface, so
 * the crawl loop is the same whether the state lives in memory, in a SQLite
 * file or in Redis.
 *
 * Contract (the contract suite in test/support/store-contract.ts runs it against
 * every implementation):
 * - **Dedupe.** `add` accepts each canonical URL once per crawl, queued (with
 *   an entry) or only marked seen (without, for URLs recorded as skipped).
 *   Callers canonicalise first; the store compares strings.
 * - **Leases.** `claim` hands out the head of a host's queue as a lease. A
 *   leased URL belongs to the store until `complete` (it is done) or `release`
 *   (back to the head of its host's queue now, or delayed until `dueAt`). A
 *   lease is never handed out twice; a crash never loses it (a durable store
 *   gives leases of a dead process back on open; a shared store gives them
 *   back when they expire, and `renew` keeps a live one from expiring).
 * - **Shared politeness.** A store shared by several processes may decide a
 *   host's pace itself: its `claim` may answer `{ notBefore }` (this clock)
 *   when the host's shared gap, windows, concurrency or pause do not allow a
 *   start yet, however ready the caller's own limiter thinks it is. The
 *   caller asks again at that time. The memory and SQLite stores never
 *   answer it (the caller's limiter is the only one).
 * - **Delayed entries** (retries waiting out a backoff) are not claimable
 *   before `promoteDue(now)` moves them, due, to the head of their host's
 *   queue; `nextDueAt` tells the caller when to ask. Per host, queued URLs
 *   come out first in, first out; released and promoted ones go first.
 * - **Host state and robots.txt.** `saveHost` keeps a host's politeness
 *   record (plain data, see politeness/host-state.ts), `loadHosts` gives them
 *   back on open; `putRobots` / `getRobots` keep what an origin's robots.txt
 *   said (robots/types.ts RobotsRecord). The crawl calls these only on a
 *   `durable` store (one that outlives the process or is shared); the memory
 *   store implements them all the same, so every store passes one contract.
 * - **Counters** that caps depend on (`started`: page requests begun, for
 *   max-pages) and **metadata** (seeds, config fingerprint) live here so a
 *   resumed or shared crawl sees the same numbers.
 *
 * Sync or async: every method that a network store must do remotely may
 * return a promise (`MaybePromise`); the memory store answers synchronously,
 * and the crawl loop only waits when it gets a promise, so the memory hot path
 * never awaits once per URL. The read-only views (`queued`, `counts`,
 * `nextDueAt`, `isSeen`, `counter`) are synchronous: a remote store answers
 * them from what it learnt with its last calls. `isSeen` is a hint for
 * dropping repeats cheaply; `add` is the authority.
 */
import type { HostSaved } from '../politeness/host-state.js';
import type { RobotsRecord } from '../robots/types.js';
import type { PageHistoryStore } from './page-history.js';

export type MaybePromise<T> = T | Promise<T>;

export interface FrontierEntry {
  /** Canonical URL. */
  url: string;
  depth: number;
  parent: string | null;
  /** Redirect hops that led here (0 for a linked URL). */
  hops: number;
  /** Fetch attempts already made (retries re-enter with attempt + 1). */
  attempt: number;
  /** Times the server throttled this URL (a budget separate from `attempt`). */
  throttles?: number;
  /**
   * Rarer per-URL facts, JSON-safe, kept whole by every store (the memory
   * store stores such an entry unpacked; SQLite and Redis as JSON). Features
   * add their own optional fields to EntryExtra instead of to every store.
   */
  extra?: EntryExtra;
}

/** Optional per-URL data that travels with a frontier entry: JSON-safe values only. */
export interface EntryExtra {
  [field: string]: unknown;
}

/** What `recordLog` gives: append-only, JSON-safe values. */
export interface RecordLog {
  /** Keeps one record (a plain JSON-safe object), after those appended before it. */
  append(record: object): MaybePromise<void>;
  /** Every record kept so far, oldest first, as stored (a reader parses them); a large log is read in batches. */
  read(): AsyncIterable<unknown>;
}

/** A start a shared store reserved for one request to host `key` (SharedStore). */
export interface SharedStart {
  readonly id: number;
  readonly key: string;
}

/** One claimed URL. Opaque to the caller but for `key` and `entry`. */
export interface Lease extends SharedStart {
  readonly entry: FrontierEntry;
}

export interface CrawlMeta {
  /** Canonical seed URLs as given on this run. */
  seeds: string[];
  /** Identifies the settings that shape the crawl, so a store can tell a changed config. */
  configFingerprint: string;
}

export interface OpenResult {
  /** The store already held this crawl (a resume, or another worker's crawl). */
  resumed: boolean;
  /** The crawl it holds had already finished. */
  finished: boolean;
  /** What the store held before this open (equals the given meta for a new crawl). */
  meta: CrawlMeta;
  /**
   * The previous process died without closing the store and may have started
   * requests until this clock time: the crawl treats every known host as
   * having started one then. Absent after a clean stop.
   */
  uncleanUntil?: number;
  /** How long before `uncleanUntil` unrecorded requests may have started (the store's commit interval). */
  uncleanSpanMs?: number;
  /**
   * The clock reads this much earlier than when the store last saved (the
   * wall clock, where the crawl clock starts, was set back between runs).
   * The store has moved its own instants (due retries, `uncleanUntil`) back
   * by it; the crawl moves the host records' instants back too, so a wait
   * keeps what it had left instead of growing by the step. Absent when the
   * clock did not go back. (A step forward cannot be told from time passing.)
   */
  clockBehindMs?: number;
}

export interface StoreCounts {
  /** Claimable now (due), all hosts. */
  queued: number;
  /** Waiting for their due time. */
  delayed: number;
  /** Claimed and neither completed nor released. */
  leased: number;
  /** URLs ever accepted (queued or skipped). */
  seen: number;
}

export type CounterName = 'started';

/** What `clear` removed: counts, and only the entries whose records are always written. */
export interface Cleared {
  /** Entries removed per host key, not counting those in `depthZero`; hosts with none are left out. */
  counts: Array<[key: string, removed: number]>;
  /** The removed entries of depth 0 (seeds, and where they redirect): a crawl writes their records whatever its settings. */
  depthZero: FrontierEntry[];
}

/** `claim`'s answer when the store's own politeness forbids a start before `notBefore` (the caller's clock). */
export interface ClaimWait {
  readonly notBefore: number;
}

/**
 * The frontier: which URLs the crawl has seen, which wait under which host
 * key, which are leased to a request, which are delayed (retries, revisits).
 */
export interface Frontier {
  /**
   * Accepts a URL not seen before: queues `entry` under host `key`, or with
   * `entry` null only marks the URL seen. Returns whether it was new. A
   * remote store may batch calls; their answers keep the calls' order.
   */
  add(url: string, key: string, entry: FrontierEntry | null): MaybePromise<boolean>;
  /** Cheap hint: true means seen; false may be wrong for a remote store. */
  isSeen(url: string): boolean;
  /**
   * The head of `key`'s queue as a lease, or undefined when nothing of it is
   * due, or (a shared store only) `{ notBefore }` when the host may not start
   * a request before then: ask again at that time.
   */
  claim(key: string, now: number): MaybePromise<Lease | ClaimWait | undefined>;
  /**
   * The URL is done; `outcome` ("200", an error code, a skip reason) is kept
   * by stores that report on it. `charge`: what its request was charged
   * (HTTP 402 pricing), booked to the lease's host in the ledger with this
   * completion, never apart from it (SpendLedger).
   */
  complete(lease: Lease, outcome?: string, charge?: Charge): MaybePromise<void>;
  /** Gives a leased URL back with `entry` (its updated counts): at the head of its queue, or delayed until `dueAt`. */
  release(lease: Lease, entry: FrontierEntry, dueAt?: number): MaybePromise<void>;
  /** Moves delayed entries due at `now` to the head of their queues; returns their host keys. */
  promoteDue(now: number): MaybePromise<string[]>;
  /** When the earliest delayed entry is due (Infinity: none). */
  nextDueAt(): number;
  /** Removes and returns every queued and delayed entry of one host, or of all hosts. Leases stay. */
  drain(key?: string): MaybePromise<FrontierEntry[]>;
  /**
   * Removes what `drain` would, but answers with counts per host and only the
   * depth-0 entries: what a stop or a given-up host costs must not grow with
   * the queue (no object per entry removed). Leases stay; what was removed
   * stays seen.
   */
  clear(key?: string): MaybePromise<Cleared>;
  /** Due entries queued for one host, or for all. */
  queued(key?: string): number;
  /** Host keys with due entries queued (a resumed crawl wakes them). */
  hostsWithWork(): Iterable<string>;
  counts(): StoreCounts;
}

/** What the store keeps per host key and per origin: the politeness a resumed or shared crawl restores, and robots.txt. */
export interface HostRecords {
  saveHost(key: string, saved: HostSaved): MaybePromise<void>;
  loadHosts(): MaybePromise<Array<[string, HostSaved]>>;
  /** What robots.txt said for an origin ("http://host:port"). */
  putRobots(origin: string, record: RobotsRecord): MaybePromise<void>;
  getRobots(origin: string): MaybePromise<RobotsRecord | undefined>;
}

/** Money as a store keeps it: whole micro-units of a currency as a server spelt it (politeness/crawl-price.ts). */
export interface Charge {
  currency: string;
  micros: number;
}

/** What a crawl spent (HTTP 402 pricing): per currency, the total and each host key's part, in micro-units. */
export type Spending = Record<string, { micros: number; hosts: Record<string, number> }>;

/**
 * The crawl's spend ledger and budget. A charge is booked by the `complete`
 * of its lease, in the same change (one SQLite commit, one Redis script), so
 * a crash neither loses it nor counts it twice: a page completed is charged,
 * one not completed is fetched again. A lease may hold one reservation
 * against the budget; its `complete` or `release` ends it (a shared store
 * also ends it when the lease expires).
 */
export interface SpendLedger {
  /**
   * Reserves `money` for the lease's request when what is spent in its
   * currency, plus what every lease (every worker's, in a shared store)
   * holds reserved, plus `money`, is at most `limit` micro-units: one
   * atomic step, so two workers never both take the budget's last cent.
   * True when reserved.
   */
  reserveSpend(lease: Lease, money: Charge, limit: number): MaybePromise<boolean>;
  /** The ledger as the store holds it: every completed lease's charge, this process's and (resumed or shared) earlier ones. */
  spending(): MaybePromise<Spending>;
}

/** The crawl's life: opened (new or resumed), counted, finished, closed. */
export interface CrawlLife {
  /** Short name for messages: "memory", "sqlite", "redis". */
  readonly kind: string;
  /** Outlives the process or is shared: the crawl keeps host records and robots.txt in it (and skips that work otherwise). */
  readonly durable: boolean;

  /** Opens (creating or resuming) the crawl. Called once, before anything else. */
  open(meta: CrawlMeta): MaybePromise<OpenResult>;
  /**
   * Marks the crawl finished: a later open reports `finished`. A shared store
   * answers false (and marks nothing) while any worker still has work queued,
   * delayed or leased: the crawl is not over for everyone then.
   */
  finish(): MaybePromise<boolean | void>;
  close(): MaybePromise<void>;

  counter(name: CounterName): number;
  addToCounter(name: CounterName, by: number): MaybePromise<number>;
}

/**
 * The crawl's own state besides the frontier: its life, its host records,
 * and two optional parts (a store without them has none: the crawl asks
 * once, by the field's presence).
 */
export interface CrawlState extends CrawlLife, HostRecords, SpendLedger {
  /**
   * The crawl's record log, for `crawl report --state` (and a shared store's
   * `--redis`): records appended as they are written (only the fields the
   * report reads: report/kept-record.ts), kept with the store's own changes,
   * read back in order by any later process. Optional; the crawl appends only
   * on a `durable` store.
   */
  recordLog?(): RecordLog;

  /**
   * Per-page history for re-crawls (page-history.ts): validators, digest,
   * status, fetch time and outlinks of the last pass, and passes. Optional;
   * the crawl keeps it on a `durable` store, or when told what a previous
   * run saw (`--since`).
   */
  readonly history?: PageHistoryStore;
}

/**
 * What a store shared by several workers offers beyond the seam (Redis): one
 * typed capability the crawl checks once (`store.shared`), instead of
 * optional methods it would probe for.
 */
export interface SharedStore {
  /**
   * The whole crawl's totals now, and the hosts with due work queued, which
   * may include hosts this worker has never seen (another worker added their
   * URLs). The crawl loop asks at an interval while it runs, and before it
   * ends, since its synchronous views show only what its own calls saw.
   */
  survey(): Promise<Survey>;
  /**
   * Takes the right to fetch `origin`'s robots.txt for `ttlMs` (true), or
   * answers false while another worker holds it; the others wait for its
   * record (`getRobots`). Storing the record ends it.
   */
  lockRobots(origin: string, ttlMs: number): Promise<boolean>;
  /**
   * The lease's (or slot's) request was written to its socket at `at` (this
   * worker's clock). The store holds every worker's next start to the host
   * back until then, so the gap counts from the real write (a claim only
   * reserves a start; connecting takes its time).
   */
  dispatched(lease: SharedStart, at: number): MaybePromise<void>;
  /**
   * The server can have read the lease's (or slot's) request as late as
   * `at` (this worker's clock: its response time less the host's fastest
   * round trip; politeness/host-limiter.ts `markResponded`). Its end moves
   * the host's shared last start there, so a server that read it late sees
   * no short gap before another worker's next request either.
   */
  responded(lease: SharedStart, at: number): void;
  /**
   * A start for a request that is no queued URL's — a robots.txt request, a
   * browser's request while it renders — under the host's shared gap,
   * windows and concurrency exactly as a claim's: a slot, or `{ notBefore }`
   * (this clock; ask again then). Without it such requests would pass only
   * this worker's own limiter, and another worker's claim could start a
   * page inside their gap. The caller reports the slot's write
   * (`dispatched`) and ends it (`endStart`) once its request is over; a
   * slot nobody ends expires like a lease.
   */
  reserve(key: string): Promise<SharedStart | ClaimWait>;
  endStart(slot: SharedStart): MaybePromise<void>;
  /**
   * The lease's request is over while its page is not (it renders): the
   * host's in-flight count goes back now, as the worker's own limiter's
   * does, because the browser's requests to that host need it. The lease
   * stays the caller's until it completes or releases it.
   */
  handOff(lease: Lease): MaybePromise<void>;
  /**
   * Keeps a lease from expiring (a shared store hands the URL of a lease
   * nobody renews to another worker). The store renews its own live leases
   * on a timer; this is for callers that want it explicit.
   */
  renew(lease: Lease): MaybePromise<void>;
  /**
   * The shared clock's wall time (epoch ms) at `localMs` (this worker's
   * clock): what quiet hours are judged on, so every worker reads a host's
   * window on one clock, the one its claims are judged on.
   */
  wallAt(localMs: number): number;
}

/** The seam the crawl loop talks to: the frontier and the crawl's state, and, for a store several workers share, `shared`. */
export interface CrawlStore extends Frontier, CrawlState {
  /** Present only on a store several workers share. */
  readonly shared?: SharedStore;
}

/** What `survey` answers. */
export interface Survey extends StoreCounts {
  /** Host keys with due entries queued, each with how many. */
  hosts: Array<[key: string, queued: number]>;
}

/**
 * Told how long one store call took (`op`: "commit" for SQLite, the Lua
 * script's name for Redis), in seconds; the metrics endpoint's histogram.
 */
export type StoreTimer = (op: string, seconds: number) => void;
