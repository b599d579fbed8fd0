/**
 * Config fields for what requests carry: headers, credentials and proxies
 * per host (in `defaults` and `domains`, see policy-schema.ts), cookies and
 * TLS trust for the whole crawl (top level, see file-schema.ts). Flags
 * (`--header`, `--proxy`, `--cookie`, …) are parsed with the same checks.
 *
 * A secret may be written as `{ "env": "NAME" }`: it is read from that
 * environment variable when the config is loaded, so it stays out of files,
 * and it is held as a Secret (fetch/secret.ts) that prints as `***`.
 */
import { z } from 'zod';
import { parseCookiePair, proxyUrlProblem } from '../fetch/request-syntax.js';
import { headerNameProblem, headerValueProblem } from '../fetch/request-headers.js';
import { Secret, type HeaderValue } from '../fetch/secret.js';
import type { HostAuth } from './settings-types.js';
import type { PolicyFields, PolicyOverride } from './policy-resolver.js';
import { comment, once } from './fields.js';
import { showValue } from './units.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `{ "env": "NAME" }` → a Secret holding that variable's value. An unset
 * variable is not a problem of the file (an example config or `crawl check`
 * reads fine without it): a crawl refuses to start (request-setup.ts).
 */
function fromEnv() {
  return z
    .strictObject({ env: z.string().regex(ENV_NAME, { error: (i) => `expected an environment variable name like "SHOP_PASS", got ${showValue(i.input)}` }) })
    .transform((value) => Secret.fromEnv(value.env));
}

/** A secret: written in the file, or `{ "env": "NAME" }`. Either way a Secret. */
function secret() {
  return z.union(
    [
      z
        .string()
        .min(1, { error: 'expected a non-empty string' })
        .transform((text) => new Secret(text, 'config')),
      fromEnv(),
    ],
    { error: (i) => `expected a string or {"env": "VARIABLE"}, got ${showValue(i.input)}` },
  );
}

/**
 * `{ "X-Team": "crawl", "X-Api-Key": { "env": "API_KEY" } }` → lowercased
 * names; plain values stay strings, environment ones become Secrets.
 */
export function headersField() {
  const value = z.union([z.string(), fromEnv()], { error: (i) => `expected a string or {"env": "VARIABLE"}, got ${showValue(i.input)}` });
  return z
    .record(z.string(), value, { error: (i) => `expected an object of header names and values, got ${showValue(i.input)}` })
    .superRefine((headers, ctx) => {
      const seen = new Map<string, string>();
      for (const [name, v] of Object.entries(headers)) {
        if (name === '$comment') continue;
        const problem = headerNameProblem(name) ?? (typeof v === 'string' ? headerValueProblem(v) : v.missing ? undefined : headerValueProblem(v.reveal()));
        if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [name] });
        const lower = name.toLowerCase();
        if (seen.has(lower)) ctx.addIssue({ code: 'custom', message: `names the same header as ${JSON.stringify(seen.get(lower))}`, path: [name] });
        seen.set(lower, name);
      }
    })
    .transform((headers) => {
      const out: Record<string, HeaderValue> = {};
      for (const [name, v] of Object.entries(headers)) if (name !== '$comment') out[name.toLowerCase()] = typeof v === 'string' ? v.trim() : v;
      return out;
    })
    .meta({ propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" } });
}

/** `{ "basic": { "user": "u", "password": … } }` or `{ "bearer": … }` → HostAuth. */
export function authField() {
  return z
    .strictObject({
      $comment: comment(),
      basic: z
        .strictObject({
          user: z
            .string()
            .min(1, { error: 'expected a non-empty user name' })
            .refine((u) => !u.includes(':'), { error: 'a basic-auth user name may not contain ":"' })
            .describe('User name.'),
          password: secret().describe('Password: a string, or {"env": "VARIABLE"} to read it from the environment.'),
        })
        .optional()
        .describe('HTTP Basic credentials.'),
      bearer: secret().optional().describe('A bearer token (Authorization: Bearer …): a string, or {"env": "VARIABLE"}.'),
    })
    .superRefine((auth, ctx) => {
      if ((auth.basic === undefined) === (auth.bearer === undefined)) ctx.addIssue({ code: 'custom', message: 'expected exactly one of "basic" or "bearer"' });
    })
    .transform((auth): HostAuth =>
      auth.basic ? { kind: 'basic', user: auth.basic.user, password: auth.basic.password } : { kind: 'bearer', token: auth.bearer! },
    );
}

/** Where a secret sits in the config, for "environment variable X is not set" messages. */
export interface PlacedSecret {
  where: string;
  secret: Secret;
}

/** Every secret of `defaults.headers` and of each `domains` entry's headers and auth. */
export function placedSecrets(defaults: PolicyFields, domains: Readonly<Record<string, PolicyOverride>>): PlacedSecret[] {
  const out: PlacedSecret[] = [];
  const headers = (where: string, list: PolicyFields['headers'] | undefined) => {
    for (const [name, value] of Object.entries(list ?? {})) if (value instanceof Secret) out.push({ where: `${where}.headers.${name}`, secret: value });
  };
  headers('defaults', defaults.headers);
  for (const [key, entry] of Object.entries(domains)) {
    const where = `domains[${JSON.stringify(key)}]`;
    headers(where, entry.headers);
    if (entry.auth?.kind === 'basic') out.push({ where: `${where}.auth.basic.password`, secret: entry.auth.password });
    if (entry.auth?.kind === 'bearer') out.push({ where: `${where}.auth.bearer`, secret: entry.auth.token });
  }
  return out;
}

/** A proxy URL, or `false` for a direct connection. */
export function proxyField() {
  return z
    .union([z.string(), z.literal(false)], { error: (i) => `expected a proxy URL like "http://proxy.example:3128" or false, got ${showValue(i.input)}` })
    .superRefine((value, ctx) => {
      if (value === false) return;
      const problem = proxyUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** `"name=value"` cookies (as `--cookie` takes them). */
export function cookiePairs() {
  const item = z.string({ error: (i) => `expected "name=value", got ${showValue(i.input)}` }).transform((text, ctx) => {
    const parsed = parseCookiePair(text);
    if ('problem' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.problem, input: text });
      return z.NEVER;
    }
    return parsed;
  });
  return z.array(item, { error: (i) => `expected a list of "name=value" strings, got ${showValue(i.input)}` });
}

const filePath = () => z.string({ error: (i) => `expected a file path, got ${showValue(i.input)}` }).min(1, { error: 'expected a file path' });

export const cookiesSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    send: cookiePairs()
      .prefault([])
      .describe('"name=value" cookies sent to the seeds\' hosts (exact hosts, any port, every path, http and https; never subdomains). Default none.'),
    jar: filePath()
      .optional()
      .describe(
        'A Netscape cookies.txt (as curl -c and wget --save-cookies write it), read at the start; its domain, subdomain flag, path, secure flag and expiry are honoured. Relative to the working directory. Default none.',
      ),
    keep: z
      .boolean({ error: (i) => `expected true or false, got ${showValue(i.input)}` })
      .prefault(true)
      .describe('Keep the cookies responses set (RFC 6265 domain and path rules) and send them back on later requests. Default true.'),
  }),
);

export const tlsSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    insecure: z
      .boolean({ error: (i) => `expected true or false, got ${showValue(i.input)}` })
      .prefault(false)
      .describe('Accept any TLS certificate (self-signed staging servers). Loudly warned about. Default false.'),
    ca: filePath()
      .optional()
      .describe('A PEM file of extra CA certificates trusted besides the bundled ones. Relative to the working directory. Default none.'),
  }),
);
