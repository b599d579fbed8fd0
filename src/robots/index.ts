/**
 * robots.txt (RFC 9309): the public face of the robots modules.
 *
 * - rules.ts turns a robots.txt body into a decision function for our
 *   product token (group choice, matching, Crawl-delay, size cap).
 * - cache.ts fetches robots.txt once per origin, follows redirects,
 *   classifies failures and caches the outcome.
 * - gate.ts sits between the store and the scheduler: go, skip or wait.
 * - types.ts holds the shapes all of them share.
 */

export type { RobotsExplanation, RobotsResponse, RobotsState } from './types.js';
export { RobotsCache, type RobotsCacheOptions } from './cache.js';
export { RobotsGate, robotsCutMessage, type GateVerdict } from './gate.js';
export { capRobotsText, parseRobots, productToken, MAX_ROBOTS_REDIRECTS, MIN_ROBOTS_BYTES } from './rules.js';
