/**
 * What a response states its content may be used for, as a conformance
 * table built from the specifications' own examples (the aipref vocabulary
 * and attachment drafts, TDMRep), and as properties: no input throws, and no
 * use stated `n` anywhere comes out `y`.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { combine, contentUsageStates, loadUsageParser, purposeOf, usageOf, type UsageInputs } from '../../src/usage/page-usage.js';
import { parseXRobotsTag } from '../../src/parse/parser.js';

beforeAll(loadUsageParser);

const page = (over: Partial<UsageInputs>): UsageInputs => ({ headers: {}, tdmMeta: null, robotsDirectives: [], noaiFromHeader: false, ...over });

describe('Content-Usage, as the aipref drafts read it', () => {
  it.each([
    // The vocabulary draft's examples.
    ['train-ai=y, search=n', { 'train-ai': 'y', search: 'n' }],
    // A key given twice counts once, its last value; a Boolean and a String are not Tokens: all unknown.
    ['train-ai=y, train-ai, search=n, search="n"', {}],
    // Parameters are ignored; only the last value of a key applies.
    ['train-ai;allow=n, train-ai=y', { 'train-ai': 'y' }],
    // A trailing ";" does not parse: everything unknown.
    ['train-ai;has;parameters="?";', {}],
    // Keys are case sensitive: an uppercase key is a parse failure.
    ['Train-AI=n', {}],
    ['ai-use=n', { 'ai-input': 'n' }],
    // Another vocabulary's name is not a key of this one; unknown keys are ignored.
    ['ai-train=n, foo=n, search=y', { search: 'y' }],
    ['train-ai=maybe', {}],
    ['train-ai=n,,', {}],
    ['', {}],
  ])('%j states %j', (value, states) => {
    expect(contentUsageStates(value)).toEqual(states);
  });

  it('never throws, and states y or n only for a use whose last value was that Token', () => {
    const key = fc.constantFrom('train-ai', 'search', 'ai-use', 'ai-train', 'other');
    const value = fc.constantFrom('y', 'n', '?1', '"n"', 'maybe', '1');
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 6 }), (members) => {
        const states = contentUsageStates(members.map(([k, v]) => `${k}=${v}`).join(', '));
        for (const [label, purpose] of [
          ['train-ai', 'train-ai'],
          ['search', 'search'],
          ['ai-use', 'ai-input'],
        ] as const) {
          const last = members.filter(([k]) => k === label).at(-1)?.[1];
          expect(states[purpose]).toBe(last === 'y' || last === 'n' ? last : undefined);
        }
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        contentUsageStates(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe("a page's usage, over every source", () => {
  it('TDMRep: tdm-reservation 1 reserves tdm, train-ai and ai-input; 0 states nothing', () => {
    expect(usageOf(page({ headers: { 'tdm-reservation': '1' } }))).toEqual({
      usage: { 'train-ai': 'n', 'ai-input': 'n', tdm: 'n' },
      usageSources: [{ source: 'header', name: 'tdm-reservation', value: '1', states: { tdm: 'n', 'train-ai': 'n', 'ai-input': 'n' } }],
    });
    expect(usageOf(page({ tdmMeta: '0' }))).toEqual({
      usage: {},
      usageSources: [{ source: 'meta', name: 'tdm-reservation', value: '0', states: {} }],
    });
  });

  it('combines as the vocabulary says: any n wins, then any y; each source is named', () => {
    const stated = usageOf(page({ headers: { 'content-usage': 'train-ai=y, search=y' }, tdmMeta: '1' }))!;
    expect(stated.usage).toEqual({ search: 'y', 'train-ai': 'n', 'ai-input': 'n', tdm: 'n' });
    expect(stated.usageSources.map((s) => `${s.source} ${s.name}`)).toEqual(['header content-usage', 'meta tdm-reservation']);
  });

  it('noai states n for train-ai and ai-input, from the header or the document', () => {
    expect(usageOf(page({ robotsDirectives: ['noindex', 'noai'], noaiFromHeader: true }))!.usageSources).toEqual([
      { source: 'header', name: 'x-robots-tag', value: 'noai', states: { 'train-ai': 'n', 'ai-input': 'n' } },
    ]);
    expect(usageOf(page({ robotsDirectives: ['noai'] }))!.usageSources[0]).toMatchObject({ source: 'meta', name: 'robots' });
  });

  it('is undefined when nothing was stated', () => {
    expect(usageOf(page({ robotsDirectives: ['noindex'] }))).toBeUndefined();
  });

  it('never yields y for a use any statement said n of', () => {
    const value = fc.constantFrom('y', 'n', undefined);
    const states = fc.record({ search: value, 'train-ai': value, 'ai-input': value, tdm: value }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.array(states, { maxLength: 5 }), (list) => {
        const clean = list.map((s) => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)));
        const out = combine(clean);
        for (const [purpose, v] of Object.entries(out)) {
          if (clean.some((s) => s[purpose] === 'n')) expect(v).toBe('n');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('names a use by its own name or another vocabulary’s', () => {
    expect(['ai-train', 'train-ai', 'ai-use', 'ai-input', 'search', 'tdm', 'SEARCH', 'index'].map(purposeOf)).toEqual([
      'train-ai',
      'train-ai',
      'ai-input',
      'ai-input',
      'search',
      'tdm',
      'search',
      undefined,
    ]);
  });
});

describe('robots directives addressed to us', () => {
  it('lists every known directive once, none as noindex and nofollow, and ignores other robots’ and valued ones', () => {
    expect(parseXRobotsTag(['noarchive, none', 'otherbot: noai', 'crawl: noai, max-snippet: 20, nosnippet'], 'crawl').all).toEqual([
      'noarchive',
      'noindex',
      'nofollow',
      'noai',
      'nosnippet',
    ]);
  });
});

describe('the declared purpose', () => {
  it('reads a list or the flag’s comma-separated string, each use once by its own name; an unknown name names the known ones', async () => {
    const { validateConfig, ConfigError } = await import('../../src/config/settings.js');
    expect(validateConfig({ purpose: ['ai-train', 'search', 'train-ai'] }, 'c.json').purpose).toEqual(['train-ai', 'search']);
    expect(validateConfig({ purpose: 'ai-use, tdm' }, 'c.json').purpose).toEqual(['ai-input', 'tdm']);
    expect(validateConfig({}, 'c.json').purpose).toEqual([]);
    expect(() => validateConfig({ purpose: ['search', 'indexing'] }, 'c.json')).toThrow(ConfigError);
    expect(() => validateConfig({ purpose: ['search', 'indexing'] }, 'c.json')).toThrow(
      'c.json: purpose[1]: unknown use "indexing"; known: search, train-ai (or ai-train), ai-input (or ai-use), tdm',
    );
  });
});
