/**
 * robots.txt rules for one product token (RFC 9309 §2.2), on top of
 * `robots-parser`, which does the group bookkeeping and the longest-match /
 * Allow-wins-ties / `*` / `$` matching.
 *
 * Where robots-parser deviates from the RFC we rewrite the text before handing
 * it over, line for line so its line numbers stay ours:
 * - byte-order mark: a whole or partial UTF-8 BOM at the start of the file is
 *   skipped, however the body was decoded; anywhere else U+FEFF is an ordinary
 *   character (RFC 9309 §2.2: WS is only space and tab), so a line it starts
 *   is not a record (google/robotstxt reads BOMs the same way).
 * - user-agent values: it keeps "Googlebot Images" whole and only strips a
 *   "/version". We decide per line whether it names our product token
 *   (`namesToken`), and hand robots-parser one of three keys: ours, "*", or
 *   "someone else".
 * - other records (Sitemap, Host, unknown keys, lines without a colon, HTML):
 *   it lets them end a run of user-agent lines; §2.2.4 says they MUST NOT
 *   terminate a group, so they are blanked out.
 * - a group without rules (the last one of a file, §2.1): it falls back to
 *   "*"; the RFC says it allows everything.
 * - percent-encoding: it only upper-cases hex digits; §2.2.2 wants the same
 *   octets compared on both sides. Patterns and paths both go through
 *   `canonicalPath`, whose output is left unchanged by robots-parser's own
 *   encoding step and by WHATWG URL parsing.
 * - `/robots.txt` itself is always allowed (§2.2.2); robots-parser does not know.
 * - Crawl-delay: it accepts `Number()` forms ("", "0x10", "-1"); we parse it.
 * Matching itself is left to robots-parser.
 */
import { createRequire } from 'node:module';
import type { RobotsExplanation, RobotsState } from './types.js';
import { readUsageLine, usageForPath, type RobotsUsageLine } from '../usage/robots-usage.js';
import type { UsageSource } from '../usage/page-usage.js';

/** The part of robots-parser's API we use. */
interface ParsedRobots {
  /** 1-based line of the deciding rule for `ua`'s group, or -1 when none matches. */
  getMatchingLineNumber(url: string, ua?: string): number;
}
// robots-parser is CommonJS whose typings claim an ES default export that does
// not exist at run time; require it as what it is: module.exports = function.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => ParsedRobots;

/** Redirect hops followed for robots.txt (RFC 9309 §2.3.1.2: at least five). */
export const MAX_ROBOTS_REDIRECTS = 5;
/** The least a parser must read (RFC 9309 §2.5: 500 kibibytes). */
export const MIN_ROBOTS_BYTES = 500 * 1024;

// robots-parser checks that queried URLs share its file's origin; we match
// paths only, so both sides use this placeholder origin.
const BASE = 'http://robots.invalid';
const IMPLICIT_RULE = 'Allow: /robots.txt (implicit)';
const LINE_BREAK = /\r\n|\r|\n/; // the same split robots-parser uses, so line numbers agree

/**
 * The product token of a User-Agent string: the text before the first "/" or
 * whitespace, lowercased. "MyBot/2.1 (+http://x)" gives "mybot".
 */
export function productToken(userAgent: string): string {
  const trimmed = userAgent.trim();
  const end = trimmed.search(/[/\s]/);
  return (end === -1 ? trimmed : trimmed.slice(0, end)).toLowerCase();
}

/**
 * Keeps the first `maxBytes` UTF-8 bytes of a robots.txt body. A line cut in
 * the middle is dropped rather than parsed: "Allow: /public/x" cut to
 * "Allow: /p" would allow far more than the file says. `cutShort` says the
 * text was already truncated upstream (the fetcher's cap), so its last line is
 * suspect too.
 */
