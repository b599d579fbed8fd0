import { describe, expect, it } from 'vitest';
import { InvalidUrlError, canonicalize, hostKeyOf, hostnameOf, isPlainCanonical, originOf, registrableDomain, resolveLink } from '../../src/parse/url.js';

describe('canonicalize', () => {
  const cases: Array<[string, string | null, string]> = [
    ['HTTP://Example.COM:80/a/./b/../c?%7euser#x', 'http://example.com/a/c?~user', 'the brief example'],
    ['http://example.com', 'http://example.com/', 'empty path becomes /'],
    ['https://example.com:443/x', 'https://example.com/x', 'default https port dropped'],
    ['http://example.com:443/x', 'http://example.com:443/x', '443 is not the http default'],
    ['https://example.com:80/', 'https://example.com:80/', '80 is not the https default'],
    ['http://example.com:8080/', 'http://example.com:8080/', 'non-default port kept'],
    ['http://example.com/a#frag', 'http://example.com/a', 'fragment dropped'],
    ['http://example.com/a?#frag', 'http://example.com/a', 'lone ? and fragment dropped'],
    ['http://example.com/a?', 'http://example.com/a', 'lone trailing ? dropped'],
    ['http://example.com/?b=2&a=1', 'http://example.com/?b=2&a=1', 'query order kept'],
    ['http://example.com/?a=&b', 'http://example.com/?a=&b', 'empty query values kept'],
    ['http://example.com/%7Euser', 'http://example.com/~user', '%7E decoded to ~'],
    ['http://example.com/%41%62%2D%2E%5F%30', 'http://example.com/Ab-._0', 'all unreserved escapes decoded'],
    ['http://example.com/a%2Fb', 'http://example.com/a%2Fb', '%2F must not be decoded'],
    ['http://example.com/a%2fb', 'http://example.com/a%2Fb', 'lowercase hex uppercased'],
    ['http://example.com/?q=a%2fb%3d', 'http://example.com/?q=a%2Fb%3D', 'query hex uppercased, reserved kept'],
    ['http://example.com/?q=%7e%41', 'http://example.com/?q=~A', 'query unreserved decoded'],
    ['http://example.com/%e2%82%ac', 'http://example.com/%E2%82%AC', 'non-ASCII escapes kept, uppercased'],
    ['http://example.com/€', 'http://example.com/%E2%82%AC', 'raw non-ASCII encoded like its escape'],
    ['http://example.com/100%', 'http://example.com/100%', 'stray % left alone'],
    ['http://example.com/a/b/../../../c', 'http://example.com/c', 'dot segments cannot climb above root'],
    ['http://example.com/a/%2e%2E/b', 'http://example.com/b', 'encoded dot segments resolved'],
    ['http://example.com/a/./b/.', 'http://example.com/a/b/', 'single dots removed'],
    ['http://example.com/a b', 'http://example.com/a%20b', 'space encoded'],
    ['http://EXAMPLE.com./', 'http://example.com./', 'trailing-dot host kept (Host header differs)'],
    ['http://bücher.example/', 'http://xn--bcher-kva.example/', 'IDN to punycode'],
    ['http://BÜCHER.example/', 'http://xn--bcher-kva.example/', 'IDN case folded'],
    ['http://[2001:DB8:0:0:0:0:0:1]:8080/', 'http://[2001:db8::1]:8080/', 'IPv6 compressed and lowercased'],
    ['http://[::1]:80/', 'http://[::1]/', 'IPv6 default port dropped'],
    ['http://0x7f.1/', 'http://127.0.0.1/', 'IPv4 shorthand normalised'],
    ['http://user:pw@example.com/', 'http://user:pw@example.com/', 'userinfo kept'],
    ['  http://example.com/  ', 'http://example.com/', 'surrounding spaces ignored'],
    ['ftp://example.com/', null, 'ftp rejected'],
    ['mailto:a@example.com', null, 'mailto rejected'],
    ['file:///etc/passwd', null, 'file rejected'],
    ['/relative', null, 'relative rejected'],
    ['http://', null, 'no host'],
    ['', null, 'empty'],
  ];

  it.each(cases)('%s → %s (%s)', (input, expected) => {
    expect(canonicalize(input)).toBe(expected);
  });

  it('is idempotent', () => {
    for (const [input] of cases) {
      const once = canonicalize(input);
      if (once !== null) expect(canonicalize(once)).toBe(once);
    }
  });

  // Found by test/properties/url.test.ts: decoding "%41" to "A" right after a
  // stray "%a" made "/%aA", a new escape (the byte 0xAA) that the next
  // canonicalize decoded again, so the canonical form named another resource
  // and was not its own canonical form.
  it.each([
    ['http://x.test/%a%41', 'http://x.test/%a%41'],
    ['http://x.test/%%41%42', 'http://x.test/%%41B'],
    ['http://x.test/%2%35', 'http://x.test/%2%35'],
    ['http://x.test/?q=%e%31&r=%%46', 'http://x.test/?q=%e%31&r=%%46'],
    ['http://x.test/%a%7e', 'http://x.test/%a~'],
    ['http://x.test/100%%41', 'http://x.test/100%%41'],
  ])('regression: an escape decoded after a stray "%" does not form a new escape (%s)', (input, expected) => {
    expect(canonicalize(input)).toBe(expected);
    expect(canonicalize(expected)).toBe(expected);
  });

  it('accepts a URL object without mutating it', () => {
    const url = new URL('http://Example.com/%7e#f');
    expect(canonicalize(url)).toBe('http://example.com/~');
    expect(url.href).toBe('http://example.com/%7e#f');
  });

  it('gives two spellings of one resource one key', () => {
    const spellings = ['http://example.com/~a/b?x=1', 'HTTP://EXAMPLE.COM:80/%7Ea/./c/../b?x=1#top', 'http://example.com/%7ea/b?x=1'];
    expect(new Set(spellings.map((s) => canonicalize(s))).size).toBe(1);
  });
});

