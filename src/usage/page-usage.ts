/**
 * What a page's response says its content may be used for, per use, with
 * where each statement came from (issue 43, first part: what a response
 * states; robots.txt rules and tdmrep.json come later).
 *
 * Sources read here:
 * - `Content-Usage` (IETF aipref attachment draft): an RFC 9651 Dictionary
 *   of the aipref vocabulary (`train-ai`, `ai-use`, `search`), each `y` or
 *   `n` as a Token. Parsed by `structured-headers`; a field that does not
 *   parse states nothing (the draft: preferences unknown), unknown keys and
 *   every parameter are ignored, a key given twice counts once (its last
 *   value), and a value that is not the Token `y` or `n` states nothing.
 * - `tdm-reservation` (W3C TDMRep), the header or `<meta name=
 *   "tdm-reservation">`: `1` reserves text-and-data-mining rights, which
 *   states `n` for `tdm`, `train-ai` and `ai-input`; `0` states nothing
 *   (rights not reserved is no permission to any one use).
 * - the robots directives `noai` (states `n` for `train-ai` and
 *   `ai-input`) from `X-Robots-Tag` or `<meta name="robots">`.
 *
 * Combined per use as the vocabulary draft says: any `n` wins, else any
 * `y`, else the use is not in `usage` at all (unknown).
 */
import type { Dictionary, Token } from 'structured-headers';
import { PURPOSES, type Purpose } from './usage-vocab.js';

export { PURPOSES, purposeOf, type Purpose } from './usage-vocab.js';

export type UsageValue = 'y' | 'n';

/** Where a statement came from, as a record says it. */
export type UsageSource =
  | { source: 'header'; name: string; value: string; states: Partial<Record<Purpose, UsageValue>> }
  | { source: 'meta'; name: string; value: string; states: Partial<Record<Purpose, UsageValue>> }
  | {
      source: 'robots';
      name: 'content-usage' | 'content-signal';
      value: string;
      /** Its 1-based line in the robots.txt at `url`, fetched at `fetchedAt` (ISO 8601). */
      line: number;
      url: string;
      fetchedAt: string;
      states: Partial<Record<Purpose, UsageValue>>;
    }
  | {
      /** The first rule of the origin's tdmrep.json that matched (usage/tdmrep.ts), as JSON in `value`. */
      source: 'tdmrep';
      name: 'tdm-reservation';
      value: string;
      url: string;
      fetchedAt: string;
      states: Partial<Record<Purpose, UsageValue>>;
    };

export interface PageUsage {
  /** Per use any source stated, combined (any `n` wins). */
  usage: Partial<Record<Purpose, UsageValue>>;
  usageSources: UsageSource[];
}

/** What the response and its document said, as the page's parse found it. */
export interface UsageInputs {
  headers: Readonly<Record<string, string>>;
  /** `<meta name="tdm-reservation">`, when the body was parsed. */
  tdmMeta: string | null;
  /** The robots directives addressed to us (parse/parser.ts), from the header and the document. */
  robotsDirectives: readonly string[];
  /** Where `noai` came from: the X-Robots-Tag header, or (also) the document. */
  noaiFromHeader: boolean;
  /** What the robots.txt current at the fetch stated for the page's path (usage/robots-usage.ts). @default none */
  robots?: readonly UsageSource[];
}

/** structured-headers' dictionary parser and Token class, once loaded (`loadUsageParser`). */
let parseDictionary: ((input: string) => Dictionary) | undefined;
let TokenClass: typeof Token | undefined;
let loading: Promise<void> | undefined;

/** Loads the RFC 9651 parser: only a crawl that meets a Content-Usage field pays for it. */
export function loadUsageParser(): Promise<void> {
  loading ??= import('structured-headers').then((m) => {
    parseDictionary = m.parseDictionary;
    TokenClass = m.Token;
  });
  return loading;
}

/** Whether `usageOf` needs the parser loaded first (the response carries a Content-Usage field). */
export function needsUsageParser(headers: Readonly<Record<string, string>>): boolean {
  return headers['content-usage'] !== undefined && parseDictionary === undefined;
}

