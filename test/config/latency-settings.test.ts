/**
 * `latencyBackoff` as a policy field: on by default, `--no-latency-backoff`
 * turns the default off, and a `domains` entry's own value wins either way.
 */
import { describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { problemsOf } from '../support/config-problems.js';

describe('latencyBackoff settings', () => {
  it('is on for every host by default', () => {
    expect(buildSettings(undefined, {}).policyFor('example.com').latencyBackoff).toBe(true);
  });

  it('--no-latency-backoff turns it off for every host but an entry that says true', () => {
    const file = validateConfig({ domains: { 'fragile.example': { latencyBackoff: true } } });
    const settings = buildSettings(file, { latencyBackoff: false });
    expect(settings.policyFor('example.com').latencyBackoff).toBe(false);
    expect(settings.policyFor('fragile.example').latencyBackoff).toBe(true);
  });

  it('an entry can turn it off for its hosts only', () => {
    const settings = buildSettings(validateConfig({ domains: { '*.cdn.example': { latencyBackoff: false } } }), {});
    expect(settings.policyFor('img.cdn.example').latencyBackoff).toBe(false);
    expect(settings.policyFor('example.com').latencyBackoff).toBe(true);
  });

  it('a value that is not a boolean is one line naming the field', () => {
    expect(problemsOf(() => validateConfig({ defaults: { latencyBackoff: 'yes' } }, 'c.json'))).toEqual([
      expect.stringMatching(/^c\.json: defaults\.latencyBackoff: /),
    ]);
  });
});
