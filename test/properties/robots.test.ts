/**
 * Properties of robots.txt handling (src/robots/rules.ts): any body, however
 * decoded, any user agent, any URL → parseRobots, isAllowed and explain never
 * throw, explanations point at real lines, /robots.txt is always allowed, and
 * matching does not depend on how a URL spells its characters.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalPath } from '../../src/robots/rules.js';
import { capRobotsText, parseRobots } from '../../src/robots/rules.js';
import { anyString, anyUrlInput, decodedBytes, urlPart } from './arbitraries.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const LINE_BREAK = /\r\n|\r|\n/;

const agentValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('*', '* ', 'mybot', 'MyBot/1.0', 'MYBOT', 'mybot*', 'mybot images') },
  { weight: 2, arbitrary: fc.constantFrom('mybot-news', 'bot2000', 'other', '*bot', '', '<br />', 'mybot<br />', '\uFEFFmybot', 'crawl') },
  { weight: 1, arbitrary: anyString(10) },
);
const pattern = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '/',
      '',
      '/a',
      '/a/',
      '/a*',
      '/*a',
      '/*.pdf$',
      '/a$',
      '/%61',
      '/%2F',
      '/%2f',
      '/ä',
      '/%C3%A4',
      '/a?',
      '/a?x=1',
      '/*?',
      '/$',
      '/a$b',
      '*',
      '/%',
      '/a%2Fb',
      '/~',
      '/%7E',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('/', '/a', '/*', '/%'), urlPart(3), fc.constantFrom('', '', '$', '*')).map(([head, body, tail]) => head + body + tail),
  },
  { weight: 1, arbitrary: anyString(12) },
);
const agentLine = agentValue.map((v) => `User-agent: ${v}`);
const ruleLine = fc
  .tuple(
    fc.constantFrom('Allow', 'Disallow', 'Disallow', 'disallow', 'ALLOW', ' Disallow ', '\uFEFFDisallow'),
    fc.constantFrom(':', ': ', ': ', ' : ', ''),
    pattern,
  )
  .map(([k, c, v]) => `${k}${c}${v}`);
const otherLine = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('Crawl-delay: ', 'crawl-delay:'),
        fc.oneof(fc.constantFrom('1', '0.5', '.5', '-1', '1e3', 'x', '', '99999999999999999999'), fc.double().map(String)),
      )
      .map(([k, v]) => k + v),
  },
  { weight: 2, arbitrary: fc.constantFrom('Sitemap: http://x.test/s.xml', '<br />', 'lorem ipsum', '# comment', '', '', ':', 'Host: x', 'Noindex: /x') },
  { weight: 1, arbitrary: anyString(20) },
);
/** A group: user-agent lines, then rules, with other lines anywhere. */
const group = fc
  .tuple(
    fc.array(fc.oneof({ weight: 4, arbitrary: agentLine }, { weight: 1, arbitrary: otherLine }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.oneof({ weight: 4, arbitrary: ruleLine }, { weight: 1, arbitrary: otherLine }), { maxLength: 5 }),
  )
  .map(([agents, rules]) => [...agents, ...rules]);
const robotsShaped = fc
  .tuple(
    fc.array(fc.oneof({ weight: 4, arbitrary: group }, { weight: 1, arbitrary: fc.array(fc.oneof(ruleLine, otherLine), { maxLength: 3 }) }), { maxLength: 6 }),
    fc.constantFrom('\n', '\r\n', '\r'),
    fc.constantFrom('', '', '\uFEFF', '\uFFFD', '\u00EF\u00BB', '\u00EF'),
  )
  .map(([blocks, eol, bom]) => bom + blocks.flat().join(eol));
const robotsText = fc.oneof({ weight: 4, arbitrary: robotsShaped }, { weight: 1, arbitrary: decodedBytes(500) }, { weight: 1, arbitrary: anyString(200) });
const userAgent = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('MyBot/2.1 (+http://x)', 'mybot', 'other/1.0') },
  { weight: 1, arbitrary: fc.constantFrom('bot2000/1', 'crawl', '*', ' ', '') },
  { weight: 1, arbitrary: anyString(12) },
);
const target = fc.oneof(
  { weight: 2, arbitrary: anyUrlInput },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '/',
      '/a',
      '/a/b',
      '/ab',
      '/b',
      '/a.pdf',
      '/ä',
      '/%C3%A4',
      '/%c3%a4',
      '/a?x=1',
      '/a%2Fb',
      '/a/b?c',
      '/~',
      '/%7e',
      '/%61',
      'http://site.test/a',
      'https://other.test/a?',
    ),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('/', '/a', '/a/', '/ä', '/%', '/robots.txt', '/*', '/$'), urlPart(4)).map(([head, tail]) => head + tail) },
);