describe('resolveLink', () => {
  const page = 'http://example.com/dir/page.html?x=1';
  const cases: Array<[string, string, string | null, string]> = [
    ['other.html', page, 'http://example.com/dir/other.html', 'relative file'],
    ['../up', page, 'http://example.com/up', 'parent directory'],
    ['/abs', page, 'http://example.com/abs', 'root-relative'],
    ['?y=2', page, 'http://example.com/dir/page.html?y=2', 'query only'],
    ['#top', page, 'http://example.com/dir/page.html?x=1', 'fragment only is the page itself'],
    ['', page, 'http://example.com/dir/page.html?x=1', 'empty href is the page itself'],
    ['//cdn.example.org/a', page, 'http://cdn.example.org/a', 'protocol-relative keeps http'],
    ['//cdn.example.org/a', 'https://example.com/', 'https://cdn.example.org/a', 'protocol-relative keeps https'],
    ['https://Other.COM:443/x#y', page, 'https://other.com/x', 'absolute is canonicalized'],
    ['  \n\t/spaced \r\n', page, 'http://example.com/spaced', 'HTML whitespace trimmed'],
    ['/a\nb', page, 'http://example.com/ab', 'newlines inside removed as browsers do'],
    ['javascript:void(0)', page, null, 'javascript'],
    ['  JavaScript:alert(1)', page, null, 'javascript with case and whitespace'],
    ['mailto:a@example.com', page, null, 'mailto'],
    ['tel:+123', page, null, 'tel'],
    ['data:text/html,hi', page, null, 'data'],
    ['ftp://example.com/f', page, null, 'ftp'],
    ['http://[bad', page, null, 'unparsable'],
    ['x', 'not a url', null, 'invalid base'],
    ['x', 'mailto:a@b.c', null, 'non-http base'],
  ];

  it.each(cases)('%j against %s → %s (%s)', (href, base, expected) => {
    expect(resolveLink(href, base)).toBe(expected);
  });
});

