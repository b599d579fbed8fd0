/**
 * htmlparser2's Parser with its open elements capped at MAX_OPEN_ELEMENTS,
 * the one HTML parser of the crawler (links in parser.ts, the content DOM in
 * content/dom.ts). Parse time is then linear in the input, whatever it nests.
 *
 * htmlparser2 keeps its stack of open elements in an array it `unshift`s on
 * every open tag and `shift`s on every close, each costing the current depth:
 * a hostile page of 60k unclosed `<div><span><b><i>` (1 MB) took over a
 * minute, quadratic in its size. Browsers cap nesting too (Blink at 512):
 * past the cap, an element opened becomes the sibling of the deepest one
 * instead of its child, so the depth stays put and every tag, every link and
 * all text are still read. Open and close events stay balanced.
 *
 * It reaches into two private fields of htmlparser2's Parser (`stack`,
 * `foreignContext`); test/deep-nesting.test.ts and test/parser.test.ts pin
 * the behaviour, so an upgrade that moves them fails there, not silently.
 */
import { Parser, type Handler, type ParserOptions } from 'htmlparser2';

/** Open elements kept at once; one more closes the deepest first. Blink's own cap. */
export const MAX_OPEN_ELEMENTS = 512;

/** Elements whose open and close htmlparser2 also records in `foreignContext` (SVG/MathML and their HTML islands). */
const FOREIGN_CONTEXT = new Set(['math', 'svg', 'mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

interface ParserInternals {
  /** Open elements, the deepest first. */
  stack: string[];
  foreignContext: boolean[];
}

/** The options every HTML parse here uses: HTML mode (names lowercased), entities decoded, as cheerio passes them. */
export const HTML_PARSE_OPTIONS = { xmlMode: false, decodeEntities: true } as const satisfies ParserOptions;

export class BoundedParser extends Parser {
  private readonly handler: Partial<Handler>;

  constructor(handler: Partial<Handler>, options: ParserOptions = HTML_PARSE_OPTIONS) {
    super(handler, options);
    this.handler = handler;
  }

  /** @internal The tokenizer's open tag: at the cap, the deepest element is closed (implied) first. */
  override onopentagname(start: number, endIndex: number): void {
    const internals = this as unknown as ParserInternals;
    if (internals.stack.length >= MAX_OPEN_ELEMENTS) {
      const deepest = internals.stack.shift()!;
      if (FOREIGN_CONTEXT.has(deepest)) internals.foreignContext.shift();
      this.handler.onclosetag?.(deepest, true);
    }
    super.onopentagname(start, endIndex);
  }
}

/** Parses `html` whole into `handler`'s callbacks, nesting capped. Never throws on any input. */
export function parseHtml(html: string, handler: Partial<Handler>): void {
  new BoundedParser(handler).end(html);
}
