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
 * A long document can still take a while (about a quarter of a second per
 * MB), so `parseHtmlYielding` feeds it in slices and gives the event loop a
 * turn between them: progress lines and Ctrl-C are served during the parse.
 *
 * It reaches into two private fields of htmlparser2's Parser (`stack`,
 * `foreignContext`); test/parse/deep-nesting.system.test.ts and test/parse/parser.test.ts pin
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

/** UTF-16 units parsed between two turns of the event loop: a few milliseconds of work. */
export const PARSE_SLICE = 64 * 1024;

/** Whether `parseHtmlYielding` would yield at all on `html`: below one slice it parses in one go. */
export function parsesInSlices(html: string): boolean {
  return html.length > PARSE_SLICE;
}

/**
 * Parses `html` into `handler`'s callbacks like `parseHtml`, one slice at a
 * time, yielding to the event loop (setImmediate: after timers and I/O,
 * signals included) between slices. The events are the same, except that a
 * text may come in more pieces.
 */
export async function parseHtmlYielding(html: string, handler: Partial<Handler>): Promise<void> {
  const parser = new BoundedParser(handler);
  for (let at = 0; at < html.length; at += PARSE_SLICE) {
    if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    parser.write(html.slice(at, at + PARSE_SLICE));
  }
  parser.end();
}
