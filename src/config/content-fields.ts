/**
 * The config fields of what page records carry (src/content/): `content`,
 * `maxContent`, `extract`, `followCanonical`. Spread into the file schema;
 * the `--extract` flag goes through `extractFlags` so a bad selector reads
 * the same from a flag as from the file.
 */
import { z } from 'zod';
import { fieldSchemas, once } from './fields.js';
import { ExtractRuleError, parseExtractFlag, parseExtractRule } from '../content/extract-rules.js';
import type { ExtractRule } from './settings-types.js';
import { showValue } from './units.js';
import { knownPurposes, purposeOf, type Purpose } from '../usage/usage-vocab.js';

/** `purpose`: a list, or a comma-separated string as the flag gives it → the uses, each once; an unknown name is a problem naming the known ones. */
export function purposeList() {
  return z
    .union([z.string(), z.array(z.string())], {
      error: (i) => `expected a list of uses like ["search"] or "train-ai,ai-input", got ${showValue(i.input)}`,
    })
    .transform((value, ctx): Purpose[] => {
      const names = Array.isArray(value) ? value : value.split(',');
      const out: Purpose[] = [];
      names.forEach((raw, i) => {
        const name = raw.trim();
        if (name === '') return;
        const purpose = purposeOf(name);
        // A list's problem names its index, as every other list field's does; the flag's string has none.
        if (purpose === undefined)
          ctx.addIssue({
            code: 'custom',
            message: `unknown use ${JSON.stringify(name)}; known: ${knownPurposes()}`,
            input: name,
            path: Array.isArray(value) ? [i] : [],
          });
        else if (!out.includes(purpose)) out.push(purpose);
      });
      return out;
    });
}

/** `content` is cut at this many UTF-8 bytes when the config sets no `maxContent`. */
export const DEFAULT_MAX_CONTENT = '1MiB';

const CONTENT_FORMATS = ['text', 'html', 'markdown'] as const;

/** `{ "title": "h1", "links[]": "a::attr(href)" }` → checked rules, each problem at its own key. */
function extractMap() {
  return z
    .record(z.string(), z.string({ error: (i) => `expected a CSS selector string like "h1" or "a::attr(href)", got ${showValue(i.input)}` }), {
      error: (i) => `expected an object of name: selector, like {"title": "h1"}, got ${showValue(i.input)}`,
    })
    .transform((map, ctx): ExtractRule[] => {
      const rules: ExtractRule[] = [];
      for (const [name, spec] of Object.entries(map)) {
        try {
          rules.push(parseExtractRule(name, spec));
        } catch (error) {
          if (!(error instanceof ExtractRuleError)) throw error;
          ctx.addIssue({ code: 'custom', message: error.message.replace(/^"[^"]*": /, ''), path: [name], input: spec });
        }
      }
      return rules;
    });
}

/** The repeatable `--extract name=selector` flag → rules. */
export function extractFlags() {
  return z.array(z.string()).transform((items, ctx): ExtractRule[] => {
    const rules: ExtractRule[] = [];
    for (const item of items) {
      try {
        rules.push(parseExtractFlag(item));
      } catch (error) {
        if (!(error instanceof ExtractRuleError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.message, input: item });
      }
    }
    return rules;
  });
}

export const contentFormat = () => fieldSchemas.oneOf(CONTENT_FORMATS);

/** Top-level fields of the config file. */
export const contentFields = once(() => ({
  content: contentFormat()
    .optional()
    .describe(
      'Put each HTML page\'s main content in its record as "content": "text", "html" or "markdown". Main content: <main>, else [role=main], else the only <article>, else <body> without nav, aside and page-level header/footer. Default none.',
    ),
  maxContent: fieldSchemas
    .size()
    .prefault(DEFAULT_MAX_CONTENT)
    .describe('Cap on "content" and on each extracted string, in UTF-8 bytes; a cut content has "contentTruncated": true. Default "1MiB".'),
  extract: extractMap()
    .prefault({})
    .describe(
      'Fields read from each HTML page with CSS selectors (cheerio), into the record\'s "extract" object: {"title": "h1", "links[]": "a::attr(href)"}. ' +
        '"name" takes the first match (null if none), "name[]" every match; append ::text (default), ::html or ::attr(NAME). Default none.',
    ),
  purpose: purposeList()
    .prefault([])
    .describe(
      'What the crawl\'s output is for: "search", "train-ai" (or "ai-train"), "ai-input" (or "ai-use"), "tdm". A page whose response states "n" for one of them (Content-Usage, tdm-reservation, noai) keeps its record, status and links, but its content, extract, saved body and WARC records are withheld and the record says "usageDenied"; no page handler runs on it. Default none: records only say what was stated.',
    ),
  fetchDenied: fieldSchemas
    .boolean()
    .prefault(false)
    .describe(
      'With "purpose": request a page robots.txt states "n" for a declared purpose anyway (Content-Usage, Content-Signal), for its links only: its content is withheld as for a page whose response says "n". Default false: such a page is not requested, and gets a "usage-denied" skip.',
    ),
  archiveNoarchive: fieldSchemas
    .boolean()
    .prefault(false)
    .describe(
      'Keep pages that say noarchive (X-Robots-Tag, <meta name="robots">) in --save-dir and --warc as well: for archivists whose archive is not public. Default false: such a page keeps its record but is not saved, and its record says "notArchived".',
    ),
  followCanonical: fieldSchemas
    .boolean()
    .prefault(false)
    .describe(
      'Use rel=canonical for dedupe: a page whose in-scope canonical URL differs from its own marks that URL seen, so it is not queued (if queued or fetched already, nothing changes). Default false.',
    ),
}));
