/**
 * The link scanner (src/parse/link-scanner.ts) against htmlparser2, on the
 * tokenizer's odd corners, one by one: each case names what htmlparser2
 * finds, and extractPage (the scanner) must find the same as
 * extractPageParsed (the Parser). The fuzzed comparison is in
 * test/properties/parser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { extractPage, extractPageParsed, type ExtractOptions } from '../../src/parse/parser.js';

const PAGE = 'http://example.com/d/page.html';
const OPTS: ExtractOptions = { respectNofollow: true, userAgentToken: 'crawl' };

function both(html: string) {
  const scanned = extractPage(html, PAGE, OPTS);
  expect(scanned).toEqual(extractPageParsed(html, PAGE, OPTS));
  return scanned;
}

const paths = (links: string[]) => links.map((l) => l.replace('http://example.com', ''));

describe('the link scanner reads as htmlparser2 does', () => {
  it.each([
    ['`<!>` runs to the next `>`', '<!><a href="/lost">x</a> <a href="/kept">', ['/kept']],
    ['`<!-x` never reads the x as its end', '<!->x<a href="/lost">y</a><a href="/kept">', ['/kept']],
    ['`<!-->` is a whole comment', '<!--><a href="/kept">', ['/kept']],
    ['`<!--->` is a whole comment', '<!---><a href="/kept">', ['/kept']],
    ['a comment runs to `-->`', '<!-- <a href="/lost"> --><a href="/kept">', ['/kept']],
    ['an empty CDATA section', '<![CDATA[]]><a href="/kept">', ['/kept']],
    ['CDATA hides tags', '<![CDATA[<a href="/lost">]]]><a href="/kept">', ['/kept']],
    ['a broken CDATA opener is a declaration', '<![CDAT<a href="/lost">x<a href="/kept">', ['/kept']],
    ['a processing instruction runs to `>`', '<?php <a href="/lost"?><a href="/kept">', ['/kept']],
    ['a closing tag runs to `>`', '</a <a href="/lost">><a href="/kept">', ['/kept']],
    ['`</script/>` does not close a script', '<script></script/><a href="/lost"></script><a href="/kept">', ['/kept']],
    ['`<</script>` closes a script', '<script><</script><a href="/kept">', ['/kept']],
    ['a control character that ORs to `<` starts `</script`', '<script></x\u001c/script><a href="/kept">', ['/kept']],
    ['`</script` then whitespace closes it', '<script>x</SCRIPT\n junk><a href="/kept">', ['/kept']],
    ['`<SCRIPT>` in capitals is a script', '<SCRIPT><a href="/lost"></script><a href="/kept">', ['/kept']],
    ['`<scriptx>` is no script', '<scriptx><a href="/kept">', ['/kept']],
    ['`<tmp>` is read as xmp, up to `</xmp`', '<tmp><a href="/lost"></tmp></xmp><a href="/kept">', ['/kept']],
    ['`<textarea/>` is no raw text', '<textarea/><a href="/kept">', ['/kept']],
    ['`<title/>` goes to the parser', '<title/><a href="/lost"></title><a href="/kept">', ['/kept']],
    ['a tag cut off by the end of the document', '<a href="/kept"><a href="/lost"', ['/kept']],
    ['an attribute after a slash', '<a/href=/kept>', ['/kept']],
    ['an unquoted value keeps its slash', '<a href=/kept/>', ['/kept/']],
    ['a value-less href is the page itself', '<a href>', ['/d/page.html']],
    ['the first of two hrefs', '<a href=/kept href=/lost>', ['/kept']],
    ['`>` inside a quoted value', `<div data-x='>' <a href="/lost">'><a href="/kept">`, ['/kept']],
    ['character references in a value, legacy and not', '<a href="/q?a=1&amp;b=2&notx=3&not=4">', ['/q?a=1&b=2&notx=3&not=4']],
  ])('%s', (_name, html, expected) => {
    expect(paths(both(html).links)).toEqual(expected);
  });

  it.each([
    ['references decoded', '<title>Tom &amp; Jerry &ndash; &#x41;&#66</title>', 'Tom & Jerry – AB'],
    ['a legacy reference needs no semicolon, even before a letter', '<title>a&notb</title>', 'a¬b'],
    ['a reference cut off by the document end', '<title>a &amp', 'a &'],
    ['an `&` inside a half-matched `</title` stays as written', '<title>a <&amp; b</title>', 'a <&amp; b'],
    ['`<xitle>` reads as a title but is none', '<xitle>x</title><title>real</title>', 'real'],
    ['a title read to the end of the document', '<title>open <b>', 'open <b>'],
  ])('title: %s', (_name, html, expected) => {
    expect(both(html).title).toBe(expected);
  });

  it('reads base, canonical, meta robots and meta refresh from the attributes the parser reads', () => {
    const page = both(
      '<BASE HREF="/b/"><lin\u212a rel=CANONICAL href=c><meta content=nofollow name=ROBOTS><meta http-equiv=Refresh content="0; url=r"><a href=x>',
    );
    expect(page.baseUrl).toBe('http://example.com/b/');
    expect(page.canonical).toBe('http://example.com/b/c');
    expect(page.nofollowAll).toBe(true);
    expect(paths(page.nofollowLinks)).toEqual(['/b/r', '/b/x']);
  });
});
