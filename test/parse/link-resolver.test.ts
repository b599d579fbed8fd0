import { describe, expect, it } from 'vitest';
import { linkResolver } from '../../src/parse/link-resolver.js';
import * as parser from '../../src/parse/parser.js';
import { canonicalize, resolveLink } from '../../src/parse/url.js';
import { seededRandom } from '../support/seeded-random.js';

describe('linkResolver (the shortcut for simple hrefs)', () => {
  const bases = [
    'http://example.com/dir/page.html',
    'https://www.example.co.uk:8443/a/b/?q=1',
    'http://user:pa%40ss@h1.localhost:33701/p/5',
    'http://127.0.0.1:8080/',
    'https://xn--bcher-kva.example/x',
    'http://example.com/dir/page?next=/a/b',
  ];

  it('is still importable from parser.ts, where bench/memory-probe.js looks for it', () => {
    expect(parser.linkResolver).toBe(linkResolver);
  });

  it('is given canonical bases', () => {
    for (const base of bases) expect(canonicalize(base)).toBe(base);
  });

  it.each([
    ['/p/12', 'http://example.com/p/12'],
    ['/a/b?x=1&y=2', 'http://example.com/a/b?x=1&y=2'],
    ['/a#frag', 'http://example.com/a'],
    ['http://h2.localhost:33701/p/5', 'http://h2.localhost:33701/p/5'],
    ['/a/./b', 'http://example.com/a/b'],
    ['/a/../b', 'http://example.com/b'],
    ['/?', 'http://example.com/'],
    ['//cdn.example.com/x', 'http://cdn.example.com/x'],
    ['http://example.com:80/x', 'http://example.com/x'],
    ['http://EXAMPLE.com/x', 'http://example.com/x'],
    ['http://0x7f.1/x', 'http://127.0.0.1/x'],
    ['http://a.b.123/x', null],
    ['/caf%c3%a9', 'http://example.com/caf%C3%A9'],
    ['#top', 'http://example.com/dir/page.html'],
    ['', 'http://example.com/dir/page.html'],
    ['b.html?x=1', 'http://example.com/dir/b.html?x=1'],
    ['sub/c.html', 'http://example.com/dir/sub/c.html'],
    ['?q=1', 'http://example.com/dir/page.html?q=1'],
    ['./b.html', 'http://example.com/dir/b.html'],
    ['../up.html?x=1', 'http://example.com/up.html?x=1'],
    ['../../../../top', 'http://example.com/top'],
    ['./../a/./b', 'http://example.com/a/b'],
    ['.hidden', 'http://example.com/dir/.hidden'],
    ['..', 'http://example.com/'],
    ['x:y', null],
    ['mailto:a@example.com', null],
  ])('resolves %j like resolveLink', (href, expected) => {
    expect(linkResolver(bases[0])(href)).toBe(expected);
    expect(linkResolver(bases[0])(href)).toBe(resolveLink(href, bases[0]));
  });

  it('agrees with resolveLink on fuzzed hrefs against assorted bases', () => {
    const random = seededRandom(11);
    const pieces = [
      '/',
      '/',
      '/',
      '//',
      'a',
      'Z',
      'p',
      '0',
      '9',
      '.',
      '..',
      './',
      '../',
      '?',
      '?',
      '#',
      '%',
      '%2e',
      '%2F',
      '%41',
      ':',
      '@',
      '\\',
      ' ',
      '\t',
      '\n',
      "'",
      '"',
      '<',
      '`',
      '{',
      '^',
      '|',
      'http://',
      'https://',
      'HTTP://',
      'http:',
      'xn--',
      'xn--bcher-kva',
      '0x',
      '1',
      '255',
      '.1',
      'example.com',
      'h1.localhost',
      ':80',
      ':443',
      ':8080',
      ':65535',
      ':65536',
      ':0',
      ':08080',
      '-',
      '~',
      '!',
      '$',
      '&',
      '(',
      ')',
      '*',
      '+',
      ',',
      ';',
      '=',
      'é',
      '\u0000',
      '\u00a0',
      '😀',
      'x=1',
      'mailto:',
      'javascript:',
    ];
    for (let round = 0; round < 20_000; round++) {
      let href = random() < 0.5 ? '/' : random() < 0.5 ? 'http://' : '';
      const length = Math.floor(random() * 10);
      for (let i = 0; i < length; i++) href += pieces[Math.floor(random() * pieces.length)];
      const base = bases[round % bases.length];
      expect([href, linkResolver(base)(href)]).toEqual([href, resolveLink(href, base)]);
    }
  });
});
