/**
 * The field kinds the config file is built from: durations, sizes, rates,
 * windows, bounded integers, status lists, enums, regexes.
 *
 * Each kind is a zod schema that validates *and* normalises ("30s" → 30000),
 * and words its own problems the way the unit parsers do, so a bad value reads
 * the same whether it came from the file or from a flag. Kinds know nothing
 * about where they are used; file-schema.ts assembles them into the file.
 */
import { z } from 'zod';
import { NetworkSyntaxError, parseNetwork } from '../fetch/address-ranges.js';
import { RATE_PATTERN, WINDOW_PATTERN, parseRate, parseWindow } from './rate.js';
import { DURATION_PATTERN, SIZE_PATTERN, UnitError, parseDuration, parseSize, showValue } from './units.js';
import { PatternError, compileUserPattern, type UserPattern } from './user-pattern.js';
import { HOURS_PATTERN_SOURCE, HoursError, checkTimezone, parseHoursLabel } from '../politeness/crawl-hours.js';

/** Runs a unit parser as a transform, turning its UnitError into an issue at the field's path. */
function parsedBy<I, T>(input: z.ZodType<I>, parse: (value: I) => T) {
  return input.transform((value, ctx): T => {
    try {
      return parse(value);
    } catch (error) {
      if (!(error instanceof UnitError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: value });
      return z.NEVER;
    }
  });
}

/** The parser's own message for a value of the wrong type, so `true` and `"abc"` read alike. */
export function messageFrom(parse: (value: never) => unknown) {
  return (issue: { input?: unknown }): string => {
    try {
      parse(issue.input as never);
    } catch (error) {
      if (error instanceof UnitError) return error.message;
    }
    return `invalid value ${showValue(issue.input)}`;
  };
}

/** Options for {@link duration}. */
export interface DurationOptions {
  /**
   * Zero is refused (a timeout or TTL of 0 means nothing sensible).
   * @default false
   */
  positive?: boolean;
  /**
   * Upper bound in ms, with how to write it in the message.
   * @default no bound
   */
  max?: { ms: number; label: string };
}

/** "30s", "500ms", "1.5m" or a number of ms → ms. */
function duration(options: DurationOptions = {}) {
  const message = messageFrom(parseDuration);
  const input = z.union([z.string().meta({ pattern: DURATION_PATTERN }), z.number().min(0, { error: message })], {
    error: message,
  });
  return parsedBy(input, (value) => {
    const ms = parseDuration(value);
    if (options.positive && ms === 0) throw new UnitError(`expected a duration greater than zero, got ${showValue(value)}`, value);
    if (options.max && ms > options.max.ms) {
      throw new UnitError(`expected a duration of at most ${options.max.label}, got ${showValue(value)}`, value);
    }
    return ms;
  });
}

/** "10MiB", "500KB" or a number of bytes → bytes (at least 1, or `min` with its label). */
function size(min?: { bytes: number; label: string }) {
  const message = messageFrom(parseSize);
  const bytes = z.int({ error: message }).min(1, { error: (i) => `expected a size greater than zero, got ${showValue(i.input)}` });
  const input = z.union([z.string().meta({ pattern: SIZE_PATTERN }), bytes], { error: message });
  return parsedBy(input, (value) => {
    const bytes = parseSize(value);
    if (bytes === 0) throw new UnitError(`expected a size greater than zero, got ${showValue(value)}`, value);
    if (min && bytes < min.bytes) throw new UnitError(`expected at least ${min.label}, got ${showValue(value)}`, value);
    return bytes;
  });
}

function rate() {
  return parsedBy(z.string({ error: messageFrom(parseRate) }).meta({ pattern: RATE_PATTERN }), parseRate);
}

function windows() {
  const item = parsedBy(z.string({ error: messageFrom(parseWindow) }).meta({ pattern: WINDOW_PATTERN }), parseWindow);
  return z.array(item, { error: (i) => `expected a list of windows like ["100/min"], got ${showValue(i.input)}` });
}

/**
 * Why `value` is not an integer in [min, max] (no max: up to the largest safe
 * integer), or undefined when it is. `typed` is the text a flag was given:
 * compared exactly and echoed as typed, since "9007199254740993" is already
 * another number once converted. A number past 2^53 from a file is not
 * echoed: JSON.parse has rounded it, so its digits are not the user's.
 */
