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
 * - A step of Redis's clock: a sample that reads later than the best one
 *   allows (its offset, half its round trip and 1 ms a second of age) can
 *   only come from Redis's clock jumping ahead of this one, and one that
 *   reads earlier than it allows, from a jump back. Either replaces the
 *   best sample at once (an aged best would otherwise keep the old offset
 *   for as many seconds as the step had ms). Ahead, `stepHold` says how long
 *   a start granted in the next STEP_GUARD_MS waits: every start Redis
 *   logged before the jump now reads that much older, so a gap or window
 *   counted from one of them ends that much early. A jump back takes back as
 *   much of an earlier jump ahead.
 */

/** How long after a forward step of Redis's clock a granted start waits the step out (and the longest wait). */
export const STEP_GUARD_MS = 60_000;
/** Steps smaller than this are not acted on: the claim's margins (a few ms) cover them. */
const STEP_MIN_MS = 1;

/** What `startToRedis` needs of a claim: when Redis reserved it, and when its call was sent (local). */
export interface ClaimTimes {
  readonly reservedAt: number;
  readonly claimSentAt: number;
}

export class RedisClock {
  /** Redis time minus this worker's clock, from the sample with the shortest round trip. */
  private offset = 0;
  private best: { offset: number; rtt: number; at: number } | null = null;
  /** The last forward step seen: by how much, and when (this clock). */
  private step: { by: number; at: number } | null = null;

  /** Redis time minus this worker's clock, ms. */
  get offsetMs(): number {
    return this.offset;
  }

  sample(redisMs: number, t0: number, t1: number): void {
    if (!Number.isFinite(redisMs)) return;
    const rtt = Math.max(0, t1 - t0);
    const best = this.best;
    let stepped = false;
    if (best) {
      // Redis read its clock between t0 and t1; the best sample bounds its offset to ours within half
      // its round trip, give or take 1 ms a second of age (rate differences are far smaller).
      const slack = best.rtt / 2 + Math.max(0, t1 - best.at) / 1_000;
      const ahead = redisMs - (t1 + best.offset + slack);
      const behind = t0 + best.offset - slack - redisMs;
      if (ahead > STEP_MIN_MS) {
        this.step = { by: ahead, at: t1 };
        stepped = true;
      } else if (behind > STEP_MIN_MS) {
        // A jump back takes back as much of an earlier jump ahead: starts logged before both read older by the difference.
        const step = this.step;
        this.step = step !== null && step.by - behind > STEP_MIN_MS ? { by: step.by - behind, at: step.at } : null;
        stepped = true;
      }
    }
    if (!best || stepped || rtt <= best.rtt + (t1 - best.at) / 1_000) {
      this.best = { offset: redisMs - (t0 + t1) / 2, rtt, at: t1 };
      this.offset = this.best.offset;
    }
  }

  /**
   * How long a start Redis granted at `localMs` (this clock) waits before its
   * request: the last forward step of Redis's clock, when it was seen less
   * than STEP_GUARD_MS before, at most STEP_GUARD_MS; 0 otherwise.
   */
  stepHold(localMs: number): number {
    const step = this.step;
    if (step === null || localMs - step.at >= STEP_GUARD_MS) return 0;
    return Math.min(step.by, STEP_GUARD_MS);
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
