/**
 * The shared store: one crawl in Redis (`--redis URL --crawl-id ID`), so any
 * number of processes on any number of machines crawl it together and every
 * server sees ONE polite crawler.
 *
 * Contract (beyond CrawlStore's):
 * - Every change is one Lua script (redis-scripts.ts), atomic on the server.
 *   Keys live under `crawl:{ID}:`; the braces are a Cluster hash tag. A URL
 *   naming a cluster node is detected at connect and served through a
 *   cluster client routed to the crawl's one slot (redis-cluster.ts).
 * - **Claiming enforces the host's shared politeness.** The claim script
 *   reads the host's shared state (last start, window logs, in-flight count,
 *   pause, rate factor, Crawl-delay, RateLimit pace, given-up), computes
 *   readyAt with host-limiter.ts's margins on Redis's own clock (`TIME`,
 *   never a worker's), and either reserves the start and hands out a lease,
 *   or answers `{ notBefore }`. The policy numbers come from this worker's
 *   `policyFor` (workers of one crawl are meant to share one config).
 *   Times are converted between Redis's clock and this worker's by an offset
 *   measured at open and refreshed with each timed answer (the sample with
 *   the shortest round trip wins; its uncertainty grows 1 ms per second of
 *   age). Politeness never depends on that offset: the script decides with
 *   Redis's clock, and a worker that asks early is only told to wait again.
 * - **Leases expire.** A lease lasts `leaseMs` past its last renewal. This
 *   store renews every lease it holds on its own timer (so a long download
 *   keeps its lease without the crawl loop's help, and `renew` is there for
 *   callers that want it explicit); a worker that dies stops renewing, and
 *   any worker's timer (and `open`) gives its expired leases back to the
 *   heads of their queues and releases their in-flight counts. A lease lost
 *   that way (this worker stalled past its expiry) is not an error when it is
 *   completed or released: its URL is already back in the queue or another
 *   worker's, so the call only drops it here (counted in `lostLeases`).
 * - **Every request takes a shared start.** A page's comes with its claim;
 *   any other request (robots.txt and its redirects, a browser's requests
 *   while it renders) reserves a slot (`reserve`: the claim's readiness and
 *   reservation without a URL), which is dispatched, renewed and reaped like
 *   a lease and ended by `endStart`. A page handed to the browser gives its
 *   lease's in-flight count back (`handOff`), as the worker's own limiter
 *   does, so the browser's requests to that host can start.
 * - **Shared feedback.** `saveHost` writes what every worker must honour into
 *   the host's hash: any pause only ever moves later (the last start is the
 *   claims' and slots', never a save's); the
 *   rate factor, Crawl-delay, RateLimit pace, given-up flag and failure count
 *   are written when this worker changed them (last change wins, so one
 *   worker's recovery is not undone by another's stale copy). A given-up
 *   host takes no new URLs, and a claim drops whatever is still queued for
 *   it (to `dropped`, without a skip record).
 * - **Synchronous views are a local copy**: `counts`, `queued`, `nextDueAt`,
 *   `hostsWithWork`, `counter` show what the answers of this worker's last
 *   calls said (most scripts answer with the totals; per-host queue lengths
 *   come with the calls that touch a host, and for all hosts at `open`), and
 *   the timer refreshes the totals every `tickMs`. A granted claim and a
 *   completion answer without the totals (BRIEF: three commands fewer
 *   inside Redis, at two calls a page); the worker counts its own change.
 *   Another worker's changes show up at the next call that answers them,
 *   the survey's at the latest, so a view may be that stale. The crawl
 *   loop stays correct because it decides nothing from a view alone: `add` is the
 *   authority for dedupe (`isSeen` is a hint: this worker's own URLs), and
 *   `claim` the authority for work (a stale "has work" costs one empty
 *   claim; a stale "no work" leaves that host to the workers that added it).
 * - Delayed entries (retry backoffs) are due on the releasing worker's
 *   clock; clocks of machines differ by their skew only, and a backoff is not
 *   a politeness bound (the claim is). robots.txt records keep the fetching
 *   worker's times for the same reason.
 * - Memory: the seen set holds 64-bit fingerprints, not URLs, in 65,536
 *   intset buckets (redis-scripts.ts's layout): about 8 bytes per seen URL
 *   past the buckets' fixed ~7 MB, while buckets stay under
 *   set-max-intset-entries (512 by default: 33 million URLs). A queued entry
 *   is a compact string, not JSON (`encodeEntry`): its URL without the
 *   queue's own scheme and host, a few counts, and a 12-character tag for its
 *   parent, which is stored once (bench/redis-memory.js: 17 bytes plus the
 *   URL's length per queued URL, seen-set member included).
 * - **Ending together.** The crawl loop surveys the whole crawl (`survey`)
 *   before it ends and at an interval while it runs: a worker whose own view
 *   is empty waits while any worker holds a lease (it may add links), takes
 *   up hosts other workers queued, and `finish` marks the crawl done only
 *   when nothing is queued, delayed or leased anywhere.
 * - **robots.txt once per crawl**: `lockRobots` gives one worker the right
 *   to fetch an origin's file; the others wait for its record.
 * - **Record log** (`recordLog`, for `crawl report --redis`): every worker's
 *   records in one list, `P records`, as JSON, batched and never awaited by
 *   the writer unless Redis falls far behind (redis-record-log.ts);
 *   `complete` sends what is buffered first, on the same connection, so a
 *   URL's record reaches Redis before its completion does.
 * - Entries and host records are written in compact forms (redis-codec.ts);
 *   connecting, running scripts, outages and a lost state are the link's
 *   (redis-connection.ts).
 *
 * - **A claim reserves a start; the write confirms it.** Until the lease's
 *   request is written to its socket (`dispatched`, which also moves the
 *   shared last start to an upper bound of that write's Redis time), the
 *   host's next claim by any worker waits, when the host has a gap or a
 *   window: connecting, or a worker's busy event loop, cannot bring two
 *   starts closer than the gap. A claim is given back, not held, while
 *   robots.txt loads.
 *
 * - **A crawl whose state is gone stops; it never ends as finished.** Open
 *   reads (or writes, for a new crawl) the crawl's gen, a random id in
 *   `P meta`; every later script checks it first (redis-scripts.ts). Redis
 *   restarted without persistence, FLUSHALL, eviction or a failover to an
 *   empty replica leave it missing, and the next script (a survey at least
 *   every second, a tick every `tickMs`) answers `CRAWL_STATE_LOST`: the
 *   store calls `onStateLost` once and from then on every call throws
 *   RedisStateLostError (code REDIS_STATE_LOST) without sending anything, so
 *   no worker writes into, finishes or restarts a crawl that is gone.
 *   Redis restarted WITH persistence is an outage like any other: the gen
 *   is still there and the crawl goes on.
 *
 * - **A step of Redis's clock.** Shared instants are Redis times (TIME, its
 *   wall clock), so a step of that clock (set by hand, a VM resumed and its
 *   clock corrected) moves them all at once. Each worker sees a step at its
 *   next answer (redis-clock.ts): a step back only makes hosts wait longer
 *   (by the step); a step ahead would let each host's next start come early
 *   by the step, so for STEP_GUARD_MS after seeing one a worker holds every
 *   start it is granted by the step before writing it (less what its best
 *   sample left uncertain, a few ms; at most STEP_GUARD_MS). Not covered: a
 *   worker that joins after a step, a gap or window longer than
 *   STEP_GUARD_MS, and a step longer than a lease's life, which gives held
 *   leases back. Slewing (NTP) changes the rate by a few hundred ppm at most,
 *   which the margins cover.
 *
 * Not shared yet: the shared gap has no jitter; and a worker's local host record
 * learns other workers' feedback only at `open` (the claim enforces it
 * meanwhile, so a worker that does not know just gets more "not before").
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { HostSaved } from '../politeness/host-state.js';
import { GAP_MARGIN, WINDOW_MARGIN, type LimiterPolicy } from '../politeness/host-limiter.js';
import type { CrawlHours } from '../politeness/crawl-hours.js';
import type { RobotsRecord } from '../robots/types.js';
import type {
  ClaimWait,
  Cleared,
  Charge,
  CounterName,
  CrawlMeta,
  CrawlStore,
  FrontierEntry,
  Lease,
  OpenResult,
  SharedStart,
  RecordLog,
  SharedStore,
  Spending,
  StoreCounts,
  Survey,
} from './crawl-store.js';
import { VIEW_LENGTH, type ScriptName } from './redis-scripts.js';
import { SeenSet } from '../util/seen-set.js';
import { RedisClock, type ClaimTimes } from './redis-clock.js';
import { RedisLink, RedisStateLostError, type RedisConnection, type RedisConnectionOptions } from './redis-connection.js';
import { RedisRecordLog } from './redis-record-log.js';
import { RedisHistory } from './redis-history.js';
import { SigningKeyMismatchError, signingKeyRefusal, type WorkerKey } from './crawl-signing-key.js';
import { decodeEntry, decodeTriples, encodeEntry, parseSaved, RedisStoreError, sharedFields, shiftSaved, type SharedFields } from './redis-codec.js';

/** A lease nobody renews for this long goes back to its queue. */
export const DEFAULT_LEASE_MS = 60_000;
/**
 * A host at its concurrency across workers: other workers ask again after
 * this (no release by another worker wakes them).
 */
