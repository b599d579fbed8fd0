/**
 * Between this worker's clock and Redis's (`TIME`). Politeness never
 * depends on it: the claim script decides on Redis's clock, and a worker
 * that asks early is only told to wait again. It serves to turn Redis's
 * "not before" into a local wake-up time, and local instants (a request's
 * start, a pause) into Redis times for the shared host state.
 *
 * Contract:
 * - `sample(redisMs, t0, t1)`: a Redis time read by a call sent at `t0` and
 *   answered at `t1` (local). The sample with the shortest round trip wins;
 *   an older best one counts as 1 ms worse per second of age, so a better
 *   recent sample replaces it.
 * - `toRedis(local)` = local + offset; `toLocal(redis)` errs late by half
 *   the best round trip (an answer "not before T" is not asked again early).
 * - `startToRedis(claim, local)`: a request start as Redis time, never
 *   earlier than it really was (see the method).
 */

/** What `startToRedis` needs of a claim: when Redis reserved it, and when its call was sent (local). */
export interface ClaimTimes {
  readonly reservedAt: number;
  readonly claimSentAt: number;
}

export class RedisClock {
  /** Redis time minus this worker's clock, from the sample with the shortest round trip. */
  private offset = 0;
  private best: { offset: number; rtt: number; at: number } | null = null;

  /** Redis time minus this worker's clock, ms. */
  get offsetMs(): number {
    return this.offset;
  }

  sample(redisMs: number, t0: number, t1: number): void {
    if (!Number.isFinite(redisMs)) return;
    const rtt = Math.max(0, t1 - t0);
    const best = this.best;
    if (!best || rtt <= best.rtt + (t1 - best.at) / 1_000) {
      this.best = { offset: redisMs - (t0 + t1) / 2, rtt, at: t1 };
      this.offset = this.best.offset;
    }
  }

  /** This worker's clock time for a Redis time, erring late by half the best round trip (so an answer "not before T" is not asked again too early). */
  toLocal(redisMs: number): number {
    return redisMs - this.offset + (this.best ? this.best.rtt / 2 : 0);
  }

  /** The Redis time for a time on this worker's clock. */
  toRedis(localMs: number): number {
    return localMs + this.offset;
  }

  /**
   * A request start on this worker's clock as Redis time, never earlier than
   * it really was: the claim script ran after its call was sent (`claimSentAt`),
   * so a start `d` ms after sending is at most `reservedAt + d` on Redis's
   * clock. Unlike the measured offset, this bound holds however slow the
   * round trips were (an offset sampled under load may be off by half of one).
   */
  startToRedis(claim: ClaimTimes | undefined, localMs: number): number {
    if (claim && localMs >= claim.claimSentAt) return Math.max(claim.reservedAt + (localMs - claim.claimSentAt), this.toRedis(localMs));
    return this.toRedis(localMs);
  }
}
