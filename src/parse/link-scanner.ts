/**
 * The fast path of link extraction: reads a document as htmlparser2's
 * tokenizer would, but reports only what extractPage uses (the attributes
 * of a, area, base, link and meta, and the text of the first title), where
 * htmlparser2's Parser builds a name, an attribute object and a stack entry
 * for every tag: 3.9x the Parser's speed on 21 KB pages (bench/parse.js),
 * 11 against 29 µs on a 600-byte one.
 *
 * It is exact, not approximate: every state below is the tokenizer's own
 * (htmlparser2 10, `Tokenizer.ts`), quirks included, such as `<!>` running
 * to the next `>`, `</script/>` not closing a script, and `<tmp>` opening raw
 * text that only `</xmp` ends; character references are decoded by the
 * decoder the tokenizer uses, where it uses it. test/properties/parser.test.ts
 * compares the two on fuzzed documents, test/parse/link-scanner.test.ts
 * quirk by quirk. One thing it leaves to the Parser, by answering false: a
 * self-closing `<title/>`, `<script/>` or `<style/>` (the tokenizer then
 * reads tags inside the element, and which of them the element holds
 * depends on the Parser's stack).
 */
import { DecodingMode, EntityDecoder, decodeHTMLAttribute, fromCodePoint, htmlDecodeTree } from 'entities/decode';

/** What the scanner reports, in document order; every open is closed. */
export interface ScanSink {
  onopentag(name: string, attribs: Record<string, string>): void;
  ontext(data: string): void;
  onclosetag(): void;
}

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const AMP = 0x26;
const SQUOTE = 0x27;
const DASH = 0x2d;
const SLASH = 0x2f;
const LT = 0x3c;
const EQ = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;
const LBRACKET = 0x5b;

const isWhitespace = (c: number): boolean => c === SPACE || c === LF || c === TAB || c === FF || c === CR;
const isEndOfTagSection = (c: number): boolean => c === SLASH || c === GT || isWhitespace(c);
const isAsciiAlpha = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);

const codes = (s: string): number[] => [...s].map((ch) => ch.charCodeAt(0));
// The end sequences of the elements the tokenizer reads as raw text, as it spells them.
const SCRIPT_END = codes('</script');
const STYLE_END = codes('</style');
const TITLE_END = codes('</title');
const TEXTAREA_END = codes('</textarea');
const XMP_END = codes('</xmp');
const CDATA = codes('CDATA[');

/** The attributes extractPage reads, by the tags it reads them on. */
const READ_ATTRIBUTES = new Set(['href', 'rel', 'name', 'content', 'http-equiv']);

/**
 * Scans `html` into `sink`. Returns false, having reported part of the
 * document, when it holds what only htmlparser2's Parser reads right (see
 * above): parse it with that instead, into a fresh sink.
 */
export function scanLinks(html: string, sink: ScanSink): boolean {
  const n = html.length;
  let at = html.indexOf('<');
  while (at !== -1 && at + 1 < n) {
    const c = html.charCodeAt(at + 1);
    let next: number;
    if (isAsciiAlpha(c)) {
      next = openTag(html, at + 1, sink);
      if (next === BAIL) return false;
    } else if (c === BANG) next = afterDeclaration(html, at + 2);
    else if (c === QUESTION || c === SLASH) {
      // A processing instruction, and every spelling of a closing tag, end at the next '>'.
      const gt = html.indexOf('>', at + 2);
      next = gt === -1 ? n : gt + 1;
    } else next = at + 1; // '<' followed by anything else is text; the next character may open a tag.
    at = next >= n ? -1 : html.indexOf('<', next);
  }
  return true;
}

const BAIL = -2;

/** After `<!` at `from`: a comment, CDATA or a declaration. Returns where text resumes. */
function afterDeclaration(html: string, from: number): number {
  const n = html.length;
  if (from >= n) return n;
  const c = html.charCodeAt(from);
  let gtFrom: number;
  if (c === LBRACKET) {
    let i = from + 1;
    let k = 0;
    while (k < CDATA.length && i < n && html.charCodeAt(i) === CDATA[k]) {
      i++;
      k++;
    }
    if (k === CDATA.length) return endOf(html, ']]>', i, 2);
    if (i >= n) return n;
    gtFrom = i; // not CDATA after all: a declaration, this character included
  } else if (c === DASH) {
    if (from + 1 >= n) return n;
    // `<!--`: the opening dashes count towards the end, so `<!-->` is a whole comment.
    if (html.charCodeAt(from + 1) === DASH) return endOf(html, '-->', from, 2);
    gtFrom = from + 2; // `<!-x`: a declaration, and the 'x' is never read as its end
  } else gtFrom = from + 1; // likewise the character after `<!`
  const gt = html.indexOf('>', gtFrom);
  return gt === -1 ? n : gt + 1;
}

