/**
 * Start-up checks on the URL filters (`include` / `exclude`), which run on
 * every URL a crawl finds: a pattern that is too long or that can backtrack
 * catastrophically is refused with one line naming the problem, instead of
 * failing (V8's "Regular expression too large") or hanging on the first link.
 *
 * Catastrophic backtracking comes from a repetition inside a repetition
 * whose iterations can split the same text in many ways: `(a+)+`,
 * `(\w+\s?)*`, `(.*a){20}`. The check is the classic star-height one, with
 * the exception that keeps common URL patterns usable: a repeated group each
 * of whose alternatives ends in one literal character that no repetition
 * inside it can match (`(?:[a-z]+/)*`, `(?:\d+\.)+`) splits its text in one
 * way only, so it is accepted. Pure and synchronous.
 */

/** Longest pattern accepted, in UTF-16 code units. Several short patterns do what one long alternation would. */
export const MAX_PATTERN_LENGTH = 1000;

/** How much of a refused pattern a message quotes. */
const QUOTED = 40;

interface Item {
  /** Single-character atoms in it (`a`, `\d`, `[a-z]`, `.`), as regex sources. */
  atoms: string[];
  /** Atoms inside a repetition within it. */
  repeated: string[];
  /** The literal character it matches, when it is exactly one (`a`, `\.`, `/`). */
  literal: string | null;
  /** Whether it is a group with a repetition inside. */
  hasRepetition: boolean;
  /** For a group: whether each alternative ends in a literal no repetition inside can match. */
  boundedIterations: boolean;
  start: number;
  optional: boolean;
}

interface Frame {
  start: number;
  /** The alternatives so far; the last one is being read. */
  alternatives: Item[][];
}

/** Why a filter pattern is refused, or undefined when it is fine. `source` is known to compile. */
export function patternProblem(source: string): string | undefined {
  if (source.length > MAX_PATTERN_LENGTH) {
    const shown = `${source.slice(0, QUOTED)}…`;
    return `a regular expression of ${source.length.toLocaleString('en-US')} characters, over the limit of ${MAX_PATTERN_LENGTH.toLocaleString('en-US')} (${JSON.stringify(shown)}); split it into several patterns`;
  }
  const nested = nestedRepetition(source);
  if (nested !== undefined) {
    return (
      `${JSON.stringify(source)} repeats a repetition (${nested}), which can take exponential time on some URLs (catastrophic backtracking); ` +
      'rewrite it so that each repeated part ends in a character its inner repetition cannot match'
    );
  }
  return undefined;
}

/** The first repeated group that repeats an ambiguous repetition, as written; undefined if none. */
export function nestedRepetition(source: string): string | undefined {
  const stack: Frame[] = [{ start: -1, alternatives: [[]] }];
  const current = () => stack[stack.length - 1]!;
  const push = (item: Item) => current().alternatives.at(-1)!.push(item);
  const atom = (src: string, start: number, literal: string | null): Item => ({
    atoms: [src], repeated: [], literal, hasRepetition: false, boundedIterations: false, start, optional: false,
  });
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const start = i;
    if (c === '\\') {
      const { src, literal } = readEscape(source, i);
      i += src.length;
      push(atom(src, start, literal));
    } else if (c === '[') {
      const end = classEnd(source, i);
      push(atom(source.slice(i, end), start, null));
      i = end;
    } else if (c === '(') {
      stack.push({ start: i, alternatives: [[]] });
      i += groupPrefixLength(source, i);
    } else if (c === ')') {
      if (stack.length === 1) return undefined; // unbalanced: new RegExp would have refused it
      const frame = stack.pop()!;
      i++;
      push(groupItem(frame));
    } else if (c === '|') {
      current().alternatives.push([]);
      i++;
    } else if (c === '*' || c === '+' || c === '?' || (c === '{' && quantifierEnd(source, i) !== -1)) {
      const end = c === '{' ? quantifierEnd(source, i) : i + 1;
      const { repeats, optional } = quantifierKind(source.slice(i, end));
      i = end;
      if (source[i] === '?') i++; // lazy: the same repetition
      const items = current().alternatives.at(-1)!;
      const target = items.at(-1);
      if (!target) continue; // nothing to quantify: new RegExp would have refused it
      if (optional) target.optional = true;
      if (repeats) {
        if (target.hasRepetition && !target.boundedIterations) return source.slice(target.start, i);
        target.repeated = [...target.atoms];
        target.hasRepetition = true;
        target.literal = null;
      }
    } else {
      i++;
      if (c === '^' || c === '$') continue; // assertions, not characters
      push(atom(c === '.' ? '.' : escapeLiteral(c), start, c === '.' ? null : c));
    }
  }
  return undefined;
}

