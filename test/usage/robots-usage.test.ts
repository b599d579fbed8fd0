/**
 * robots.txt's usage rules (Content-Usage, Content-Signal) as the crawl reads
 * them: a conformance table from the aipref attachment draft's example and
 * Cloudflare's managed robots.txt, the group and path rules they share with
 * Allow/Disallow, and properties: random files never throw, and a path a
 * matching rule states `n` for never comes out `y`.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadUsageParser, usageOf } from '../../src/usage/page-usage.js';
import { matchLength, mentionsUsage } from '../../src/usage/robots-usage.js';
import { parseRobots } from '../../src/robots/rules.js';

beforeAll(loadUsageParser);

const ROBOTS = 'http://site.test/robots.txt';
const rules = (text: string, ua = 'crawl/1.0') => parseRobots(ROBOTS, text, ua, Date.UTC(2026, 11, 7), 60_000);
/** The combined usage of `path` under `text`, as a page record would carry it. */
const usageAt = (text: string, path: string, ua?: string) =>
  usageOf({ headers: {}, tdmMeta: null, robotsDirectives: [], noaiFromHeader: false, robots: rules(text, ua).usage(path) })?.usage ?? {};

describe("the aipref attachment draft's example robots.txt", () => {
  const text = [
    'User-Agent: *',
    'Allow: /',
    'Disallow: /never/',
    'Content-Usage: / train-ai=n',
    'Content-Usage: /ai-ok/ train-ai=y',
    '',
    'User-Agent: ExampleBot',
    'Allow: /',
    'Content-Usage: / train-ai=y',
  ].join('\n');

  it.each([
    ['/test', { 'train-ai': 'n' }],
    ['/never/test', {}], // not crawled: no preference
    ['/ai-ok/test', { 'train-ai': 'y' }],
  ])('%s → %j for every other crawler', (path, usage) => {
    expect(usageAt(text, path)).toEqual(usage);
  });

  it('gives ExampleBot its own group', () => {
    expect(usageAt(text, '/test', 'ExampleBot/2.0')).toEqual({ 'train-ai': 'y' });
    expect(usageAt(text, '/never/test', 'ExampleBot/2.0')).toEqual({ 'train-ai': 'y' });
  });

  it('names the deciding line, the file and when it was fetched', () => {
    expect(rules(text).usage('/ai-ok/x')).toEqual([
      {
        source: 'robots',
        name: 'content-usage',
        value: '/ai-ok/ train-ai=y',
        line: 5,
        url: ROBOTS,
        fetchedAt: '2026-12-07T00:00:00.000Z',
        states: { 'train-ai': 'y' },
      },
    ]);
  });
});

describe("Content-Signal, as Cloudflare's managed robots.txt writes it", () => {
  const managed = [
    '# As a condition of accessing this website, you agree to abide by the following content signals: …',
    'User-agent: *',
    'Content-Signal: search=yes,ai-train=no,use=reference',
    'Allow: /',
    '',
    'User-agent: GPTBot',
    'Disallow: /',
  ].join('\n');

  it('states search y and train-ai n for the whole site, ignoring keys it does not know', () => {
    expect(usageAt(managed, '/any/page')).toEqual({ search: 'y', 'train-ai': 'n' });
    expect(rules(managed).usage('/x')[0]).toMatchObject({ source: 'robots', name: 'content-signal', line: 3 });
  });

  it('leaves a crawler with a group of its own to that group', () => {
    expect(usageAt(managed, '/any/page', 'GPTBot')).toEqual({});
  });

  it.each([
    ['Content-Signal: ai-input=no', { 'ai-input': 'n' }],
    ['Content-Signal: /docs/ ai-train=yes', { 'train-ai': 'y' }],
    ['Content-Signal: search=y', {}], // Content-Signal speaks yes/no
    ['Content-Usage: search=yes', {}], // Content-Usage speaks y/n
    ['Content-Signal: search=no, search=yes', { search: 'y' }], // a Dictionary: the last value of a key
    ['Content-Signal: ai-train=no;reason=x', { 'train-ai': 'n' }],
    ['Content-Signal: ai-train=no,,', {}], // does not parse: nothing stated
    ['Content-Signal:', {}],
  ])('%s → %j', (line, usage) => {
    expect(usageAt(`User-agent: *\n${line}\nAllow: /`, '/docs/a')).toEqual(usage);
  });
});

