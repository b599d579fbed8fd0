/**
 * Where --save-dir puts a URL's body: a relative path derived from the URL,
 * readable (`shop.example/products/mug.html`) and safe on any file system.
 * Pure: no file is touched here; save-dir.ts does the writing.
 *
 * Rules, applied per path segment of the parsed URL:
 * - The first segment is the host, lowercased, with `_PORT` for a port that
 *   is not the scheme's default (`127.0.0.1_8080`).
 * - Segments are percent-decoded so names read as the site meant them
 *   (`caf%C3%A9` → `café`), then every character that is unsafe in a file
 *   name somewhere is escaped back as `%XX`: `/ \ : * ? " < > |`, control
 *   characters (NUL included), `%` itself (so decoding never merges two URLs
 *   into one name) and `@` (the query separator below). `.` and `..` can
 *   never be a segment (the URL parser resolves them, encoded or not, and an
 *   escaped one would be `%2E`); a trailing dot or space, which Windows
 *   drops, and Windows device names (`con`, `nul.txt`, …) are escaped too.
 * - Nothing saved is a name tools act on when they meet it in a directory
 *   (a crawled site must never plant `.git/config` with a `core.fsmonitor`
 *   command that a shell prompt's `git status` runs): the leading dot of
 *   every dot-name is escaped (`.git` → `%2Egit`, `.envrc`, `.npmrc`,
 *   `.htaccess`, `.vscode`, … and any a tool adopts later: a list of the
 *   dangerous ones would always be one short), and so is the first
 *   character of the version-control names without a dot (`_darcs`, `CVS`,
 *   Fossil's `_FOSSIL_`) and of `HEAD`, which with `objects/` and `refs/`
 *   makes any directory a bare git repository. Compared case-insensitively
 *   (macOS and Windows fold case), in every segment; the code points HFS+
 *   ignores in names (zero-width joiners, direction marks, BOM) are always
 *   escaped, so `.g\u200Cit` cannot reach the disk as `.git` either; and
 *   a name shaped like a Windows 8.3 short name (`GIT~1`, which opens an
 *   existing `.git` there: a host directory lands in the user's own
 *   directory) has its `~` escaped.
 * - A directory-like path (empty, or ending in `/`) gets `index.html`.
 * - A query string is kept in the file name after `@`, escaped the same way:
 *   `/search?q=a/b` → `search@q=a%2Fb`.
 * - A segment longer than MAX_SEGMENT_BYTES keeps its start and ends in
 *   `~` and a hash of the whole; a path longer than MAX_PATH_BYTES becomes
 *   `HOST/~long/HASH` plus its extension. The fragment is dropped.
 *
 * Collisions (PathAllocator): names are compared case-folded and
 * NFC-normalised, as a case-insensitive file system (macOS, Windows) would.
 * A second URL that lands on a taken name gets `~HASH` (8 hex digits of its
 * URL's SHA-256) before the extension; a file name that is already a
 * directory, or a directory name that is already a file (`/a` then `/a/b`),
 * gets the same treatment for that segment, so everything below a renamed
 * directory stays together. The allocator remembers the names of one run.
 */
import { createHash } from 'node:crypto';

/** Longest file or directory name written, in UTF-8 bytes (file systems allow 255). */
export const MAX_SEGMENT_BYTES = 200;
/** Longest relative path written, in UTF-8 bytes (Windows and some tools trip past ~1,000 to 4,096). */
export const MAX_PATH_BYTES = 1000;

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
const WINDOWS_DEVICES = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
// Names tools act on without a leading dot; dot-names are all escaped. Compared upper- then lower-cased, so `ſ` (which folds to `s`) cannot hide one.
const TOOL_NAMES = /^(_darcs|cvs|_fossil_|head)$/;
// A Windows 8.3 short name (`GIT~1`, `PROGRA~1.TXT`): it opens whatever long name it aliases in that directory (`.git`).
const SHORT_NAME = /^(?=[^.]{1,8}(\.|$))[^.~]{1,6}~[0-9]+(\.[^.]{1,3})?$/;
// Unsafe somewhere: path separators, Windows-reserved characters, controls,
// our own `%` and `@`, and the code points HFS+ leaves out when comparing
// names (git's is_hfs_dotgit list), which would let `.g\u200Cit` be `.git`.
const UNSAFE = /[\u0000-\u001f\u007f/\\:*?"<>|%@\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** Hex digits of SHA-256 of `text`. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

const escapeChar = (c: string) => Buffer.from(c, 'utf8').toString('hex').toUpperCase().replace(/../g, '%$&');

/** One name, decoded and re-escaped so it is a safe, unambiguous file name. */
export function safeName(segment: string, decode = true): string {
  let text = segment;
  if (decode) {
    try {
      text = decodeURIComponent(segment);
    } catch {
      // Not UTF-8 once decoded (`%FF`): kept as the URL wrote it; its `%` is escaped below like any other.
    }
  }
  text = text.normalize('NFC').replace(UNSAFE, escapeChar);
  if (text === '.' || text === '..') text = text.replace(/\./g, '%2E');
  text = text.replace(/[. ]$/, escapeChar);
  if (WINDOWS_DEVICES.test(text)) text = `${text.slice(0, 2)}${escapeChar(text[2])}${text.slice(3)}`;
  // After the trailing-dot escape, so `CVS.` (which Windows reads as `CVS`) is already `CVS%2E`.
  if (text.startsWith('.') || TOOL_NAMES.test(text.toUpperCase().toLowerCase())) text = `${escapeChar(text[0])}${text.slice(1)}`;
  if (SHORT_NAME.test(text)) text = text.replace('~', '%7E');
  return shorten(text);
}

/** A name within MAX_SEGMENT_BYTES: its start, `~`, and a hash of the whole, extension kept. */
function shorten(name: string): string {
  if (Buffer.byteLength(name) <= MAX_SEGMENT_BYTES) return name;
  const ext = extensionOf(name);
  const keep = MAX_SEGMENT_BYTES - 1 - 16 - Buffer.byteLength(ext);
  return `${cutBytes(name.slice(0, name.length - ext.length), keep)}~${shortHash(name, 16)}${ext}`;
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, never splitting a character (or an escape). */
function cutBytes(text: string, bytes: number): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (used + size > bytes) break;
    out += ch;
    used += size;
  }
  return out.replace(/%[0-9A-F]?$/, '');
}

