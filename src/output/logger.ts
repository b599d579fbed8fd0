/**
 * Human-facing messages on stderr, never on stdout (stdout carries only records).
 *
 * Lines look like `crawl: warning: robots.txt for a.example answered 503`.
 * When a live progress line is on screen, a message first clears it, prints
 * itself on a clean line, then lets the progress line redraw below it, so the
 * terminal never shows a log line glued to half a status line.
 *
 * With `format: 'json'` (`--log-format json`, for log shippers) every message
 * is one JSON object on one line: `level`, `time` (ISO 8601), `message`, and
 * `host` and `code` when known. A message about one host is written
 * "HOST: text" by the crawl; that HOST becomes the `host` field (the message
 * is kept whole). `event()` adds structured fields (the progress, the summary).
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
  /** `json`: one JSON object per message (see the module contract). @default 'text' */
  format?: LogFormat;
}

export type LogFormat = 'text' | 'json';

/** What a message may carry beyond its text, as JSON fields. */
export interface LogFields {
  /** The host the message is about. */
  host?: string;
  /** A stable error code. */
  code?: string;
}

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Printed only with `verbose`. */
  debug(msg: string, fields?: LogFields): void;
  /** Prints preformatted text (the end summary) as is; suppressed by `quiet`. */
  block(text: string): void;
  /**
   * An info message with structured data: in JSON, `data`'s fields join the
   * object (`{"message":"summary","summary":{…}}`); as text, the message alone.
   * Suppressed by `quiet`.
   */
  event(msg: string, data: Record<string, unknown>): void;
  readonly format: LogFormat;
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

/** "a.example: …", "a.example:8080: …", "[::1]:8080: …": a message about one host (a dotted name or an address, then ": "). */
const HOST_PREFIX = /^((?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?|\[[0-9a-f:.]+\](?::\d+)?|[a-z0-9-]+:\d+): /i;

export function createLogger(opts: LoggerOptions = {}): Logger {
  const stream = opts.stream ?? process.stderr;
  const quiet = opts.quiet ?? false;
  const verbose = opts.verbose ?? false;
  const clock = opts.clock ?? systemClock;
  const format = opts.format ?? 'text';
  const startedAt = clock.now();
  let live: LiveLine | undefined;
  ignoreStreamErrors(stream);

  const print = (text: string): void => {
    live?.clear();
    stream.write(text.endsWith('\n') ? text : text + '\n');
    live?.redraw();
  };
  const json = (level: string, msg: string, fields: LogFields | undefined, data?: Record<string, unknown>): void => {
    const message = msg.replace(/\n+$/, '');
    const host = fields?.host ?? HOST_PREFIX.exec(message)?.[1];
    // Wall time: a log shipper lines these up with other machines' logs.
    const entry = {
      level,
      time: new Date().toISOString(),
      message,
      ...(host !== undefined && { host }),
      ...(fields?.code !== undefined && { code: fields.code }),
      ...data,
    };
    stream.write(JSON.stringify(entry) + '\n');
  };
  const line = (kind: string, msg: string): void => {
    const stamp = verbose ? `[${((clock.now() - startedAt) / 1000).toFixed(3)}s] ` : '';
    // Continuation lines are indented so every line still reads as part of one message.
    print(`crawl: ${stamp}${kind}${msg.replace(/\n+$/, '').replace(/\n/g, '\n  ')}`);
  };

  if (format === 'json') {
    return {
      quiet,
      verbose,
      format,
      info: (msg, fields) => quiet || json('info', msg, fields),
      warn: (msg, fields) => json('warn', msg, fields),
      error: (msg, fields) => json('error', msg, fields),
      debug: (msg, fields) => verbose && json('debug', msg, fields),
      // Preformatted text has no place among JSON lines: callers use event() in this format.
      block: (text) => quiet || json('info', text, undefined),
      event: (msg, data) => quiet || json('info', msg, undefined, data),
      // Nothing is drawn in place in this format.
      attach: () => () => {},
    };
  }
  return {
    quiet,
    verbose,
    format,
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
    event(msg) {
      if (!quiet) line('', msg);
    },
    attach(next) {
      live = next;
      return () => {
        if (live === next) live = undefined;
      };
    },
  };
}
