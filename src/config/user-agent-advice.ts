/**
 * Whether a User-Agent says who is crawling. The crawler best-practices
 * draft asks a crawler for a product token of its own and a URL explaining
 * it, so a site owner can tell crawlers apart, write robots.txt rules for
 * this one and reach its operator. A generic token ("Mozilla", "curl",
 * "bot") or no URL gets one warning line; it is never refused (a user may
 * have reasons), only said.
 */
import { productToken } from '../robots/rules.js';

/** Tokens that name a library, a browser or a kind of client, not a crawler. */
const GENERIC_TOKENS = new Set([
  'mozilla',
  'chrome',
  'safari',
  'opera',
  'curl',
  'wget',
  'python',
  'python-requests',
  'python-urllib',
  'aiohttp',
  'httpx',
  'go-http-client',
  'java',
  'okhttp',
  'apache-httpclient',
  'libwww-perl',
  'node',
  'node-fetch',
  'axios',
  'undici',
  'got',
  'bot',
  'crawler',
  'spider',
  'scraper',
  'robot',
  'test',
  'agent',
  'user-agent',
  'http',
  'client',
]);

const URL_IN_TEXT = /\bhttps?:\/\/[^\s;)]+/i;

/** One line of advice about `userAgent`, or undefined when it has a token of its own and a URL. */
export function userAgentAdvice(userAgent: string): string | undefined {
  const token = productToken(userAgent);
  const generic = GENERIC_TOKENS.has(token);
  const url = URL_IN_TEXT.test(userAgent);
  if (!generic && url) return undefined;
  const why = [...(generic ? [`its product token "${token}" is generic`] : []), ...(url ? [] : ['it has no URL explaining the crawler'])];
  return `User-Agent ${JSON.stringify(userAgent)}: ${why.join(' and ')}, so site owners cannot tell who is crawling; give a token of your own and a contact URL, like "mybot/1.0 (+https://example.com/bot)"`;
}
