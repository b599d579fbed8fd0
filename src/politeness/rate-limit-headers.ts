/**
 * Rate-limit response headers → "how much budget is left, and when it resets".
 *
 * Contract:
 * - Pure: no clock reads; `now` (wall-clock epoch ms of receipt) is passed in
 *   and used only to turn epoch-style reset stamps into delays.
 * - The answer is a delay (`resetMs`), never an instant, for the same reason
 *   as Retry-After: the scheduler adds it to its monotonic clock.
 * - Forms, most specific first (the first that yields a usable answer wins):
 *   1. `RateLimit: "name";r=50;t=30` + `RateLimit-Policy: "name";q=100;w=60`
 *      (draft-ietf-httpapi-ratelimit-headers-08 and later, structured fields);
 *   2. `RateLimit: limit=100, remaining=50, reset=30` (draft-07, one dictionary);
 *   3. `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts up to 06);
 *   4. `X-RateLimit-Limit` / `-Remaining` / `-Reset` (the common non-standard set).
 *   A malformed field falls through to the next form rather than ending the search.
 * - Every reset value may be delta seconds or, as many servers send, an epoch
 *   stamp: above 1e9 it is epoch seconds (a delta of 31+ years is not meant),
 *   above 1e12 epoch milliseconds. A stamp already past means "reset now".
 * - Retry-After is not read here (see retry-after.ts): it is an order, this is
 *   advice, and the caller weighs them differently.
 * - Header names are the lowercased keys of `headers`. Garbage → null; never throws.
 */

/** Which header form an answer came from; stable strings for logs. */
export type RateLimitSource = 'ratelimit-structured' | 'ratelimit-dictionary' | 'ratelimit-fields' | 'x-ratelimit';

/** What the server says about our budget. */
export interface RateLimitInfo {
  /** Requests left in the current window; ≥ 0. */
  remaining: number;
  /** Milliseconds from receipt until the budget resets; ≥ 0. */
  resetMs: number;
  /** The window's quota, when the server states it. */
  limit: number | null;
  source: RateLimitSource;
}

/** A parsed structured-field list member: its bare item (string or token) and parameters. */
interface Member {
  /** The item as a name (a string's content or a token), or null for any other kind of item. */
  name: string | null;
  /** The raw text before the first parameter. */
  head: string;
  params: Map<string, string>;
}