/** `.html` of `page.html`; '' when there is none (or it is implausibly long). */
export function extensionOf(name: string): string {
  const m = /\.[A-Za-z0-9]{1,8}$/.exec(name);
  return m && m.index > 0 ? m[0] : '';
}

/** `name~HASH.ext`: the same name told apart by a hash. */
export function withHash(name: string, hash: string): string {
  const ext = extensionOf(name);
  return shorten(`${name.slice(0, name.length - ext.length)}~${hash}${ext}`);
}

/** The host directory: lowercased host, `_PORT` for a non-default port. */
function hostDir(url: URL): string {
  const port = url.port !== '' && url.port !== DEFAULT_PORTS[url.protocol] ? `_${url.port}` : '';
  return safeName(`${url.hostname.toLowerCase()}${port}`, false);
}

/**
 * The relative path segments for a URL, before collisions are considered.
 * Throws TypeError for a string that is not an absolute URL.
 */
export function urlPathSegments(href: string): string[] {
  const url = new URL(href);
  const raw = url.pathname.split('/').slice(1); // pathname always starts with "/"
  const dirs = raw.slice(0, -1).filter((s) => s !== '');
  const last = raw.at(-1) ?? '';
  let file = last === '' ? 'index.html' : safeName(last);
  if (url.search.length > 1) file = shorten(`${file}@${safeName(url.search.slice(1))}`);
  const segments = [hostDir(url), ...dirs.map((d) => safeName(d)), file];
  if (Buffer.byteLength(segments.join('/')) <= MAX_PATH_BYTES) return segments;
  return [segments[0], '~long', `${shortHash(href, 32)}${extensionOf(last)}`];
}

const fold = (path: string) => path.normalize('NFC').toLowerCase();

/**
 * Hands out one relative path per URL, telling apart URLs whose paths would
 * meet on a case-insensitive file system or as a file and a directory of the
 * same name. Memory: one short string per file and directory handed out.
 */
export class PathAllocator {
  /** Folded relative paths → 'file' | 'dir', as handed out. */
  private readonly taken = new Map<string, 'file' | 'dir'>();
  /** Folded directory paths renamed because a file held the name → the name used instead. */
  private readonly renamed = new Map<string, string>();

  /** The path for `href` ("/"-separated, relative), now taken. */
  allocate(href: string): string {
    const segments = urlPathSegments(href);
    const out: string[] = [];
    for (let i = 0; i < segments.length - 1; i++) {
      const original = fold([...segments.slice(0, i + 1)].join('/'));
      let name = this.renamed.get(original) ?? segments[i];
      const candidate = fold([...out, name].join('/'));
      if (this.taken.get(candidate) === 'file') {
        // A file holds the name: this directory (and all below it) moves to a name of its own.
        name = withHash(name, shortHash(original));
        this.renamed.set(original, name);
      }
      out.push(name);
      this.taken.set(fold(out.join('/')), 'dir');
    }
    let file = segments.at(-1)!;
    if (this.taken.has(fold([...out, file].join('/')))) file = withHash(file, shortHash(href));
    // A hash of the URL is unique in practice; a second round covers a name that happened to exist already.
    for (let round = 2; this.taken.has(fold([...out, file].join('/'))); round++) file = withHash(segments.at(-1)!, shortHash(`${href}#${round}`));
    out.push(file);
    const path = out.join('/');
    this.taken.set(fold(path), 'file');
    return path;
  }
}
