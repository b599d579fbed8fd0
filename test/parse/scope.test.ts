import { describe, expect, it } from 'vitest';
import { ScopeOptionsError, createScope, explainScope, type ScopeOptions } from '../../src/parse/scope.js';
import { compileUserPattern as p } from '../../src/config/user-pattern.js';

const seeds = ['http://www.example.com/start', 'http://127.0.0.1:4000/'];

function verdict(options: Partial<ScopeOptions>, url: string) {
  return createScope({ scope: 'host', seeds, ...options })(url);
}

describe('createScope: scope', () => {
  const cases: Array<[ScopeOptions['scope'], string, boolean]> = [
    ['host', 'http://www.example.com/other', true],
    ['host', 'https://www.example.com/secure', true], // scheme switch, same server
    ['host', 'HTTP://WWW.EXAMPLE.COM:80/x', true],
    ['host', 'http://example.com/', false],
    ['host', 'http://shop.example.com/', false],
    ['host', 'http://www.example.com:8080/', false],
    ['host', 'http://127.0.0.1:4000/page', true],
    ['host', 'http://127.0.0.1:4001/page', false], // another local server is another host
    ['host', 'http://other.org/', false],
    ['domain', 'http://example.com/', true],
    ['domain', 'http://a.b.example.com/', true],
    ['domain', 'https://shop.example.com:8443/', true], // domain scope ignores ports
    ['domain', 'http://example.org/', false],
    ['domain', 'http://example.com.evil.org/', false],
    ['domain', 'http://127.0.0.1:4001/', true],
    ['domain', 'http://127.0.0.2:4000/', false],
    ['any', 'http://anything.example.net/', true],
    ['any', 'https://127.0.0.9:1/', true],
  ];

  it.each(cases)('--scope %s: %s → %s', (scope, url, ok) => {
    expect(verdict({ scope }, url).ok).toBe(ok);
  });

  it('treats co.uk as a public suffix in domain scope', () => {
    const check = createScope({ scope: 'domain', seeds: ['https://www.shop.co.uk/'] });
    expect(check('https://blog.shop.co.uk/')).toEqual({ ok: true });
    expect(check('https://other.co.uk/')).toEqual({
      ok: false,
      reason: 'scope',
      detail: 'domain other.co.uk is not a seed domain (--scope domain)',
    });
  });

  it('names the host (with port) that is out of scope', () => {
    expect(verdict({}, 'http://127.0.0.1:4001/x')).toEqual({
      ok: false,
      reason: 'scope',
      detail: 'host 127.0.0.1:4001 is not a seed host (--scope host)',
    });
  });

  it('puts nothing in host scope when there are no seeds', () => {
    expect(createScope({ scope: 'host', seeds: [] })('http://www.example.com/').ok).toBe(false);
  });
});

describe('createScope: rejections before scope', () => {
  it.each([
    ['ftp://www.example.com/file', 'scheme ftp: is not crawled (http and https only)'],
    ['mailto:me@example.com', 'scheme mailto: is not crawled (http and https only)'],
    ['not a url', '"not a url" is not an absolute URL'],
  ])('%s is unsupported-scheme', (url, detail) => {
    expect(verdict({}, url)).toEqual({ ok: false, reason: 'unsupported-scheme', detail });
  });

  it('measures the canonical URL against maxUrlLength', () => {
    const base = 'http://www.example.com/'; // 23 characters
    const options = { maxUrlLength: 30 };
    expect(verdict(options, base + 'a'.repeat(7)).ok).toBe(true);
    expect(verdict(options, base + 'a'.repeat(8))).toEqual({
      ok: false,
      reason: 'url-too-long',
      detail: '31 characters, over the limit of 30',
    });
    // Decoding %7E shortens it back under the limit.
    expect(verdict(options, base + '%7E'.repeat(7)).ok).toBe(true);
  });

  it('reports length before scope', () => {
    expect(verdict({ maxUrlLength: 10 }, 'http://other.org/x')).toMatchObject({ reason: 'url-too-long' });
  });
});

