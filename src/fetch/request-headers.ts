/**
 * Extra request headers (`--header 'Name: value'`, `headers` in `defaults`
 * and `domains`): their syntax, the names the crawler keeps for itself, and
 * how they are shown without giving secrets away. Pure.
 *
 * Names are matched case-insensitively and kept lowercased, so a domain
 * entry's `X-Team` replaces the defaults' `x-team`.
 */
import { Secret, type HeaderValue } from './secret.js';

/**
 * Names a user may not set, with what to use instead. Framing headers would
 * corrupt the exchange (undici writes them itself); the others have options
 * of their own, which keep them where they belong (User-Agent also picks
 * the robots.txt group; credentials and cookies stay on their own hosts).
 */
const RESERVED: Record<string, string> = {
  host: 'the crawler sets it from the URL',
  'content-length': 'the crawler sends GET requests without a body',
  connection: 'the crawler manages its connections',
  'keep-alive': 'the crawler manages its connections',
  'transfer-encoding': 'the crawler sends GET requests without a body',
  te: 'the crawler manages its connections',
  trailer: 'the crawler sends GET requests without a body',
  upgrade: 'the crawler manages its connections',
  expect: 'the crawler sends GET requests without a body',
  'accept-encoding': 'the crawler asks for the encodings it can decode (gzip, deflate, br)',
  'user-agent': 'use --user-agent (or `userAgent` in the config): it also picks the robots.txt group',
  cookie: 'use --cookie, --cookie-jar or the cookie jar the crawl keeps',
  authorization: 'use `auth` in a `domains` entry: it is only ever sent to that host',
  'proxy-authorization': 'put the credentials in the proxy URL (http://user:pass@proxy:3128)',
  signature: 'use --sign-key and --signature-agent: the crawler signs each request as it is sent',
  'signature-input': 'use --sign-key and --signature-agent: the crawler signs each request as it is sent',
  'signature-agent': 'use --signature-agent (with --sign-key)',
};

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What undici accepts in a header value: tab, visible ASCII, space and obs-text. */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why `name` cannot be sent as an extra header, or undefined when it can. */
export function headerNameProblem(name: string): string | undefined {
  if (!TOKEN.test(name)) return `${JSON.stringify(name)} is not a valid header name (letters, digits and !#$%&'*+.^_\`|~-)`;
  const reserved = RESERVED[name.toLowerCase()];
  if (reserved) return `${name} cannot be set as a header: ${reserved}`;
  return undefined;
}

/** Why `value` cannot be sent, or undefined when it can. Control characters (CR, LF, NUL) would split or break the request. */
export function headerValueProblem(value: string): string | undefined {
  return VALUE.test(value) ? undefined : 'a header value may not contain control characters (CR, LF, NUL, …)';
}

/**
 * `"Name: value"` as curl and wget take it → lowercased name and trimmed
 * value, or the problem in words. An empty value is allowed (`"X-Debug:"`).
 */
export function parseHeaderLine(text: string): { name: string; value: string } | { problem: string } {
  const colon = text.indexOf(':');
  if (colon <= 0) return { problem: `expected "Name: value", got ${JSON.stringify(text)}` };
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  const problem = headerNameProblem(name) ?? headerValueProblem(value);
  return problem ? { problem } : { name: name.toLowerCase(), value };
}

/** Names whose values are credentials by convention; shown as `***` even when written in plain text. */
const SENSITIVE = /auth|token|key|secret|session|cookie|passw|credential|signature/i;

/**
 * The Web Bot Auth fields that say which key signed and when, and where its
 * public key is: no secret, and what an archive's reader wants to know. The
 * `Signature` itself stays masked: it could be replayed to the same host
 * until it expires.
 */
const PUBLIC_SIGNATURE_FIELDS: ReadonlySet<string> = new Set(['signature-input', 'signature-agent']);

/** A header whose value is a credential by its name (Authorization, Cookie, X-Api-Key, Signature, …). */
export function isSensitiveHeader(name: string): boolean {
  return SENSITIVE.test(name) && !PUBLIC_SIGNATURE_FIELDS.has(name.toLowerCase());
}

/**
 * A header the crawler treats as a credential: a credential-like name, or a
 * value read from the environment (`{"env": …}`, kept out of config files for
 * a reason). Set in `defaults` (or by `--header`), such a header goes only
 * to the seeds' hosts, as `--cookie` does; a `domains` entry sends its own to
 * its hosts.
 */
export function isCredentialHeader(name: string, value: HeaderValue): boolean {
  return value instanceof Secret || isSensitiveHeader(name);
}

/** `"name: value"` lines for humans (`crawl check`): secrets and credential-like values as `***`. */
export function describeHeaders(headers: Readonly<Record<string, HeaderValue>>): string[] {
  return Object.entries(headers).map(([name, value]) => {
    if (value instanceof Secret) return `${name}: *** (from ${value.source}${value.missing ? ', which is not set' : ''})`;
    return `${name}: ${isSensitiveHeader(name) ? '***' : value}`;
  });
}
