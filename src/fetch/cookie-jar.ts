/**
 * The crawl's cookie jar: cookies given up front (`--cookie`, a Netscape
 * cookies.txt from `--cookie-jar`) and every Set-Cookie a response carries,
 * sent back on later requests whose URL matches them by the rules of RFC
 * 6265 (domain, path, Secure, expiry). tough-cookie does the matching: a
 * Domain attribute that is a public suffix, or that the setting host does
 * not domain-match, is refused, so a cookie never crosses to another host
 * unless its Domain attribute allows it.
 *
 * Bounded, because a crawl meets hosts without end and any of them may set
 * cookies without end: at most MAX_COOKIES_PER_DOMAIN per cookie domain and
 * MAX_COOKIES in all (RFC 6265 §6.1 asks for at least 50 and 3000); past
 * either, new cookies are dropped (replacing an existing one still works).
 * Only the first MAX_SET_COOKIE Set-Cookie headers of a response are read,
 * and a cookie longer than MAX_COOKIE_BYTES is ignored.
 *
 * Time comes from the injected clock (`now`), so expiry is testable.
 *
 * tough-cookie (~75 KB with its own code) is loaded at the first cookie the
 * crawl holds, not at start-up: the jar is on by default, and most crawls
 * never receive a cookie. Loaded through createRequire, like re2js and
 * cheerio, because the first Set-Cookie is stored synchronously.
 */
import { createRequire } from 'node:module';
import type { Cookie, CookieJar, MemoryCookieStore } from 'tough-cookie';

export const MAX_COOKIES_PER_DOMAIN = 50;
export const MAX_COOKIES = 20_000;
export const MAX_SET_COOKIE = 50;
export const MAX_COOKIE_BYTES = 4096;

type ToughCookie = typeof import('tough-cookie');
type Index = MemoryCookieStore['idx'];

function countDomain(idx: Index, domain: string): number {
  let n = 0;
  const entry = idx[domain];
  if (entry) for (const path in entry) n += Object.keys(entry[path]).length;
  return n;
}

/** tough-cookie's memory store with the caps above (a class made once tough-cookie is loaded). */
function boundedStoreClass({ MemoryCookieStore }: ToughCookie) {
  return class BoundedStore extends MemoryCookieStore {
    private count = 0;

    /** Cookies held. */
    get size(): number {
      return this.count;
    }

    override putCookie(cookie: Cookie): Promise<void>;
    override putCookie(cookie: Cookie, callback: (error: Error | null) => void): void;
    override putCookie(cookie: Cookie, callback?: (error: Error | null) => void): Promise<void> | void {
      const { domain, path, key } = cookie;
      if (domain != null && path != null && key != null && this.idx[domain]?.[path]?.[key] === undefined) {
        if (this.count >= MAX_COOKIES || countDomain(this.idx, domain) >= MAX_COOKIES_PER_DOMAIN) {
          return callback ? callback(null) : Promise.resolve();
        }
        this.count++;
      }
      return callback ? super.putCookie(cookie, callback) : super.putCookie(cookie);
    }

    override removeCookie(domain: string, path: string, key: string): Promise<void>;
    override removeCookie(domain: string, path: string, key: string, callback: (error: Error | null) => void): void;
    override removeCookie(domain: string, path: string, key: string, callback?: (error: Error | null) => void): Promise<void> | void {
      if (this.idx[domain]?.[path]?.[key] !== undefined) this.count--;
      return callback ? super.removeCookie(domain, path, key, callback) : super.removeCookie(domain, path, key);
    }

    override removeCookies(domain: string, path: string): Promise<void>;
    override removeCookies(domain: string, path: string, callback: (error: Error | null) => void): void;
    override removeCookies(domain: string, path: string, callback?: (error: Error | null) => void): Promise<void> | void {
      const before = countDomain(this.idx, domain);
      const result = callback ? super.removeCookies(domain, path, callback) : super.removeCookies(domain, path);
      this.count -= before - countDomain(this.idx, domain);
      return result;
    }

    override removeAllCookies(): Promise<void>;
    override removeAllCookies(callback: (error: Error | null) => void): void;
    override removeAllCookies(callback?: (error: Error | null) => void): Promise<void> | void {
      this.count = 0;
      return callback ? super.removeAllCookies(callback) : super.removeAllCookies();
    }
  };
}