export function capRobotsText(text: string, maxBytes: number, cutShort = false): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) {
    return { text: cutShort ? dropPartialLine(text) : text, truncated: cutShort };
  }
  const bytes = Buffer.from(text, 'utf8');
  const head = bytes.subarray(0, maxBytes).toString('utf8');
  const next = bytes[maxBytes];
  const endsOnBreak = next === 0x0a || next === 0x0d;
  return { text: endsOnBreak ? head : dropPartialLine(head), truncated: true };
}

function dropPartialLine(text: string): string {
  const cut = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
  return cut === -1 ? '' : text.slice(0, cut + 1);
}

// ---------------------------------------------------------------- paths (§2.2.2, §2.2.3)

const HEX = '0123456789ABCDEF';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 1 for the ASCII characters in `literal`, 0 for the rest. */
function asciiSet(literal: string): Uint8Array {
  const set = new Uint8Array(128);
  for (const char of literal) set[char.charCodeAt(0)] = 1;
  return set;
}

const UNRESERVED = asciiSet(`${ALNUM}-._~`);
// Written as themselves (everything else is percent-encoded): the unreserved
// characters, the reserved ones that delimit ("/" in the path; the
// sub-delimiters, which applications use to split path parameters and query
// fields), minus "'" (WHATWG encodes it in queries) and "*" and "$" (special
// in patterns; in URLs they SHOULD be encoded, §2.2.3). So ":" and "@" in a
// path, and ":", "/", "?" and "@" in a query, are compared encoded: there they
// are data, and RFC 9309 §2.2.2 has reserved characters percent-encoded
// before comparison (Figure 4: "/foo/bar?baz=https://foo.bar" matches as
// "/foo/bar?baz=https%3A%2F%2Ffoo.bar"), while the delimiters stay (the same
// row keeps "/", "?" and "=").
const IN_PATH = asciiSet(`${ALNUM}-._~!&()+,;=/`);
const IN_QUERY = asciiSet(`${ALNUM}-._~!&()+,;=`);
const ESCAPED = Array.from({ length: 256 }, (_, byte) => `%${HEX[byte >> 4]}${HEX[byte & 15]}`);

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** A non-ASCII code point as percent-encoded UTF-8; a lone surrogate as U+FFFD, as WHATWG URL parsing does. */
function utf8Escaped(cp: number): string {
  const code = cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
  const tail = (shift: number) => ESCAPED[0x80 | ((code >> shift) & 63)];
  if (code < 0x800) return ESCAPED[0xc0 | (code >> 6)] + tail(0);
  if (code < 0x10000) return ESCAPED[0xe0 | (code >> 12)] + tail(6) + tail(0);
  return ESCAPED[0xf0 | (code >> 18)] + tail(12) + tail(6) + tail(0);
}

/**
 * One canonical form for rule patterns and URL paths, so that equal octets
 * compare equal (RFC 9309 §2.2.2): `%xx` of an unreserved character is decoded
 * (RFC 3986 §2.3: equivalent; Figure 4 row 5), other `%xx` kept with
 * upper-case hex, a stray `%` becomes `%25`, non-ASCII characters become
 * percent-encoded UTF-8, and ASCII characters outside the delimiters above
 * are percent-encoded. The first "?" starts the query. In a pattern `*` and
 * a final `$` stay special and any other `$` is a literal ("%24"); in a URL
 * both are literals (§2.2.3 Figure 6: "%2A" in a pattern matches "*" in a
 * URL). Returns `input` itself when nothing changes.
 */
