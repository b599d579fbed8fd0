/**
 * A deterministic corpus of realistic HTML pages for the parse benchmark:
 * what a crawler meets on news sites, shops and docs rather than the tiny
 * generated pages of the local web. Each page has a head full of meta, link
 * and script tags, inline scripts and styles (with markup-looking strings in
 * them that must not count as links), navigation menus, an article with
 * entities and inline links, a table, comments and a footer; hrefs come in
 * every common form: absolute, scheme-relative, root-relative, relative,
 * query-only, fragment-only, mailto:, javascript:, tel:.
 */

/** mulberry32: tiny, fast, the same on every platform. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('the of and to in is was for on that with as by at from his her an which this have are were be has or but not ' +
  'crawler politeness robots archive market report policy climate energy science health travel review product search ' +
  'municipal council budget election research university library museum weather football transport technology').split(' ');

/** @param {number} count @param {number} [seed] @returns {{ name: string, url: string, html: string }[]} */
export function generateCorpus(count, seed = 1) {
  const pages = [];
  for (let i = 0; i < count; i++) pages.push(page(prng(seed * 7919 + i), i));
  return pages;
}

function page(random, index) {
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const int = (n) => Math.floor(random() * n);
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const slug = () => `${pick(WORDS)}-${pick(WORDS)}-${int(100000)}`;
  const host = `www.${pick(['daily-news', 'shop-example', 'docs-portal', 'city-gov'])}.example`;
  const url = `https://${host}/${pick(['news', 'products', 'guide', 'services'])}/${slug()}.html`;
  const href = () => {
    const r = random();
    if (r < 0.35) return `/${pick(['news', 'tag', 'category', 'products'])}/${slug()}`;
    if (r < 0.5) return `https://${host}/${slug()}.html`;
    if (r < 0.6) return `https://other-${int(50)}.example/${slug()}?utm_source=${pick(WORDS)}&amp;utm_medium=link`;
    if (r < 0.7) return `${slug()}.html`;
    if (r < 0.75) return `../${pick(WORDS)}/${slug()}/`;
    if (r < 0.8) return `//cdn.example.net/${slug()}`;
    if (r < 0.85) return `?page=${int(40)}&amp;sort=${pick(['new', 'top'])}`;
    if (r < 0.9) return `#${pick(WORDS)}`;
    if (r < 0.94) return `/${slug()}#comments`;
    return pick([`mailto:desk@${host}`, 'javascript:void(0)', `tel:+1555${int(10000)}`]);
  };
  const anchor = (text) => `<a href="${href()}"${random() < 0.1 ? ' rel="nofollow noopener"' : ''}${random() < 0.3 ? ` class="link ${pick(WORDS)}"` : ''}>${text}</a>`;

  let head = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${words(6)} &ndash; ${host}</title>\n`;
  head += '<meta name="viewport" content="width=device-width, initial-scale=1">\n';
  head += `<meta name="description" content="${words(25)}">\n<meta property="og:title" content="${words(8)}">\n`;
  if (random() < 0.1) head += '<meta name="robots" content="noarchive">\n';
  for (let i = 0; i < 4 + int(6); i++) head += `<link rel="stylesheet" href="/static/css/${slug()}.css">\n`;
  head += `<script>window.dataLayer=window.dataLayer||[];var tpl='<a href="/not-a-link-${index}">x</a>';function f(a,b){return a<b&&b>a}</script>\n`;
  head += `<style>.nav a[href^="/"]{color:#333}.x>.y{margin:0 auto}@media (max-width:600px){.menu{display:none}}</style>\n`;
  for (let i = 0; i < 2 + int(5); i++) head += `<script src="https://cdn.example.net/js/${slug()}.js" async></script>\n`;
  head += '</head>\n';

  let nav = '<header><nav class="main-nav"><ul>';
  for (let i = 0; i < 20 + int(80); i++) nav += `<li class="menu-item">${anchor(words(2))}</li>`;
  nav += '</ul></nav></header>\n';

  let article = `<main><article><h1>${words(9)}</h1><p class="byline">By ${words(2)} &middot; <time datetime="2024-05-0${1 + int(9)}">May ${1 + int(28)}</time></p>\n`;
  for (let p = 0; p < 15 + int(50); p++) {
    let text = '';
    for (let s = 0; s < 3 + int(6); s++) text += `${words(8 + int(15))}${random() < 0.3 ? ` ${anchor(words(3))}` : ''}${random() < 0.1 ? ' &amp; ' : ', '}`;
    article += `<p>${text}</p>\n`;
    if (random() < 0.1) article += `<!-- ad slot ${p}: <a href="/ad">old</a> -->\n`;
    if (random() < 0.1) article += `<figure><img src="/img/${slug()}.jpg" alt="${words(5)}" width="800" height="450"><figcaption>${words(10)}</figcaption></figure>\n`;
  }
  if (random() < 0.5) {
    article += '<table class="data"><thead><tr><th>Name</th><th>Value</th><th>Link</th></tr></thead><tbody>';
    for (let r = 0; r < 5 + int(30); r++) article += `<tr><td>${words(2)}</td><td>${int(10000)}</td><td>${anchor('details')}</td></tr>`;
    article += '</tbody></table>\n';
  }
  article += '</article>\n<aside><h2>Related</h2><ul>';
  for (let i = 0; i < 5 + int(15); i++) article += `<li>${anchor(words(5))}</li>`;
  article += '</ul></aside></main>\n';

  let footer = '<footer><div class="cols">';
  for (let c = 0; c < 4; c++) {
    footer += `<div class="col"><h3>${words(2)}</h3><ul>`;
    for (let i = 0; i < 5 + int(10); i++) footer += `<li>${anchor(words(2))}</li>`;
    footer += '</ul></div>';
  }
  footer += `</div><p>&copy; 2024 ${host}</p></footer>\n<script>document.querySelectorAll('a').forEach(function(a){if(a.href.indexOf('</a>')>0){}})</script>\n</body>\n</html>\n`;

  return { name: `generated-${index}.html`, url, html: `${head}<body class="page">\n${nav}${article}${footer}` };
}