describe('createScope: include / exclude', () => {
  const cases: Array<[Partial<ScopeOptions>, string, true | string]> = [
    [{ include: [p('\\/blog\\/')] }, 'http://www.example.com/blog/1', true],
    [{ include: [p('\\/blog\\/')] }, 'http://www.example.com/shop/1', 'matches no --include pattern (/\\/blog\\//)'],
    [{ include: [p('\\/blog\\/'), p('/news/')] }, 'http://www.example.com/news/1', true],
    [{ exclude: [p('(?i)\\.pdf$')] }, 'http://www.example.com/a.PDF', 'matches --exclude /(?i)\\.pdf$/'],
    [{ exclude: [p('(?i)\\.pdf$')] }, 'http://www.example.com/a.html', true],
    [{ include: [p('blog')], exclude: [p('draft')] }, 'http://www.example.com/blog/draft', 'matches --exclude /draft/'],
    // Patterns see the canonical form: fragment gone, %7E decoded, host lowercased.
    [{ exclude: [p('#')] }, 'http://www.example.com/a#frag', true],
    [{ include: [p('/~me/')] }, 'http://www.example.com/%7Eme/', true],
    [{ include: [p('^http://www\\.example\\.com/')] }, 'HTTP://WWW.Example.com/x', true],
  ];

  it.each(cases)('%o: %s → %s', (options, url, expected) => {
    const result = verdict(options, url);
    if (expected === true) expect(result).toEqual({ ok: true });
    else expect(result).toEqual({ ok: false, reason: 'filtered', detail: expected });
  });

  it('gives the same answer every time (a pattern keeps no state between tests)', () => {
    const check = createScope({ scope: 'any', seeds: [], include: [p('blog')], exclude: [p('draft')] });
    for (let i = 0; i < 4; i++) {
      expect(check('http://example.com/blog/1').ok).toBe(true);
    }
  });

  it('checks scope before filters', () => {
    expect(verdict({ include: [p('nothing')] }, 'http://other.org/')).toMatchObject({ reason: 'scope' });
  });
});

describe('createScope: options', () => {
  it('rejects a seed that is not an http(s) URL', () => {
    expect(() => createScope({ scope: 'host', seeds: ['ftp://example.com/'] })).toThrow(
      new ScopeOptionsError('Expected every seed to be an absolute http(s) URL, got "ftp://example.com/"'),
    );
    try {
      createScope({ scope: 'host', seeds: ['nope'] });
      expect.unreachable();
    } catch (error) {
      expect((error as ScopeOptionsError).code).toBe('INVALID_SCOPE_OPTIONS');
    }
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects maxUrlLength %s', (maxUrlLength) => {
    expect(() => createScope({ scope: 'any', seeds: [], maxUrlLength })).toThrow(
      `Expected \`maxUrlLength\` to be a positive integer or Infinity, got ${maxUrlLength}`,
    );
  });
});

describe('explainScope', () => {
  const cases: Array<[Partial<ScopeOptions>, string, string]> = [
    [{}, 'http://www.example.com/a', 'in scope: same host as seed http://www.example.com/start'],
    [{}, 'http://b.com/', 'out of scope: host b.com is not a seed host (--scope host)'],
    [{ scope: 'domain' }, 'https://shop.example.com/', 'in scope: same registrable domain (example.com) as seed http://www.example.com/start'],
    [{ scope: 'domain' }, 'http://b.com/', 'out of scope: domain b.com is not a seed domain (--scope domain)'],
    [{ scope: 'any' }, 'http://b.com/', 'in scope: --scope any admits every http(s) URL'],
    [
      { include: [p('/a')], exclude: [p('\\.pdf$')] },
      'http://www.example.com/a',
      'in scope: same host as seed http://www.example.com/start; matches --include /\\/a/; matches no --exclude pattern',
    ],
    [{ exclude: [p('/a')] }, 'http://www.example.com/a', 'filtered out: matches --exclude /\\/a/'],
    [{ maxUrlLength: 20 }, 'http://www.example.com/a', 'URL too long: 24 characters, over the limit of 20'],
    [{}, 'javascript:alert(1)', 'not crawlable: scheme javascript: is not crawled (http and https only)'],
  ];

  it.each(cases)('%o: %s', (options, url, expected) => {
    expect(explainScope({ scope: 'host', seeds, ...options }, url)).toBe(expected);
  });
});