export function canonicalPath(input: string, kind: 'pattern' | 'url' = 'pattern'): string {
  const pattern = kind === 'pattern';
  let out = '';
  let copied = 0; // input[copied, i) goes to the output unchanged
  let allowed = IN_PATH;
  const last = input.length - 1;
  for (let i = 0; i < input.length;) {
    const c = input.charCodeAt(i);
    let replacement: string;
    let width = 1;
    if (c === 0x25) {
      const hi = hexValue(input.charCodeAt(i + 1));
      const lo = hexValue(input.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) {
        replacement = '%25';
      } else {
        const octet = hi * 16 + lo;
        width = 3;
        replacement = octet < 128 && UNRESERVED[octet] === 1 ? String.fromCharCode(octet) : ESCAPED[octet];
        if (replacement === input.slice(i, i + 3)) {
          i += 3;
          continue;
        }
      }
    } else if (c < 0x80) {
      if (allowed[c] === 1) {
        i++;
        continue;
      }
      if (c === 0x3f && allowed === IN_PATH) {
        allowed = IN_QUERY;
        i++;
        continue;
      }
      if (pattern && (c === 0x2a || (c === 0x24 && i === last))) {
        i++;
        continue;
      }
      replacement = ESCAPED[c]!;
    } else {
      const cp = input.codePointAt(i)!;
      width = cp > 0xffff ? 2 : 1;
      replacement = utf8Escaped(cp);
    }
    out += input.slice(copied, i) + replacement;
    i += width;
    copied = i;
  }
  return copied === 0 ? input : out + input.slice(copied);
}

// ---------------------------------------------------------------- lines and groups (§2.1, §2.2.1)

// A whole or partial UTF-8 byte-order mark (EF BB BF) at the start of the
// file, as each decoding leaves it: U+FEFF when kept (`readFile(…, 'utf8')`),
// one U+FFFD for its first one or two bytes decoded as UTF-8, "ï»¿" / "ï»" /
// "ï" decoded as windows-1252 (a server's "charset=iso-8859-1").
const LEADING_BOM = /^(?:\uFEFF|\uFFFD|\u00EF\u00BB\u00BF?|\u00EF)/;
// Whitespace around keys and values. JavaScript's trim() also removes U+FEFF,
// which is not whitespace (Unicode White_Space) and, past the start of the
// file, not a BOM either.
const EDGE_WHITESPACE = /^[^\S\uFEFF]+|[^\S\uFEFF]+$/g;

/** robots-parser's key for groups that name our token, for those that name another, and the "*" group. */
type AgentKey = 'self' | 'other' | '*';

/** [A-Za-z0-9_-]: RFC 9309's product-token characters (§2.2: [A-Za-z_-]), plus digits. */
function isTokenChar(code: number): boolean {
  const lower = code | 0x20;
  return (lower >= 97 && lower <= 122) || (code >= 48 && code <= 57) || code === 45 || code === 95;
}

/**
 * Whether a user-agent line's value names `token` (our product token,
 * lowercase): it starts with the token, case-insensitively, and the next
 * character cannot continue a token. So "MyBot/1.0", "mybot images",
 * "mybot*" and "mybot<br />" name "mybot"; "mybot-news" and "mybot2" do not.
 *
 * RFC 9309 §2.2's identifier has no digits, and google/robotstxt cuts a value
 * at its first digit ("bot2000" names "bot"). Crawlers and the files naming
 * them do use digits (MJ12bot, 360Spider), so here digits are token
 * characters: "bot2000" names bot2000 only, and a token with digits of our
 * own is matched whole.
 */
function namesToken(value: string, token: string): boolean {
  if (token === '' || value.length < token.length) return false;
  if (value.length > token.length && isTokenChar(value.charCodeAt(token.length))) return false;
  return value.slice(0, token.length).toLowerCase() === token;
}

/** "*" (also "* whatever", "*<br />"; not "*bot"), our token, or someone else's. */
function agentKey(value: string, token: string): AgentKey {
  if (value.charCodeAt(0) === 42 && (value.length === 1 || !isTokenChar(value.charCodeAt(1)))) return '*';
  return namesToken(value, token) ? 'self' : 'other';
}

/** A user-agent line: the key it maps to and the line as written (for explanations). */
interface AgentLine {
  key: AgentKey;
  text: string;
}

interface RuleLine {
  directive: 'Allow' | 'Disallow';
  value: string;
  /** The user-agent lines of the group this rule belongs to. */
  agents: AgentLine[];
}

