/**
 * Credentials in URLs (`http://user:secret@host/`) are never repeated: not in
 * records, not in logs, not in error messages. A page may link with them, and
 * the crawler keeps such a URL as its own identity (the store, dedupe), but
 * everything it writes out goes through here first. The fetcher never sends
 * them either: it requests origin + path, with no Authorization header.
 */

// scheme "://" userinfo "@": userinfo runs to the last "@" before the
// authority ends ("/", "?", "#", "\" as WHATWG reads it, or whitespace).
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#\\]*@/gi;

/** The credentials of every URL in `text` replaced by `***` (`http://***@host/`). Cheap when there is no "@". */
export function redactCredentials(text: string): string {
  return text.includes('@') ? text.replace(USERINFO, '$1***@') : text;
}

/** A URL (a Redis URL, a proxy) without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the given URL';
  }
}