function endOf(html: string, end: string, from: number, lastOffset: number): number {
  const found = html.indexOf(end, from);
  return found === -1 ? html.length : found + lastOffset + 1;
}

/**
 * An open tag whose name starts at `start`. Reports it if extractPage reads
 * it, and reads past a raw-text element's content. Returns where text
 * resumes, or BAIL.
 */
function openTag(html: string, start: number, sink: ScanSink): number {
  const n = html.length;
  let i = start + 1;
  while (i < n && !isEndOfTagSection(html.charCodeAt(i))) i++;
  if (i >= n) return n; // the document ends inside the tag: it is no tag
  const nameEnd = i;
  const rawEnd = rawTextEnd(html, start, nameEnd);
  const name = readName(html, start, nameEnd);
  const attribs: Record<string, string> | null = name === null || name === 'title' || name === 'script' || name === 'style' ? null : {};

  // The tokenizer's attribute states, from BeforeAttributeName.
  let selfClosing = false;
  let attrName: string | null = null;
  for (;;) {
    if (i >= n) return n;
    let c = html.charCodeAt(i);
    if (c === GT) break;
    if (c === SLASH) {
      // InSelfClosingTag: whitespace is skipped; '>' ends the tag self-closing; anything else is read again as BeforeAttributeName.
      i++;
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) return n;
      if (html.charCodeAt(i) === GT) {
        selfClosing = true;
        break;
      }
      continue;
    }
    if (isWhitespace(c)) {
      i++;
      continue;
    }
    // InAttributeName
    const attrStart = i;
    i++;
    while (i < n && (c = html.charCodeAt(i)) !== EQ && !isEndOfTagSection(c)) i++;
    if (i >= n) return n;
    attrName = attribs === null ? null : readAttributeName(html, attrStart, i);
    // AfterAttributeName
    while (i < n && isWhitespace(html.charCodeAt(i))) i++;
    if (i >= n) return n;
    if (html.charCodeAt(i) !== EQ) {
      // An attribute without a value; '/' and '>' are read again, anything else starts the next name.
      if (attrName !== null) setFirst(attribs!, attrName, '');
      continue;
    }
    // BeforeAttributeValue
    i++;
    while (i < n && isWhitespace(html.charCodeAt(i))) i++;
    if (i >= n) return n;
    c = html.charCodeAt(i);
    let valueStart: number;
    let valueEnd: number;
    if (c === DQUOTE || c === SQUOTE) {
      valueStart = i + 1;
      valueEnd = html.indexOf(c === DQUOTE ? '"' : "'", valueStart);
      if (valueEnd === -1) return n;
      i = valueEnd + 1;
    } else {
      // Unquoted: up to whitespace or '>', which is read again.
      valueStart = i;
      while (i < n && (c = html.charCodeAt(i)) !== GT && !isWhitespace(c)) i++;
      if (i >= n) return n;
      valueEnd = i;
    }
    if (attrName !== null) setFirst(attribs!, attrName, attributeValue(html, valueStart, valueEnd));
  }
  // i is at the tag's '>'.
  if (name !== null) {
    if (selfClosing && attribs === null) return BAIL; // <title/>, <script/>, <style/>
    sink.onopentag(name, attribs ?? {});
    if (name !== 'title') sink.onclosetag();
  }
  if (selfClosing || rawEnd === null) return i + 1;
  return rawText(html, i + 1, rawEnd, name === 'title' ? sink : null);
}

/** The end sequence of a raw-text element whose name spans [start, end), as the tokenizer tells one; null for any other. */
function rawTextEnd(html: string, start: number, end: number): number[] | null {
  const first = html.charCodeAt(start) | 0x20;
  const second = end > start + 1 ? html.charCodeAt(start + 1) | 0x20 : -1;
  let sequence: number[];
  // The first letter picks a pair, the second one member: so `<xitle>` reads as a title and `<tmp>` as xmp.
  if (first === 0x73) {
    if (second === SCRIPT_END[3]) sequence = SCRIPT_END;
    else if (second === STYLE_END[3]) sequence = STYLE_END;
    else return null;
  } else if (first === 0x74 || first === 0x78) {
    if (second === TITLE_END[3]) sequence = TITLE_END;
    else if (second === TEXTAREA_END[3]) sequence = TEXTAREA_END;
    else if (second === XMP_END[3]) sequence = XMP_END;
    else return null;
  } else return null;
  if (end - start !== sequence.length - 2) return null;
  for (let k = 4; k < sequence.length; k++) if ((html.charCodeAt(start + k - 2) | 0x20) !== sequence[k]) return null;
  return sequence;
}

