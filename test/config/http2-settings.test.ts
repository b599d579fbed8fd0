/**
 * `http2` as a policy field: `--http2` sets the default, a `domains` entry's
 * own value wins either way, and `settings.http2` says whether any host
 * offers it (the fetcher sets nothing up otherwise).
 */
import { describe, expect, it } from 'vitest';
import { buildSettings, validateConfig } from '../../src/config/settings.js';
import { problemsOf } from '../support/config-problems.js';

describe('http2 settings', () => {
  it('is off everywhere by default', () => {
    const settings = buildSettings(undefined, {});
    expect(settings.http2).toBe(false);
    expect(settings.policyFor('example.com').http2).toBe(false);
  });

  it('--http2 turns it on for every host but an entry that says false', () => {
    const file = validateConfig({ domains: { 'old.example': { http2: false } } });
    const settings = buildSettings(file, { http2: true });
    expect(settings.http2).toBe(true);
    expect(settings.policyFor('example.com').http2).toBe(true);
    expect(settings.policyFor('old.example').http2).toBe(false);
  });

  it('one domains entry is enough to set it up, for its hosts only', () => {
    const settings = buildSettings(validateConfig({ domains: { '*.cdn.example': { http2: true } } }), {});
    expect(settings.http2).toBe(true);
    expect(settings.policyFor('img.cdn.example').http2).toBe(true);
    expect(settings.policyFor('example.com').http2).toBe(false);
  });

  it('a value that is not a boolean is one line naming the field', () => {
    expect(problemsOf(() => validateConfig({ defaults: { http2: 'yes' } }, 'c.json'))).toEqual([expect.stringMatching(/^c\.json: defaults\.http2: /)]);
  });
});
