/**
 * How the parts of one crawl signal each other, in one place. crawler.ts
 * builds the parts in dependency order, each from parts built before it;
 * the links that go back the other way are these signals:
 * - `wake`: a host has work: the scheduler visits it;
 * - `settled`: something settled (a job, a store call, a robots.txt load, a
 *   rendered page): the crawl end re-checks whether the crawl is over;
 * - `fail`: something of ours failed (the store, the sink, the archive): the
 *   crawl ends with that error;
 * and, each sent by one part: the scheduler's `work` (the lease source hands
 * it a host's next request), `resolved` (a host's address arrived), `due`
 * (delayed entries came due) and `hostGivenUp`.
 *
 * CrawlSignals is made first and shared (CrawlContext.signals); each signal
 * is connected to its one target exactly once, after every part exists
 * (`connect`). A signal sent before then throws, naming the signal, so a
 * part wired out of order fails loudly instead of reaching a part that is
 * not there yet. Its members are plain functions: they may be handed on as
 * callbacks before the connect.
 */
import type { HostPolicy } from '../config/settings-types.js';
import type { WorkSource } from '../schedule/scheduler.js';

/** What each signal reaches (crawler.ts connects them). */
export interface SignalTargets {
  /** The host has (new) work, or may go on: the scheduler visits it (scheduler.ts `wake`). */
  wake(key: string): void;
  /** Something settled: the crawl may have ended (crawl-end.ts `check`). */
  settled(): void;
  /** Something of ours failed: the crawl ends with this error (crawl-end.ts `fail`). */
  fail(err: unknown): void;
  /** The scheduler's work: a host's next request (lease-source.ts). */
  work: WorkSource;
  /** The host's address arrived: the scheduler visits it ahead of the others (scheduler.ts `resolved`). */
  resolved(key: string): void;
  /** The store's earliest delayed entry is due: what is due is promoted (lease-source.ts `promoteDue`). */
  due(): void;
  /** The host was just given up: what is left of it is skipped (crawl-end.ts `giveUpHost`). */
  hostGivenUp(key: string, policy: HostPolicy): void;
}

export class CrawlSignals implements SignalTargets {
  private targets: SignalTargets | undefined;

  readonly wake = (key: string): void => this.to('wake').wake(key);
  readonly settled = (): void => this.to('settled').settled();
  readonly fail = (err: unknown): void => this.to('fail').fail(err);
  readonly work: WorkSource = {
    hasWork: (key) => this.to('work').work.hasWork(key),
    take: (key, now) => this.to('work').work.take(key, now),
  };
  readonly resolved = (key: string): void => this.to('resolved').resolved(key);
  readonly due = (): void => this.to('due').due();
  readonly hostGivenUp = (key: string, policy: HostPolicy): void => this.to('hostGivenUp').hostGivenUp(key, policy);

  /** Every part exists: each signal reaches its target from now on. Once only. */
  connect(targets: SignalTargets): void {
    if (this.targets !== undefined) throw new Error('crawl signals are connected already');
    this.targets = targets;
  }

  private to(signal: keyof SignalTargets): SignalTargets {
    if (this.targets === undefined) throw new Error(`crawl signal "${signal}" sent before the crawl's parts were connected`);
    return this.targets;
  }
}