/**
 * The content of a raw-text element, from `from` to its end sequence followed
 * by '>' or whitespace (the tokenizer's InSpecialTag state, its `| 0x20`
 * comparison kept). A title's text goes to `title`, its character references
 * decoded where the tokenizer decodes them: at an '&' met while no part of
 * `</title` is matched. Returns where text resumes.
 */
function rawText(html: string, from: number, sequence: number[], title: ScanSink | null): number {
  const n = html.length;
  let k = 0;
  let textEnd = n;
  let resume = n;
  let textStart = from;
  for (let i = from; i < n; i++) {
    const c = html.charCodeAt(i);
    if (k === sequence.length) {
      if (c === GT || isWhitespace(c)) {
        textEnd = i - sequence.length;
        if (c === GT) resume = i + 1;
        else {
          const gt = html.indexOf('>', i + 1);
          resume = gt === -1 ? n : gt + 1;
        }
        break;
      }
      k = 0;
    }
    if ((c | 0x20) === sequence[k]) k++;
    else if (k === 0) {
      if (title === null) {
        const lt = html.indexOf('<', i + 1);
        if (lt === -1) break;
        i = lt;
        k = 1;
      } else if (c === AMP) {
        const decoded = titleEntity(html, i, textStart, title);
        textStart = reference.textStart;
        if (decoded === -1) break; // the reference ran to the end of the document
        i = decoded - 1;
      }
    } else k = c === LT ? 1 : 0;
  }
  if (title !== null) {
    if (textStart < textEnd) title.ontext(html.slice(textStart, textEnd));
    title.onclosetag();
  }
  return resume;
}

/** What the decoder's callback hands back: where the title's undecoded text resumes, and the sink it writes to. */
const reference = { textStart: 0, entityStart: 0, html: '', sink: null as ScanSink | null };

const decoder = new EntityDecoder(htmlDecodeTree, (cp, consumed) => {
  // The tokenizer's emitCodePoint: the text before the reference, then the character.
  if (reference.textStart < reference.entityStart) reference.sink!.ontext(reference.html.slice(reference.textStart, reference.entityStart));
  reference.textStart = reference.entityStart + consumed;
  reference.sink!.ontext(fromCodePoint(cp));
});

/**
 * The tokenizer's InEntity state, in a title, for the '&' at `at`: decodes
 * (legacy rules: `&amp` without ';' counts) and returns the index the title
 * is read on from, or -1 when the reference reaches the end of the
 * document. `reference.textStart` is then where undecoded text resumes.
 */
function titleEntity(html: string, at: number, textStart: number, sink: ScanSink): number {
  reference.html = html;
  reference.sink = sink;
  reference.textStart = textStart;
  reference.entityStart = at;
  decoder.startEntity(DecodingMode.Legacy);
  let resume = -1;
  if (at + 1 >= html.length) decoder.end();
  else {
    const length = decoder.write(html, at + 1);
    // A length is what the reference consumed, '&' included; 0: nothing decoded, the '&' is text.
    if (length >= 0) resume = at + Math.max(length, 1);
    else if (html.charCodeAt(at + 1) === AMP) resume = at + 1;
    else decoder.end();
  }
  // The document and its sink are not kept past the reference.
  reference.html = '';
  reference.sink = null;
  return resume;
}

/** The lower-case name of a tag extractPage reads, or null. Names are lowered as htmlparser2 lowers them (`toLowerCase`). */
function readName(html: string, start: number, end: number): string | null {
  const length = end - start;
  if (length > 6 || length === 2 || length === 3) return null;
  switch (html.charCodeAt(start) | 0x20) {
    case 0x61: // a, area
    case 0x62: // base
    case 0x6c: // link
    case 0x6d: // meta
    case 0x73: // script, style
    case 0x74: // title
      break;
    default:
      return null;
  }
  const name = html.slice(start, end).toLowerCase();
  switch (name) {
    case 'a':
    case 'area':
    case 'base':
    case 'link':
    case 'meta':
    case 'title':
    case 'script':
    case 'style':
      return name;
    default:
      return null;
  }
}

function readAttributeName(html: string, start: number, end: number): string | null {
  const length = end - start;
  if (length !== 3 && length !== 4 && length !== 7 && length !== 10) return null;
  const name = html.slice(start, end).toLowerCase();
  return READ_ATTRIBUTES.has(name) ? name : null;
}

/** htmlparser2 keeps an attribute's first value. */
function setFirst(attribs: Record<string, string>, name: string, value: string): void {
  if (attribs[name] === undefined) attribs[name] = value;
}

function attributeValue(html: string, start: number, end: number): string {
  const raw = html.slice(start, end);
  return raw.includes('&') ? decodeHTMLAttribute(raw) : raw;
}
