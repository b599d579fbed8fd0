/**
 * The one way a user-supplied pattern (`--include`, `--exclude`, the config
 * file's `include` / `exclude`) becomes something that tests URLs: compiled
 * once, at start-up, for a linear-time engine (re2js: RE2 semantics, pure
 * JavaScript). A backtracking engine (V8's RegExp) can take exponential time
 * on a pattern as innocent-looking as `(a|a)*b`, and recognising every such
 * pattern is a losing game; RE2 never backtracks, so matching costs time
 * linear in the URL's length whatever the pattern.
 *
 * The price is the constructs RE2 cannot run in linear time: lookaround and
 * backreferences. They are refused with one line naming the construct.
 * Spellings only JavaScript knows (`\u0041`, `\cJ`, `[^]`) are translated
 * first, so patterns written for the old engine keep their meaning.
 *
 * re2js is loaded on the first pattern compiled, so a crawl without patterns
 * (and `crawl --version`) never pays for it. Synchronous: the config schema
 * compiles patterns inside its transforms.
 */
import { createRequire } from 'node:module';
import type * as Re2js from 're2js';
import { groupDigits } from '../util/group-digits.js';

/** Longest pattern accepted, in UTF-16 code units. Several short patterns do what one long alternation would. */
export const MAX_PATTERN_LENGTH = 1000;

/** How much of a refused pattern a message quotes. */
const QUOTED = 40;

/** A compiled user pattern: `test` is true when it matches anywhere in `text`, like `RegExp.prototype.test`. */
export interface UserPattern {
  /** The pattern as the user wrote it. */
  readonly source: string;
  test(text: string): boolean;
  /** As a JavaScript RegExp of the same source prints (`/a\/b/`): messages and a stored crawl's fingerprint keep their old form. */
  toString(): string;
}

/** A pattern refused at start-up; the message is one line, naming the pattern. */
export class PatternError extends Error {
  readonly code = 'PATTERN_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

const UNSUPPORTED_WHY = 'which is not supported: URL patterns are matched in linear time (RE2 syntax: no lookaround, no backreferences)';

let engine: typeof Re2js | undefined;
function re2(): typeof Re2js {
  engine ??= createRequire(import.meta.url)('re2js') as typeof Re2js;
  return engine;
}

/**
 * Compiles `source` (no flags; `(?i)` inline for case-insensitive).
 *
 * @throws PatternError for a pattern too long, using lookaround or a backreference, or not valid RE2 syntax.
 */
export function compileUserPattern(source: string): UserPattern {
  if (source.length > MAX_PATTERN_LENGTH) {
    const shown = `${source.slice(0, QUOTED)}…`;
    throw new PatternError(
      `a regular expression of ${groupDigits(source.length)} characters, over the limit of ${groupDigits(MAX_PATTERN_LENGTH)} (${JSON.stringify(shown)}); split it into several patterns`,
    );
  }
  // Before translating: the translation would quietly turn `\k<name>` into the literal "k<name>".
  const construct = unsupportedConstruct(source);
  if (construct !== undefined) throw new PatternError(`${JSON.stringify(source)} uses ${construct}, ${UNSUPPORTED_WHY}`);
  const { RE2JS, RE2JSException } = re2();
  let compiled: Re2js.RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const why = error.message.replace(/^error parsing regexp: /, '');
    throw new PatternError(`invalid regular expression ${JSON.stringify(source)}: ${why}`);
  }
  const label = `/${regExpSource(source)}/`;
  return { source, test: (text) => compiled.test(text), toString: () => label };
}

/** The first lookaround or backreference in a JavaScript-syntax pattern, described; undefined if none. */
export function unsupportedConstruct(source: string): string | undefined {
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next)) return `a backreference ("\\${/^\d+/.exec(source.slice(i + 1))![0]}")`;
      if (next === 'k' && source[i + 2] === '<') {
        const close = source.indexOf('>', i + 3);
        return `a backreference ("${close === -1 ? '\\k<' : source.slice(i, close + 1)}")`;
      }
      i++; // the escaped character is a character, whatever it is
    } else if (c === '[') {
      i = classEnd(source, i) - 1;
    } else if (c === '(' && source[i + 1] === '?') {
      const kind = LOOKAROUND[source.slice(i + 2, i + 4)] ?? LOOKAROUND[source[i + 2] ?? ''];
      if (kind !== undefined) return `${kind[0]} ("${kind[1]}")`;
    }
  }
  return undefined;
}

const LOOKAROUND: Record<string, [string, string]> = {
  '=': ['a lookahead', '(?='],
  '!': ['a negative lookahead', '(?!'],
  '<=': ['a lookbehind', '(?<='],
  '<!': ['a negative lookbehind', '(?<!'],
};

/** The index just past the character class starting at `i` (`[...]`, escapes honoured; `[]` and `[^]` as JavaScript reads them). */
function classEnd(s: string, i: number): number {
  let j = i + 1;
  if (s[j] === '^') j++;
  for (; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === ']') return j + 1;
  }
  return s.length;
}

/** `source` as `RegExp.prototype.source` spells it: "/" escaped outside classes, line breaks escaped, "" as "(?:)". */
function regExpSource(source: string): string {
  try {
    return new RegExp(source).source;
  } catch {
    // RE2-only syntax (`(?i)`): the same escaping by hand.
    let out = '';
    for (let i = 0; i < source.length; i++) {
      const c = source[i];
      if (c === '\\') {
        out += source.slice(i, i + 2);
        i++;
      } else if (c === '[') {
        const end = classEnd(source, i);
        out += source.slice(i, end);
        i = end - 1;
      } else out += c === '/' ? '\\/' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : c;
    }
    return out;
  }
}