interface PreparedText {
  /** The rewritten text for robots-parser, same line count as the input. */
  text: string;
  /** Allow/Disallow lines by 1-based line number. */
  rules: Map<number, RuleLine>;
  delays: { value: string; agents: AgentLine[] }[];
  /** First user-agent line of each key that has a group; every user-agent line opens or joins one. */
  groups: Map<AgentKey, AgentLine>;
  /** Keys whose groups hold at least one Allow/Disallow with a pattern. */
  withRules: Set<AgentKey>;
  /** `Sitemap:` values as written, in file order (they belong to no group). */
  sitemaps: string[];
  /** Content-Usage and Content-Signal rules, with the user-agent lines of their group. */
  usage: { rule: RobotsUsageLine; agents: AgentLine[] }[];
}

/**
 * Rewrites the text for robots-parser and mirrors its grouping state machine
 * (a user-agent line after an Allow, Disallow or Crawl-delay starts a new
 * group; the same key in several groups merges) to know which group decided
 * a line. Every other line is blanked, so it cannot end a group (§2.2.4).
 */
function prepare(source: string, token: string): PreparedText {
  const lines = source.replace(LEADING_BOM, '').split(LINE_BREAK);
  const rules = new Map<number, RuleLine>();
  const delays: PreparedText['delays'] = [];
  const groups = new Map<AgentKey, AgentLine>();
  const withRules = new Set<AgentKey>();
  const sitemaps: string[] = [];
  const usage: PreparedText['usage'] = [];
  let agents: AgentLine[] = [];
  let inAgentRun = false;
  const out = lines.map((raw, index) => {
    const line = raw.split('#', 1)[0];
    const colon = line.indexOf(':');
    if (colon === -1) return '';
    const key = line.slice(0, colon).replace(EDGE_WHITESPACE, '').toLowerCase();
    if (key === 'sitemap') {
      // A URL with a "#" in it is cut there like any comment: a fragment means nothing to a server.
      const value = line.slice(colon + 1).replace(EDGE_WHITESPACE, '');
      if (value !== '') sitemaps.push(value);
      return '';
    }
    const value = line.slice(colon + 1).replace(EDGE_WHITESPACE, '');
    if (key === 'user-agent') {
      if (!inAgentRun) agents = [];
      inAgentRun = true;
      if (value === '') return 'user-agent:';
      const agent: AgentLine = { key: agentKey(value, token), text: line.trim() };
      agents.push(agent);
      if (!groups.has(agent.key)) groups.set(agent.key, agent);
      return `user-agent: ${agent.key}`;
    }
    if (key === 'content-usage' || key === 'content-signal') {
      // A rule of its group (the aipref draft): it ends a run of user-agent lines as Allow does.
      // robots-parser gets an empty Crawl-delay, which does the same there and nothing else (Crawl-delay is ours).
      inAgentRun = false;
      const rule = readUsageLine(key, value, index + 1, canonicalPath);
      if (rule !== null) usage.push({ rule, agents });
      return 'crawl-delay:';
    }
    if (key !== 'allow' && key !== 'disallow' && key !== 'crawl-delay') return '';
    inAgentRun = false;
    const current = agents;
    if (key === 'crawl-delay') {
      delays.push({ value, agents: current });
      return 'crawl-delay:';
    }
    const pattern = canonicalPath(value);
    if (pattern !== '') {
      rules.set(index + 1, { directive: key === 'allow' ? 'Allow' : 'Disallow', value, agents: current });
      for (const agent of current) withRules.add(agent.key);
    }
    return `${key}: ${pattern}`;
  });
  return { text: out.join('\n'), rules, delays, groups, withRules, sitemaps, usage };
}

/** Seconds as digits with an optional fraction ("10", "0.5", ".5"); anything else is invalid. */
function parseCrawlDelayMs(value: string): number | null {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) return null;
  const ms = Math.round(Number(value) * 1000);
  return Number.isFinite(ms) ? ms : null;
}

