/**
 * A config field (and flag) holding absolute http(s) URLs, e.g. `sitemaps`:
 * each one canonicalised as a seed is, each bad one reported at its own index.
 */
import { z } from 'zod';
import { canonicalize, urlProblem } from '../parse/url.js';
import { showValue } from './units.js';

export function urlList() {
  const item = z.string({ error: (i) => `expected an absolute http(s) URL as a string, got ${showValue(i.input)}` }).transform((text, ctx) => {
    const url = canonicalize(text.trim());
    if (url !== null) return url;
    ctx.addIssue({
      code: 'custom',
      message: `${urlProblem(text, 'expected an absolute http(s) URL like "https://example.com/sitemap.xml"')}, got ${showValue(text)}`,
      input: text,
    });
    return z.NEVER;
  });
  return z.array(item, { error: (i) => `expected a list of URLs like ["https://example.com/sitemap.xml"], got ${showValue(i.input)}` });
}
