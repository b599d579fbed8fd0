/**
 * Whether a fetched page is rendered, and why (the record's `rendered` and
 * `renderReason`). A pure function of the host's `render` setting and the
 * response, table-tested in test/render/render-decision.test.ts.
 *
 * With `render: true` every 2xx HTML page is rendered ("configured"). With
 * `"auto"` the HTML fetched first decides, and only an application shell is
 * rendered, because rendering costs 10-100x a parse and most pages of most
 * sites need no browser. A shell is a page whose content is built by script:
 * - `empty-mount`: an empty mount element (`<div id="root"></div>`, `app`,
 *   `__next`, `__nuxt`, `svelte`, `ember-app`, `q-app`, or any element with
 *   `data-reactroot`/`ng-version`… left empty) and at least one script;
 * - `noscript`: a `<noscript>` that asks for JavaScript ("enable
 *   JavaScript", "requires JavaScript", "JavaScript is disabled");
 * - `script-shell`: fewer than SHELL_MAX_LINKS links that lead anywhere
 *   (hash-only links do not), a script bundle (`<script src>`), and less
 *   than SHELL_MAX_TEXT characters of visible text.
 * Anything else is `static` and not rendered; a page that is not 2xx HTML
 * is `not-html`.
 */
import type { RenderMode } from '../config/settings-types.js';

export type RenderReason = 'configured' | 'empty-mount' | 'noscript' | 'script-shell' | 'static' | 'not-html';

/** A page with fewer real links than this, a script bundle and little text is a shell. */
export const SHELL_MAX_LINKS = 5;
/** Visible characters (tags, scripts and styles removed, whitespace collapsed) below which a page with a bundle is a shell. */
export const SHELL_MAX_TEXT = 400;

const MOUNT_IDS = 'root|app|__next|__nuxt|___gatsby|svelte|ember-app|q-app|main-app|application|spa-root';
const EMPTY_MOUNT = new RegExp(`<(div|main|section|body)\\b[^>]*\\bid\\s*=\\s*["']?(?:${MOUNT_IDS})["']?[^>]*>\\s*(?:<!--[^]*?-->\\s*)*</\\1>`, 'i');
const NOSCRIPT =
  /<noscript\b[^>]*>[^]*?(enable\s+javascript|requires?\s+javascript|javascript\s+(is\s+)?(disabled|required|must be enabled)|turn\s+on\s+javascript|need\s+(to\s+enable\s+)?javascript)[^]*?<\/noscript>/i;
const SCRIPT_SRC = /<script\b[^>]*\bsrc\s*=/i;
const ANY_SCRIPT = /<script\b/i;
const LINK = /<a\b[^>]*\bhref\s*=\s*["']?\s*([^"'\s>]*)/gi;

export interface RenderDecision {
  render: boolean;
  reason: RenderReason;
}

export function renderDecision(mode: RenderMode, res: { status: number; contentType: string | null; body: string | null }): RenderDecision {
  const html = res.body !== null && res.status >= 200 && res.status < 300 && (res.contentType === 'text/html' || res.contentType === 'application/xhtml+xml');
  if (!html) return { render: false, reason: 'not-html' };
  if (mode === true) return { render: true, reason: 'configured' };
  const body = res.body!;
  if (ANY_SCRIPT.test(body) && EMPTY_MOUNT.test(body)) return { render: true, reason: 'empty-mount' };
  if (NOSCRIPT.test(body)) return { render: true, reason: 'noscript' };
  if (SCRIPT_SRC.test(body) && realLinks(body) < SHELL_MAX_LINKS && visibleText(body) < SHELL_MAX_TEXT) return { render: true, reason: 'script-shell' };
  return { render: false, reason: 'static' };
}

/** Links that lead to another document: not hash-only, not javascript:. */
function realLinks(body: string): number {
  let count = 0;
  for (const m of body.matchAll(LINK)) {
    const href = m[1] ?? '';
    if (href === '' || href.startsWith('#') || /^javascript:/i.test(href)) continue;
    count++;
  }
  return count;
}

function visibleText(body: string): number {
  return body
    .replace(/<(script|style|noscript|template)\b[^>]*>[^]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[^]*?-->/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, 'x')
    .replace(/\s+/g, ' ')
    .trim().length;
}