describe('registrableDomain', () => {
  const cases: Array<[string, string]> = [
    ['www.example.com', 'example.com'],
    ['a.b.example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['www.example.co.uk', 'example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['WWW.Example.COM', 'example.com'],
    ['alice.github.io', 'alice.github.io'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['localhost', 'localhost'],
    ['news.localhost', 'news.localhost'],
    ['a.shop.localhost', 'shop.localhost'],
    ['intranet', 'intranet'],
    ['co.uk', 'co.uk'],
  ];

  it.each(cases)('%s → %s', (hostname, expected) => {
    expect(registrableDomain(hostname)).toBe(expected);
  });

  // Found by test/properties/url.test.ts: "http://a.0../" parses, and its
  // domain key was "a.0", which is no hostname ("http://a.0/" throws), so the
  // key named no host a URL could be built on.
  it.each([
    ['a.0..', 'a.0..'],
    ['b.a.0x1f..', 'b.a.0x1f..'],
    ['x.a.1e..', 'a.1e'],
  ])('regression: a domain ending in a number is not a key, the hostname is (%s → %s)', (hostname, expected) => {
    expect(registrableDomain(hostname)).toBe(expected);
    expect(new URL(`http://${expected}/`).hostname).toBe(expected);
    expect(hostKeyOf(`http://${hostname}:8080/`, 'domain')).toBe(`${expected}:8080`);
  });
});

describe('hostKeyOf', () => {
  const cases: Array<[string, 'host' | 'domain', string]> = [
    ['http://Example.COM/a', 'host', 'example.com'],
    ['https://example.com/', 'host', 'example.com'],
    ['http://example.com:80/', 'host', 'example.com'],
    ['https://example.com:443/', 'host', 'example.com'],
    ['http://example.com:8080/', 'host', 'example.com:8080'],
    ['http://www.example.com/', 'host', 'www.example.com'],
    ['http://127.0.0.1:41234/', 'host', '127.0.0.1:41234'],
    ['http://127.0.0.1:41235/', 'host', '127.0.0.1:41235'],
    ['http://[::1]:3000/', 'host', '[::1]:3000'],
    ['http://bücher.example/', 'host', 'xn--bcher-kva.example'],
    ['http://www.example.com/', 'domain', 'example.com'],
    ['http://a.b.example.co.uk/', 'domain', 'example.co.uk'],
    ['http://shop.example.co.uk:8443/', 'domain', 'example.co.uk:8443'],
    ['http://127.0.0.1:41234/', 'domain', '127.0.0.1:41234'],
    ['http://a.shop.localhost:3000/', 'domain', 'shop.localhost:3000'],
    ['http://localhost/', 'domain', 'localhost'],
  ];

  it.each(cases)('%s (%s) → %s', (url, mode, expected) => {
    expect(hostKeyOf(url, mode)).toBe(expected);
    expect(hostKeyOf(new URL(url), mode)).toBe(expected);
  });

  it('keeps two local servers on different ports apart', () => {
    expect(hostKeyOf('http://127.0.0.1:1001/', 'host')).not.toBe(hostKeyOf('http://127.0.0.1:1002/', 'host'));
  });

  it('throws a coded error for a non-URL', () => {
    expect(() => hostKeyOf('not a url', 'host')).toThrow(InvalidUrlError);
    try {
      hostKeyOf('/relative', 'host');
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidUrlError).code).toBe('INVALID_URL');
      expect((error as Error).message).toBe('Expected an absolute URL, got "/relative"');
    }
  });

  it('does not throw for a non-http absolute URL', () => {
    expect(hostKeyOf('ftp://files.example.com:2121/x', 'host')).toBe('files.example.com:2121');
  });
});

describe('originOf', () => {
  it.each([
    ['http://Example.com:80/a?b#c', 'http://example.com'],
    ['https://example.com:8443/robots.txt', 'https://example.com:8443'],
    ['http://[::1]:3000/x', 'http://[::1]:3000'],
  ])('%s → %s', (url, expected) => {
    expect(originOf(url)).toBe(expected);
  });

  it('rejects non-http URLs with a coded error', () => {
    expect(() => originOf('ftp://example.com/')).toThrow(/Expected an absolute http\(s\) URL, got "ftp:\/\/example.com\/"/);
  });
});