/** tough-cookie and the store class built on it, loaded once per process at the first use. */
let loaded: { tough: ToughCookie; BoundedStore: ReturnType<typeof boundedStoreClass> } | undefined;
function toughCookie(): NonNullable<typeof loaded> {
  if (!loaded) {
    const tough = createRequire(import.meta.url)('tough-cookie') as ToughCookie;
    loaded = { tough, BoundedStore: boundedStoreClass(tough) };
  }
  return loaded;
}

/** One line of a cookies.txt that cannot be used. */
export class CookieFileError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/** A cookie as a Netscape cookies.txt line holds it. */
export interface NetscapeCookie {
  /** Without a leading dot. */
  domain: string;
  /** TRUE in the file: also sent to subdomains (not host-only). */
  includeSubdomains: boolean;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  /** Epoch seconds; 0 = a session cookie (kept for the whole crawl). */
  expires: number;
  name: string;
  value: string;
}

/**
 * Parses the cookies.txt format curl (`-c`), wget (`--save-cookies`) and the
 * browser export extensions write: one cookie per line, seven fields
 * separated by tabs (domain, include-subdomains, path, secure, expiry in
 * epoch seconds, name, value); `#` comments, except `#HttpOnly_` which
 * prefixes the domain of an HttpOnly cookie. Throws CookieFileError naming
 * `source` and the line.
 */
export function parseNetscapeCookies(text: string, source: string): NetscapeCookie[] {
  const out: NetscapeCookie[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    let line = raw;
    let httpOnly = false;
    if (line.startsWith('#HttpOnly_')) {
      httpOnly = true;
      line = line.slice('#HttpOnly_'.length);
    } else if (line.trim() === '' || line.startsWith('#')) return;
    const where = `${source}: line ${i + 1}`;
    const fields = line.split('\t');
    // curl writes an empty value as a trailing tab; some tools drop it.
    if (fields.length === 6) fields.push('');
    if (fields.length !== 7)
      throw new CookieFileError(`${where}: expected 7 tab-separated fields (domain, subdomains, path, secure, expiry, name, value), got ${fields.length}`);
    const [domain, sub, path, secure, expiry, name, value] = fields as [string, string, string, string, string, string, string];
    const flag = (text: string, what: string) => {
      const upper = text.toUpperCase();
      if (upper !== 'TRUE' && upper !== 'FALSE') throw new CookieFileError(`${where}: ${what} must be TRUE or FALSE, got ${JSON.stringify(text)}`);
      return upper === 'TRUE';
    };
    if (!/^\d+$/.test(expiry)) throw new CookieFileError(`${where}: expiry must be epoch seconds (0 for a session cookie), got ${JSON.stringify(expiry)}`);
    if (domain.replace(/^\./, '') === '' || name === '') throw new CookieFileError(`${where}: a cookie needs a domain and a name`);
    out.push({
      domain: domain.replace(/^\./, '').toLowerCase(),
      includeSubdomains: flag(sub, 'the include-subdomains field'),
      path: path === '' ? '/' : path,
      secure: flag(secure, 'the secure field'),
      httpOnly,
      expires: Number(expiry),
      name,
      value,
    });
  });
  return out;
}

export { parseCookiePair } from './request-syntax.js';

export interface CrawlCookieJarOptions {
  /** Epoch ms now (the crawl's clock), for expiry. */
  now(): number;
}

export class CrawlCookieJar {
  /**
   * The store and tough-cookie's jar over it, made at the first cookie. One
   * object, so a view made with Object.create (request-setup's read-only
   * jar) shares them with this jar.
   */
  private readonly held: { cookies?: InstanceType<NonNullable<typeof loaded>['BoundedStore']>; jar?: CookieJar } = {};

  constructor(private readonly opts: CrawlCookieJarOptions) {}