export const BUSY_RETRY_MS = 50;

/** How far before its estimate of Redis's now a worker describes a host's quiet hours to the claim script: more than the clocks' offset can be wrong by. */
const HOURS_LOOKBACK_MS = 60_000;
/** Changes of a quiet-hours window described to the claim script: from closed, the opening, closing and next opening. */
const HOURS_CHANGES = 3;

/** Quiet hours as CLAIM and SLOT take them (redis-scripts.ts POLICY_ARGS): the state at a reference instant, then the instants it changes. */
export function hoursArgs(hours: CrawlHours, redisNow: number): string[] {
  const from = redisNow - HOURS_LOOKBACK_MS;
  const open = hours.isOpen(from);
  const changes: string[] = [];
  let t = from;
  let state = open;
  for (let i = 0; i < HOURS_CHANGES; i++) {
    t = state ? hours.closesAt(t) : hours.nextOpen(t);
    state = !state;
    changes.push(String(t));
  }
  return [open ? '1' : '0', String(changes.length), ...changes];
}
/** A lease's or a slot's end, for a request never written (redis-scripts.ts end_start). */
const NEVER_WRITTEN = '-';
/** How long a start waits for its lease's end to carry it instead of a STARTED, at most (see dispatched). */
const STARTED_HOLD_MAX_MS = 250;
/** Expired leases given back per timer tick. */
const REAP_BATCH = 200;
/** Hosts written by one SAVE_HOST call at most (see writeHosts). */
const SAVES_PER_CALL = 256;
/**
 * A host save that changes nothing every worker honours (only the saver's
 * own record: its last start, round trips, adaptive counters) is written at
 * most this often per host (see writeHosts).
 */
const HOST_RECORD_MS = 5_000;

/** URLs added in one turn, sent as one ADD: its arguments, and each caller's answer. */
interface AddBatch {
  args: string[];
  answers: Array<{ resolve(isNew: boolean): void; reject(err: unknown): void }>;
}

/** URLs per ADD script, at most. */
const ADD_BATCH = 500;

/**
 * Writes in turn, one in flight: what is added while a write is in flight
 * goes into one batch (a container `fill` puts it in), written next. `add`
 * answers what `fill` returned and the promise of the write that carries
 * the item; a failed write fails its own batch only.
 */
class WriteInTurn<B, R> {
  private batch: B | null = null;
  private written: Promise<R> | null = null;
  private settle: { resolve(value: R): void; reject(err: unknown): void } | null = null;
  private writing = false;

  constructor(
    private readonly empty: () => B,
    private readonly write: (batch: B) => Promise<R>,
  ) {}

