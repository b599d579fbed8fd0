/**
 * Usage rules of robots.txt: what a path's content may be used for, as a
 * robots.txt group states it (robots/rules.ts finds the lines and the group;
 * this reads them).
 *
 * - `Content-Usage: [path] pref` (IETF aipref attachment draft): a rule of
 *   a group; `pref` is the vocabulary's RFC 9651 Dictionary (`train-ai=n`,
 *   `search=y`), read as a Content-Usage header is. The draft's path is
 *   required; files in the wild write `Content-Usage: train-ai=n` for the
 *   whole site, so a value that does not start with "/" is read as `/`.
 * - `Content-Signal: [path] signals` (Cloudflare's content signals, written
 *   by default into its managed robots.txt files): `search`, `ai-input`,
 *   `ai-train` = `yes` / `no`; other keys (`use=reference`) are ignored.
 *
 * Each kind is matched on its own, as Allow/Disallow are: the longest
 * matching pattern (`*` and a final `$` as in Allow/Disallow; length in
 * encoded bytes) decides, and lines of that kind with an equally long
 * pattern all apply (the draft: identical paths with conflicting
 * preferences apply separately, so any `n` wins). Usage is never stated for
 * a path robots.txt disallows: it is not fetched at all.
 */
import { contentSignalStates, contentUsageStates, type UsageSource } from './page-usage.js';

export type RobotsUsageName = 'content-usage' | 'content-signal';

/** A usage line of the group that applies to us, as read. */
export interface RobotsUsageLine {
  /** 1-based line number in the robots.txt. */
  line: number;
  name: RobotsUsageName;
  /** The value after the colon, as written (comment cut). */
  value: string;
  /** The canonical path pattern (`/` when the line gave none). */
  pattern: string;
  /** The preference text after the path. */
  pref: string;
}

/** A usage rule's name as robots.txt writes it, for messages ("Content-Usage"). */
export function ruleLabel(name: RobotsUsageName): string {
  return name === 'content-signal' ? 'Content-Signal' : 'Content-Usage';
}

/** Whether a robots.txt holds usage lines (so its parse needs the RFC 9651 parser loaded). */
export function mentionsUsage(text: string): boolean {
  return /content-(?:usage|signal)[ \t]*:/i.test(text);
}

/** A usage line's parts, its path pattern made canonical by `canonical` (robots/rules.ts's); null when it states nothing (an empty value). */
export function readUsageLine(name: RobotsUsageName, value: string, line: number, canonical: (pattern: string) => string): RobotsUsageLine | null {
  if (value === '') return null;
  let pattern = '/';
  let pref = value;
  if (value.startsWith('/')) {
    const cut = value.search(/[ \t]/);
    pattern = cut === -1 ? value : value.slice(0, cut);
    pref = cut === -1 ? '' : value.slice(cut).replace(/^[ \t]+/, '');
  }
  return { line, name, value, pattern: canonical(pattern), pref };
}

/** How many bytes of `pattern` matched `path` (both canonical), or -1 when it does not match. */
export function matchLength(pattern: string, path: string): number {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  if (!body.includes('*')) {
    if (anchored ? path !== body : !path.startsWith(body)) return -1;
    return pattern.length;
  }
  const parts = body.split('*');
  if (!path.startsWith(parts[0])) return -1;
  let at = parts[0].length;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i];
    const last = i === parts.length - 1;
    // The last piece of an anchored pattern must end the path; any other piece is found as early as it can be.
    const found = last && anchored ? (path.endsWith(part) && path.length - part.length >= at ? path.length - part.length : -1) : path.indexOf(part, at);
    if (found === -1) return -1;
    at = found + part.length;
  }
  if (anchored && at !== path.length) return -1;
  return pattern.length;
}

/** The usage statements of `lines` for a (canonical) path, per kind the longest match, with where they came from. */
export function usageForPath(lines: readonly RobotsUsageLine[], path: string, robotsUrl: string, fetchedAt: string): UsageSource[] {
  const out: UsageSource[] = [];
  for (const name of ['content-usage', 'content-signal'] as const) {
    let best = -1;
    let chosen: RobotsUsageLine[] = [];
    for (const l of lines) {
      if (l.name !== name) continue;
      const length = matchLength(l.pattern, path);
      if (length < 0 || length < best) continue;
      if (length > best) chosen = [];
      best = length;
      chosen.push(l);
    }
    for (const l of chosen) {
      const states = name === 'content-usage' ? contentUsageStates(l.pref) : contentSignalStates(l.pref);
      out.push({ source: 'robots', name, value: l.value, line: l.line, url: robotsUrl, fetchedAt, states });
    }
  }
  return out;
}
