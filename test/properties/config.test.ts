/**
 * Properties of config validation (src/config/settings.ts `validateConfig`):
 * any JSON value either validates or throws a ConfigError, nothing else, and
 * every problem line of an object names where the problem is: a path whose
 * every step but the last is in the file.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { knownKeysAt } from '../../src/config/file-schema.js';
import { ConfigError, validateConfig } from '../../src/config/settings.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Values the fields take, well-formed and not: rates, durations, sizes, enums, statuses, regexes, odd numbers. */
const leaf: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(
    '2/s',
    '30/min',
    '5/10s',
    '500ms',
    'unlimited',
    '0/s',
    '1/0s',
    '-1/s',
    '1.5/s',
    '2/fortnight',
    '1e3/s',
    '10s',
    '0s',
    '1h',
    '25h',
    '24h',
    '10m',
    '-5s',
    '1.5s',
    'soon',
    '',
    '10MiB',
    '512KiB',
    '499KiB',
    '1GB',
    '0B',
    '-1KiB',
    'floor',
    'ignore',
    'host',
    'domain',
    'any',
    'HOST',
    'crawl/1.0',
    'MJ12bot/1.4',
    'bad agent\u0000',
    'ü/1',
    '*',
    '(',
    '[a-',
    '\\d+',
    '.*',
  ),
  fc.constantFrom(0, 1, 2, -1, 16, 1000, 1001, 0.5, 1e21, -0, 429, 503, 600, 99, 1e308, Number.MAX_SAFE_INTEGER + 2),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom<Json>([], [429, 503], [429, 429], [500, 'x'], ['1/s', '100/min'], ['\\.zip$', '('], [{}], {}),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** An object from entries (own "__proto__" keys stay own keys, as JSON.parse makes them). */
const objectOf = (entries: fc.Arbitrary<[string, Json][]>): fc.Arbitrary<{ [key: string]: Json }> => entries.map((list) => Object.fromEntries(list));

/** An object with some of `keys` (known ones, by path, and a stray one now and then), each set to `value`. */
function shaped(path: string[], value: (key: string) => fc.Arbitrary<Json>): fc.Arbitrary<{ [key: string]: Json }> {
  const keys = [...knownKeysAt(path)];
  const key = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...keys) },
    { weight: 1, arbitrary: fc.constantFrom('$comment', 'rates', 'Rate', '__proto__', 'constructor', '', 'a.b') },
  );
  return objectOf(
    fc.uniqueArray(
      key.chain((k) => value(k).map((v) => [k, v] as [string, Json])),
      { maxLength: 6, selector: ([k]) => k },
    ),
  );
}

const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const fieldValue = fc.oneof({ weight: 5, arbitrary: leaf }, { weight: 1, arbitrary: anyJson });
const policy = (path: string[]) =>
  shaped(path, (key) =>
    key === 'backoff' || key === 'hostFailures'
      ? fc.oneof(
          shaped([...path, key], () => fieldValue),
          leaf,
        )
      : fieldValue,
  );
const domainKey = fc.oneof(
  fc.constantFrom(
    'example.com',
    '*.example.com',
    'a.com:8080',
    'a.com:80',
    '*',
    '',
    'bücher.example',
    '[::1]:8080',
    'a b',
    '*.*.x',
    'x.com.',
    'EXAMPLE.com',
    '__proto__',
    'constructor',
    'toString',
    'a..b',
    'a.com:99999',
  ),
  fc.domain(),
);
const domains = objectOf(
  fc.uniqueArray(fc.tuple(domainKey, fc.oneof({ weight: 5, arbitrary: policy(['domains', 'example.com']) }, { weight: 1, arbitrary: leaf })), {
    maxLength: 4,
    selector: ([k]) => k,
  }),
);

/** Config-file-shaped JSON: known keys mostly, with values of every kind, nested where the schema nests; often a `defaults` and `domains`. */
const configish: fc.Arbitrary<Json> = fc
  .tuple(
    shaped([], (key) => {
      switch (key) {
        case 'defaults':
          return fc.oneof({ weight: 5, arbitrary: policy(['defaults']) }, { weight: 1, arbitrary: leaf });
        case 'domains':
          return fc.oneof({ weight: 5, arbitrary: domains }, { weight: 1, arbitrary: leaf });
        case 'robots':
        case 'timeout':
          return fc.oneof(
            shaped([key], () => fieldValue),
            leaf,
          );
        default:
          return fieldValue;
      }
    }),
    fc.option(policy(['defaults']), { nil: undefined }),
    fc.option(domains, { nil: undefined }),
  )
  .map(([config, defaults, domainsValue]) => ({ ...config, ...(defaults && { defaults }), ...(domainsValue && { domains: domainsValue }) }));

/** One segment of a path as formatPath writes it, at `at` in `text`: [segment, end] or null. */
function readSegment(text: string, at: number, first: boolean): [string | number, number] | null {
  const identifier = first ? /[A-Za-z_$][\w$]*/y : /\.([A-Za-z_$][\w$]*)/y;
  identifier.lastIndex = at;
  let m = identifier.exec(text);
  if (m) return [first ? m[0] : m[1], identifier.lastIndex];
  const index = /\[(\d+)\]/y;
  index.lastIndex = at;
  m = index.exec(text);
  if (m) return [Number(m[1]), index.lastIndex];
  const quoted = /\[("(?:[^"\\]|\\.)*")\]/y;
  quoted.lastIndex = at;
  m = quoted.exec(text);
  if (m) return [JSON.parse(m[1]) as string, quoted.lastIndex];
  return null;
}

/** The path a problem line names ("config: a.b[0]: …"), and the message after it; null if it names none. */
function parseLine(line: string, source: string): { path: (string | number)[]; message: string } | null {
  if (!line.startsWith(`${source}: `)) return null;
  const path: (string | number)[] = [];
  let at = source.length + 2;
  for (let segment = readSegment(line, at, true); segment !== null; segment = readSegment(line, at, false)) {
    path.push(segment[0]);
    at = segment[1];
  }
  if (path.length === 0 || !line.startsWith(': ', at)) return null;
  return { path, message: line.slice(at + 2) };
}

function has(value: Json | undefined, key: string | number): value is Json {
  return typeof value === 'object' && value !== null && Object.prototype.hasOwnProperty.call(value, key);
}

describe('validateConfig', () => {
  it(
    'accepts or throws a ConfigError, whose every line names a path in the file',
    () => {
      fc.assert(
        fc.property(fc.oneof({ weight: 6, arbitrary: configish }, { weight: 1, arbitrary: anyJson }), (raw) => {
          let problems: string[];
          try {
            validateConfig(raw, 'config');
            return;
          } catch (error) {
            if (!(error instanceof ConfigError)) throw error;
            problems = error.problems;
          }
          expect(problems.length).toBeGreaterThan(0);
          if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
            expect(problems).toEqual([expect.stringMatching(/^config: expected a JSON object at the top level, got /)]);
            return;
          }
          for (const line of problems) {
            const named = parseLine(line, 'config');
            expect(named, line).not.toBeNull();
            expect(named!.message.trim(), line).not.toBe('');
            // Every step but the last is in the file (the last may be a key that is missing).
            let node: Json | undefined = raw;
            for (const key of named!.path.slice(0, -1)) {
              expect(has(node, key), `${line}: no ${JSON.stringify(key)} here`).toBe(true);
              node = (node as Record<string, Json>)[key as string];
            }
          }
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
