/**
 * robots.txt rules for one product token (RFC 9309 §2.2), on top of
 * `robots-parser`, which does the group bookkeeping and the longest-match /
 * Allow-wins-ties / `*` / `$` matching.
 *
 * Where robots-parser deviates from the RFC we rewrite the text before handing
 * it over, line for line so its line numbers stay ours:
 * - user-agent values: it keeps "Googlebot Images" whole and only strips a
 *   "/version"; we reduce both sides to the same product token, so only an
 *   exact, case-insensitive token match picks a group ("crawl-extended" never
 *   matches "crawl").
 * - other records (Sitemap, Host, unknown keys): it lets them end a run of
 *   user-agent lines; §2.2.4 says they MUST NOT terminate a group, so they are
 *   blanked out.
 * - percent-encoding: it only upper-cases hex digits; §2.2.2 wants encoded
 *   unreserved octets decoded and everything else encoded. Patterns and paths
 *   both go through `canonicalPath`, whose output is left unchanged by
 *   robots-parser's own encoding step and by WHATWG URL parsing.
 * - `/robots.txt` itself is always allowed (§2.2.2); robots-parser does not know.
 * - Crawl-delay: it accepts `Number()` forms ("", "0x10", "-1"); we parse it.
 * Matching itself is left to robots-parser.
 */
import { createRequire } from 'node:module';
import type { RobotsExplanation, RobotsState } from './types.js';

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

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
// Left literal: unreserved and reserved characters that neither encodeURI
// (robots-parser's pattern step) nor WHATWG URL serialisation would touch.
// "'" is not among them: WHATWG encodes it in queries.
const LITERAL = /^[A-Za-z0-9\-._~!$&()*+,/:;=?@]$/;

/**
 * One canonical form for rule patterns and URL paths (RFC 9309 §2.2.2):
 * `%xx` of an unreserved character is decoded, other `%xx` kept with upper-case
 * hex, a stray `%` becomes `%25`, and any character outside LITERAL is UTF-8
 * percent-encoded. `*` and `$` stay literal, so patterns keep their wildcards.
 */
export function canonicalPath(input: string): string {
  let out = '';
  for (let i = 0; i < input.length; ) {
    if (input[i] === '%') {
      const hex = input.slice(i + 1, i + 3);
      if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
        const decoded = String.fromCharCode(parseInt(hex, 16));
        out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
        i += 3;
      } else {
        out += '%25';
        i += 1;
      }
      continue;
    }
    const char = String.fromCodePoint(input.codePointAt(i)!);
    out += LITERAL.test(char) ? char : percentEncode(char);
    i += char.length;
  }
  return out;
}

function percentEncode(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** A user-agent line: the token it names and the line as written (for explanations). */
interface AgentLine {
  token: string;
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
  /** First user-agent line of each token that has a group (robots-parser's `_rules` keys). */
  groups: Map<string, AgentLine>;
}

/** A user-agent line's value as a token: "*" (also "* whatever") or the product token. */
function agentToken(value: string): string {
  return /^\*(\s|$)/.test(value) ? '*' : productToken(value);
}

/**
 * Rewrites the text for robots-parser and mirrors its grouping state machine
 * (a user-agent line after any other record starts a new group; the same token
 * in several groups merges) to know which group decided a line.
 */
function prepare(source: string): PreparedText {
  const lines = source.split(LINE_BREAK);
  const rules = new Map<number, RuleLine>();
  const delays: PreparedText['delays'] = [];
  const groups = new Map<string, AgentLine>();
  let agents: AgentLine[] = [];
  let inAgentRun = false;
  const out = lines.map((raw, index) => {
    const line = raw.split('#', 1)[0]!;
    const colon = line.indexOf(':');
    if (colon === -1) return '';
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!inAgentRun) agents = [];
      inAgentRun = true;
      const token = agentToken(value);
      if (token === '') return 'user-agent:';
      agents.push({ token, text: line.trim() });
      return `user-agent: ${token}`;
    }
    if (key !== 'allow' && key !== 'disallow' && key !== 'crawl-delay') return '';
    inAgentRun = false;
    const current = agents;
    for (const agent of current) if (!groups.has(agent.token)) groups.set(agent.token, agent);
    if (key === 'crawl-delay') {
      delays.push({ value, agents: current });
      return `crawl-delay: ${value}`;
    }
    const pattern = canonicalPath(value);
    if (pattern !== '') rules.set(index + 1, { directive: key === 'allow' ? 'Allow' : 'Disallow', value, agents: current });
    return `${key}: ${pattern}`;
  });
  return { text: out.join('\n'), rules, delays, groups };
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
  const pathname = canonicalPath(parsed.pathname);
  return { path: pathname + canonicalPath(parsed.search), isRobotsFile: pathname === '/robots.txt' && parsed.search === '' };
}

/**
 * Parses robots.txt text for `userAgent`'s product token. Never throws on a
 * malformed file: lines that do not parse are ignored. The text is used as
 * given; cap it with `capRobotsText` first.
 */
export function parseRobots(
  robotsUrl: string,
  text: string,
  userAgent: string,
  now: number,
  ttlMs: number,
): RobotsState & { kind: 'rules' } {
  const prepared = prepare(text);
  const robot = robotsParser(`${BASE}/robots.txt`, prepared.text);
  const token = productToken(userAgent);
  // Same choice robots-parser makes: the token's (merged) group, else "*", else none.
  const key = prepared.groups.has(token) ? token : prepared.groups.has('*') ? '*' : null;
  const groupLine = key === null ? null : prepared.groups.get(key)!.text;

  let crawlDelayMs: number | null = null;
  for (const delay of prepared.delays) {
    if (key === null || !delay.agents.some((a) => a.token === key)) continue;
    const ms = parseCrawlDelayMs(delay.value);
    // Merged groups may disagree; the politest (largest) value wins.
    if (ms !== null && (crawlDelayMs === null || ms > crawlDelayMs)) crawlDelayMs = ms;
  }

  const explain = (url: string): RobotsExplanation => {
    const target = pathOf(url);
    // A URL we cannot even parse is not fetched either; refuse rather than guess.
    if (target === null) return { allowed: false, rule: null, line: null, group: null };
    if (target.isRobotsFile) return { allowed: true, rule: IMPLICIT_RULE, line: null, group: null };
    if (key === null) return { allowed: true, rule: null, line: null, group: null };
    const line = robot.getMatchingLineNumber(BASE + target.path, key);
    const rule = line > 0 ? prepared.rules.get(line) : undefined;
    if (!rule) return { allowed: true, rule: null, line: null, group: groupLine };
    return {
      allowed: rule.directive === 'Allow',
      rule: `${rule.directive}: ${rule.value}`,
      line,
      group: rule.agents.find((a) => a.token === key)?.text ?? groupLine,
    };
  };

  return {
    kind: 'rules',
    fetchedAt: now,
    expiresAt: now + ttlMs,
    isAllowed: (url) => explain(url).allowed,
    explain,
    crawlDelayMs,
    source: robotsUrl,
  };
}
