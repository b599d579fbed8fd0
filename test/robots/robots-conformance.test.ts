/**
 * RFC 9309 conformance of parseRobots on the inputs the hostile web sends:
 * broken byte-order marks, junk lines inside groups, odd user-agent lines,
 * percent-encoding and non-ASCII paths. Where the RFC leaves room, the
 * comment says which reading we took and why; google/robotstxt (written by
 * the RFC's authors) is the tie-breaker unless it contradicts the RFC's text.
 */
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/fetch/charset.js';
import { parseRobots } from '../../src/robots/rules.js';

const UA = 'MyBot/2.1 (+http://x)';
const ROBOTS = 'http://site.test/robots.txt';

function rules(text: string, userAgent = UA) {
  return parseRobots(ROBOTS, text, userAgent, 0, 60_000);
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const FILE = 'User-agent: mybot\nDisallow: /private\n';

/** The body as the fetcher hands it over (src/fetch/charset.ts: BOM sniffing, then the Content-Type charset). */
function fetched(bytes: number[], headerCharset: string | null): string {
  return decodeBody(Uint8Array.from(bytes), { headerCharset, html: false }).text;
}

/** The file as `crawl check --robots-file` reads it: `readFile(path, 'utf8')`, which keeps a BOM and replaces bad bytes. */
function readAsUtf8(bytes: number[]): string {
  return Buffer.from(bytes).toString('utf8');
}

describe('byte-order marks', () => {
  const decodings: [string, (bytes: number[]) => string][] = [
    ['fetched, no charset', (b) => fetched(b, null)],
    ['fetched as utf-8', (b) => fetched(b, 'utf-8')],
    ['fetched as iso-8859-1', (b) => fetched(b, 'iso-8859-1')],
    ['read by --robots-file', readAsUtf8],
  ];
  const prefixes: [string, number[]][] = [
    ['a whole BOM', UTF8_BOM],
    ['the first two bytes of a BOM', UTF8_BOM.slice(0, 2)],
    ['the first byte of a BOM', UTF8_BOM.slice(0, 1)],
  ];
  const cases = decodings.flatMap(([how, decode]) => prefixes.map(([what, prefix]) => [what, how, decode, prefix] as const));

  it.each(cases)('skips %s at the start of the file (%s)', (_what, _how, decode, prefix) => {
    const text = decode([...prefix, ...Buffer.from(FILE)]);
    expect(rules(text).explain('/private/x')).toEqual({ allowed: false, rule: 'Disallow: /private', line: 2, group: 'User-agent: mybot' });
  });

  it('skips a partial BOM before a first line that is a rule', () => {
    const text = readAsUtf8([0xef, 0xbb, ...Buffer.from('User-agent: *\nDisallow: /')]);
    expect(rules(text).isAllowed('/x')).toBe(false);
  });

  // A BOM is a mark at the start of a stream; anywhere else U+FEFF is the
  // character ZERO WIDTH NO-BREAK SPACE, which is not whitespace (RFC 9309
  // §2.2: WS = SP / HTAB), so "\uFEFFDisallow" is not a Disallow record. Such
  // a line is unparseable and ignored (§2.3.1.5), as google/robotstxt does.
  it('does not skip a BOM in the middle of the file: that line is ignored', () => {
    const r = rules(['User-agent: mybot', '\uFEFFDisallow: /hidden', 'Disallow: /private'].join('\n'));
    expect(r.isAllowed('/hidden')).toBe(true);
    expect(r.explain('/private')).toMatchObject({ allowed: false, line: 3, group: 'User-agent: mybot' });
  });

  it('does not read a user-agent line behind a BOM in the middle of the file', () => {
    const text = ['User-agent: other', 'Disallow: /', '\uFEFFUser-agent: mybot', 'Disallow: /x'].join('\n');
    expect(rules(text).explain('/anything')).toEqual({ allowed: true, rule: null, line: null, group: null });
    // The ignored line does not end the "other" group either: its rules go on.
    expect(rules(text, 'other').explain('/x')).toMatchObject({ allowed: false, line: 4, group: 'User-agent: other' });
  });

  it('keeps /robots.txt allowed whatever the BOM', () => {
    const text = readAsUtf8([0xef, ...Buffer.from('User-agent: *\nDisallow: /\n')]);
    expect(rules(text).isAllowed('/robots.txt')).toBe(true);
    expect(rules(text).isAllowed('/other')).toBe(false);
  });
});

describe('lines that are not records do not end a group (RFC 9309 §2.2.4, §2.3.1.5)', () => {
  it.each([
    ['an HTML fragment', '<br />'],
    ['an HTML fragment with a colon', '<a href="http://site.test/">home</a>'],
    ['random text', 'lorem ipsum dolor'],
    ['random text with a colon', 'Note: rules below'],
    ['an unknown record', 'Noindex: /x'],
    ['a misspelt record', 'Disalow: /x'],
    ['a Sitemap record', 'Sitemap: http://site.test/sitemap.xml'],
    ['a comment', '# the rules:'],
    ['a colon alone', ':'],
  ])('%s between user-agent lines', (_name, junk) => {
    const r = rules(['User-agent: other', junk, 'User-agent: mybot', junk, 'Disallow: /private', junk, 'Allow: /private/ok'].join('\n'));
    expect(r.explain('/private/x')).toMatchObject({ allowed: false, line: 5, group: 'User-agent: mybot' });
    expect(r.explain('/private/ok')).toMatchObject({ allowed: true, line: 7 });
    // And the group is still the one the first user-agent line opened.
    expect(rules(['User-agent: other', junk, 'User-agent: mybot', 'Disallow: /private'].join('\n'), 'other').isAllowed('/private')).toBe(false);
  });

  it('the last group may have no rules: it allows everything (§2.1, example §5.1 "quxbot")', () => {
    const r = rules('User-agent: *\nDisallow: /\n\nUser-agent: mybot\n');
    expect(r.explain('/x')).toEqual({ allowed: true, rule: null, line: null, group: 'User-agent: mybot' });
  });

  it('the last group may have no rules even when junk follows it', () => {
    expect(rules('User-agent: *\nDisallow: /\nUser-agent: mybot\n<br />\nSitemap: /s.xml\n').isAllowed('/x')).toBe(true);
  });
});

describe('the example of RFC 9309 §5.1', () => {
  const text = [
    'User-Agent: *',
    'Disallow: *.gif$',
    'Disallow: /example/',
    'Allow: /publications/',
    '',
    'User-Agent: foobot',
    'Disallow:/',
    'Allow:/example/page.html',
    'Allow:/example/allowed.gif',
    '',
    'User-Agent: barbot',
    'User-Agent: bazbot',
    'Disallow: /example/page.html',
    '',
    'User-Agent: quxbot',
    '',
  ].join('\n');

  it.each([
    ['otherbot', '/publications/a.html', true],
    ['otherbot', '/example/a.html', false],
    ['otherbot', '/img/a.gif', false],
    ['otherbot', '/img/a.gif?x', true],
    ['otherbot', '/index.html', true],
    ['foobot', '/example/page.html', true],
    ['foobot', '/example/allowed.gif', true],
    ['foobot', '/example/other.html', false],
    ['foobot', '/', false],
    ['barbot', '/example/page.html', false],
    ['bazbot', '/example/page.html', false],
    ['bazbot', '/example/other.html', true],
    ['bazbot', '/img/a.gif', true],
    ['quxbot', '/example/page.html', true],
    ['quxbot', '/img/a.gif', true],
  ])('%s: %s allowed=%s', (agent, path, allowed) => {
    expect(rules(text, `${agent}/1.0`).isAllowed(path)).toBe(allowed);
  });

  it('§5.2: the longest match wins', () => {
    const r = rules('User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif', 'foobot');
    expect(r.isAllowed('/example/page/disallowed.gif')).toBe(false);
    expect(r.isAllowed('/example/page/other.gif')).toBe(true);
  });
});

describe('product tokens (RFC 9309 §2.2.1)', () => {
  // The RFC's identifier is [A-Za-z_-]+. Real crawlers and the files that
  // name them use digits too (MJ12bot, 360Spider), so digits count as token
  // characters, on both sides: a "bot2000" group is bot2000's and nobody
  // else's. (google/robotstxt reads "bot2000" as "bot", which would hand
  // bot2000's rules to a crawler called "bot".)
  it('matches a token with digits exactly, in the file and in our user agent', () => {
    const text = 'User-agent: bot2000\nDisallow: /2000\n\nUser-agent: bot\nDisallow: /plain\n\nUser-agent: *\nDisallow: /star';
    expect(rules(text, 'Bot2000/1.0').explain('/2000')).toMatchObject({ allowed: false, group: 'User-agent: bot2000' });
    expect(rules(text, 'Bot2000/1.0').isAllowed('/plain')).toBe(true);
    expect(rules(text, 'bot/1.0').explain('/plain')).toMatchObject({ allowed: false, group: 'User-agent: bot' });
    expect(rules(text, 'bot/1.0').isAllowed('/2000')).toBe(true);
    expect(rules(text, 'bot3000').explain('/star')).toMatchObject({ allowed: false, group: 'User-agent: *' });
    expect(rules('User-agent: MJ12bot\nDisallow: /', 'MJ12bot/v1.4.8 (http://mj12bot.com/)').isAllowed('/x')).toBe(false);
    expect(rules('User-agent: 360Spider\nDisallow: /', '360Spider').isAllowed('/x')).toBe(false);
  });

  // A user-agent line names a token when it starts with it and the next
  // character cannot continue a token: "MyBot/1.0" and "mybot images" did
  // already; so do "mybot*", "MyBot;" and "mybot<br />" (an HTML page served
  // as robots.txt). "mybot-news", "mybot_x" and "mybot2" are other tokens.
  it.each([
    ['mybot*', true],
    ['MyBot;', true],
    ['mybot,', true],
    ['mybot<br />', true],
    ['mybot (compatible)', true],
    ['mybot-news', false],
    ['mybot_news', false],
    ['mybot2', false],
    ['my', false],
    ['xmybot', false],
  ])('"User-agent: %s" names mybot: %s', (value, names) => {
    expect(rules(`User-agent: ${value}\nDisallow: /x\n\nUser-agent: *\nAllow: /`).isAllowed('/x')).toBe(!names);
  });

  it.each([
    ['*', true],
    ['* # everyone', true],
    ['*<br />', true],
    ['*bot', false],
  ])('"User-agent: %s" is the * group: %s', (value, star) => {
    expect(rules(`User-agent: ${value}\nDisallow: /x`, 'otherbot').isAllowed('/x')).toBe(!star);
  });
});

describe('percent-encoding (RFC 9309 §2.2.2, §2.2.3)', () => {
  // §2.2.2 Figure 4: "Path" is how a path may be written (in the file or in
  // the URL), "Encoded Path" its encoding, "Path to Match" the form both
  // sides are compared in. Every spelling of a row must match every other.
  // Reading of the text, from the table: reserved characters that delimit
  // (the path's "/", the query's first "?", and sub-delimiters such as "="
  // and "&", which applications delimit query parameters with) stay as they
  // are; reserved characters that are data (":" and "@" in a path; ":", "/",
  // "?" and "@" in a query) are compared percent-encoded; escapes of
  // unreserved characters are decoded (RFC 3986 §2.3: they are equivalent),
  // in the file as in the URL (row 5). google/robotstxt compares row 2 and
  // row 5 literally; we follow the RFC.
  const figure4: [string, string, string][] = [
    ['/foo/bar?baz=quz', '/foo/bar?baz=quz', '/foo/bar?baz=quz'],
    ['/foo/bar?baz=https://foo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar'],
    ['/foo/bar/\u30c4', '/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%62%61%7A', '/foo/bar/%62%61%7A', '/foo/bar/baz'],
  ];
  const spellings = figure4.flatMap((row, index) => {
    const forms = [...new Set(row)];
    return forms.flatMap((rule) => forms.map((url) => [index + 1, rule, url] as const));
  });

  it.each(spellings)('Figure 4 row %i: "Disallow: %s" matches %s', (_row, rule, url) => {
    const r = rules(`User-agent: *\nDisallow: ${rule}$`);
    expect(r.explain(`http://site.test${url}`)).toMatchObject({ allowed: false, line: 2 });
  });

  it('Figure 4 rows do not match their neighbours', () => {
    const r = rules('User-agent: *\nDisallow: /foo/bar/%62%61%7A$\nDisallow: /foo/bar?baz=https://foo.bar$');
    expect(r.isAllowed('/foo/bar/bay')).toBe(true);
    expect(r.isAllowed('/foo/bar/%2562az')).toBe(true);
    expect(r.isAllowed('/foo/bar?baz=https:/foo.bar')).toBe(true);
    expect(r.isAllowed('/foo/bar?baz%3Dhttps://foo.bar')).toBe(true); // "=" delimits: encoded it is another query
  });

  it('reads the rest of the query alike: a redirect target, written plain or encoded', () => {
    const r = rules('User-agent: *\nDisallow: /*?next=http://');
    expect(r.isAllowed('/login?next=http%3A%2F%2Fevil.test%2F')).toBe(false);
    expect(r.isAllowed('/login?next=http://evil.test/')).toBe(false);
    expect(r.isAllowed('/login?next=%2Fhome')).toBe(true);
    const encoded = rules('User-agent: *\nDisallow: /*?next=http%3a%2f%2f');
    expect(encoded.isAllowed('/login?next=http://evil.test/')).toBe(false);
    expect(rules('User-agent: *\nDisallow: /a?b?c').isAllowed('/a?b%3Fc')).toBe(false);
    expect(rules('User-agent: *\nDisallow: /a?x=@').isAllowed('/a?x=%40')).toBe(false);
  });

  it('compares ":" and "@" in a path encoded, but keeps "/" and sub-delimiters distinct', () => {
    const r = rules('User-agent: *\nDisallow: /wiki/Special:Search\nDisallow: /~%40me\nDisallow: /a%2Fb\nDisallow: /p;q');
    expect(r.isAllowed('/wiki/Special%3ASearch?x=1')).toBe(false);
    expect(r.isAllowed('/wiki/Special:Search')).toBe(false);
    expect(r.isAllowed('/~@me')).toBe(false);
    expect(r.isAllowed('/a/b')).toBe(true);
    expect(r.isAllowed('/p%3Bq')).toBe(true);
  });

  // §2.2.3 Figure 6: a literal "*" or "$" in a URL is matched by "%2A" / "%24" in a pattern.
  it.each([
    ['/path/file-with-a-%2A.html', 'https://www.example.com/path/file-with-a-*.html'],
    ['/path/foo-%24', 'https://www.example.com/path/foo-$'],
    ['/path/file-with-a-%2a.html', 'https://www.example.com/path/file-with-a-%2A.html'],
  ])('Figure 6: "Disallow: %s" matches %s', (pattern, url) => {
    expect(rules(`User-agent: *\nDisallow: ${pattern}`).isAllowed(url)).toBe(false);
  });

  it('keeps * and a final $ special in patterns, and a $ anywhere else literal', () => {
    const r = rules('User-agent: *\nDisallow: /a*z\nDisallow: /end$\nDisallow: /mid$dle\nDisallow: /q?x=$');
    expect(r.isAllowed('/a-to-z')).toBe(false);
    expect(r.isAllowed('/a*z')).toBe(false);
    expect(r.isAllowed('/end')).toBe(false);
    expect(r.isAllowed('/end/more')).toBe(true);
    expect(r.isAllowed('/end$')).toBe(true);
    expect(r.isAllowed('/mid$dle')).toBe(false);
    expect(r.isAllowed('/mid%24dle')).toBe(false);
    expect(r.isAllowed('/q?x=')).toBe(false);
    expect(r.isAllowed('/q?x=1')).toBe(true);
  });

  it('allows /robots.txt however it is spelt (§2.2.2: escapes of unreserved characters are decoded)', () => {
    const r = rules('User-agent: *\nDisallow: /');
    expect(r.explain('/%72obots%2Etxt')).toMatchObject({ allowed: true, rule: 'Allow: /robots.txt (implicit)' });
    expect(r.isAllowed('/robots.txt?x')).toBe(false);
    expect(r.isAllowed('/robots%2Etxt/x')).toBe(false);
  });
});

describe('non-ASCII characters (RFC 9309 §2.2.2)', () => {
  it.each([
    ['/ä', 'http://site.test/%C3%A4'],
    ['/ä', 'http://site.test/%c3%a4'],
    ['/ä', 'http://site.test/ä'],
    ['/%C3%A4', 'http://site.test/ä'],
    ['/%c3%a4', 'http://site.test/ä'],
    ['/?q=ä', 'http://site.test/?q=%C3%A4'],
    ['/?q=%C3%A4', 'http://site.test/?q=ä'],
    ['/日本/*.html', 'http://site.test/%E6%97%A5%E6%9C%AC/x.html'],
    ['/😀', 'http://site.test/%F0%9F%98%80'],
  ])('"Disallow: %s" matches %s', (pattern, url) => {
    expect(rules(`User-agent: *\nDisallow: ${pattern}`).isAllowed(url)).toBe(false);
  });

  it('compares octets: a Latin-1 escape is not the UTF-8 character, nor is another normalisation form', () => {
    const r = rules('User-agent: *\nDisallow: /ä');
    expect(r.isAllowed('http://site.test/%E4')).toBe(true);
    expect(r.isAllowed('http://site.test/a%CC%88')).toBe(true); // "ä" decomposed (NFD)
    expect(r.isAllowed('http://site.test/a')).toBe(true);
  });

  it('matches a rule from a file the server declared as Latin-1 (its characters are re-encoded as UTF-8)', () => {
    const text = fetched([...Buffer.from('User-agent: *\nDisallow: /'), 0xe4], 'iso-8859-1');
    expect(rules(text).isAllowed('http://site.test/%C3%A4')).toBe(false);
  });

  it('does not read a user-agent line with non-ASCII letters after our token as another token', () => {
    // "mybotä" is not an RFC identifier; its token part is "mybot", as for "mybot*".
    expect(rules('User-agent: mybotä\nDisallow: /x').isAllowed('/x')).toBe(false);
    expect(rules('User-agent: mÿbot\nDisallow: /x').isAllowed('/x')).toBe(true);
  });
});