export function integerProblem(value: unknown, min: number, max?: number, typed?: string): string | undefined {
  const range = max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  const limit = max ?? Number.MAX_SAFE_INTEGER;
  let exact: bigint;
  let shown: string | undefined;
  if (typed !== undefined && /^\s*-?\d+\s*$/.test(typed)) {
    exact = BigInt(typed.trim());
    shown = typed.trim();
  } else if (typeof value === 'number' && Number.isInteger(value)) {
    exact = BigInt(value);
    shown = Number.isSafeInteger(value) ? String(value) : undefined;
  } else {
    return `expected ${range}, got ${typed === undefined ? showValue(value) : showValue(typed)}`;
  }
  const got = shown === undefined ? '' : `, got ${shown}`;
  if (exact > BigInt(limit)) return `too large (max ${limit})${got}`;
  if (exact < BigInt(min)) return `expected ${range}${got}`;
  return undefined;
}

/**
 * An integer in [min, max]; wrong type and too small read "expected …",
 * too large "too large (max N)". 1e20 fails both z.int's safe range and
 * `max` with the same words: the config's problem list drops the repeat
 * (aborting at the first check would also skip the file's cross-field rules).
 */
function integer(min: number, max?: number) {
  const error = (issue: { input?: unknown }) => integerProblem(issue.input, min, max) ?? `expected an integer, got ${showValue(issue.input)}`;
  const base = z.int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}

/**
 * A list of HTTP status codes (100-599), each at most once. A repeat is
 * reported at its own index: it is harmless to the crawler but usually a typo
 * for a status the user meant to add.
 */
function statusList() {
  const error = (issue: { input?: unknown }) => `expected an HTTP status from 100 to 599, got ${showValue(issue.input)}`;
  const item = z.int({ error }).min(100, { error }).max(599, { error });
  return z
    .array(item, { error: (i) => `expected a list of HTTP statuses like [500, 502], got ${showValue(i.input)}` })
    .meta({ uniqueItems: true })
    .superRefine((list, ctx) => {
      list.forEach((status, index) => {
        if (list.indexOf(status) < index) {
          ctx.addIssue({ code: 'custom', message: `${status} is already listed`, path: [index], input: status });
        }
      });
    });
}

function boolean() {
  return z.boolean({ error: (i) => `expected true or false, got ${showValue(i.input)}` });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const list = values.map((v) => JSON.stringify(v)).join(', ');
  return z.enum(values, { error: (i) => `expected one of ${list}, got ${showValue(i.input)}` });
}

/**
 * A pattern source (no flags) → a compiled UserPattern. A URL filter runs on
 * every URL found, so it is compiled for a linear-time engine, and one that
 * engine cannot run (lookaround, backreferences, too long) is refused here,
 * at start-up, instead of on the first link (user-pattern.ts).
 */
function regexList() {
  const item = z.string({ error: (i) => `expected a regular expression string, got ${showValue(i.input)}` }).transform((source, ctx): UserPattern => {
    try {
      return compileUserPattern(source);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: source });
      return z.NEVER;
    }
  });
  return z.array(item, { error: (i) => `expected a list of regular expressions, got ${showValue(i.input)}` });
}