/** The page's usage, or undefined when nothing was stated. Call `loadUsageParser` first when `needsUsageParser`. */
export function usageOf(inputs: UsageInputs): PageUsage | undefined {
  const sources: UsageSource[] = inputs.robots === undefined ? [] : [...inputs.robots];
  const contentUsage = inputs.headers['content-usage'];
  if (contentUsage !== undefined) {
    const states = contentUsageStates(contentUsage);
    sources.push({ source: 'header', name: 'content-usage', value: contentUsage, states });
  }
  const tdmHeader = inputs.headers['tdm-reservation'];
  if (tdmHeader !== undefined) sources.push({ source: 'header', name: 'tdm-reservation', value: tdmHeader, states: tdmStates(tdmHeader) });
  if (inputs.tdmMeta !== null) sources.push({ source: 'meta', name: 'tdm-reservation', value: inputs.tdmMeta, states: tdmStates(inputs.tdmMeta) });
  if (inputs.robotsDirectives.includes('noai')) {
    const states: Partial<Record<Purpose, UsageValue>> = { 'train-ai': 'n', 'ai-input': 'n' };
    sources.push(
      inputs.noaiFromHeader ? { source: 'header', name: 'x-robots-tag', value: 'noai', states } : { source: 'meta', name: 'robots', value: 'noai', states },
    );
  }
  if (sources.length === 0) return undefined;
  return { usage: combine(sources.map((s) => s.states)), usageSources: sources };
}

/** One Content-Usage field's (or robots.txt rule's) statements: nothing when it does not parse as a Dictionary. */
export function contentUsageStates(value: string): Partial<Record<Purpose, UsageValue>> {
  // The draft's own labels only: an alias of another vocabulary (ai-train) is not a key of this one.
  return dictionaryStates(value, (key) => (key === 'train-ai' || key === 'search' ? key : key === 'ai-use' ? 'ai-input' : undefined), CONTENT_USAGE_VALUES);
}

/** Whether a Content-Usage field does not parse as an RFC 9651 Dictionary (it then states nothing; the crawl warns once per host). */
export function malformedField(value: string): boolean {
  if (parseDictionary === undefined) throw new Error('the Content-Usage parser is not loaded (loadUsageParser)');
  try {
    parseDictionary(value);
    return false;
  } catch {
    return true;
  }
}

/** A robots.txt Content-Signal line's statements (`search`, `ai-input`, `ai-train` = `yes` / `no`); nothing when it does not parse. */
export function contentSignalStates(value: string): Partial<Record<Purpose, UsageValue>> {
  return dictionaryStates(value, (key) => (key === 'search' || key === 'ai-input' ? key : key === 'ai-train' ? 'train-ai' : undefined), CONTENT_SIGNAL_VALUES);
}

const CONTENT_USAGE_VALUES: Readonly<Record<string, UsageValue>> = { y: 'y', n: 'n' };
const CONTENT_SIGNAL_VALUES: Readonly<Record<string, UsageValue>> = { yes: 'y', no: 'n' };

/** A Dictionary's members as statements: keys through `purposeOfKey`, Token values through `values`; the rest states nothing. */
function dictionaryStates(
  value: string,
  purposeOfKey: (key: string) => Purpose | undefined,
  values: Readonly<Record<string, UsageValue>>,
): Partial<Record<Purpose, UsageValue>> {
  const states: Partial<Record<Purpose, UsageValue>> = {};
  if (parseDictionary === undefined) throw new Error('the Content-Usage parser is not loaded (loadUsageParser)');
  let dict: Dictionary;
  try {
    dict = parseDictionary(value);
  } catch {
    return states;
  }
  for (const [key, member] of dict) {
    const purpose = purposeOfKey(key);
    if (purpose === undefined) continue;
    const [item] = member;
    // Only a Token: the String "n" or a Boolean states nothing (the draft).
    const token = item instanceof TokenClass! ? item.toString() : undefined;
    const stated = token !== undefined && Object.hasOwn(values, token) ? values[token] : undefined;
    if (stated !== undefined) states[purpose] = stated;
  }
  return states;
}

/** TDMRep: `1` reserves the rights (no text and data mining, so no AI use either); anything else states nothing. */
function tdmStates(value: string): Partial<Record<Purpose, UsageValue>> {
  return value.trim() === '1' ? { tdm: 'n', 'train-ai': 'n', 'ai-input': 'n' } : {};
}

/** The vocabulary draft's combination: per use, any `n` wins, else any `y`. */
export function combine(statements: ReadonlyArray<Partial<Record<Purpose, UsageValue>>>): Partial<Record<Purpose, UsageValue>> {
  const out: Partial<Record<Purpose, UsageValue>> = {};
  for (const purpose of PURPOSES) {
    let value: UsageValue | undefined;
    for (const states of statements) {
      const v = states[purpose];
      if (v === 'n') value = 'n';
      else if (v === 'y' && value === undefined) value = 'y';
    }
    if (value !== undefined) out[purpose] = value;
  }
  return out;
}
