/**
 * `--extract`'s rules (extract-rules.ts) run on a page's DOM with cheerio's
 * CSS selectors (jQuery extensions such as `:first` and `:contains()`
 * included). Loaded with the rest of content/ only by a crawl that asks for
 * content or extract (crawl/page-outcome.ts `loadContent`).
 */
import type { ExtractRule } from '../config/settings-types.js';
import { DomUtils } from 'htmlparser2';
import type { Document } from './dom.js';
import { cheerio } from './extract-rules.js';

/** A value of the `extract` object. */
export type ExtractValue = string | null | string[];

/** Markup as written in the page: characters as they are, only what must be escaped escaped. */
export const HTML_OUT = { decodeEntities: true, encodeEntities: 'utf8' } as const;

/**
 * Runs the rules on a parsed page. Strings longer than `maxBytes` (UTF-8)
 * are cut, as `content` is.
 */
export function runExtract(doc: Document, rules: readonly ExtractRule[], cut: (text: string) => string): Record<string, ExtractValue> {
  const $ = cheerio().load(doc);
  const out: Record<string, ExtractValue> = {};
  for (const rule of rules) {
    const found = $(rule.selector);
    const valueOf = (i: number): string | null => {
      const el = found.eq(i);
      const take = rule.take;
      if (take === 'text')
        return cut(
          el
            .text()
            .replace(/[\t\n\f\r ]+/g, ' ')
            .trim(),
        );
      if (take === 'html') return cut(DomUtils.getOuterHTML(el.get(0)!, HTML_OUT));
      const value = el.attr(take.attr);
      return value === undefined ? null : cut(value);
    };
    if (!rule.all) {
      out[rule.name] = found.length === 0 ? null : valueOf(0);
      continue;
    }
    const values: string[] = [];
    for (let i = 0; i < found.length; i++) {
      const value = valueOf(i);
      if (value !== null) values.push(value);
    }
    out[rule.name] = values;
  }
  return out;
}
