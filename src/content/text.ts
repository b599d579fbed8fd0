/**
 * Visible text of a (pruned) DOM: whitespace collapsed as a browser renders
 * it, each block element on its own line(s), `<br>` a line break, table cells
 * separated by a tab, `<pre>` kept as written. Blank lines are dropped.
 */
import { BLOCK_ELEMENTS } from './block-elements.js';
import { childrenOf, isElement, type AnyNode } from './dom.js';

const WHITESPACE = /[\t\n\f\r ]+/g;
/** Stands for a tab we put between cells, so collapsing the cell's own whitespace leaves it. */
const CELL = '\u0001';

export function toText(root: AnyNode): string {
  const lines: string[] = [];
  let line = '';
  const flush = () => {
    const text = line
      .replace(WHITESPACE, ' ')
      .replace(/ ?\u0001 ?/g, '\t')
      .trim();
    if (text !== '') lines.push(text);
    line = '';
  };
  const visit = (node: AnyNode): void => {
    if (node.type === 'text') {
      line += (node as { data: string }).data;
      return;
    }
    if (!isElement(node)) {
      if (node.type === 'root') for (const child of childrenOf(node)) visit(child);
      return;
    }
    const name = node.name;
    if (name === 'br') return flush();
    if (name === 'pre') {
      flush();
      for (const l of preText(node).split('\n')) if (l.trim() !== '') lines.push(l.trimEnd());
      return;
    }
    if ((name === 'td' || name === 'th') && node.prev !== null) line += CELL;
    const block = BLOCK_ELEMENTS.has(name);
    if (block) flush();
    for (const child of childrenOf(node)) visit(child);
    if (block) flush();
  };
  visit(root);
  flush();
  return lines.join('\n');
}

/** The text of a `<pre>` as written (one leading newline dropped, as HTML does); `<br>` inside is a newline. */
export function preText(node: AnyNode): string {
  let out = '';
  const visit = (n: AnyNode): void => {
    if (n.type === 'text') out += (n as { data: string }).data;
    else if (isElement(n) && n.name === 'br') out += '\n';
    else for (const child of childrenOf(n)) visit(child);
  };
  for (const child of childrenOf(node)) visit(child);
  return out.replace(/^\r?\n/, '');
}
