/**
 * A compact HTML → Markdown (CommonMark, with GFM pipe tables) converter over
 * htmlparser2's DOM: headings, paragraphs, lists (nested, ordered with their
 * start), links and images with absolute URLs, emphasis, strikethrough,
 * inline code, fenced code blocks, blockquotes, rules and tables (the first
 * row is the header). Anything else contributes its content: a `<div>` is a
 * paragraph break, a `<span>` nothing. Never throws.
 *
 * Why not turndown: it needs a DOM of its own (domino in Node), so every page
 * would be parsed a second time, its tables need an unmaintained plugin, and
 * it leaves relative URLs relative.
 */
import { BLOCK_ELEMENTS } from './block-elements.js';
import { preText } from './text.js';
import { childrenOf, isElement, type AnyNode, type Element } from './dom.js';

interface Context {
  /** Links and images resolve against this; null: left as written. */
  base: string | null;
  /** Inside a table cell: everything stays on one line. */
  inCell: boolean;
  /** Fenced code blocks, filled in by `finish` (placeholders keep them safe from the whitespace clean-up). */
  code: string[];
}

const WHITESPACE = /[\t\n\f\r ]+/g;
const CODE_MARK = '\u0000';

/** The Markdown for `root`; links and images are made absolute against `baseUrl`. */
export function toMarkdown(root: AnyNode, baseUrl: string | null): string {
  const ctx: Context = { base: baseUrl, inCell: false, code: [] };
  return finish(convert(root, ctx), ctx);
}

function convert(node: AnyNode, ctx: Context): string {
  if (node.type === 'text') return escapeText((node as { data: string }).data.replace(WHITESPACE, ' '));
  if (node.type === 'root') return children(node, ctx);
  if (!isElement(node)) return '';
  const name = node.name;
  switch (name) {
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6': {
      const text = oneLine(children(node, ctx));
      return text === '' ? '' : block(`${'#'.repeat(Number(name[1]))} ${text}`, ctx);
    }
    case 'p':
      return block(children(node, ctx), ctx);
    case 'br':
      return ctx.inCell ? ' ' : '  \n';
    case 'hr':
      return block('---', ctx);
    case 'em':
    case 'i':
    case 'cite':
    case 'dfn':
      return wrap(children(node, ctx), '*');
    case 'strong':
    case 'b':
      return wrap(children(node, ctx), '**');
    case 'del':
    case 's':
    case 'strike':
      return wrap(children(node, ctx), '~~');
    case 'code':
    case 'kbd':
    case 'samp':
    case 'tt':
      return inlineCode(preText(node));
    case 'pre':
      return codeBlock(node, ctx);
    case 'a':
      return link(node, ctx);
    case 'img':
      return image(node, ctx);
    case 'ul':
    case 'ol':
    case 'menu':
    case 'dir':
      return list(node, ctx);
    case 'blockquote': {
      if (ctx.inCell) return children(node, ctx);
      const inner = tidy(children(node, ctx));
      return inner === ''
        ? ''
        : block(
            inner
              .split('\n')
              .map((l) => (l === '' ? '>' : `> ${l}`))
              .join('\n'),
            ctx,
          );
    }
    case 'table':
      return table(node, ctx);
    default:
      return BLOCK_ELEMENTS.has(name) ? block(children(node, ctx), ctx) : children(node, ctx);
  }
}

function children(node: AnyNode, ctx: Context): string {
  let out = '';
  for (const child of childrenOf(node)) out += convert(child, ctx);
  return out;
}

function block(text: string, ctx: Context): string {
  return ctx.inCell ? ` ${text} ` : `\n\n${text}\n\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Emphasis around the text, its outer spaces moved outside (`** x**` is not bold). */
function wrap(text: string, mark: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  return m[2] === '' ? text : `${m[1]}${mark}${m[2]}${mark}${m[3]}`;
}

function inlineCode(raw: string): string {
  const text = raw.replace(/\s+/g, ' ');
  if (text.trim() === '') return text;
  // A fence longer than any run of backticks inside; padded when the code starts or ends with one.
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function codeBlock(node: Element, ctx: Context): string {
  const text = preText(node).replace(/\s+$/, '');
  if (ctx.inCell) return inlineCode(text);
  if (text === '') return '';
  const code = childrenOf(node).find((c): c is Element => isElement(c) && c.name === 'code');
  const language = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(code?.attribs.class ?? node.attribs.class ?? '')?.[1] ?? '';
  const longest = Math.max(2, ...(text.match(/^`{3,}/gm) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  ctx.code.push(`${fence}${language}\n${text}\n${fence}`);
  return `\n\n${CODE_MARK}${ctx.code.length - 1}${CODE_MARK}\n\n`;
}

