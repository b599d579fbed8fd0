/**
 * Live progress on stderr.
 *
 * On a terminal: one line redrawn in place (`\r` + text + clear-to-end) about
 * four times a second, cut to the terminal width so it never wraps (a wrapped
 * line cannot be redrawn with `\r`). Elsewhere (CI logs, files): one plain line
 * every few seconds, because carriage returns make a log unreadable.
 *
 * pages/s is measured over a recent sliding window, not the whole run: after a
 * host starts throttling us, the number should drop within seconds.
 */
import { systemClock, type Clock, type Timer } from '../clock.js';
import { ignoreStreamErrors, type LiveLine } from './logger.js';
import { groupDigits } from '../util/group-digits.js';

export interface ProgressSnapshot {
  fetched: number;
  queued: number;
  inFlight: number;
  errors: number;
  skipped: number;
  /** Requests the crawl aborted itself (a second Ctrl-C, a stop's grace period): not in `fetched` nor `errors`, as in the summary; absent when none. */
  aborted?: number;
  hostsWaiting: number;
  hostsActive: number;
  elapsedMs: number;
  /**
   * Hosts currently slowed below their configured rate (429/503 feedback, or
   * response times above their baseline): the rate in force, the fraction of
   * the configured one, and the latency signal's part and reason while it
   * holds the host back.
   */
  throttled?: Array<{ host: string; rate: string; factor?: number; latency?: { factor: number; medianMs: number; baselineMs: number; why: string } }>;
  /**
   * Hosts paused now (Retry-After, failure backoff, quiet hours), with the
   * milliseconds left; `quietUntil` (the host's zone's clock, "06:00") when
   * it waits for its quiet-hours window to open.
   */
  paused?: Array<{ host: string; leftMs: number; quietUntil?: string }>;
  /** The crawl stops after this many page requests (--max-pages); absent when unbounded. */
  limit?: number;
}

/** How far along a crawl is, when that can be known honestly. */
export interface Eta {
  /** Share of --max-pages done, 0..1. */
  fraction?: number;
  /** Time left at the current pace. */
  leftMs?: number;
  /** What the estimate rests on. */
  basis: 'max-pages' | 'draining';
}

export interface ProgressOptions {
  /** @default process.stderr */
  stream?: NodeJS.WritableStream;
  /** Draw a live line instead of periodic log lines. @default stream.isTTY */
  isTTY?: boolean;
  /** Terminal width. @default stream.columns, else 80 */
  columns?: () => number;
  /** @default systemClock */
  clock?: Clock;
  /** Redraw period of the live line. @default 250 */
  intervalMs?: number;
  /** Period of the plain log line when not on a terminal. @default 5000 */
  logIntervalMs?: number;
  /** Span over which pages/s is measured. @default 10000 */
  rateWindowMs?: number;
  /** Show nothing at all. @default false */
  quiet?: boolean;
  /** A logger to attach to while running, so its lines step around ours. */
  logger?: { attach(live: LiveLine): () => void };
  /**
   * Instead of text, one event every `logIntervalMs` through this function
   * (`--log-format json`): the snapshot's numbers and pages/s. Never a live line.
   */
  event?: (message: string, data: Record<string, unknown>) => void;
}

export interface Progress extends LiveLine {
  start(): void;
  /** Stops the timer and erases the live line, leaving a clean line for the summary. */
  stop(): void;
  /** Samples the source and draws (live) or prints (plain) one update now. */
  render(): void;
}

const CLEAR = '\r\x1b[K';

const int = (n: number): string => groupDigits(Math.round(n));

function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/**
 * An ETA only where one is honest: against --max-pages at the recent pace,
 * or, without a cap, when the queue has shrunk over the whole last window
 * (new links keep arriving, so a growing queue has no ETA at all).
 */
export function estimate(s: ProgressSnapshot, pagesPerSecond: number, queueDrainPerSecond: number | null): Eta | undefined {
  if (s.limit !== undefined && Number.isFinite(s.limit) && s.limit > 0) {
    const left = Math.max(0, s.limit - s.fetched);
    return { basis: 'max-pages', fraction: Math.min(1, s.fetched / s.limit), leftMs: pagesPerSecond > 0 ? (left / pagesPerSecond) * 1000 : undefined };
  }
  if (queueDrainPerSecond !== null && queueDrainPerSecond > 0 && s.queued > 0) {
    return { basis: 'draining', leftMs: ((s.queued + s.inFlight) / queueDrainPerSecond) * 1000 };
  }
  return undefined;
}

