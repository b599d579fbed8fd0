/**
 * The config fields of rendering (src/render/): `render` (true, false or
 * "auto"; per host as `defaults.render` / `domains[…].render`, and at the top
 * level as the crawl-wide value that `--render` sets) and `renderOptions`
 * (how: browser, concurrency, timeout, what is blocked). The flags
 * (`--render`, `--render-concurrency`, `--render-timeout`, `--render-block`,
 * `--browser`) parse through these schemas, so a bad value reads the same
 * from a flag as from the file.
 */
import { z } from 'zod';
import { comment, fieldSchemas, once } from './fields.js';
import { showValue } from './units.js';
import type { RenderMode } from './settings-types.js';

const { duration, size, integer, regexList } = fieldSchemas;

/** Resource types a rendering browser is refused by default: none of them changes the DOM's links or text. */
export const DEFAULT_RENDER_BLOCK = ['image', 'media', 'font'] as const;

/** Playwright's resource types that `renderOptions.block` may name. */
export const RESOURCE_TYPES = [
  'document',
  'stylesheet',
  'image',
  'media',
  'font',
  'script',
  'texttrack',
  'xhr',
  'fetch',
  'eventsource',
  'websocket',
  'manifest',
  'other',
] as const;

export const RENDER_TEXT =
  'Render pages in a browser (Chromium) before reading their links, content and extract fields: true (every HTML page), false, or "auto" ' +
  '(only pages whose HTML looks like an application shell: an empty mount element, a <noscript> asking for JavaScript, or a script bundle with few links and little text). ' +
  "Every request the browser makes goes through its host's robots.txt and limits.";

/** true | false | "auto"; the flag's "true"/"false"/"on"/"off" strings too. */
export function renderMode() {
  return z.preprocess(
    (v) => (v === 'true' || v === 'on' ? true : v === 'false' || v === 'off' ? false : v),
    z.literal([true, false, 'auto'], { error: (i) => `expected true, false or "auto", got ${showValue(i.input)}` }),
  ) as unknown as z.ZodType<RenderMode, RenderMode | string>; // eslint-disable-line @typescript-eslint/no-redundant-type-constituents -- the input side documents both forms
}

/** A list of resource types, from the file (an array) or a flag ("image,font"; "none" for none). */
export function resourceTypes() {
  return z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === 'none' || v.trim() === '' ? [] : v.split(',').map((t) => t.trim())) : v),
    z.array(z.enum(RESOURCE_TYPES, { error: (i) => `expected resource types among ${RESOURCE_TYPES.join(', ')}, got ${showValue(i.input)}` }), {
      error: (i) => `expected a list of resource types like ["image", "font"], got ${showValue(i.input)}`,
    }),
  ) as unknown as z.ZodType<string[], string[] | string>;
}

export const renderOptionsSchema = once(() =>
  z.strictObject({
    $comment: comment(),
    browser: z
      .string()
      .min(1, { error: 'expected a path to a Chromium executable' })
      .optional()
      .describe(
        'The browser executable (Chromium or Chrome), like --browser. Default: CRAWL_BROWSER, else chromium (chromium-browser, google-chrome) on PATH.',
      ),
    concurrency: integer(1, 64)
      .prefault(4)
      .describe(
        'Pages rendered at once (1-64), like --render-concurrency; every request they make still counts against the global and per-host concurrency. Default 4.',
      ),
    timeout: duration({ positive: true })
      .prefault('30s')
      .describe(
        'A page not rendered within this is closed with error RENDER_TIMEOUT (its record keeps the fetched HTML\'s links), like --render-timeout. Default "30s".',
      ),
    block: resourceTypes()
      .prefault([...DEFAULT_RENDER_BLOCK])
      .describe(
        'Resource types the browser may not fetch, like --render-block. WebSockets, EventSource, manifests, pings and prefetches are always refused. Default ["image", "media", "font"].',
      ),
    blockUrls: regexList()
      .prefault([])
      .describe(
        'URLs the browser may not fetch (trackers, ads), as regular expressions (RE2 syntax, as for include) tested against the absolute URL. Default none.',
      ),
    recycleAfter: integer(1)
      .prefault(50)
      .describe('Pages rendered in one browser context before it is replaced by a fresh one (bounds what a context accumulates). Default 50.'),
    maxBrowserMemory: size()
      .prefault('1GiB')
      .describe(
        'Memory the browser\'s processes may hold (proportional set size, read from /proc on Linux; elsewhere only the restart every 1,000 pages applies) before the browser is restarted between pages; pages it holds finish first. Looked at every 5 pages. Default "1GiB".',
      ),
    cacheSize: size()
      .prefault('64MiB')
      .describe(
        'Bytes of scripts, stylesheets and other subresources kept for the whole crawl, so one used by many pages is fetched once (Cache-Control no-store, no-cache, private and max-age under 10 s are honoured). Default "64MiB".',
      ),
  }),
);

/** Top-level fields of the config file. */
export const renderFields = once(() => ({
  render: renderMode().optional().describe(`${RENDER_TEXT} Sets defaults.render, like --render; a domains entry's own render still wins. Default false.`),
  renderOptions: renderOptionsSchema().prefault({}).describe('How pages are rendered, when some host renders.'),
}));
