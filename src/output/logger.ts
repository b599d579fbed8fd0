/**
 * Human-facing messages on stderr, never on stdout (stdout carries only records).
 *
 * Lines look like `crawl: warning: robots.txt for a.example answered 503`.
 * When a live progress line is on screen, a message first clears it, prints
 * itself on a clean line, then lets the progress line redraw below it, so the
 * terminal never shows a log line glued to half a status line.
 */
import { systemClock, type Clock } from '../clock.js';

/** Something drawn in place on the terminal that log lines must step around. */
export interface LiveLine {
  /** Erases the line from the screen (the cursor ends at column 0). */
  clear(): void;
  /** Draws the last content again, without sampling anything new. */
  redraw(): void;
}

export interface LoggerOptions {
  /** Where messages go. @default process.stderr */
  stream?: NodeJS.WritableStream;
  /** No info or blocks (progress and summary); warnings and errors still print. @default false */
  quiet?: boolean;
  /** Also print debug messages, each stamped with the time since the logger was made. @default false */
  verbose?: boolean;
  /** Time source for the verbose stamps. @default systemClock */
  clock?: Clock;
}

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  /** Printed only with `verbose`. */
  debug(msg: string): void;
  /** Prints preformatted text (the end summary) as is; suppressed by `quiet`. */
  block(text: string): void;
  /** Lets log lines step around a live line; returns the detach function. */
  attach(live: LiveLine): () => void;
  readonly quiet: boolean;
  readonly verbose: boolean;
}

// stderr can break too (`crawl 2>&1 | head`). There is nobody left to tell, and
// an unhandled 'error' event would crash the crawl with a stack trace.
const guarded = new WeakSet<object>();
export function ignoreStreamErrors(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', () => {});
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const stream = opts.stream ?? process.stderr;
  const quiet = opts.quiet ?? false;
  const verbose = opts.verbose ?? false;
  const clock = opts.clock ?? systemClock;
  const startedAt = clock.now();
  let live: LiveLine | undefined;
  ignoreStreamErrors(stream);

  const print = (text: string): void => {
    live?.clear();
    stream.write(text.endsWith('\n') ? text : text + '\n');
    live?.redraw();
  };
  const line = (kind: string, msg: string): void => {
    const stamp = verbose ? `[${((clock.now() - startedAt) / 1000).toFixed(3)}s] ` : '';
    // Continuation lines are indented so every line still reads as part of one message.
    print(`crawl: ${stamp}${kind}${msg.replace(/\n+$/, '').replace(/\n/g, '\n  ')}`);
  };

  return {
    quiet,
    verbose,
    info(msg) {
      if (!quiet) line('', msg);
    },
    warn(msg) {
      line('warning: ', msg);
    },
    error(msg) {
      line('error: ', msg);
    },
    debug(msg) {
      if (verbose) line('debug: ', msg);
    },
    block(text) {
      if (!quiet) print(text);
    },
    attach(next) {
      live = next;
      return () => {
        if (live === next) live = undefined;
      };
    },
  };
}
