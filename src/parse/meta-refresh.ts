/**
 * The URL of a `<meta http-equiv="refresh" content="…">`, read as HTML's
 * "shared declarative refresh steps" read it: `5; url=/next`, `0;URL='x'`,
 * `3, /next`. The page links there as surely as with an `<a href>`, so the
 * parser treats it as one more link (scope, robots.txt and limits apply).
 * A content with no URL ("10") reloads the page itself: no link.
 */

const WHITESPACE = /[\t\n\f\r ]/;

/** The unresolved URL text, or null when `content` names none or is malformed. */
export function refreshUrl(content: string): string | null {
  let i = 0;
  const skipSpace = () => {
    while (i < content.length && WHITESPACE.test(content[i])) i++;
  };
  skipSpace();
  const timeStart = i;
  while (i < content.length && /[0-9]/.test(content[i])) i++;
  if (i === timeStart && content[i] !== '.') return null;
  while (i < content.length && /[0-9.]/.test(content[i])) i++;
  if (i === content.length) return null;
  if (!/[;,\t\n\f\r ]/.test(content[i])) return null;
  skipSpace();
  if (content[i] === ';' || content[i] === ',') i++;
  skipSpace();
  const bare = content.slice(i);
  // "url" then "=" (whitespace around it allowed); without "=", the rest is the URL as written.
  const prefixed = /^url[\t\n\f\r ]*=[\t\n\f\r ]*/i.exec(bare);
  let url = prefixed ? bare.slice(prefixed[0].length) : bare;
  const quote = url[0] === '"' || url[0] === "'" ? url[0] : '';
  if (quote) {
    url = url.slice(1);
    const end = url.indexOf(quote);
    if (end !== -1) url = url.slice(0, end);
  }
  url = url.trim();
  return url === '' ? null : url;
}
