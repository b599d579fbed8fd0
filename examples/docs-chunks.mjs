/**
 * A documentation site as Markdown chunks for a retrieval index: each page's
 * main content is cut at its headings (h1–h3), and each section goes out as
 * one item with the headings above it, so a chunk found by a search still
 * says where it sits ("Politeness and rate limits › One rate per host ›
 * Windows"). Links are followed as usual: the whole site is read.
 *
 *   node examples/docs-chunks.mjs                    # against the bundled demo docs
 *   crawl --handler examples/docs-chunks.mjs --items-only https://docs.example/
 *
 * Each item: {"type":"item","url":…,"data":{"title","headings","anchor","markdown"}}.
 */
import { pathToFileURL } from 'node:url';

/** Shorter sections are joined to the next one rather than indexed alone. */
const MIN_CHARS = 40;

/** @type {import('polite-crawler').PageHandler} */
export function handle(page, ctx) {
  if (!/html/.test(page.headers['content-type'] ?? '')) return;
  const $ = page.$();
  const main = $('main').first();
  if (main.length === 0) return;
  const title = main.find('h1').first().text().trim() || $('title').text().trim();
  /** @type {{ headings: string[], anchor: string, lines: string[] }[]} */
  const sections = [];
  /** @type {string[]} */
  let path = [];
  let current = { headings: [title], anchor: '', lines: /** @type {string[]} */ ([]) };
  for (const el of main.children().toArray()) {
    const tag = el.tagName.toLowerCase();
    const level = /^h([1-3])$/.exec(tag);
    if (level) {
      if (current.lines.length > 0) sections.push(current);
      const text = $(el).text().trim();
      path = [...path.slice(0, Number(level[1]) - 1), text];
      current = { headings: path.slice(), anchor: slug(text), lines: [] };
      continue;
    }
    const md = markdown($, el, page.finalUrl);
    // The site's own "Next:" and "See also" lines are navigation, not content.
    if (md && !/^(Next:|See also)/.test(md)) current.lines.push(md);
  }
  if (current.lines.length > 0) sections.push(current);
  let carry = '';
  for (const s of sections) {
    const text = [carry, ...s.lines].filter(Boolean).join('\n\n');
    if (text.length < MIN_CHARS && s !== sections.at(-1)) {
      carry = text;
      continue;
    }
    carry = '';
    ctx.push({ title, headings: s.headings, anchor: s.anchor, markdown: `${'#'.repeat(Math.min(s.headings.length, 3))} ${s.headings.at(-1)}\n\n${text}` });
  }
}

/**
 * One block element as Markdown: paragraphs with `code` and [links](…), code
 * blocks, lists.
 * @param {import('cheerio').CheerioAPI} $
 * @param {import('domhandler').Element} el
 * @param {string} base
 */
function markdown($, el, base) {
  const tag = el.tagName.toLowerCase();
  if (tag === 'pre') return '```\n' + $(el).text().replace(/\n+$/, '') + '\n```';
  if (tag === 'ul' || tag === 'ol')
    return $(el)
      .children('li')
      .toArray()
      .map((li, i) => `${tag === 'ol' ? `${i + 1}.` : '-'} ${inline($, li, base)}`)
      .join('\n');
  return inline($, el, base);
}

/**
 * @param {import('cheerio').CheerioAPI} $
 * @param {import('domhandler').AnyNode} node
 * @param {string} base
 * @returns {string}
 */
function inline($, node, base) {
  if (node.type === 'text') return /** @type {import('domhandler').Text} */ (node).data.replace(/\s+/g, ' ');
  if (node.type !== 'tag') return '';
  const el = /** @type {import('domhandler').Element} */ (node);
  const inner = el.children.map((c) => inline($, c, base)).join('');
  switch (el.tagName.toLowerCase()) {
    case 'code':
      return `\`${$(el).text()}\``;
    case 'strong':
    case 'b':
      return `**${inner}**`;
    case 'em':
    case 'i':
      return `*${inner}*`;
    case 'a': {
      const href = $(el).attr('href');
      return href ? `[${inner}](${new URL(href, base).href})` : inner;
    }
    default:
      return inner;
  }
}

/** @param {string} text */
function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { crawlDemo } = await import('./demo-web.mjs');
  process.exitCode = await crawlDemo(import.meta.url, 'docs.localhost', '/', ['--items-only']);
}