  add<F>(fill: (batch: B) => F): { filled: F; written: Promise<R> } {
    if (this.batch === null) {
      this.batch = this.empty();
      this.written = new Promise<R>((resolve, reject) => (this.settle = { resolve, reject }));
      this.written.catch(() => undefined); // its callers settle it
    }
    const filled = fill(this.batch);
    const written = this.written!;
    if (!this.writing) void this.drain();
    return { filled, written };
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.batch !== null) {
        const batch = this.batch;
        const settle = this.settle!;
        this.batch = this.written = this.settle = null;
        try {
          settle.resolve(await this.write(batch));
        } catch (err) {
          settle.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

/** What Redis holds about one crawl, read in one script (times on Redis's clock, epoch ms). */
export interface RedisStatusData {
  exists: boolean;
  createdAt: number | null;
  finished: boolean;
  finishedAt: number | null;
  now: number;
  counts: StoreCounts;
  started: number;
  seeds: string[];
  work: Array<{ host: string; queued: number }>;
  /**
   * Workers holding leases now (a worker between requests holds none), by
   * the name they were given; `expired`: leases past their expiry, which a
   * live worker would have renewed (left by a stopped one).
   */
  workers: Array<{ name: string; leases: number; expired: number }>;
  hosts: Array<{ host: string; pausedUntil: number | null; rateFactor: number; givenUp: boolean }>;
  robots: Array<{ origin: string; record: RobotsRecord }>;
  outcomes: Record<string, number>;
  /** URLs completed in the last minute. */
  recentPerMinute: number;
  /** The pass the crawl is in (1: the first), when it began (null for the first), and the pages with history kept for the next. */
  pass: number;
  passStartedAt: number | null;
  pagesKept: number;
}

/** A slot from this store (`reserve`): when its start was reserved. */
export interface RedisSlot extends SharedStart, ClaimTimes {}

/** A lease from this store: also when its start was reserved (`reservedAt`: Redis time; `claimSentAt`: this worker's clock, before the script ran). */
export interface RedisLease extends Lease, ClaimTimes {}

/** The part of a host policy the claim script enforces. */
export type SharedPolicy = Pick<LimiterPolicy, 'intervalMs' | 'windows' | 'concurrency' | 'hours'>;

/** No limits: the store hands out work as fast as it is claimed (the contract suite's case). */
const UNLIMITED: SharedPolicy = { intervalMs: 0, windows: [], concurrency: Infinity };

export interface RedisStoreOptions extends RedisConnectionOptions {
  /** The crawl's clock (clock.now()). @default systemClock's scale: performance.timeOrigin + performance.now() */
  now?: () => number;
  /** Each host's gap, windows and concurrency, enforced across workers. @default no limits */
  policyFor?: (key: string) => SharedPolicy;
  /** This worker's name (`--worker`), shown by `crawl status`. @default HOST-PID */
  worker?: string;
  /** How long a lease lasts past its last renewal. @default DEFAULT_LEASE_MS (60 s) */
  leaseMs?: number;
  /** How often this store renews its leases, gives back expired ones and refreshes its views. @default min(leaseMs / 4, 5 s) */
  tickMs?: number;
  /**
   * No page cap reads the `started` counter (no --max-pages): its additions
   * ride on this worker's next lease end (COMPLETE, RELEASE) or timer tick
   * instead of a script call each, and answer at once with this worker's
   * view. A polite crawl saved 0.8 script calls a page. @default false
   */
  countStartsLater?: boolean;
  /**
   * This worker's signing keys, the one it signs with first (a rotation's
   * old key second): it joins only a crawl signed with one of them, and the
   * crawl is signed with its first from then on (crawl-signing-key.ts).
   * @default none: the worker does not sign, and joins only an unsigned crawl
   */
  signingKeys?: readonly WorkerKey[];
}

export { RedisStoreError };
export { RedisStateLostError, type RedisConnection };

/** Between a worker's name and its owner id's random part. */
const OWNER_SUFFIX = '#';

/** The worker name in an owner id (`alpha#1a2b3c4d` → `alpha`). */
const ownerName = (owner: string): string => {
  const cut = owner.lastIndexOf(OWNER_SUFFIX);
  return cut === -1 ? owner : owner.slice(0, cut);
};

const defaultNow = (): number => performance.timeOrigin + performance.now();

export class RedisStore implements CrawlStore {
  readonly kind = 'redis';
  readonly durable = true;
  /** What several workers need beyond the seam (crawl-store.ts `SharedStore`). */
  readonly shared: SharedStore = {
    survey: () => this.survey(),
    lockRobots: (origin, ttlMs) => this.lockRobots(origin, ttlMs),
    dispatched: (lease, at) => this.dispatched(lease, at),
    responded: (lease, at) => this.responded(lease, at),
    reserve: (key) => this.reserve(key),
    endStart: (slot) => this.endStart(slot),
    handOff: (lease) => this.handOff(lease),
    renew: (lease) => this.renew(lease),
    // Redis's TIME is its wall clock: the claim script judges quiet hours on it too.
    wallAt: (localMs) => this.toRedis(localMs),
  };
  /**
   * Names this worker in lease records: its name (`crawl status` shows it)
   * and a random suffix, so two processes given one name never share leases.
   */
  readonly owner: string;
  /** Leases this worker held that expired and were given back before it completed or released them. */
  lostLeases = 0;
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly policyFor: (key: string) => SharedPolicy;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly held = new Map<number, Lease>();
  /** Slots (`reserve`) this worker holds: renewed with the leases. */
  private readonly slots = new Map<number, RedisSlot>();
  private seen = new SeenSet();
  private readonly perHost = new Map<string, number>();
  private readonly sent = new Map<string, SharedFields>();
  /** Per host, when its record was last written and the pause it carried (see writeHosts). */
  private readonly recordWritten = new Map<string, { at: number; pause: string }>();
  /** Per host, its newest save not written yet: it changed only the saver's own record (see writeHosts). */
  private readonly unwritten = new Map<string, HostSaved>();
  private closing = false;
  /** Host saves, one write in flight, the newest save per host waiting for the next (see saveHost). */
  private readonly hostWrites = new WriteInTurn<Map<string, HostSaved>, void>(
    () => new Map(),
    (saves) => this.writeHosts(saves),
  );
  /** Request starts, one write in flight, those made meanwhile waiting for the next (see dispatched). */
  private readonly startWrites = new WriteInTurn<string[], void>(
    () => [],
    async (starts) => void this.applyView(await this.run('started', starts)),
  );
  /** Per lease whose start Redis has not acknowledged yet, that start (Redis time): the lease's end carries it. */
  private readonly startsOnTheirWay = new Map<number, string>();
  /** Per lease whose STARTED waits for its end (see dispatched): what ends the wait, true when the end carries the start. */
  private readonly startHolds = new Map<number, (ended: boolean) => void>();
  /** Leases and slots of this worker whose request was written (`dispatched`), and when (this worker's clock); the others' ends say so ('-'). */
  private readonly written = new Map<number, number>();
  /** Per written lease whose response shows the server may have read it after its write, that bound (Redis time): its end carries it (see responded). */
  private readonly readLate = new Map<number, string>();
  /** URLs added this turn, not sent yet (see add). */
  private adds: AddBatch | null = null;
  /** Per counter, additions one write in flight, those made meanwhile waiting for the next (see addToCounter). */
  private readonly counterWrites = new Map<CounterName, WriteInTurn<number[], number[]>>();
  /** Leases holding a reservation against the budget (SPEND_RESERVE): their end gives it back. */
  private readonly reserving = new Set<number>();
  private totals: StoreCounts = { queued: 0, delayed: 0, leased: 0, seen: 0 };
  private nextDue = Infinity;
  private started = 0;
  /** Additions to `started` not sent yet (countStartsLater): the next lease end or tick carries them. */
  private startedLater = 0;
  /** Between this worker's clock and Redis's (redis-clock.ts). */
  private readonly clock = new RedisClock();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  /** Connecting, scripts, outages and a lost state (redis-connection.ts). */
  private readonly link: RedisLink;
  /** The crawl's record log (`crawl report --redis`), batched onto this store's connection. */
  private readonly records: RedisRecordLog;
  /** Per-page history for re-crawls (redis-history.ts). */
  readonly history: RedisHistory;

  constructor(private readonly opts: RedisStoreOptions) {
    if (!/^[^\s{}]+$/.test(opts.crawlId))
      throw new TypeError(`Expected \`crawlId\` to be a non-empty name without spaces or braces, got ${JSON.stringify(opts.crawlId)}`);
    this.prefix = `crawl:{${opts.crawlId}}:`;
    this.owner = `${opts.worker ?? `${hostname()}-${process.pid}`}${OWNER_SUFFIX}${randomUUID().slice(0, 8)}`;
    this.now = opts.now ?? defaultNow;
    this.policyFor = opts.policyFor ?? (() => UNLIMITED);
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(this.leaseMs > 0)) throw new TypeError(`Expected \`leaseMs\` to be a positive number, got ${this.leaseMs}`);
    this.tickMs = opts.tickMs ?? Math.min(this.leaseMs / 4, 5_000);
    this.link = new RedisLink({ ...opts, prefix: this.prefix, clock: this.clock, now: this.now });
    this.records = new RedisRecordLog({
      key: `${this.prefix}records`,
      connection: () => this.link.connection(),
      untilAnswered: (send, first) => this.link.untilAnswered(send, first),
      lost: () => this.link.lost !== null,
      onError: (err) => this.opts.onError?.(err),
    });
    this.history = new RedisHistory({
      run: (name, args) => this.run(name, args),
      holds: (url) => {
        for (const lease of this.held.values()) if (lease.entry.url === url) return true;
        return false;
      },
      newPass: (expected) => this.newPass(expected),
      runViewed: async (name, args) => this.applyView(await this.run(name, args)),
    });
  }

  /** The crawl's name. */
  get crawlId(): string {
    return this.opts.crawlId;
  }

  /** The crawl's key prefix, `crawl:{ID}:`. */
  get keyPrefix(): string {
    return this.prefix;
  }

  /**
   * What Redis holds under this crawl id before `open`: nothing yet, or a
   * crawl (finished or not), with the thumbprint of the key it is signed with
   * ('' unsigned; undefined when none is kept). Connects.
   */
  async peekMeta(): Promise<(CrawlMeta & { finished: boolean; keyid: string | undefined }) | undefined> {
    await this.connect();
    const [exists, fingerprint, finished, gen, keyidKept, keyid, ...seeds] = (await this.run('peek', [])).map(String);
    if (exists !== '1') return undefined;
    // Joined from here on: a crawl gone before this worker's OPEN (or any later call) is lost, never begun again.
    if (gen !== '') this.link.guard(gen);
    return { seeds, configFingerprint: fingerprint, finished: finished === '1', keyid: keyidKept === '1' ? keyid : undefined };
  }

  /** @throws SigningKeyMismatchError (exit 2) when the crawl is signed with a key this worker was not given, or the reverse. */
  async open(meta: CrawlMeta): Promise<OpenResult> {
    await this.connect();
    const keys = this.opts.signingKeys ?? [];
    const signing = [keys[0]?.thumbprint ?? '', keys[1]?.thumbprint ?? ''];
    const rest = this.applyView(await this.run('open', [meta.configFingerprint, randomUUID(), ...signing, ...meta.seeds]));
    if (String(rest[0]) === 'refused') throw new SigningKeyMismatchError(signingKeyRefusal(`Redis crawl "${this.crawlId}"`, String(rest[1]), keys));
    const existed = Number(rest[0]) === 1;
    this.link.guard(String(rest[3]));
    const before = rest.slice(5, 5 + Number(rest[4])).map(String);
    this.history.current = Number(rest[5 + Number(rest[4])] ?? 1);
    await this.reap();
    this.applyQueues(this.applyView(await this.run('queues', [])));
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
    if (!existed) return { resumed: false, finished: false, meta: { seeds: [...meta.seeds], configFingerprint: meta.configFingerprint } };
    return { resumed: true, finished: String(rest[2]) === '1', meta: { seeds: before, configFingerprint: String(rest[1]) } };
  }

  /** Marks the crawl finished, unless another worker still has work queued, delayed or leased (then it is not over for everyone). */
  async finish(): Promise<boolean> {
    return Number(this.applyView(await this.run('finish', []))[0]) === 1;
  }

  /** The whole crawl now: totals, and every host with due work (this worker's per-host view is replaced by it). */
  async survey(): Promise<Survey> {
    const pairs = this.applyView(await this.run('queues', []));
    this.applyQueues(pairs);
    return { ...this.totals, hosts: [...this.perHost] };
  }

  async lockRobots(origin: string, ttlMs: number): Promise<boolean> {
    const locked = (await this.run('robotsLock', [origin, this.owner, String(Math.max(1, Math.ceil(ttlMs)))])) as unknown;
    return Number(locked) === 1;
  }

  async close(): Promise<void> {
    if (this.link.isClosed) return;
    this.closing = true;
    // Leases left unended stay in Redis and expire (below); their held STARTEDs go unsent.
    for (const release of [...this.startHolds.values()]) release(true);
    if (this.link.opened && this.link.lost === null) {
      await this.records.flush();
      await this.writeKeptBack();
    }
    if (this.timer) clearInterval(this.timer);
    // Leases still held stay in Redis and expire: what a crash leaves, and what the crawl released already after a stop.
    await this.link.close();
  }

  /**
   * The URLs added in one turn (a page's links) go in one ADD, sent at the
   * turn's end: before anything the crawl does after an await, such as the
   * page's completion, so its links are in Redis first.
   */
  add(url: string, key: string, entry: FrontierEntry | null): Promise<boolean> {
    this.seen.add(url); // either way it is seen once this answers
    let batch = this.adds;
    if (batch === null) {
      batch = this.adds = { args: [], answers: [] };
      queueMicrotask(() => this.sendAdds(batch!));
    }
    batch.args.push(url, key, ...(entry ? encodeEntry(entry, key) : ['', '', '']));
    const answer = new Promise<boolean>((resolve, reject) => batch.answers.push({ resolve, reject }));
    // Bounded: one script never runs long inside Redis.
    if (batch.answers.length >= ADD_BATCH) this.sendAdds(batch);
    return answer;
  }

  private sendAdds(batch: AddBatch): void {
    if (this.adds !== batch) return; // sent already (full)
    this.adds = null;
    const { answers } = batch;
    this.run('add', batch.args).then(
      (reply) => {
        const rest = this.applyView(reply);
        for (let i = answers.length; i + 1 < rest.length; i += 2) this.setQueued(String(rest[i]), Number(rest[i + 1]));
        for (let i = 0; i < answers.length; i++) answers[i].resolve(Number(rest[i]) === 1);
      },
      (err: unknown) => {
        for (const a of answers) a.reject(err);
      },
    );
  }

  isSeen(url: string): boolean {
    return this.seen.has(url);
  }

  /** The arguments CLAIM and SLOT share: the host, this worker, and the host's policy (redis-scripts.ts POLICY_ARGS). */
  private policyArgs(key: string): string[] {
    const policy = this.policyFor(key);
    const args = [
      key,
      this.owner,
      String(this.leaseMs),
      String(policy.intervalMs),
      String(Number.isFinite(policy.concurrency) ? policy.concurrency : 0),
      String(BUSY_RETRY_MS),
      String(GAP_MARGIN.ratio),
      String(GAP_MARGIN.ms),
      String(GAP_MARGIN.msRatio),
      String(WINDOW_MARGIN.ratio),
      String(WINDOW_MARGIN.ms),
      String(policy.windows.length),
    ];
    for (const w of policy.windows) args.push(String(w.count), String(w.windowMs));
    if (policy.hours) args.push(...hoursArgs(policy.hours, this.toRedis(this.now())));
    return args;
  }

  /** `now` is not used: the script decides on Redis's clock. */
  async claim(key: string, _now?: number): Promise<RedisLease | ClaimWait | undefined> {
    const t0 = this.now();
    const rest = this.applyView(await this.run('claim', this.policyArgs(key)));
    this.clock.sample(Number(rest[1]), t0, this.now());
    const kind = Number(rest[0]);
    if (kind === 1) return { notBefore: this.toLocal(Number(rest[2])) };
    if (kind === 0) {
      this.setQueued(key, Number(rest[2]));
      return undefined;
    }
    const lease: RedisLease = {
      id: Number(rest[2]),
      key,
      entry: decodeEntry(String(rest[3]), String(rest[4]), key),
      reservedAt: Number(rest[1]),
      claimSentAt: t0,
    };
    this.setQueued(key, Number(rest[5]));
    // Granted with a BRIEF answer: the totals move by this claim alone until the next VIEW.
    this.totals.queued = Math.max(0, this.totals.queued - 1);
    this.totals.leased++;
    this.held.set(lease.id, lease);
    const held = this.waitOutStep();
    if (held) await held; // awaited only when there is a hold: otherwise no extra turn
    return lease;
  }

  /** A start for a request that is no queued URL's, under the host's shared politeness (crawl-store.ts SharedStore.reserve). */
  async reserve(key: string): Promise<RedisSlot | ClaimWait> {
    const t0 = this.now();
    const rest = this.applyView(await this.run('slot', this.policyArgs(key)));
    this.clock.sample(Number(rest[1]), t0, this.now());
    if (Number(rest[0]) === 1) return { notBefore: this.toLocal(Number(rest[2])) };
    const slot: RedisSlot = { id: Number(rest[2]), key, reservedAt: Number(rest[1]), claimSentAt: t0 };
    this.slots.set(slot.id, slot);
    const held = this.waitOutStep();
    if (held) await held; // awaited only when there is a hold: otherwise no extra turn
    return slot;
  }

  /**
   * A start granted soon after Redis's clock jumped ahead waits the jump out
   * before its request (redis-clock.ts stepHold): the gap Redis counted may
   * run from a start it logged before the jump, which now reads that much
   * older. The start stays reserved meanwhile, so every other worker waits
   * for its write as usual.
   */
  private waitOutStep(): Promise<void> | undefined {
    const hold = this.clock.stepHold(this.now());
    return hold > 0 ? new Promise((resolve) => setTimeout(resolve, hold)) : undefined;
  }

  /** The slot's request is over: the host's in-flight count goes back, with its start if Redis may not have it yet. */
  async endStart(slot: SharedStart): Promise<void> {
    if (!this.slots.delete(slot.id)) return; // ended already, or lost (expired and reaped)
    const rest = this.applyView(await this.run('slotEnd', [String(slot.id), this.owner, this.endOf(slot)]));
    if (Number(rest[0]) === 0) this.lostLeases++;
  }

  /** The lease's request is over while its page renders: the host's in-flight count goes back now (crawl-store.ts SharedStore.handOff). */
  async handOff(lease: Lease): Promise<void> {
    if (!this.held.has(lease.id)) return;
    this.applyView(await this.run('handOff', [String(lease.id), this.owner, this.startOnItsWay(lease)]));
  }

  async complete(lease: Lease, outcome?: string, charge?: Charge): Promise<void> {
    this.take(lease);
    this.records.send(); // its record first: commands on one connection run in order
    const start = this.endOf(lease);
    const startedLater = this.takeStartedLater();
    // This worker's last lease: its crawl may be about to end, which it decides from the crawl's totals.
    const view = this.held.size === 0 ? '1' : '';
    const reply = await this.run('complete', [
      String(lease.id),
      this.owner,
      outcome ?? '',
      start,
      ...this.history.completion(lease.entry.url),
      startedLater,
      view,
      charge?.currency ?? '',
      charge === undefined ? '' : String(charge.micros),
      this.reserving.delete(lease.id) ? '1' : '',
    ]);
    const rest = this.applyView(reply); // checks the answer's shape first
    if (Number(rest[0]) === 0) this.lostLeases++;
    else if (reply[0] === '') {
      // Held, with a BRIEF answer: the totals move by this completion alone until the next VIEW.
      this.totals.leased = Math.max(0, this.totals.leased - 1);
      this.started += Number(startedLater || 0);
    }
  }

  async release(lease: Lease, entry: FrontierEntry, dueAt?: number): Promise<void> {
    this.take(lease);
    this.history.drop(lease.entry.url);
    const start = this.endOf(lease);
    const rest = this.applyView(
      await this.run('release', [
        String(lease.id),
        this.owner,
        ...encodeEntry(entry, lease.key),
        dueAt === undefined ? '' : String(dueAt),
        start,
        this.takeStartedLater(),
        this.reserving.delete(lease.id) ? '1' : '',
      ]),
    );
    if (Number(rest[0]) === 0) this.lostLeases++;
    else this.setQueued(String(rest[1]), Number(rest[2]));
  }

  /**
   * The lease's request was written to its socket at `at` (this worker's
   * clock). Until this lands, the host's next claim by any worker waits: a
   * start counts from its real write, not from its reservation.
   *
   * On a host with a gap (and no window), the STARTED waits up to half the
   * gap (at most STARTED_HOLD_MAX_MS) for the lease's end, which carries the
   * start anyway: most requests are over by then, and a polite crawl saves
   * a script call a page (0.7 a page at 20/s). No claim can start inside the
   * gap, so a STARTED landing within half of it delays none.
   */
  async dispatched(lease: SharedStart, at: number): Promise<void> {
    const own = this.ownStart(lease);
    if (!own) return; // completed, released or lost meanwhile: its end cleared the mark
    const start = String(this.clock.startToRedis(own, at));
    this.written.set(lease.id, at);
    this.startsOnTheirWay.set(lease.id, start);
    const policy = this.policyFor(lease.key);
    // Whether STARTED must log the start in the host's windows (redis-scripts.ts log_start); none, mostly.
    const windows = policy.windows.length > 0 ? '1' : '';
    if (policy.intervalMs > 0 && windows === '') {
      const hold = Math.min(policy.intervalMs / 2, STARTED_HOLD_MAX_MS);
      const ended = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), hold);
        this.startHolds.set(lease.id, (carried) => {
          clearTimeout(timer);
          resolve(carried);
        });
      });
      this.startHolds.delete(lease.id);
      if (ended) {
        this.startsOnTheirWay.delete(lease.id);
        return;
      }
    }
    // One STARTED in flight: the starts made meanwhile go together in the next (one a page at full speed).
    const { written } = this.startWrites.add((starts) => starts.push(String(lease.id), lease.key, start, windows));
    try {
      await written;
    } finally {
      this.startsOnTheirWay.delete(lease.id);
    }
  }

  /**
   * The server can have read the lease's request as late as `at` (this
   * worker's clock: its response came, less the host's fastest round trip).
   * A server busy accepting connections can read one request late and the
   * next on time, and see a short gap between them. The lease's end moves
   * the host's last start, and the lease's start in the host's window logs,
   * to this bound, as HostLimiter.markResponded does in one process; with a
   * host concurrency of 1 that end comes before any worker's next claim.
   */
  responded(lease: SharedStart, at: number): void {
    const own = this.ownStart(lease);
    const wrote = this.written.get(lease.id);
    if (own === undefined || wrote === undefined || at <= wrote) return;
    this.readLate.set(lease.id, String(this.clock.startToRedis(own, at)));
  }

  /**
   * The lease's start if Redis may not have it yet ('' otherwise), for its
   * end to carry: the end lifts the host's hold, and a STARTED landing after
   * it would leave the host's last start at the reservation, earlier than
   * the request really was, for another worker's claim in between. A later
   * bound of when the server read it (`responded`) goes instead.
   */
  private startOnItsWay(lease: SharedStart): string {
    return this.readLate.get(lease.id) ?? this.startsOnTheirWay.get(lease.id) ?? (this.written.has(lease.id) ? '' : NEVER_WRITTEN);
  }

  /**
   * What a lease's or a slot's end carries: its start as `startOnItsWay`
   * says, or NEVER_WRITTEN for a request never written (robots.txt to wait
   * for, a skip, a name that does not resolve, a refused connection). Its
   * end then gives the start its claim reserved back: a claim given back
   * unwritten no longer costs its host a gap (the host's robots.txt waited
   * a whole gap behind the claim it was fetched for: 1 s at 1/s).
   */
  private endOf(lease: SharedStart): string {
    const start = this.startOnItsWay(lease);
    this.forgetStart(lease.id);
    return start;
  }

  /** This worker's lease or slot `start` names, while it holds it. */
  private ownStart(start: SharedStart): ClaimTimes | undefined {
    return (this.held.get(start.id) as RedisLease | undefined) ?? this.slots.get(start.id);
  }

  /**
   * What this worker kept of a lease's or slot's request, dropped once its
   * end is sent or the lease is no longer its own; a STARTED still waiting
   * for that end (see dispatched) is not sent.
   */
  private forgetStart(id: number): void {
    this.written.delete(id);
    this.readLate.delete(id);
    this.startHolds.get(id)?.(true);
  }

  /** Extends one lease by `leaseMs` from now (the timer does this for every held lease anyway). */
  async renew(lease: Lease): Promise<void> {
    if (!this.held.has(lease.id)) throw new Error(`lease ${lease.id} (${lease.entry.url}) is not held: completed or released already`);
    await this.renewIds([lease.id]);
  }

  async promoteDue(now: number): Promise<string[]> {
    const rest = this.applyView(await this.run('promote', [String(now)]));
    const n = Number(rest[0]);
    const keys = rest.slice(1, 1 + n).map(String);
    for (let i = 1 + n; i + 1 < rest.length; i += 2) this.setQueued(String(rest[i]), Number(rest[i + 1]));
    return keys;
  }

  nextDueAt(): number {
    return this.nextDue;
  }

  async drain(key?: string): Promise<FrontierEntry[]> {
    const rest = this.applyView(await this.run('drain', [key ?? '']));
    if (key === undefined) this.perHost.clear();
    else this.perHost.delete(key);
    return decodeTriples(rest);
  }

  async clear(key?: string): Promise<Cleared> {
    const rest = this.applyView(await this.run('clear', [key ?? '']));
    if (key === undefined) this.perHost.clear();
    else this.perHost.delete(key);
    const n = Number(rest[0]);
    const counts: Array<[string, number]> = [];
    for (let i = 0; i < n; i++) counts.push([String(rest[1 + 2 * i]), Number(rest[2 + 2 * i])]);
    return { counts, depthZero: decodeTriples(rest.slice(1 + 2 * n)) };
  }

  queued(key?: string): number {
    return key === undefined ? this.totals.queued : (this.perHost.get(key) ?? 0);
  }

  hostsWithWork(): Iterable<string> {
    return [...this.perHost.keys()];
  }

  counts(): StoreCounts {
    return { ...this.totals };
  }

  /**
   * Writes the host's shared record. At most one host write is in flight
   * per worker, and it carries every host saved since the last one (the
   * crawl saves at every start, dispatch and response, so at full speed that
   * was a script call a page): a save that comes meanwhile replaces any save
   * of its host still waiting, and waits for the next write. Every field is
   * the record's current value (the last start and a pause only move later),
   * so a replaced save loses nothing the newest does not carry. The promise
   * settles once a write at least as new as `saved` is answered, or once
   * the save is kept back: a save that changes none of the fields every
   * worker honours, nor the pause, is written at most every HOST_RECORD_MS
   * per host (the timer and `close` write what is kept back). Such a save
   * changes only the saver's own record (its last start, round trips,
   * adaptive counters), which a worker reads back only when it opens the
   * crawl, and which Redis's claims never depend on: at a polite rate it
   * was 1.3–1.5 script calls a page.
   */
  saveHost(key: string, saved: HostSaved): Promise<void> {
    return this.hostWrites.add((saves) => saves.set(key, saved)).written;
  }

  private async writeHosts(saves: Map<string, HostSaved>): Promise<void> {
    const args: string[] = [];
    let hosts = 0;
    const now = this.now();
    for (const [key, saved] of saves) {
      const shared = sharedFields(saved);
      const before = this.sent.get(key);
      const changed: string[] = [];
      for (const field of Object.keys(shared) as Array<keyof SharedFields>) {
        if (before && before[field] === shared[field]) continue;
        const value = shared[field];
        changed.push(field, field === 'suntil' && value !== '' ? String(this.toRedis(Number(value))) : value);
      }
      const { limiter } = saved;
      // No last start: every request's start reaches Redis through its claim or slot and its STARTED.
      // The local limiter's is taken when a job begins, before a slot is reserved: sent, it made the
      // slot wait a whole gap after it (two gaps a robots.txt or browser request).
      const pause = limiter.pausedUntil === null ? '' : String(this.toRedis(limiter.pausedUntil));
      const written = this.recordWritten.get(key);
      if (!this.closing && changed.length === 0 && written !== undefined && written.pause === pause && now - written.at < HOST_RECORD_MS) {
        this.unwritten.set(key, saved);
        continue;
      }
      this.unwritten.delete(key);
      this.recordWritten.set(key, { at: now, pause });
      this.sent.set(key, shared);
      args.push(key, JSON.stringify(saved), String(this.clock.offsetMs), pause, String(changed.length / 2), ...changed);
      // A broad crawl can have thousands of hosts waiting: a few hundred a script keeps each one short.
      if (++hosts === SAVES_PER_CALL) {
        this.applyView(await this.run('saveHost', args.splice(0)));
        hosts = 0;
      }
    }
    if (hosts > 0) this.applyView(await this.run('saveHost', args));
  }

  /**
   * Writes what waits for a later call (the timer's, and `close`'s): the
   * host saves kept back go to the next host write, which writes those due
   * (all of them once closing), and the additions to `started` no lease end
   * has carried go as one COUNTER.
   */
  private async writeKeptBack(): Promise<void> {
    if (this.unwritten.size > 0) {
      const kept = [...this.unwritten];
      // A newer save of a host, waiting for the next write already, is left as it is.
      await this.hostWrites.add((saves) => {
        for (const [key, saved] of kept) if (!saves.has(key)) saves.set(key, saved);
      }).written;
    }
    const by = this.startedLater;
    this.startedLater = 0;
    if (by !== 0) await this.addToCounterNow('started', by);
  }

  async loadHosts(): Promise<Array<[string, HostSaved]>> {
    const flat = await this.run('loadHosts', []);
    const out: Array<[string, HostSaved]> = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const key = String(flat[i]);
      // The saver's times are on its clock: move them onto ours (whole ms: a
      // record saved and loaded by one worker comes back exactly as it was).
      const delta = Math.round(Number(flat[i + 2]) - this.clock.offsetMs);
      const saved = shiftSaved(parseSaved(String(flat[i + 1])), delta);
      out.push([key, saved]);
      // What the crawl restores is what it already agrees with: only its later changes are written.
      this.sent.set(key, sharedFields(saved));
    }
    return out;
  }

  async putRobots(origin: string, record: RobotsRecord): Promise<void> {
    await this.run('robotsPut', [origin, JSON.stringify(record)]);
  }

  async getRobots(origin: string): Promise<RobotsRecord | undefined> {
    const json = String(await this.run('robotsGet', [origin]));
    return json === '' ? undefined : (JSON.parse(json) as RobotsRecord);
  }

  counter(name: CounterName): number {
    return name === 'started' ? this.startedSoFar() : 0;
  }

  /** One script (SPEND_RESERVE): the budget is every worker's, taken atomically. */
  async reserveSpend(lease: Lease, money: Charge, limit: number): Promise<boolean> {
    const granted = Number(await this.run('spendReserve', [String(lease.id), this.owner, money.currency, String(money.micros), String(limit)])) === 1;
    if (granted) this.reserving.add(lease.id);
    return granted;
  }

  async spending(): Promise<Spending> {
    await this.connect();
    const flat = (await this.run('spendGet', [])).map(String);
    const out: Spending = {};
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const [kind, currency, ...host] = flat[i].split(':');
      if (kind === 'r') continue; // reservations in flight: not spent
      const micros = Number(flat[i + 1]);
      const row = (out[currency] ??= { micros: 0, hosts: {} });
      if (kind === 's') row.micros = micros;
      else if (kind === 'h') row.hosts[host.join(':')] = micros;
    }
    return out;
  }

  /** Pages started as this worker sees them: the shared count, and its own additions not sent yet. */
  private startedSoFar(): number {
    return this.started + this.startedLater;
  }

  /** The additions to `started` a lease's end carries ('' for none), taken from those waiting (countStartsLater). */
  private takeStartedLater(): string {
    if (this.startedLater === 0) return '';
    const by = this.startedLater;
    this.startedLater = 0;
    return String(by);
  }

  /**
   * Adds to a shared counter. At most one write per counter is in flight;
   * additions made meanwhile go together in the next (the crawl counts every
   * start, so at full speed that was a script call a page). Each caller is
   * answered the value its own addition made, in the order of the calls, as
   * if each had been sent alone: a `--max-pages` reservation stays exact.
   */
  addToCounter(name: CounterName, by: number): Promise<number> {
    if (name === 'started' && this.opts.countStartsLater) {
      this.startedLater += by;
      return Promise.resolve(this.startedSoFar());
    }
    return this.addToCounterNow(name, by);
  }

  private addToCounterNow(name: CounterName, by: number): Promise<number> {
    let writes = this.counterWrites.get(name);
    if (!writes)
      this.counterWrites.set(
        name,
        (writes = new WriteInTurn<number[], number[]>(
          () => [],
          (adds) => this.writeCounter(name, adds),
        )),
      );
    const { filled: index, written } = writes.add((adds) => adds.push(by) - 1);
    return written.then((values) => values[index]);
  }

  /** One script for the additions `adds`: the value each one made, in order. */
  private async writeCounter(name: CounterName, adds: number[]): Promise<number[]> {
    let total = 0;
    for (const by of adds) total += by;
    const rest = this.applyView(await this.run('counter', [name, String(total)]));
    let value = Number(rest[0]) - total;
    return adds.map((by) => (value += by));
  }

  /** Every worker's records of this crawl, for `crawl report --redis` (see "Record log" above; redis-record-log.ts). */
  recordLog(): RecordLog {
    return {
      append: (record) => this.records.append(record),
      read: () => this.readRecords(),
    };
  }

  private async *readRecords(): AsyncGenerator<unknown> {
    await this.connect();
    yield* this.records.read();
  }

  /** How the shared crawl stands, for `crawl status --redis` (connects; needs no `open`). */
  async status(): Promise<RedisStatusData> {
    await this.connect();
    const r = this.applyView(await this.run('status', [])).map(String);
    let i = 5;
    const group = (width: number): string[][] => {
      const n = Number(r[i++]);
      const items: string[][] = [];
      for (let k = 0; k < n; k += width) items.push(r.slice(i + k, i + k + width));
      i += n;
      return items;
    };
    const seeds = group(1).map(([s]) => s);
    const work = group(2).map(([host, n]) => ({ host: host, queued: Number(n) }));
    const workers = group(3).map(([owner, n, expired]) => ({ name: ownerName(owner), leases: Number(n), expired: Number(expired) }));
    const hosts = group(4).map(([host, pause, factor, givenup]) => ({
      host: host,
      pausedUntil: pause === '' ? null : Number(pause),
      rateFactor: Number(factor),
      givenUp: givenup === '1',
    }));
    const robots = group(2).map(([origin, json]) => ({ origin: origin, record: JSON.parse(json) as RobotsRecord }));
    const outcomes = Object.fromEntries(group(2).map(([k, n]) => [k, Number(n)]));
    const recent = Number(r[i]);
    const [pass, passStartedAt, pagesKept] = [Number(r[i + 1] ?? 1), r[i + 2] ?? '', Number(r[i + 3] ?? 0)];
    return {
      exists: r[0] !== '',
      createdAt: r[1] === '' ? null : Number(r[1]),
      finished: r[2] === '1',
      finishedAt: r[3] === '' ? null : Number(r[3]),
      now: Number(r[4]),
      counts: { ...this.totals },
      started: this.startedSoFar(),
      seeds,
      work,
      workers,
      hosts,
      robots,
      outcomes,
      recentPerMinute: recent,
      pass,
      passStartedAt: passStartedAt === '' ? null : Number(passStartedAt),
      pagesKept,
    };
  }

  /** Gives back leases past their expiry (any worker's); returns how many. Runs on open and on every tick. */
  async reap(): Promise<number> {
    const t0 = this.now();
    const rest = this.applyView(await this.run('reap', [String(REAP_BATCH)]));
    this.clock.sample(Number(rest[0]), t0, this.now());
    return Number(rest[1]);
  }

  /** This worker's clock time for a Redis time (redis-clock.ts). */
  toLocal(redisMs: number): number {
    return this.clock.toLocal(redisMs);
  }

  /** The Redis time for a time on this worker's clock (redis-clock.ts). */
  toRedis(localMs: number): number {
    return this.clock.toRedis(localMs);
  }

  /** NEW_PASS (redis-history.ts): the pass the crawl is in after it, -1 when leases are held. */
  private async newPass(expected: number): Promise<number> {
    const pass = Number(this.applyView(await this.run('newPass', [String(expected)]))[0]);
    if (pass < 0) return pass;
    this.seen = new SeenSet();
    this.applyQueues(this.applyView(await this.run('queues', [])));
    return pass;
  }

  /** Connects (redis-connection.ts). */
  private connect(): Promise<void> {
    return this.link.connect();
  }

  private run(name: ScriptName, args: string[]): Promise<unknown[]> {
    return this.link.run(name, args);
  }

  /** Takes the VIEW off an answer into the local views (a BRIEF one leaves them as they are); returns the rest. */
  private applyView(reply: unknown[]): unknown[] {
    if (!Array.isArray(reply) || reply.length < VIEW_LENGTH) throw new RedisStoreError(`unexpected answer from Redis: ${JSON.stringify(reply)}`);
    if (reply[0] === '') return reply.slice(VIEW_LENGTH);
    this.totals = { queued: Number(reply[0]), delayed: Number(reply[1]), leased: Number(reply[2]), seen: Number(reply[3]) };
    this.nextDue = reply[4] === '' ? Infinity : Number(reply[4]);
    this.started = Number(reply[5]);
    return reply.slice(VIEW_LENGTH);
  }

  private applyQueues(pairs: unknown[]): void {
    this.perHost.clear();
    for (let i = 0; i + 1 < pairs.length; i += 2) this.setQueued(String(pairs[i]), Number(pairs[i + 1]));
  }

  private setQueued(key: string, n: number): void {
    if (n > 0) this.perHost.set(key, n);
    else this.perHost.delete(key);
  }

  private take(lease: Lease): void {
    if (!this.held.delete(lease.id)) throw new Error(`lease ${lease.id} (${lease.entry.url}) is not held: completed or released already`);
  }

  private async renewIds(ids: number[]): Promise<void> {
    const t0 = this.now();
    const rest = this.applyView(await this.run('renew', [this.owner, String(this.leaseMs), ...ids.map(String)]));
    this.clock.sample(Number(rest[0]), t0, this.now());
    // Not ours any more: expired and given back while this worker stalled.
    for (const id of rest.slice(1)) {
      this.forgetStart(Number(id)); // given back meanwhile: its start is no longer this worker's to report
      if (this.slots.delete(Number(id))) continue; // a slot reaped: its request, if still running, is a lost lease's
      const lost = this.held.get(Number(id));
      if (!lost) continue;
      this.held.delete(lost.id);
      this.lostLeases++;
    }
  }

  /** Renews this worker's leases, gives back expired ones, refreshes the views. Never throws. */
  private async tick(): Promise<void> {
    if (this.ticking || this.link.isClosed || this.link.lost) return;
    this.ticking = true;
    try {
      if (this.held.size + this.slots.size > 0) await this.renewIds([...this.held.keys(), ...this.slots.keys()]);
      await this.reap();
      await this.writeKeptBack();
    } catch (err) {
      this.opts.onError?.(err as Error);
    } finally {
      this.ticking = false;
    }
  }
}
