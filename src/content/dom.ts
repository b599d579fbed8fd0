/**
 * The DOM the content features read (main content, text, markdown, extract):
 * htmlparser2's, built by the same tokenizer as the link stream in
 * parse/parser.ts, so both read one page the same way. Only built when
 * `content` or `extract` is asked for: link extraction never needs a tree.
 *
 * Nesting is capped at MAX_DOM_DEPTH: an element deeper than that is dropped
 * and its text joins its deepest kept ancestor. Every walker here, and
 * cheerio's serializer, recurses once per level, so a hostile page of
 * 100,000 nested tags would otherwise overflow the stack. Browsers cap their
 * trees too (Blink at 512).
 */
import { DomHandler } from 'htmlparser2';
import { parseHtml, parseHtmlYielding } from '../parse/bounded-parser.js';
import type { AnyNode, Document, Element } from 'domhandler';

export type { AnyNode, Document, Element } from 'domhandler';

/** Elements nested deeper than this are flattened into their ancestor. */
export const MAX_DOM_DEPTH = 256;

class BoundedDomHandler extends DomHandler {
  private depth = 0;

  override onopentag(name: string, attribs: Record<string, string>): void {
    if (++this.depth > MAX_DOM_DEPTH) return;
    super.onopentag(name, attribs);
  }

  override onclosetag(): void {
    if (this.depth-- > MAX_DOM_DEPTH) return;
    super.onclosetag();
  }
}

/** Parses an HTML document (lenient, as parse/parser.ts does). Never throws. */
export function parseDom(html: string): Document {
  const handler = new BoundedDomHandler();
  // The parser caps its own nesting too, so parsing stays linear in the input (bounded-parser.ts).
  parseHtml(html, handler);
  return handler.root;
}

/** `parseDom`, giving the event loop a turn between slices of a long document. */
export async function parseDomYielding(html: string): Promise<Document> {
  const handler = new BoundedDomHandler();
  await parseHtmlYielding(html, handler);
  return handler.root;
}

/** An element (script and style count: htmlparser2 gives them their own node types). */
export function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/** The node's children, or none (text, comments). */
export function childrenOf(node: AnyNode): AnyNode[] {
  return 'children' in node ? node.children : [];
}

/** The element's space-separated attribute `name`, lowercased, as tokens. */
export function attrTokens(el: Element, name: string): string[] {
  const value = el.attribs[name];
  return value === undefined
    ? []
    : value
        .toLowerCase()
        .split(/[\t\n\f\r ]+/)
        .filter(Boolean);
}
