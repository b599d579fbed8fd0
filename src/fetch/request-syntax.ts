/**
 * What the request options accept (a proxy URL, a `name=value` cookie),
 * checked by the config without loading the transport: proxy.ts and
 * cookie-jar.ts, which re-export these, load undici and tough-cookie, and
 * importing the library (which validates options) must not pay for either.
 */

/** Why `text` is not a usable proxy URL, or undefined. http:// and https:// proxies only (CONNECT and absolute-form). */
export function proxyUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `expected a proxy URL like "http://proxy.example:3128", got ${JSON.stringify(text.replace(/\/\/[^/@]*@/, '//***@'))}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `expected an http:// or https:// proxy URL, got a ${url.protocol} one`;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
    return 'a proxy URL names a host and port only, without a path or query';
  return undefined;
}

/** `name=value` as `--cookie` takes it, or the problem in words. */
export function parseCookiePair(text: string): { name: string; value: string } | { problem: string } {
  const eq = text.indexOf('=');
  const name = eq < 0 ? '' : text.slice(0, eq).trim();
  const value = eq < 0 ? '' : text.slice(eq + 1).trim();
  if (name === '') return { problem: `expected "name=value", got ${JSON.stringify(text)}` };
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return { problem: `${JSON.stringify(name)} is not a valid cookie name` };
  if (!/^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/.test(value.replace(/^"(.*)"$/, '$1'))) {
    return { problem: `the value of cookie ${name} may not contain spaces, quotes, commas, semicolons, backslashes or control characters` };
  }
  return { name, value };
}
