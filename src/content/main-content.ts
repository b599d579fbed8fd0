/**
 * Which part of a page is its main content, by markup alone (no scoring):
 *
 * 1. the first `<main>`, else the first element with `role="main"`;
 * 2. else the page's `<article>`, when it has exactly one (several articles
 *    are a listing, whose content is all of them);
 * 3. else `<body>` (the whole document when there is none) without its
 *    chrome: `<nav>` and `<aside>` anywhere, and `<header>` and `<footer>`
 *    unless they sit inside an `<article>`, `<section>` or `<main>` (there
 *    they belong to that content, like an article's byline).
 *
 * Whatever is chosen loses what a reader never sees: `script`, `style`,
 * `noscript`, `template`, `svg`, `head`, `title` and elements with a `hidden`
 * attribute, and comments.
 * The DOM is pruned in place.
 */
import { DomUtils } from 'htmlparser2';
import { attrTokens, childrenOf, isElement, type AnyNode, type Document, type Element } from './dom.js';

/** Never visible text. */
const INVISIBLE = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'title']);
/** Page chrome, removed when the content is the whole body. */
const CHROME = new Set(['nav', 'aside']);
/** Chrome only at page level: inside these they belong to the content. */
const PAGE_LEVEL = new Set(['header', 'footer']);
const SECTIONING = new Set(['article', 'section', 'main']);

export interface MainContent {
  /** The chosen element, or the document when it has no `<body>`. */
  root: Element | Document;
  /** How it was chosen. */
  via: 'main' | 'role=main' | 'article' | 'body' | 'document';
}

/** Picks the main content of `doc` and prunes it (see the module comment). */
export function mainContent(doc: Document): MainContent {
  let main: Element | undefined;
  let roleMain: Element | undefined;
  let body: Element | undefined;
  const articles: Element[] = [];
  walk(doc, (el, insideArticle) => {
    if (el.name === 'main') main ??= el;
    else if (el.name === 'body') body ??= el;
    else if (el.name === 'article' && !insideArticle) articles.push(el);
    if (roleMain === undefined && attrTokens(el, 'role').includes('main')) roleMain = el;
  });
  const picked: MainContent =
    main !== undefined
      ? { root: main, via: 'main' }
      : roleMain !== undefined
        ? { root: roleMain, via: 'role=main' }
        : articles.length === 1
          ? { root: articles[0], via: 'article' }
          : body !== undefined
            ? { root: body, via: 'body' }
            : { root: doc, via: 'document' };
  prune(picked.root, picked.via === 'body' || picked.via === 'document', false);
  return picked;
}

/** Visits visible elements in document order; `insideArticle`: an ancestor is an `<article>`. */
function walk(node: AnyNode, visit: (el: Element, insideArticle: boolean) => void, insideArticle = false): void {
  for (const child of childrenOf(node)) {
    if (!isElement(child) || isInvisible(child)) continue;
    visit(child, insideArticle);
    walk(child, visit, insideArticle || child.name === 'article');
  }
}

function isInvisible(el: Element): boolean {
  return INVISIBLE.has(el.name) || el.attribs.hidden !== undefined;
}

function prune(node: AnyNode, chrome: boolean, inSection: boolean): void {
  // A copy: removing changes the list.
  for (const child of [...childrenOf(node)]) {
    if (child.type === 'comment' || child.type === 'directive' || child.type === 'cdata') {
      DomUtils.removeElement(child);
      continue;
    }
    if (!isElement(child)) continue;
    const drop = isInvisible(child) || (chrome && (CHROME.has(child.name) || (!inSection && PAGE_LEVEL.has(child.name))));
    if (drop) DomUtils.removeElement(child);
    else prune(child, chrome, inSection || SECTIONING.has(child.name));
  }
}
