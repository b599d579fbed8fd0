/**
 * Turns a crawl's settings into what the fetcher needs for requests: the
 * cookie jar (filled from `--cookie` and `--cookie-jar`), the proxy
 * variables of the environment, the TLS trust (`--ca` read), and the
 * per-URL extras built on them. The files are read here, once, at the
 * start: a missing or malformed one is a config error (exit 2), not a
 * crawl that runs without what the user asked for.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CrawlSettings, HostPolicy } from '../config/settings-types.js';
import { Secret } from './secret.js';
import { CookieFileError, CrawlCookieJar, parseNetscapeCookies } from './cookie-jar.js';
import { readEnvProxies, type EnvProxies } from './proxy.js';
import { isCredentialHeader } from './request-headers.js';
import { createRequestExtras, describeRequest, type RequestDescription, type RequestExtras } from './request-extras.js';
import { readCaFile, type TlsSettings } from './tls.js';
import type { RequestSigner } from '../identity/request-signer.js';

export interface RequestSetup {
  extras: RequestExtras;
  tls: TlsSettings;
  /** The proxy variables read from the environment. */
  env: EnvProxies;
  /** Secrets the config names whose variables are unset, for hosts other than the seeds' (one line each). */
  warnings: string[];
  /** What requests to `url` carry, for `crawl check`. */
  describe(url: string): RequestDescription;
  /** Signs every request, when the settings name a key: set by `setUpSigning`, which is asynchronous (it reads the key). @default none */
  signer?: RequestSigner;
}

export interface RequestSetupOptions {
  /** Relative file paths are resolved against this. @default process.cwd() */
  cwd?: string;
  /** Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY are read. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Epoch ms now, for cookie expiry (the crawl's clock). */
  now: () => number;
  /** Refuse to start while a secret a seed's host needs is unset (`crawl check` only reports it; others only warn). @default true */
  requireSecrets?: boolean;
}

/** Environment variables the config names for secrets that are not set; `code` makes the CLI print each line and exit 2. */
export class MissingSecretError extends Error {
  readonly code = 'CONFIG_INVALID';
}

function readCookieFile(path: string, shown: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CookieFileError(
      `cannot read cookie jar ${shown}: ${code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : (code ?? String(err))}`,
    );
  }
}

/** @throws CaFileError or CookieFileError (code CONFIG_INVALID) for files that cannot be used. */
export function setUpRequests(settings: CrawlSettings, seeds: readonly string[], opts: RequestSetupOptions): RequestSetup {
  const cwd = opts.cwd ?? process.cwd();
  const missing = settings.requests.secrets.filter((s) => s.secret.missing);
  // A secret the seeds' own hosts need must be there; one for a host the crawl may never reach only warns.
  // Only when a secret is missing: a URL parse and a policy look-up per seed cost ~1 s at 100,000 seeds.
  const needed = new Set(missing.length === 0 ? [] : seeds.flatMap((seed) => secretsOf(settings.policyFor(new URL(seed).hostname))));
  const fatal = missing.filter((s) => needed.has(s.secret));
  if (fatal.length > 0 && opts.requireSecrets !== false) {
    throw new MissingSecretError(fatal.map((s) => `${s.where}: ${s.secret.source} is not set (or is empty)`).join('\n'));
  }
  const warnings = missing
    .filter((s) => !needed.has(s.secret))
    .map((s) => `${s.where}: ${s.secret.source} is not set: requests that need it fail (error records) until it is`);
  const { cookies: cookieSettings, tls: tlsSettings } = settings.requests;
  const tls: TlsSettings = { insecure: tlsSettings.insecure };
  if (tlsSettings.ca !== null) tls.ca = readCaFile(resolve(cwd, tlsSettings.ca), tlsSettings.ca);

  const given = cookieSettings.send.length > 0 || cookieSettings.jar !== null;
  const jar = cookieSettings.keep || given ? new CrawlCookieJar({ now: opts.now }) : undefined;
  if (jar && cookieSettings.jar !== null) {
    const text = readCookieFile(resolve(cwd, cookieSettings.jar), cookieSettings.jar);
    jar.addNetscape(parseNetscapeCookies(text, cookieSettings.jar));
  }
  if (jar && cookieSettings.send.length > 0)
    jar.addForHosts(
      cookieSettings.send,
      seeds.map((s) => new URL(s).hostname),
    );
  // A jar that only holds the given cookies must not learn new ones.
  const cookies = jar && !cookieSettings.keep ? readOnly(jar) : jar;

  const env = readEnvProxies(opts.env ?? process.env);
  // A sitemap the user named puts its host in scope as a seed does, so it counts as one here too.
  const seedHosts = new Set([...seeds, ...settings.sitemaps.urls].map((s) => new URL(s).host));
  const held = heldCredentials(settings, seedHosts);
  if (held !== null) warnings.push(held);
  const extrasOptions = { policyFor: (host: string) => settings.policyFor(host), cookies, env, seedHosts };
  const base = createRequestExtras(extrasOptions);
  const cookieHosts = new Set(seeds.map((s) => new URL(s).hostname));
  const extras: RequestExtras = {
    ...base,
    // A resumed crawl learns its seeds from its store: --cookie goes to their hosts too.
    allowSeeds(more) {
      base.allowSeeds(more);
      const fresh = more.map((s) => new URL(s).hostname).filter((h) => !cookieHosts.has(h));
      for (const host of fresh) cookieHosts.add(host);
      if (jar && cookieSettings.send.length > 0 && fresh.length > 0) jar.addForHosts(cookieSettings.send, fresh);
    },
  };
  return {
    extras,
    tls,
    env,
    warnings,
    describe: (url) => describeRequest(new URL(url), extrasOptions),
  };
}