/** The progress text, without any prefix or terminal codes. The important part comes first, so a cut at 80 columns keeps it. */
export function formatProgressLine(s: ProgressSnapshot, pagesPerSecond: number, eta?: Eta): string {
  const parts = [formatElapsed(s.elapsedMs)];
  if (eta?.fraction !== undefined) parts.push(`${Math.floor(eta.fraction * 100)}%`);
  if (eta?.leftMs !== undefined) parts.push(`${eta.basis === 'draining' ? '~' : ''}${formatElapsed(eta.leftMs)} left`);
  parts.push(
    `fetched ${int(s.fetched)}`,
    `queued ${int(s.queued)}`,
    `in flight ${int(s.inFlight)}`,
    `${pagesPerSecond.toFixed(1)} pages/s`,
    `errors ${int(s.errors)}`,
  );
  if (s.skipped > 0) parts.push(`skipped ${int(s.skipped)}`);
  if (s.aborted) parts.push(`aborted ${int(s.aborted)}`);
  parts.push(`hosts ${int(s.hostsActive)} active, ${int(s.hostsWaiting)} waiting`);
  if (s.paused?.length) parts.push(`paused ${s.paused.map(pausedHost).join(', ')}`);
  if (s.throttled?.length) parts.push(`throttled ${s.throttled.map((t) => `${t.host} ${t.rate}${t.latency ? ` (${t.latency.why})` : ''}`).join(', ')}`);
  return parts.join(' · ');
}

function pausedHost(p: NonNullable<ProgressSnapshot['paused']>[number]): string {
  return p.quietUntil === undefined ? `${p.host} ${Math.ceil(p.leftMs / 1000)}s` : `${p.host} until ${p.quietUntil} (quiet hours)`;
}

/** Cuts `text` to fit `width` columns, marking the cut with an ellipsis. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (text.length <= width) return text;
  return text.slice(0, width - 1) + '…';
}

/**
 * Measures pages/s over the last `windowMs`, from samples of the cumulative
 * fetched count. Before two samples exist it falls back to the run average.
 */
export class RateWindow {
  private samples: Array<{ at: number; count: number }> = [];
  constructor(private readonly windowMs: number) {}

  add(at: number, count: number): void {
    this.samples.push({ at, count });
    // Keep one sample at or before the window start so the span covers the whole window.
    while (this.samples.length > 2 && this.samples[1].at <= at - this.windowMs) this.samples.shift();
  }

  perSecond(fallback: { count: number; elapsedMs: number }): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (first && last && last.at > first.at) return ((last.count - first.count) * 1000) / (last.at - first.at);
    return fallback.elapsedMs > 0 ? (fallback.count * 1000) / fallback.elapsedMs : 0;
  }
}

export function createProgress(opts: ProgressOptions, source: () => ProgressSnapshot): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = opts.event === undefined && (opts.isTTY ?? (stream as { isTTY?: boolean }).isTTY === true);
  const columns = opts.columns ?? (() => (stream as { columns?: number }).columns || 80);
  const clock = opts.clock ?? systemClock;
  const period = tty ? (opts.intervalMs ?? 250) : (opts.logIntervalMs ?? 5000);
  const rate = new RateWindow(opts.rateWindowMs ?? 10_000);
  // The queue's net shrink per second, over the same window (negated counts make RateWindow measure a decrease).
  const drain = new RateWindow(opts.rateWindowMs ?? 10_000);
  const windowMs = opts.rateWindowMs ?? 10_000;
  let firstSampleAt: number | undefined;
  const quiet = opts.quiet ?? false;

  let timer: Timer | undefined;
  let running = false;
  let shown = ''; // what the live line shows now ('' = nothing on screen)
  let last = ''; // the last rendered text, for redraw after a log line
  let detach: (() => void) | undefined;
  ignoreStreamErrors(stream);

  const draw = (text: string): void => {
    // Leave the last column free: writing into it makes some terminals wrap.
    const fitted = truncate(text, columns() - 1);
    if (fitted === shown) return;
    stream.write(CLEAR + fitted);
    shown = fitted;
  };

  const schedule = (): void => {
    timer = clock.setTimer(tick, period);
    // A progress timer must never be what keeps the process alive.
    (timer.id as { unref?: () => void } | null)?.unref?.();
  };
  function tick(): void {
    if (!running) return;
    progress.render();
    schedule();
  }

  const progress: Progress = {
    start() {
      if (quiet || running) return;
      running = true;
      detach = opts.logger?.attach(progress);
      // A plain log waits one period: a crawl shorter than that prints no progress at all.
      if (tty) progress.render();
      schedule();
    },
    stop() {
      running = false;
      if (timer) clock.clearTimer(timer);
      timer = undefined;
      detach?.();
      detach = undefined;
      progress.clear();
    },
    render() {
      if (quiet) return;
      const snap = source();
      const now = clock.now();
      rate.add(now, snap.fetched);
      drain.add(now, -snap.queued);
      firstSampleAt ??= now;
      const pace = rate.perSecond({ count: snap.fetched, elapsedMs: snap.elapsedMs });
      // A draining queue must have been measured over a whole window before it predicts anything.
      const draining = now - firstSampleAt >= windowMs ? drain.perSecond({ count: 0, elapsedMs: 0 }) : null;
      if (opts.event) {
        const { throttled, paused, ...numbers } = snap;
        opts.event('progress', {
          progress: { ...numbers, pagesPerSecond: Math.round(pace * 100) / 100, throttledHosts: throttled?.length ?? 0, pausedHosts: paused?.length ?? 0 },
        });
        return;
      }
      last = formatProgressLine(snap, pace, estimate(snap, pace, draining));
      if (tty) draw(last);
      else stream.write(`crawl: ${last}\n`);
    },
    clear() {
      if (!tty || shown === '') return;
      stream.write(CLEAR);
      shown = '';
    },
    redraw() {
      if (tty && running && last) draw(last);
    },
  };
  return progress;
}