  /** tough-cookie's jar, made (and tough-cookie loaded) on the first call. */
  private get jar(): CookieJar {
    if (!this.held.jar) {
      const { tough, BoundedStore } = toughCookie();
      this.held.cookies = new BoundedStore();
      this.held.jar = new tough.CookieJar(this.held.cookies, {
        looseMode: false,
        rejectPublicSuffixes: true,
        allowSpecialUseDomain: true,
        // Secure cookies go over https only, localhost included (browsers count it as secure; a crawler has no reason to).
        allowSecureOnLocal: false,
      });
    }
    return this.held.jar;
  }

  /** Cookies held: 0 lets a request skip the jar (and tough-cookie) entirely. */
  private get size(): number {
    return this.held.cookies?.size ?? 0;
  }

  private date(): Date {
    return new Date(this.opts.now());
  }

  /**
   * `--cookie name=value`: a host-only cookie for each of `hosts` (the
   * seeds' hostnames), path "/", not Secure, no expiry: sent on every
   * request to exactly those hosts (any port, http and https, as cookies
   * ignore ports), never to their subdomains.
   */
  addForHosts(pairs: readonly { name: string; value: string }[], hosts: readonly string[]): void {
    for (const host of new Set(hosts)) {
      for (const { name, value } of pairs) {
        const cookie = new (toughCookie().tough.Cookie)({ key: name, value, path: '/', hostOnly: true });
        this.jar.setCookieSync(cookie, `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`, { now: this.date() });
      }
    }
  }

  /** Cookies from a cookies.txt; expired ones are left out. Returns how many were kept. */
  addNetscape(cookies: readonly NetscapeCookie[]): number {
    let kept = 0;
    const now = this.date();
    for (const c of cookies) {
      if (c.expires !== 0 && c.expires * 1000 <= now.getTime()) continue;
      const cookie = new (toughCookie().tough.Cookie)({
        key: c.name,
        value: c.value,
        domain: c.domain,
        path: c.path,
        secure: c.secure,
        httpOnly: c.httpOnly,
        hostOnly: !c.includeSubdomains,
        expires: c.expires === 0 ? 'Infinity' : new Date(c.expires * 1000),
      });
      try {
        const host = c.domain.includes(':') ? `[${c.domain}]` : c.domain;
        if (this.jar.setCookieSync(cookie, `https://${host}${c.path.startsWith('/') ? c.path : '/'}`, { now })) kept++;
      } catch {
        // A public-suffix domain or one tough-cookie refuses: not sent anywhere, as a browser would do.
      }
    }
    return kept;
  }

  /** Stores the Set-Cookie headers of a response to `url`; bad or refused ones are ignored, as browsers do. */
  store(url: URL, setCookie: readonly string[]): void {
    if (setCookie.length === 0) return;
    const now = this.date();
    for (const header of setCookie.slice(0, MAX_SET_COOKIE)) {
      if (header.length > MAX_COOKIE_BYTES) continue;
      try {
        this.jar.setCookieSync(header, url, { now, ignoreError: true });
      } catch {
        // ignoreError covers refusals; anything else is the same to us.
      }
    }
  }

  /**
   * The cookies a request to `url` carries, in RFC 6265 order. Expiry is
   * judged on the crawl's clock (tough-cookie would read the system's), and
   * expired cookies are dropped from the jar as they are met.
   */
  private matching(url: URL): Cookie[] {
    const now = this.opts.now();
    const all = this.jar.getCookiesSync(url, { expire: false, sort: true });
    const live: Cookie[] = [];
    for (const c of all) {
      const expiry = c.expiryTime();
      if (expiry !== undefined && expiry <= now) {
        if (c.domain && c.path) this.held.cookies!.removeCookie(c.domain, c.path, c.key, () => {});
      } else live.push(c);
    }
    return live;
  }

  /** The Cookie header for a request to `url`, or undefined when no cookie matches. */
  header(url: URL): string | undefined {
    if (this.size === 0) return undefined; // the jar is on by default: an empty one must cost nothing per request
    const cookies = this.matching(url);
    return cookies.length === 0 ? undefined : cookies.map((c) => c.cookieString()).join('; ');
  }

  /** The names of the cookies a request to `url` would carry (for `crawl check`: names only, never values). */
  names(url: URL): string[] {
    return this.size === 0 ? [] : this.matching(url).map((c) => c.key);
  }
}