/**
 * One line when the crawl may reach hosts beyond the seeds' (a wider
 * `scope`, `--check-links`) while `defaults` (or `--header`) hold
 * credential headers: those stay on the seeds' hosts, which a user who
 * wrote `--header 'X-Api-Key: …' --scope any` should hear. Null otherwise.
 */
function heldCredentials(settings: CrawlSettings, seedHosts: ReadonlySet<string>): string | null {
  const wider = [settings.scope !== 'host' && `--scope ${settings.scope}`, settings.checkLinks && '--check-links'].filter((w) => w !== false);
  if (wider.length === 0) return null;
  const names = new Set<string>();
  for (const host of seedHosts) {
    const policy = settings.policyFor(host);
    for (const [name, value] of Object.entries(policy.headers)) if (!policy.entryHeaders?.includes(name) && isCredentialHeader(name, value)) names.add(name);
  }
  if (names.size === 0) return null;
  const list = [...names].join(', ');
  return `header${names.size === 1 ? '' : 's'} ${list}: a credential, sent to the seeds' hosts only, not to the other hosts ${wider.join(' and ')} reaches (a domains entry's own headers reach its hosts)`;
}

/** The secrets a host's policy would send. */
function secretsOf(policy: HostPolicy): Secret[] {
  const out: Secret[] = [];
  for (const value of Object.values(policy.headers)) if (value instanceof Secret) out.push(value);
  if (policy.auth?.kind === 'basic') out.push(policy.auth.password);
  if (policy.auth?.kind === 'bearer') out.push(policy.auth.token);
  return out;
}

function readOnly(jar: CrawlCookieJar): CrawlCookieJar {
  return Object.assign(Object.create(jar) as CrawlCookieJar, { store: () => {} });
}

/**
 * The crawl's request signer when `settings.identity` names a key, else
 * undefined: the key files are read (and their permissions checked) now, and
 * the signing modules (identity/, jose) are loaded only then, so a
 * crawl without a key imports nothing of them.
 * @throws SigningKeyError (code CONFIG_INVALID) for a key file that cannot be used.
 */
export async function setUpSigning(settings: CrawlSettings, opts: { cwd?: string; now: () => number }): Promise<RequestSigner | undefined> {
  if (!settings.identity) return undefined;
  const { openRequestSigner } = await import('../identity/request-signer.js');
  return openRequestSigner(settings.identity, { cwd: opts.cwd ?? process.cwd(), now: opts.now });
}