/** A User-Agent header value that starts with a product token (robots.txt groups are matched on it). */
function userAgent() {
  return z.string({ error: (i) => `expected a string, got ${showValue(i.input)}` }).superRefine((value, ctx) => {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+/.test(value) || !/^[\x20-\x7e]+$/.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected printable ASCII starting with a product token like "mybot/1.0", got ${showValue(value)}`,
      });
    }
  });
}

/**
 * A list of IP networks ("10.0.0.0/8", "fd00::/8", or one address) → their
 * normalised CIDRs. Each bad entry is reported at its own index; a network
 * with host bits set is refused with the one it probably meant.
 */
function networkList() {
  const item = z.string({ error: (i) => `expected a network like "10.0.0.0/8" as a string, got ${showValue(i.input)}` }).transform((text, ctx) => {
    try {
      return parseNetwork(text.trim()).cidr;
    } catch (error) {
      if (!(error instanceof NetworkSyntaxError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: text });
      return z.NEVER;
    }
  });
  return z.array(item, { error: (i) => `expected a list of networks like ["10.0.0.0/8"], got ${showValue(i.input)}` });
}

/** A daily window "HH:MM-HH:MM" (politeness/crawl-hours.ts), checked here and kept as written. */
function hours() {
  return z
    .string({ error: (i) => `expected a daily window "HH:MM-HH:MM" like "22:00-06:00", got ${showValue(i.input)}` })
    .superRefine((value, ctx) => {
      try {
        parseHoursLabel(value);
      } catch (error) {
        if (!(error instanceof HoursError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.message, input: value });
      }
    })
    .meta({ pattern: HOURS_PATTERN_SOURCE });
}

/** An IANA time zone name, checked with Intl and kept in its canonical spelling. */
function timezone() {
  return z.string({ error: (i) => `expected an IANA time zone name like "Europe/Berlin", got ${showValue(i.input)}` }).transform((value, ctx) => {
    try {
      return checkTimezone(value);
    } catch (error) {
      if (!(error instanceof HoursError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, input: value });
      return z.NEVER;
    }
  });
}

/** `$comment`, accepted in every object so an example file can explain itself. */
export const comment = () => z.string().optional().describe('Free text for humans; ignored.');

/**
 * The field kinds, shared by the file schema and by callers (the CLI flags)
 * that must accept and reject values exactly as the file does.
 */
export const fieldSchemas = {
  duration: once(duration),
  size: once(size),
  rate: once(rate),
  windows: once(windows),
  integer: once(integer),
  statusList: once(statusList),
  oneOf: once(oneOf),
  regexList: once(regexList),
  userAgent: once(userAgent),
  boolean: once(boolean),
  networkList: once(networkList),
  hours: once(hours),
  timezone: once(timezone),
};

/**
 * `build`, called once per distinct arguments: zod schemas are immutable
 * (every method answers a new one), so fields of one kind can share theirs,
 * and a start-up builds each kind once instead of once a field (~60 fields).
 * Without arguments it makes a schema built at its first use: the schema
 * modules build nothing when they load (a crawl without a config file or
 * flags builds none; see fileDefaults in file-schema.ts).
 */
export function once<A extends unknown[], R>(build: (...args: A) => R): (...args: A) => R {
  const made = new Map<string, R>();
  return (...args) => {
    const key = JSON.stringify(args);
    let schema = made.get(key);
    if (schema === undefined) made.set(key, (schema = build(...args)));
    return schema;
  };
}

/**
 * Messages for the issues the schema does not word itself (mostly "wrong
 * type" on objects and lists). Pass as the `error` option of a parse.
 */
export const describeIssue: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'a list' : `a ${issue.expected}`;
    return `expected ${expected}, got ${showValue(issue.input)}`;
  }
  return undefined;
};

/**
 * Options for a parse of the configuration: describeIssue's messages, and no
 * compiled fast path. zod compiles a function for an object schema the first
 * time it parses one, which pays back over many parses; a start-up parses each
 * schema once, so the compiling was all cost (BENCHMARKS.md, start-up).
 */
export const parseOnce: z.core.ParseContext<z.core.$ZodIssue> = { error: describeIssue, jitless: true };

/** Schemas described by another schema (see describedBy). */
const descriptions = new WeakMap<object, z.ZodType>();

/**
 * `schema`, whose JSON Schema also holds what `doc` describes (a schema that
 * validates by hand, described for the reader by a plain one). Resolved in
 * toJsonSchema only: building a JSON Schema at load time cost every crawl's
 * start-up tens of milliseconds for a file that only the schema generator writes.
 */
export function describedBy<T extends z.ZodType>(schema: T, doc: z.ZodType): T {
  descriptions.set(schema, doc);
  return schema;
}

/** The input side of `schema` as draft 2020-12 JSON Schema (what a user may write). */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    override: ({ zodSchema, jsonSchema }) => {
      // z.int() implies safe-integer bounds; spelled out they are noise to a reader.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      const doc = descriptions.get(zodSchema);
      if (doc) {
        // As `.meta({ ...doc, ...its own meta })` would have it: the description first, its own meta over it.
        for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
        Object.assign(jsonSchema, withoutDialect(toJsonSchema(doc)), z.globalRegistry.get(zodSchema));
      }
    },
  });
}

/** A JSON Schema without its `$schema` dialect line, for embedding in another one. */
export function withoutDialect({ $schema: _dialect, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}