const TOKEN_RE = /^[A-Za-z*][\w!#$%&'*+\-.^`|~:/]*$/;
const STRING_RE = /^"((?:[^"\\]|\\["\\])*)"$/;
const KEY_RE = /^[a-z*][a-z0-9_\-.*]*$/;
const COUNT_RE = /^\d+$/;
const SIGNED_COUNT_RE = /^-?\d+$/;
const SECONDS_RE = /^\d+(?:\.\d+)?$/;

const EPOCH_SECONDS = 1e9;
const EPOCH_MS = 1e12;

/** Reads a header as a trimmed string; anything that is not a non-empty string is absent. */
function get(headers: Record<string, string | undefined>, name: string): string | null {
  const value = Object.prototype.hasOwnProperty.call(headers, name) ? headers[name] : undefined;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text === '' ? null : text;
}

/** Splits on `sep` outside double-quoted strings (structured-field strings may hold commas). */
function splitTop(text: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === sep) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

/** A lenient structured-field list parser: enough for names and numeric parameters. */
function parseList(text: string): Member[] | null {
  const members: Member[] = [];
  for (const raw of splitTop(text, ',')) {
    if (raw === '') return null;
    const [head = '', ...rawParams] = splitTop(raw, ';');
    const params = new Map<string, string>();
    for (const param of rawParams) {
      const eq = param.indexOf('=');
      const key = (eq < 0 ? param : param.slice(0, eq)).trim();
      if (!KEY_RE.test(key)) return null;
      params.set(key, eq < 0 ? '?1' : param.slice(eq + 1).trim());
    }
    const str = STRING_RE.exec(head);
    const name = str ? str[1].replace(/\\(["\\])/g, '$1') : TOKEN_RE.test(head) ? head : null;
    members.push({ name, head, params });
  }
  return members;
}

/** A non-negative integer, clamped to a safe integer; null if it is not one. */
function count(text: string | undefined): number | null {
  if (text === undefined || !COUNT_RE.test(text)) return null;
  return Math.min(Number(text), Number.MAX_SAFE_INTEGER);
}

/**
 * Remaining budget from a plain header. A negative count (some servers send
 * -1 once over quota) means none left; duplicated headers, joined with commas
 * on the way in, count as their smallest value.
 */
function remainingOf(text: string): number | null {
  let least: number | null = null;
  for (const part of splitTop(text, ',')) {
    const head = splitTop(part, ';')[0] ?? '';
    if (!SIGNED_COUNT_RE.test(head)) return null;
    const n = Math.max(0, Math.min(Number(head), Number.MAX_SAFE_INTEGER));
    least = least === null ? n : Math.min(least, n);
  }
  return least;
}

/** The quota from a plain limit header: its first member (drafts list policies after it: `100, 100;w=60`). */
function limitOf(text: string | null): number | null {
  if (text === null) return null;
  return count(splitTop(splitTop(text, ',')[0] ?? '', ';')[0]);
}

/** A reset value → delay in ms: delta seconds, epoch seconds (> 1e9) or epoch ms (> 1e12). */
function resetDelay(text: string | undefined, now: number): number | null {
  if (text === undefined || !SECONDS_RE.test(text)) return null;
  const n = Number(text);
  let ms: number;
  if (n > EPOCH_MS) ms = n - now;
  else if (n > EPOCH_SECONDS) ms = n * 1000 - now;
  else ms = n * 1000;
  if (Number.isNaN(ms)) return null;
  // Round up: arriving a fraction of a millisecond early is arriving early.
  return Math.min(Math.max(0, Math.ceil(ms)), Number.MAX_SAFE_INTEGER);
}

/** Form 1: draft-08+ `RateLimit` items with `RateLimit-Policy`. */
function fromStructured(headers: Record<string, string | undefined>, now: number): RateLimitInfo | null {
  const field = get(headers, 'ratelimit');
  const items = field === null ? null : parseList(field);
  if (!items) return null;
  const policyField = get(headers, 'ratelimit-policy');
  const policies = (policyField === null ? null : parseList(policyField)) ?? [];
  const policyFor = (name: string | null): Member | undefined => policies.find((p) => name !== null && p.name === name) ?? policies[0];

  let best: { remaining: number; resetMs: number; name: string | null } | null = null;
  for (const item of items) {
    const remaining = count(item.params.get('r'));
    if (remaining === null) continue;
    // `t` is optional in the draft; without it the policy window bounds the reset.
    const t = item.params.get('t');
    const resetMs = t !== undefined ? resetDelay(t, now) : resetDelay(policyFor(item.name)?.params.get('w'), now);
    if (resetMs === null) continue;
    // Most restrictive: least left, and on a tie the longer wait.
    if (!best || remaining < best.remaining || (remaining === best.remaining && resetMs > best.resetMs)) {
      best = { remaining, resetMs, name: item.name };
    }
  }
  if (!best) return null;
  const limit = count(policyFor(best.name)?.params.get('q'));
  return { remaining: best.remaining, resetMs: best.resetMs, limit, source: 'ratelimit-structured' };
}

/** Form 2: draft-07 `RateLimit: limit=100, remaining=50, reset=30`. */
function fromDictionary(headers: Record<string, string | undefined>, now: number): RateLimitInfo | null {
  const field = get(headers, 'ratelimit');
  if (field === null) return null;
  const entries = new Map<string, string>();
  for (const member of splitTop(field, ',')) {
    const head = splitTop(member, ';')[0] ?? '';
    const eq = head.indexOf('=');
    if (eq < 0) continue;
    const key = head.slice(0, eq).trim().toLowerCase();
    if (!entries.has(key)) entries.set(key, head.slice(eq + 1).trim());
  }
  const rawRemaining = entries.get('remaining');
  const remaining = rawRemaining === undefined ? null : remainingOf(rawRemaining);
  const resetMs = resetDelay(entries.get('reset'), now);
  if (remaining === null || resetMs === null) return null;
  return { remaining, resetMs, limit: count(entries.get('limit')), source: 'ratelimit-dictionary' };
}

/** Forms 3 and 4: one header per value, under `prefix`. */
function fromFields(headers: Record<string, string | undefined>, now: number, prefix: string, source: RateLimitSource): RateLimitInfo | null {
  const rawRemaining = get(headers, `${prefix}-remaining`);
  const rawReset = get(headers, `${prefix}-reset`);
  if (rawRemaining === null || rawReset === null) return null;
  const remaining = remainingOf(rawRemaining);
  // Duplicated reset headers: the last to reset governs, so take the longest wait.
  let resetMs: number | null = null;
  for (const part of splitTop(rawReset, ',')) {
    const ms = resetDelay(part, now);
    if (ms === null) return null;
    resetMs = resetMs === null ? ms : Math.max(resetMs, ms);
  }
  if (remaining === null || resetMs === null) return null;
  return { remaining, resetMs, limit: limitOf(get(headers, `${prefix}-limit`)), source };
}

/**
 * Reads the server's rate-limit headers. `headers` has lowercased names;
 * `now` is the wall-clock epoch ms of receipt. Null when no form yields both
 * a remaining count and a reset time.
 */
export function parseRateLimit(headers: Record<string, string | undefined>, now: number): RateLimitInfo | null {
  if (typeof headers !== 'object' || headers === null) return null;
  return (
    fromStructured(headers, now) ??
    fromDictionary(headers, now) ??
    fromFields(headers, now, 'ratelimit', 'ratelimit-fields') ??
    fromFields(headers, now, 'x-ratelimit', 'x-ratelimit')
  );
}

/** Options for `paceForBudget`. */
export interface PaceOptions {
  /**
   * Fraction of the remaining budget we plan to use, leaving the rest for
   * other clients of the same quota and for clock differences. In (0, 1].
   * @default 0.9
   */
  safety?: number;
}

/** How to spend a budget: spread requests `minGapMs` apart for the next `until` ms, or pause for `pauseMs`. */
export type BudgetPace = { minGapMs: number; until: number } | { pauseMs: number };

/**
 * Turns a budget into pacing. Nothing left → pause until the reset. Otherwise
 * the remaining requests (times `safety`, at least one) are spread evenly over
 * the time to the reset, so the budget lasts the window instead of being spent
 * in a burst that ends in a 429. The gap is rounded up to a whole millisecond.
 */
export function paceForBudget(rl: { remaining: number; resetMs: number }, opts: PaceOptions = {}): BudgetPace {
  const safety = opts.safety ?? 0.9;
  if (!(safety > 0 && safety <= 1)) {
    throw new RangeError(`Expected \`safety\` to be a number in (0, 1], got ${String(safety)}`);
  }
  const resetMs = Math.max(0, rl.resetMs);
  if (rl.remaining <= 0) return { pauseMs: resetMs };
  const requests = Math.max(1, Math.floor(rl.remaining * safety));
  return { minGapMs: Math.ceil(resetMs / requests), until: resetMs };
}
