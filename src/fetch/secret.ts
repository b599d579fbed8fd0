/**
 * A value that must never be written out: a password, a bearer token, a
 * header value read from the environment. It prints as `***` wherever it
 * ends up by accident (a record, a log line, JSON.stringify of settings,
 * console.log, util.inspect); only `reveal()` gives the text, and only the
 * fetcher calls it, to build a request.
 */
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string | undefined;
  /** Where the value came from, safe to show: `environment variable SHOP_PASS` or `config`. */
  readonly source: string;

  /** `value` undefined: the environment variable it names is not set (a crawl refuses to start; request-setup.ts). */
  constructor(value: string | undefined, source: string) {
    this.#value = value;
    this.source = source;
  }

  /** Read from an environment variable now; unset or empty leaves it missing. */
  static fromEnv(name: string, env: NodeJS.ProcessEnv = process.env): Secret {
    const value = env[name];
    return new Secret(value === '' ? undefined : value, `environment variable ${name}`);
  }

  /** Its environment variable was not set when the config was read. */
  get missing(): boolean {
    return this.#value === undefined;
  }

  /** The text itself: for building a request, never for output. */
  reveal(): string {
    if (this.#value === undefined) throw new Error(`${this.source} is not set`);
    return this.#value;
  }

  toString(): string {
    return '***';
  }

  toJSON(): string {
    return '***';
  }

  [inspect.custom](): string {
    return `Secret(*** from ${this.source})`;
  }
}

/** A header value as the config holds it: plain text, or a secret read from the environment. */
export type HeaderValue = string | Secret;

export function revealValue(value: HeaderValue): string {
  return typeof value === 'string' ? value : value.reveal();
}
