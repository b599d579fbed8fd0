import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/settings.js';
import { problemsOf } from '../support/config-problems.js';

// The policy fields (config-policy.ts): `defaults`, `domains` entries, and the
// two-field rules checked on each entry as merged with defaults.
describe('validateConfig: defaults and domains', () => {
  it('normalises the server-feedback fields, at the edges of their ranges', () => {
    const config = validateConfig({
      defaults: {
        retries: 20,
        retryStatuses: [],
        backoff: { base: '250ms', cap: '2m' },
        throttleStatuses: [100, 599],
        maxRetryAfter: '24h',
        throttleRetries: 0,
        adaptive: false,
        hostFailures: { pause: 1, giveUp: 1 },
      },
    });
    expect(config.defaults).toMatchObject({
      retries: 20,
      retryStatuses: [],
      backoffBaseMs: 250,
      backoffCapMs: 120_000,
      throttleStatuses: [100, 599],
      maxRetryAfterMs: 86_400_000,
      throttleRetries: 0,
      adaptive: false,
      hostFailurePause: 1,
      hostFailureGiveUp: 1,
    });
  });

  it('fills the unset half of defaults.backoff and defaults.hostFailures from the built-in defaults', () => {
    expect(validateConfig({ defaults: { backoff: { cap: '5m' }, hostFailures: { giveUp: 30 } } }).defaults).toMatchObject({
      backoffBaseMs: 1000,
      backoffCapMs: 300_000,
      hostFailurePause: 5,
      hostFailureGiveUp: 30,
    });
  });

  it('keeps only what an entry sets, with backoff and hostFailures flattened', () => {
    const config = validateConfig({
      domains: { 'a.com': { backoff: { cap: '5m' }, hostFailures: { giveUp: 30 }, adaptive: false, retries: 0 }, 'b.com': { backoff: {} } },
    });
    // toStrictEqual: an unset field must be absent, not present as undefined.
    expect(config.domains).toStrictEqual({
      'a.com': { backoffCapMs: 300_000, hostFailureGiveUp: 30, adaptive: false, retries: 0 },
      'b.com': {},
    });
  });

  const WHY_STATUS = 'a status either throttles the host or is retried as a failure, not both';
  const WHY_FAILURES = 'the host would be given up before it is ever paused';

  it.each<[unknown, string]>([
    [{ defaults: { retries: 21 } }, 'c.json: defaults.retries: too large (max 20), got 21'],
    [{ defaults: { retries: -1 } }, 'c.json: defaults.retries: expected an integer from 0 to 20, got -1'],
    [{ domains: { 'a.com': { retries: 1.5 } } }, 'c.json: domains["a.com"].retries: expected an integer from 0 to 20, got 1.5'],
    [{ defaults: { retryStatuses: '500' } }, 'c.json: defaults.retryStatuses: expected a list of HTTP statuses like [500, 502], got "500"'],
    [{ defaults: { retryStatuses: [500, 99] } }, 'c.json: defaults.retryStatuses[1]: expected an HTTP status from 100 to 599, got 99'],
    [{ defaults: { retryStatuses: [600] } }, 'c.json: defaults.retryStatuses[0]: expected an HTTP status from 100 to 599, got 600'],
    [{ defaults: { retryStatuses: ['500'] } }, 'c.json: defaults.retryStatuses[0]: expected an HTTP status from 100 to 599, got "500"'],
    [{ defaults: { throttleStatuses: [429, 503, 429] } }, 'c.json: defaults.throttleStatuses[2]: 429 is already listed'],
    [{ defaults: { backoff: '1s' } }, 'c.json: defaults.backoff: expected an object, got "1s"'],
    [{ defaults: { backoff: { base: '0s' } } }, 'c.json: defaults.backoff.base: expected a duration greater than zero, got "0s"'],
    [{ domains: { 'a.com': { backoff: { cap: 'soon' } } } }, 'c.json: domains["a.com"].backoff.cap: expected a duration like "30s" or "500ms", got "soon"'],
    [{ defaults: { maxRetryAfter: '25h' } }, 'c.json: defaults.maxRetryAfter: expected a duration of at most 24h, got "25h"'],
    [{ domains: { 'a.com': { maxRetryAfter: 0 } } }, 'c.json: domains["a.com"].maxRetryAfter: expected a duration greater than zero, got 0'],
    [{ defaults: { throttleRetries: 1001 } }, 'c.json: defaults.throttleRetries: too large (max 1000), got 1001'],
    [{ defaults: { adaptive: 'yes' } }, 'c.json: defaults.adaptive: expected true or false, got "yes"'],
    [{ defaults: { hostFailures: 5 } }, 'c.json: defaults.hostFailures: expected an object, got 5'],
    [{ domains: { 'a.com': { hostFailures: { pause: 0 } } } }, 'c.json: domains["a.com"].hostFailures.pause: expected an integer >= 1, got 0'],
    // rules between two fields, within one object…
    [{ defaults: { backoff: { base: '5s', cap: '2s' } } }, 'c.json: defaults.backoff: base "5s" is longer than cap "2s"'],
    [{ defaults: { backoff: { base: '2m' } } }, 'c.json: defaults.backoff: base "2m" is longer than cap "1m" (the default)'],
    [{ defaults: { hostFailures: { pause: 20 } } }, `c.json: defaults.hostFailures: pause 20 is more than giveUp 15 (the default): ${WHY_FAILURES}`],
    [{ defaults: { throttleStatuses: [429, 500] } }, `c.json: defaults.throttleStatuses: 500 is also in retryStatuses (the default): ${WHY_STATUS}`],
    // blamed on the list the user wrote, not on the default it collides with (it blamed throttleStatuses)
    [{ defaults: { retryStatuses: [429] } }, `c.json: defaults.retryStatuses: 429 is also in throttleStatuses (the default): ${WHY_STATUS}`],
    [{ defaults: { retryStatuses: [503], throttleStatuses: [503] } }, `c.json: defaults.throttleStatuses: 503 is also in retryStatuses: ${WHY_STATUS}`],
    [
      { domains: { 'a.com': { retryStatuses: [503], throttleStatuses: [503] } } },
      `c.json: domains["a.com"].throttleStatuses: 503 is also in retryStatuses: ${WHY_STATUS}`,
    ],
    // …and across an entry and the defaults it falls back to
    [
      { domains: { 'a.com': { retryStatuses: [500, 503] } } },
      `c.json: domains["a.com"].retryStatuses: 503 is also in throttleStatuses (from defaults): ${WHY_STATUS}`,
    ],
    [
      { defaults: { backoff: { cap: '10s' } }, domains: { 'a.com': { backoff: { base: '30s' } } } },
      'c.json: domains["a.com"].backoff: base "30s" is longer than cap "10s" (from defaults)',
    ],
    [
      { domains: { 'a.com': { hostFailures: { pause: 16 } } } },
      `c.json: domains["a.com"].hostFailures: pause 16 is more than giveUp 15 (from defaults): ${WHY_FAILURES}`,
    ],
    // unknown keys inside the sub-objects get hints too
    [{ defaults: { backoff: { bsae: '1s' } } }, 'c.json: defaults.backoff.bsae: unknown key (did you mean "base"?)'],
    [{ domains: { 'a.com': { hostFailures: { giveup: 3 } } } }, 'c.json: domains["a.com"].hostFailures.giveup: unknown key (did you mean "giveUp"?)'],
    [{ retries: 3 }, 'c.json: retries: unknown key ("retries" belongs in "defaults" or a "domains" entry)'],
  ])('rejects server-feedback setting %j', (raw, problem) => {
    expect(problemsOf(() => validateConfig(raw, 'c.json'))).toEqual([problem]);
  });

  it('accepts an entry that moves a status from one list to the other', () => {
    const config = validateConfig({ domains: { 'a.com': { retryStatuses: [500, 503], throttleStatuses: [429] } } });
    expect(config.domains['a.com']).toEqual({ retryStatuses: [500, 503], throttleStatuses: [429] });
  });

  it('reports two-field rules along with every other problem, at the key as written', () => {
    const problems = problemsOf(() =>
      validateConfig(
        {
          concurrency: 0,
          defaults: { backoff: { base: '2m' } },
          domains: {
            'Bücher.de': { retryStatuses: [503] },
            'ok.com': { hostFailures: { pause: 40 } },
            // broken on its own: the fields that parse are still checked, in the same round
            'broken.com': { rate: 'fast', backoff: { base: '2h' } },
          },
        },
        'c.json',
      ),
    );
    expect(problems.sort()).toEqual(
      [
        'c.json: concurrency: expected an integer from 1 to 1000, got 0',
        'c.json: defaults.backoff: base "2m" is longer than cap "1m" (the default)',
        'c.json: domains["broken.com"].backoff: base "2h" is longer than cap "1m" (from defaults)',
        `c.json: domains["Bücher.de"].retryStatuses: 503 is also in throttleStatuses (from defaults): ${WHY_STATUS}`,
        `c.json: domains["ok.com"].hostFailures: pause 40 is more than giveUp 15 (from defaults): ${WHY_FAILURES}`,
        'c.json: domains["broken.com"].rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"',
      ].sort(),
    );
  });

  it('checks entries against the fields of broken defaults that parse, and not against those that failed', () => {
    const problems = problemsOf(() =>
      validateConfig(
        {
          defaults: { rate: 'fast', backoff: { cap: '1s' }, hostFailures: { giveUp: 'x' } },
          domains: {
            // wrong against defaults.backoff.cap, which parsed: reported with the rest (it waited for a second round)
            'a.com': { backoff: { base: '2s' } },
            'b.com': { backoff: { base: '3s', cap: '2s' } },
            // against defaults.hostFailures.giveUp, which failed: not judged
            'c.com': { hostFailures: { pause: 40 } },
          },
        },
        'c.json',
      ),
    );
    expect(problems.sort()).toEqual(
      [
        'c.json: defaults.rate: expected a rate like "2/s", "30/min" or "500ms", got "fast"',
        'c.json: defaults.hostFailures.giveUp: expected an integer >= 1, got "x"',
        'c.json: domains["a.com"].backoff: base "2s" is longer than cap "1s" (from defaults)',
        'c.json: domains["b.com"].backoff: base "3s" is longer than cap "2s"',
      ].sort(),
    );
  });

  it('flags two keys that name the same host', () => {
    expect(problemsOf(() => validateConfig({ domains: { 'a.com': {}, 'A.com.': {} } }, 'c.json'))).toEqual([
      'c.json: domains["A.com."]: names the same host as domains["a.com"]',
    ]);
  });
});
