/**
 * Run settings shared by the property tests.
 *
 * - `npm test`: a few hundred runs per property from a fixed seed, so the
 *   suite is deterministic and all properties together take about two seconds.
 * - A long run: `npx vitest run test/properties --mode fuzz` (100,000 runs per
 *   property, about three minutes) or `FUZZ_RUNS=<n> npx vitest run
 *   test/properties` (n runs). Each long run starts from a fresh seed, and
 *   no test times out.
 * - A failure prints fast-check's `seed` and `path` and the shrunk
 *   counterexample. Replay exactly that case with
 *   `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run test/properties/<file> -t '<test name>'`
 *   (the path belongs to one property, hence `-t`).
 */
import fc from 'fast-check';

function positiveInteger(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}: expected a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

function integer(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`${name}: expected an integer (a seed fast-check printed), got ${JSON.stringify(text)}`);
  return n;
}

const FUZZ_MODE_RUNS = 100_000;
// `vitest --mode fuzz` (cross-platform, unlike an environment variable in an npm script).
const fuzzMode = (import.meta as { env?: { MODE?: string } }).env?.MODE === 'fuzz';
const runs = positiveInteger('FUZZ_RUNS') ?? (fuzzMode ? FUZZ_MODE_RUNS : undefined);
const seed = integer('FUZZ_SEED');
const path = process.env.FUZZ_PATH || undefined;

/** True for a long run (FUZZ_RUNS or `--mode fuzz`). */
export const fuzzing = runs !== undefined;

// Any fixed 32-bit number will do; it only has to stay put between runs of `npm test`.
const SUITE_SEED = 0x5eed_2026;

/**
 * fast-check parameters for one property: `quickRuns` runs in the normal
 * suite, more in a long run; FUZZ_SEED / FUZZ_PATH replay a reported failure.
 */
export function fuzzParams<T = unknown>(quickRuns: number): fc.Parameters<T> {
  const chosenSeed = seed ?? (fuzzing ? undefined : SUITE_SEED);
  return {
    numRuns: runs ?? quickRuns,
    ...(chosenSeed !== undefined ? { seed: chosenSeed } : {}),
    ...(path !== undefined ? { path } : {}),
  };
}

/** The timeout for one property test: vitest's own in the suite, a day in a long run. */
export const FUZZ_TIMEOUT = fuzzing ? 24 * 60 * 60 * 1000 : undefined;