function link(node: Element, ctx: Context): string {
  const text = oneLine(children(node, ctx));
  const href = node.attribs.href;
  const url = href === undefined ? null : absolute(href, ctx.base);
  if (url === null || text === '') return text;
  return `[${text}](${url})`;
}

function image(node: Element, ctx: Context): string {
  const src = node.attribs.src;
  const url = src === undefined ? null : absolute(src, ctx.base);
  if (url === null) return '';
  return `![${escapeText(oneLine(node.attribs.alt ?? ''))}](${url})`;
}

function list(node: Element, ctx: Context): string {
  if (ctx.inCell) return children(node, ctx);
  const ordered = node.name === 'ol';
  const start = Number.parseInt(node.attribs.start ?? '1', 10);
  let n = Number.isSafeInteger(start) && start >= 0 ? start : 1;
  const items: string[] = [];
  for (const child of childrenOf(node)) {
    // Text and other elements directly in a list are kept, as an item of their own.
    const content = isElement(child) && child.name === 'li' ? children(child, ctx) : convert(child, ctx);
    const text = tidy(content).replace(/\n{2,}/g, '\n');
    if (text === '') continue;
    const marker = ordered ? `${n++}. ` : '- ';
    const indent = ' '.repeat(marker.length);
    items.push(
      marker +
        text
          .split('\n')
          .map((l, i) => (i === 0 || l === '' ? l : indent + l))
          .join('\n'),
    );
  }
  return items.length === 0 ? '' : block(items.join('\n'), ctx);
}

function table(node: Element, ctx: Context): string {
  if (ctx.inCell) return children(node, ctx);
  const rows: string[][] = [];
  const collect = (parent: AnyNode): void => {
    for (const child of childrenOf(parent)) {
      if (!isElement(child)) continue;
      if (child.name === 'tr') {
        const cells: string[] = [];
        const inner: Context = { ...ctx, inCell: true };
        for (const cell of childrenOf(child)) {
          if (isElement(cell) && (cell.name === 'td' || cell.name === 'th')) cells.push(oneLine(children(cell, inner)).replace(/\|/g, '\\|'));
        }
        if (cells.length > 0) rows.push(cells);
      } else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') collect(child);
    }
  };
  collect(node);
  const caption = childrenOf(node).find((c): c is Element => isElement(c) && c.name === 'caption');
  const title = caption === undefined ? '' : oneLine(children(caption, { ...ctx, inCell: true }));
  if (rows.length === 0) return title === '' ? '' : block(title, ctx);
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  const out = [line(rows[0]), `| ${Array(width).fill('---').join(' | ')} |`, ...rows.slice(1).map(line)];
  return block((title === '' ? '' : `${title}\n\n`) + out.join('\n'), ctx);
}

/** An absolute URL for a link or image, or null for what is no link (javascript:, data:, unparsable). */
function absolute(href: string, base: string | null): string | null {
  let url: URL;
  try {
    url = base === null ? new URL(href.trim()) : new URL(href.trim(), base);
  } catch {
    return null;
  }
  if (!['http:', 'https:', 'mailto:', 'ftp:', 'tel:'].includes(url.protocol)) return null;
  // Markdown ends the destination at ")" or a space; the URL parser already encoded spaces.
  return url.href.replace(/\(/g, '%28').replace(/\)/g, '%29');
}

/** Backslash-escapes what Markdown would read as syntax (CommonMark allows escaping any ASCII punctuation); `>`, `#`, `-`, `+` and `1.` only where they would start a block. */
function escapeText(text: string): string {
  return text
    .replace(/\u0000/g, '\uFFFD')
    .replace(/[\\`*_[\]<~]/g, '\\$&')
    .replace(/^(\s*)([#+>-]|\d+\.)(?=\s|$)/, (_m, space: string, mark: string) => `${space}${mark.replace(/([#+>.-])$/, '\\$1')}`);
}

/** Blank-line separated blocks, each without stray spaces at its edges; at most one blank line in a row. */
function tidy(text: string): string {
  return text
    .split(/\n[ \t]*\n/)
    .map((chunk) => chunk.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((chunk) => chunk !== '')
    .join('\n\n');
}

function finish(text: string, ctx: Context): string {
  const out = tidy(text);
  if (ctx.code.length === 0) return out;
  // Each placeholder sits on a line of its own, after whatever prefix its list or quote gave it.
  return out.replace(/^([> ]*)\u0000(\d+)\u0000$/gm, (_m, prefix: string, i: string) =>
    ctx.code[Number(i)]
      .split('\n')
      .map((l) => (l === '' ? prefix.trimEnd() : prefix + l))
      .join('\n'),
  );
}