/** A closed group as one item of its parent. */
function groupItem(frame: Frame): Item {
  const items = frame.alternatives.flat();
  const repeated = items.flatMap((it) => it.repeated);
  const item: Item = {
    atoms: items.flatMap((it) => it.atoms),
    repeated,
    literal: null,
    hasRepetition: items.some((it) => it.hasRepetition),
    boundedIterations: false,
    start: frame.start,
    optional: false,
  };
  item.boundedIterations = frame.alternatives.every((alt) => {
    const last = alt.at(-1);
    return last !== undefined && !last.optional && last.literal !== null && !repeated.some((a) => matchesChar(a, last.literal!));
  });
  if (frame.alternatives.length === 1 && items.length === 1 && !items[0]!.hasRepetition) item.literal = items[0]!.literal;
  return item;
}

/** Whether a single-character atom can match `ch`. */
function matchesChar(atomSource: string, ch: string): boolean {
  try {
    return new RegExp(`^(?:${atomSource})$`).test(ch);
  } catch {
    return true; // unknown: assume the worst
  }
}

function escapeLiteral(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** An escape at `i`: its source, and the literal character when it stands for exactly one. */
function readEscape(s: string, i: number): { src: string; literal: string | null } {
  const next = s[i + 1];
  if (next === undefined) return { src: '\\', literal: '\\' };
  if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 2, i + 4))) {
    const src = s.slice(i, i + 4);
    return { src, literal: String.fromCharCode(parseInt(src.slice(2), 16)) };
  }
  if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) {
    const src = s.slice(i, i + 6);
    return { src, literal: String.fromCharCode(parseInt(src.slice(2), 16)) };
  }
  if (next === 'c' && /[A-Za-z]/.test(s[i + 2] ?? '')) return { src: s.slice(i, i + 3), literal: null };
  if (next === 'k' && s[i + 2] === '<') {
    const close = s.indexOf('>', i + 3);
    // A back-reference can match anything its group did.
    return { src: close === -1 ? '\\k' : s.slice(i, close + 1), literal: null };
  }
  if (/[1-9]/.test(next)) {
    const digits = /^\d+/.exec(s.slice(i + 1))![0];
    return { src: `\\${digits}`, literal: null };
  }
  if ('dDwWsSbB'.includes(next)) return { src: `\\${next}`, literal: null };
  if ('nrtvf0'.includes(next)) return { src: `\\${next}`, literal: null };
  return { src: `\\${next}`, literal: next };
}

/** The index just past the character class starting at `i` (`[...]`, escapes honoured). */
function classEnd(s: string, i: number): number {
  let j = i + 1;
  if (s[j] === '^') j++;
  // In JavaScript a "]" right after "[" or "[^" ends the class ("[]" matches nothing, "[^]" anything).
  for (; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === ']') return j + 1;
  }
  return s.length;
}

/** Length of `(`, `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!` or `(?<name>` at `i`. */
function groupPrefixLength(s: string, i: number): number {
  if (s[i + 1] !== '?') return 1;
  if (s[i + 2] === '<' && s[i + 3] !== '=' && s[i + 3] !== '!') {
    const close = s.indexOf('>', i + 3);
    return close === -1 ? 3 : close - i + 1;
  }
  return s[i + 2] === '<' ? 4 : 3;
}

/** The end of a `{n}`, `{n,}` or `{n,m}` quantifier at `i`, or -1 when the brace is a literal. */
function quantifierEnd(s: string, i: number): number {
  const m = /^\{\d+(?:,\d*)?\}/.exec(s.slice(i, i + 24));
  return m ? i + m[0].length : -1;
}

function quantifierKind(q: string): { repeats: boolean; optional: boolean } {
  if (q === '*') return { repeats: true, optional: true };
  if (q === '+') return { repeats: true, optional: false };
  if (q === '?') return { repeats: false, optional: true };
  const m = /^\{(\d+)(,(\d*))?\}$/.exec(q)!;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
  return { repeats: max > 1, optional: min === 0 };
}