/** The canonical path+query of `url` (absolute, or a path), or null if it does not parse. */
function pathOf(url: string): { path: string; isRobotsFile: boolean } | null {
  let parsed: URL;
  try {
    parsed = new URL(url, `${BASE}/`);
  } catch {
    return null;
  }
  const path = canonicalPath(parsed.pathname + parsed.search, 'url');
  return { path, isRobotsFile: path === '/robots.txt' };
}

/**
 * Parses robots.txt text for `userAgent`'s product token. Never throws on a
 * malformed file: lines that do not parse are ignored. The text is used as
 * given; cap it with `capRobotsText` first.
 */
export function parseRobots(robotsUrl: string, text: string, userAgent: string, now: number, ttlMs: number): RobotsState & { kind: 'rules' } {
  const prepared = prepare(text, productToken(userAgent));
  const robot = robotsParser(`${BASE}/robots.txt`, prepared.text);
  // Same choice robots-parser makes: our token's (merged) group, else "*", else none.
  const key: AgentKey | null = prepared.groups.has('self') ? 'self' : prepared.groups.has('*') ? '*' : null;
  const groupLine = key === null ? null : prepared.groups.get(key)!.text;
  // A group without rules allows everything (§2.1); robots-parser, not knowing
  // it, would fall back to "*".
  const hasRules = key !== null && prepared.withRules.has(key);

  let crawlDelayMs: number | null = null;
  for (const delay of prepared.delays) {
    if (key === null || !delay.agents.some((a) => a.key === key)) continue;
    const ms = parseCrawlDelayMs(delay.value);
    // Merged groups may disagree; the politest (largest) value wins.
    if (ms !== null && (crawlDelayMs === null || ms > crawlDelayMs)) crawlDelayMs = ms;
  }

  const explain = (url: string): RobotsExplanation => {
    const target = pathOf(url);
    // A URL we cannot even parse is not fetched either; refuse rather than guess.
    if (target === null) return { allowed: false, rule: null, line: null, group: null };
    if (target.isRobotsFile) return { allowed: true, rule: IMPLICIT_RULE, line: null, group: null };
    if (!hasRules) return { allowed: true, rule: null, line: null, group: groupLine };
    const line = robot.getMatchingLineNumber(BASE + target.path, key);
    const rule = line > 0 ? prepared.rules.get(line) : undefined;
    if (!rule) return { allowed: true, rule: null, line: null, group: groupLine };
    return {
      allowed: rule.directive === 'Allow',
      rule: `${rule.directive}: ${rule.value}`,
      line,
      group: rule.agents.find((a) => a.key === key)?.text ?? groupLine,
    };
  };

  // The usage rules of the group that applies to us; a file without them answers every page with nothing.
  const usageLines = key === null ? [] : prepared.usage.filter((u) => u.agents.some((a) => a.key === key)).map((u) => u.rule);
  let fetchedIso: string | undefined;
  const usage = (url: string): UsageSource[] => {
    if (usageLines.length === 0) return [];
    const target = pathOf(url);
    // A disallowed path has no usage (the draft): it is not fetched at all.
    if (target === null || !explain(url).allowed) return [];
    fetchedIso ??= new Date(now).toISOString();
    return usageForPath(usageLines, target.path, robotsUrl, fetchedIso);
  };

  return {
    kind: 'rules',
    fetchedAt: now,
    expiresAt: now + ttlMs,
    isAllowed: (url) => explain(url).allowed,
    explain,
    usage,
    crawlDelayMs,
    source: robotsUrl,
    sitemaps: absoluteSitemaps(prepared.sitemaps, robotsUrl),
  };
}

/** `Sitemap:` values as absolute http(s) URLs (the protocol wants them absolute; a relative one is read against the file's URL), unique, in file order. */
function absoluteSitemaps(values: string[], robotsUrl: string): string[] {
  const out = new Set<string>();
  for (const value of values) {
    try {
      const url = new URL(value, robotsUrl);
      url.hash = '';
      if (url.protocol === 'http:' || url.protocol === 'https:') out.add(url.href);
    } catch {
      // not a URL: ignored like any line that does not parse
    }
  }
  return [...out];
}
