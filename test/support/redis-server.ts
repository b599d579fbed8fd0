/**
 * A real, throwaway redis-server for one test file (fixtures/redis-server.js:
 * a free port of 127.0.0.1, no persistence, a temp dir removed after).
 * `redisServerMissing` tells a suite to skip (with its reason) when the
 * binary is not installed — except under .ci/run, which installs it and sets
 * CRAWL_REQUIRE_SERVICES=1: there nothing is skipped, and a missing server
 * makes startRedisServer fail with a clear message.
 */
import { redisServerInstalled, startRedisServer as start, type RedisServer } from '../../fixtures/redis-server.js';

export type { RedisServer };

const installed = redisServerInstalled();

/** Why the Redis tests cannot run here, or undefined when they can (or must). */
export const redisServerMissing: string | undefined =
  !installed && process.env.CRAWL_REQUIRE_SERVICES !== '1'
    ? 'redis-server is not installed (apt-get install redis-server; .ci/run does it): the Redis store tests are skipped'
    : undefined;

export async function startRedisServer(timeoutMs = 5_000, options: { args?: string[] } = {}): Promise<RedisServer> {
  if (!installed) throw new Error('redis-server is not installed, and CRAWL_REQUIRE_SERVICES=1 says the Redis tests must run: apt-get install redis-server');
  return start(timeoutMs, options);
}