/** Other spellings of a path: escapes of unreserved characters, lowercase hex, raw non-ASCII for its escape. */
function respell(path: string, mask: boolean[]): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    const pick = mask[i % mask.length];
    if (c === '%' && /^[0-9A-Fa-f]{2}$/.test(path.slice(i + 1, i + 3))) {
      out += pick ? path.slice(i, i + 3).toLowerCase() : path.slice(i, i + 3);
      i += 2;
    } else if (/[A-Za-z0-9\-._~]/.test(c) && pick) out += `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
    else out += c;
  }
  return out;
}

describe('parseRobots', () => {
  it(
    'never throws; isAllowed and explain agree and never throw; explanations name real lines; /robots.txt is allowed',
    () => {
      fc.assert(
        fc.property(robotsText, userAgent, fc.array(target, { minLength: 1, maxLength: 5 }), (text, agent, urls) => {
          const rules = parseRobots('http://site.test/robots.txt', text, agent, 0, 1000);
          expect(rules.crawlDelayMs === null || (Number.isFinite(rules.crawlDelayMs) && rules.crawlDelayMs >= 0)).toBe(true);
          const lines = text.split(LINE_BREAK);
          for (const url of urls) {
            const why = rules.explain(url);
            expect(rules.isAllowed(url)).toBe(why.allowed);
            if (why.line !== null) {
              expect(why.rule).toMatch(/^(Allow|Disallow): /);
              expect(why.allowed).toBe(why.rule!.startsWith('Allow'));
              // The deciding line is a rule line of the file, with the value as written.
              expect(lines[why.line - 1]).toContain(why.rule!.slice(why.rule!.indexOf(': ') + 2));
              expect(why.group).toMatch(/^user-agent/i);
            } else if (why.rule !== null) {
              expect(why.rule).toBe('Allow: /robots.txt (implicit)');
            }
          }
          for (const url of ['/robots.txt', 'http://site.test/robots.txt', 'https://other.test:8080/robots.txt#x', '/%72obots.txt']) {
            expect(rules.isAllowed(url)).toBe(true);
          }
        }),
        fuzzParams(600),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'decides the same for every spelling of a path (RFC 9309 §2.2.2)',
    () => {
      fc.assert(
        fc.property(robotsShaped, userAgent, target, fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), (text, agent, url, mask) => {
          let path: string;
          try {
            const parsed = new URL(url, 'http://site.test/');
            if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return;
            path = parsed.pathname + parsed.search;
          } catch {
            return;
          }
          const rules = parseRobots('http://site.test/robots.txt', text, agent, 0, 1000);
          expect(rules.explain(`http://site.test${respell(path, mask)}`)).toEqual(rules.explain(`http://site.test${path}`));
        }),
        fuzzParams(500),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('a rule written as a URL path', () => {
  it(
    'matches that URL, in any spelling of the rule',
    () => {
      fc.assert(
        fc.property(target, fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), (url, mask) => {
          let parsed: URL;
          try {
            parsed = new URL(url, 'http://site.test/');
          } catch {
            return;
          }
          if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return;
          const path = parsed.pathname + parsed.search;
          const rules = parseRobots('http://site.test/robots.txt', `User-agent: *\nDisallow: ${respell(path, mask)}$`, 'mybot', 0, 1000);
          const why = rules.explain(parsed.href);
          if (why.rule === 'Allow: /robots.txt (implicit)') return;
          expect(why).toMatchObject({ allowed: false, line: 2 });
        }),
        fuzzParams(500),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('canonicalPath', () => {
  it(
    'is idempotent, for patterns and for URL paths, and writes only ASCII',
    () => {
      fc.assert(
        fc.property(fc.oneof(pattern, urlPart(10), anyString(30)), fc.constantFrom(...(['pattern', 'url'] as const)), (input, kind) => {
          const once = canonicalPath(input, kind);
          expect(canonicalPath(once, kind)).toBe(once);
          expect(/^[\x21-\x7e]*$/.test(once)).toBe(true);
        }),
        fuzzParams(800),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('capRobotsText', () => {
  it(
    'never throws, keeps at most maxBytes UTF-8 bytes, and cuts only at a line break',
    () => {
      fc.assert(
        fc.property(robotsText, fc.nat(600), fc.boolean(), (text, maxBytes, cutShort) => {
          const capped = capRobotsText(text, maxBytes, cutShort);
          expect(Buffer.byteLength(capped.text, 'utf8')).toBeLessThanOrEqual(maxBytes);
          if (!capped.truncated) {
            expect(capped.text).toBe(text);
            return;
          }
          // What was kept is a run of whole lines from the start (lone surrogates read as U+FFFD, as UTF-8 has no other way).
          const whole = Buffer.from(text, 'utf8').toString('utf8');
          const kept = Buffer.from(capped.text, 'utf8').toString('utf8');
          expect(whole.startsWith(kept)).toBe(true);
          expect(kept === '' || /[\r\n]$/.test(kept) || /^[\r\n]/.test(whole.slice(kept.length))).toBe(true);
        }),
        fuzzParams(400),
      );
    },
    FUZZ_TIMEOUT,
  );
});
