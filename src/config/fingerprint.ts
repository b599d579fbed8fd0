/**
 * A short digest of the settings that decide WHICH URLs a crawl visits
 * (scope, filters, depth, trap defences, host key, robots, user agent). A
 * store keeps it with the crawl so a resume or another worker can tell it
 * runs under a different crawl definition. Rates, timeouts and caps (maxPages, maxQueued,
 * maxPagesPerHost) are left out on purpose: slowing a host down or raising a
 * cap on resume is a normal thing to do.
 */
import { createHash } from 'node:crypto';
import type { CrawlSettings } from './settings-types.js';

export function settingsFingerprint(s: CrawlSettings): string {
  const shape = {
    userAgent: s.userAgent,
    hostKey: s.hostKey,
    scope: s.scope,
    include: s.include.map(String),
    exclude: s.exclude.map(String),
    maxDepth: s.maxDepth === Infinity ? null : s.maxDepth,
    traps: s.traps,
    maxUrlLength: s.maxUrlLength,
    maxRedirects: s.maxRedirects,
    robots: s.robots.enabled,
    respectNofollow: s.respectNofollow,
    // Only when on, so crawls kept before the option existed keep their fingerprint.
    ...(s.followCanonical && { followCanonical: true }),
    // Only when on, so crawls kept before the option existed keep their fingerprint.
    ...(s.checkLinks && { checkLinks: true }),
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}