// The string fast paths must give exactly what the URL parser gives. A URL
// object always takes the parser, so it is the reference.
describe('fast paths agree with the URL parser', () => {
  const parse = (s: string): URL | null => {
    try {
      return new URL(s);
    } catch {
      return null;
    }
  };
  const outcome = (fn: () => string): string => {
    try {
      return fn();
    } catch (error) {
      return `throws ${(error as { code?: string }).code}`;
    }
  };
  const isHttp = (u: URL) => u.protocol === 'http:' || u.protocol === 'https:';

  /** Every string form against the parser's answer for the same input. */
  function expectAgreement(input: string): void {
    const url = parse(input);
    expect(canonicalize(input), `canonicalize ${JSON.stringify(input)}`).toBe(url ? canonicalize(url) : null);
    expect(hostnameOf(input), `hostnameOf ${JSON.stringify(input)}`).toBe(url ? url.hostname : null);
    for (const mode of ['host', 'domain'] as const) {
      expect(
        outcome(() => hostKeyOf(input, mode)),
        `hostKeyOf ${JSON.stringify(input)} ${mode}`,
      ).toBe(url ? hostKeyOf(url, mode) : 'throws INVALID_URL');
    }
    expect(
      outcome(() => originOf(input)),
      `originOf ${JSON.stringify(input)}`,
    ).toBe(url && isHttp(url) ? url.origin : 'throws INVALID_URL');
    if (isPlainCanonical(input)) expect(url && canonicalize(url), `plain ${JSON.stringify(input)}`).toBe(input);
  }

  // [input, whether the fast path may take it whole (isPlainCanonical)]
  const tricky: Array<[string, boolean]> = [
    ['http://example.com/', true],
    ['https://example.com:8443/a?b=c', true],
    ['http://h1.localhost:41234/p/17', true],
    ['http://localhost:3000/x', true],
    ['http://example.com:443/', true], // not the http default
    ['https://example.com:80/', true], // not the https default
    ['http://example.com:65535/', true],
    ['http://example.com//a', true],
    ['http://example.com/a?b', true],
    ['http://example.com/a:b@c', true],
    ['http://example.com/~a!$&()*+,;=', true],
    ['http://-a-.com/', true],
    ['http://a.b.c.d.e.f/g', true],
    ['http://example.com:80/', false], // default port
    ['https://example.com:443/', false],
    ['http://example.com:080/', false], // leading zero
    ['http://example.com:0/', false],
    ['http://example.com:/', false], // empty port
    ['http://example.com:65536/', false], // out of range: the parser rejects it
    ['https://example.com:99999/', false],
    ['http://Example.com/', false], // uppercase host
    ['HTTP://example.com/', false], // uppercase scheme
    ['http://example.com./', false], // trailing dot
    ['http://a..b/', false],
    ['http://.a/', false],
    ['http:///example.com/', false], // extra slash: the parser still finds the host
    ['http://xn--bcher-kva.example/', false], // punycode
    ['http://a.xn--p1ai/', false],
    ['http://xn--/', false], // invalid punycode: the parser rejects it
    ['http://bücher.example/', false], // IDN
    ['http://BÜCHER.example/', false],
    ['http://[::1]:8080/', false], // IPv6
    ['http://[2001:DB8::1]/', false],
    ['http://127.0.0.1:3000/', false], // IPv4
    ['http://0x7f.1/', false],
    ['http://a.123/', false], // ends in a number: the parser rejects it
    ['http://a.0x1f/', false],
    ['http://a.1com/', false],
    ['http://user:pw@example.com/', false], // userinfo
    ['http://user@example.com/', false],
    ['http://example.com', false], // no path
    ['http://example.com?x', false],
    ['http://example.com#x', false],
    ['http://example.com\\x', false],
    ['http://exa\tmple.com/', false], // the parser strips tabs and newlines anywhere
    ['http://example.com/a\nb', false],
    [' http://example.com/', false],
    ['http://example.com/ ', false],
    ['http://ex_ample.com/', false],
    ['http://example.com/a/./b', false], // dot segments
    ['http://example.com/a/../b', false],
    ['http://example.com/a/.', false],
    ['http://example.com/..', false],
    ['http://example.com/a/..?x', false],
    ['http://example.com/a?', false], // lone "?"
    ["http://example.com/a?b'c", false], // "'" is encoded in special queries
    ['http://example.com/%41', false],
    ['http://example.com/a%2Fb', false],
    ['http://example.com/a b', false],
    ['http://example.com/a#f', false],
    ['http://example.com/a^b', false],
    ['http://example.com/a|b', false],
    ['http://example.com/a{b}', false],
    ['http://example.com/a`b', false],
    ['http://example.com/€', false],
    ['ftp://example.com/', false],
    ['mailto:a@example.com', false],
    ['not a url', false],
    ['', false],
  ];

  it.each(tricky)('%j (plain: %s)', (input, plain) => {
    expect(isPlainCanonical(input)).toBe(plain);
    expectAgreement(input);
  });

  it('agrees on 10,000 generated URLs, a good share of them on the fast path', () => {
    let seed = 0x2545f491;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const text = (alphabet: string, max: number): string => {
      let out = '';
      for (let n = Math.floor(random() * (max + 1)); n > 0; n--) out += pick([...alphabet]);
      return out;
    };
    const schemes = ['http://', 'https://', 'HTTP://', 'http:/', 'http:///', 'ftp://', 'https:'];
    const ports = ['', ':80', ':443', ':8080', ':0', ':080', ':65535', ':65536', ':', ':1x'];
    const tricky = "AZ.-_:@[]%/?#'\\\t ü^~!09xn";
    let plain = 0;
    const total = 10_000;
    for (let i = 0; i < total; i++) {
      // A plain canonical URL, then (mostly) one character replaced or inserted, or one part swapped for a tricky one.
      const labels = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick([...'abcxyz']) + text('abcxyz-09', 5));
      let parts = [pick(['http://', 'https://']), labels.join('.'), pick(['', '', ':8080', ':65535']), `/${text('ab/~:@!', 8)}`];
      if (random() < 0.5) parts = [random() < 0.8 ? parts[0] : pick(schemes), parts[1], random() < 0.7 ? parts[2] : pick(ports), parts[3]];
      let input = parts.join('');
      if (random() < 0.6) {
        const at = Math.floor(random() * (input.length + 1));
        const insert = random() < 0.5 ? 0 : 1;
        input = input.slice(0, at) + pick([...tricky]) + input.slice(at + 1 - insert);
      }
      if (isPlainCanonical(input)) plain++;
      expectAgreement(input);
    }
    expect(plain).toBeGreaterThan(total / 5);
  });
});