describe('paths and groups, as for Allow and Disallow', () => {
  it('takes the longest matching path of each kind; equally long conflicting rules both apply, so n wins', () => {
    const text = ['User-agent: *', 'Content-Usage: / train-ai=y, search=y', 'Content-Usage: /a/ train-ai=n', 'Content-Usage: /a/ train-ai=y'].join('\n');
    expect(usageAt(text, '/b')).toEqual({ 'train-ai': 'y', search: 'y' });
    // The longer /a/ rules decide for /a/x: the "/" rule's search=y no longer applies.
    expect(usageAt(text, '/a/x')).toEqual({ 'train-ai': 'n' });
  });

  it('matches * and a final $ and compares percent-encoded paths as robots.txt does', () => {
    const text = ['User-agent: *', 'Content-Usage: /*.pdf$ train-ai=n', 'Content-Usage: /caf%C3%A9/ search=n'].join('\n');
    expect(usageAt(text, '/x/report.pdf')).toEqual({ 'train-ai': 'n' });
    expect(usageAt(text, '/x/report.pdf?download=1')).toEqual({});
    expect(usageAt(text, '/café/menu')).toEqual({ search: 'n' });
  });

  it('reads a line that gives no path as the whole site', () => {
    expect(usageAt('User-agent: *\nContent-Usage: train-ai=n', '/deep/page')).toEqual({ 'train-ai': 'n' });
  });

  it('ends a run of user-agent lines as Allow does: the next user-agent line starts another group', () => {
    const text = ['User-agent: other', 'Content-Usage: / train-ai=y', 'User-agent: crawl', 'Disallow: /private'].join('\n');
    // Our group is "crawl" alone: the Content-Usage line belongs to "other"'s group.
    expect(usageAt(text, '/page')).toEqual({});
    expect(rules(text).isAllowed('/private/x')).toBe(false);
  });

  it('merges groups of our token as robots.txt does, and never widens what Disallow refuses', () => {
    const text = ['User-agent: crawl', 'Disallow: /x/', '', 'User-agent: crawl', 'Content-Usage: / train-ai=y'].join('\n');
    expect(usageAt(text, '/page')).toEqual({ 'train-ai': 'y' });
    expect(rules(text).usage('/x/page')).toEqual([]);
    expect(rules(text).isAllowed('/x/page')).toBe(false);
  });

  it('leaves Allow/Disallow, Crawl-delay and sitemaps as they were', () => {
    const text = ['User-agent: *', 'Content-Usage: / train-ai=n', 'Crawl-delay: 2', 'Disallow: /p', 'Sitemap: /s.xml'].join('\n');
    const r = rules(text);
    expect([r.isAllowed('/p'), r.isAllowed('/q'), r.crawlDelayMs, r.sitemaps]).toEqual([false, true, 2000, ['http://site.test/s.xml']]);
    expect(r.explain('/p')).toMatchObject({ rule: 'Disallow: /p', line: 4, group: 'User-agent: *' });
  });

  it('says which files have usage rules, whatever their case and spacing', () => {
    expect(['Content-Usage: x', 'content-signal :x', 'CONTENT-USAGE\t: y'].map(mentionsUsage)).toEqual([true, true, true]);
    expect(mentionsUsage('User-agent: *\nDisallow: /content-usage/')).toBe(false);
  });
});

describe('matchLength', () => {
  it.each([
    ['/', '/a', 1],
    ['/a', '/b', -1],
    ['/a*c', '/abc', 4],
    ['/a*c$', '/abcd', -1],
    ['/a*c$', '/abcc', 5],
    ['/*$', '/', 3],
    ['/a$', '/a', 3],
    ['/a$', '/ab', -1],
  ])('%s against %s: %i', (pattern, path, length) => {
    expect(matchLength(pattern, path)).toBe(length);
  });
});

describe('properties', () => {
  const token = fc.constantFrom('User-agent: *', 'User-agent: crawl', 'User-agent: other', 'Allow: /', 'Disallow: /a', '', '#x');
  const usageLine = fc
    .tuple(
      fc.constantFrom('Content-Usage', 'content-signal', 'Content-Usage ', 'CONTENT-SIGNAL'),
      fc.constantFrom('', '/ ', '/a ', '/a* ', '/b$ ', '/*'),
      fc.string({ maxLength: 30 }),
    )
    .map(([k, p, v]) => `${k}: ${p}${v}`);
  const file = fc.array(fc.oneof(token, usageLine, fc.string({ maxLength: 40 })), { maxLength: 12 }).map((lines) => lines.join('\n'));
  const path = fc.constantFrom('/', '/a', '/a/b', '/b', '/ab');

  it('never throws on any file or path', () => {
    fc.assert(
      fc.property(file, path, (text, p) => {
        usageAt(text, p);
      }),
      { numRuns: 300 },
    );
  });

  it('never yields y for a use that a rule of the longest match states n for', () => {
    fc.assert(
      fc.property(file, fc.constantFrom('/', '/a', '/a/b'), (text, p) => {
        const stated = rules(text).usage(p);
        const usage = usageAt(text, p);
        for (const s of stated) for (const [purpose, v] of Object.entries(s.states)) if (v === 'n') expect(usage[purpose as keyof typeof usage]).toBe('n');
      }),
      { numRuns: 300 },
    );
  });
});
