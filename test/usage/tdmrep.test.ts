/** tdmrep.json (W3C TDMRep) as the crawl reads it: the rules it keeps, how a location matches, and what the first matching rule states. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { locationMatches, parseTdmrep, tdmrepUsage, type TdmrepFile } from '../../src/usage/tdmrep.js';

const file = (rules: TdmrepFile['rules']): TdmrepFile => ({ url: 'http://site.test/.well-known/tdmrep.json', fetchedAt: Date.UTC(2026, 11, 7), rules });

describe('parseTdmrep', () => {
  it("keeps the protocol's rules in order and drops what is not one", () => {
    const text = JSON.stringify([
      { location: '/images/*', 'tdm-reservation': 1, 'tdm-policy': 'https://site.test/policy.json' },
      { location: '*', 'tdm-reservation': 0 },
      { location: '/x', 'tdm-reservation': '1' }, // a string is not 0 or 1
      { 'tdm-reservation': 1 }, // no location
      null,
      'text',
    ]);
    expect(parseTdmrep(text)).toEqual([
      { location: '/images/*', reservation: 1, policy: 'https://site.test/policy.json' },
      { location: '*', reservation: 0 },
    ]);
  });

  it.each(['', 'not json', '{"location": "*", "tdm-reservation": 1}', '42', 'null'])('reads %j as no rules', (text) => {
    expect(parseTdmrep(text)).toEqual([]);
  });

  it('never throws on any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => void parseTdmrep(text)),
      { numRuns: 300 },
    );
  });
});

describe('locationMatches', () => {
  it.each([
    ['*', '/anything?q=1', true],
    ['/images/*', '/images/a.png', true],
    ['/images/*', '/image', false],
    ['/a', '/a', true],
    ['/a', '/ab', false],
    ['/*.pdf', '/docs/x.pdf', true],
    ['/*.pdf', '/docs/x.pdf?v=2', false],
    ['/a*b*c', '/aXbYc', true],
    ['/a*b*c', '/acb', false],
    ['/ab*ba', '/aba', false],
  ])('%s against %s: %s', (location, path, matches) => {
    expect(locationMatches(location, path)).toBe(matches);
  });
});

describe('tdmrepUsage', () => {
  it('states n for tdm, train-ai and ai-input where the first matching rule reserves the rights, naming the rule and the file', () => {
    const f = file([
      { location: '/open/*', reservation: 0 },
      { location: '*', reservation: 1, policy: 'https://site.test/p' },
    ]);
    expect(tdmrepUsage(f, 'http://site.test/open/page')).toEqual([
      expect.objectContaining({ source: 'tdmrep', name: 'tdm-reservation', value: '{"location":"/open/*","tdm-reservation":0}', states: {} }),
    ]);
    expect(tdmrepUsage(f, 'http://site.test/news/1')).toEqual([
      {
        source: 'tdmrep',
        name: 'tdm-reservation',
        value: '{"location":"*","tdm-reservation":1,"tdm-policy":"https://site.test/p"}',
        url: 'http://site.test/.well-known/tdmrep.json',
        fetchedAt: '2026-12-07T00:00:00.000Z',
        states: { tdm: 'n', 'train-ai': 'n', 'ai-input': 'n' },
      },
    ]);
  });

  it('states nothing without a file, a rule or a match', () => {
    expect(tdmrepUsage(undefined, 'http://site.test/')).toEqual([]);
    expect(tdmrepUsage(file([]), 'http://site.test/')).toEqual([]);
    expect(tdmrepUsage(file([{ location: '/a', reservation: 1 }]), 'http://site.test/b')).toEqual([]);
  });
});
