/**
 * `--extract name=selector` rules, read and checked: config validation and
 * the flag need only this, never the DOM code that runs the rules
 * (extract.ts), so checking a config loads none of it.
 *
 * A rule is `name=selector[::text|::html|::attr(NAME)]`:
 * - no suffix or `::text`: the element's text, whitespace collapsed;
 * - `::html`: the element's outer HTML;
 * - `::attr(href)`: the attribute's value as written (null when absent).
 * `name` takes the first match (null when nothing matches); `name[]` takes
 * every match, as an array (empty when nothing matches; elements without the
 * attribute are left out).
 *
 * cheerio is loaded (synchronously, so config validation stays synchronous)
 * the first time a rule is checked: a crawl without --extract never loads it.
 */
import { createRequire } from 'node:module';
import type { ExtractRule } from '../config/settings-types.js';

type CheerioModule = typeof import('cheerio/slim');

let cheerioModule: CheerioModule | undefined;
/** cheerio, loaded at the first call (also by extract.ts, which runs the rules). */
export function cheerio(): CheerioModule {
  return (cheerioModule ??= createRequire(import.meta.url)('cheerio/slim') as CheerioModule);
}

/** An unusable rule; the message says why, without naming where it came from. */
export class ExtractRuleError extends Error {
  override readonly name = 'ExtractRuleError';
}

const NAME = /^([A-Za-z_][\w.-]*)(\[\])?$/;
const SUFFIX = /::(?:(text|html)|attr\(\s*([^\s()]+)\s*\))\s*$/;
/** Where selectors are tried at start-up: css-select compiles a selector only when it meets an element. */
const PROBE = '<html><head></head><body><p class="x">x</p></body></html>';

/** `name` (with `[]` for all matches) and `spec` (`selector` with an optional `::text`, `::html` or `::attr(x)`) → a checked rule. */
export function parseExtractRule(name: string, spec: string): ExtractRule {
  const named = NAME.exec(name);
  if (named === null || named[1] === '__proto__')
    throw new ExtractRuleError(`expected a name like "title" or "links[]" (letters, digits, _ . -), got ${JSON.stringify(name)}`);
  const suffix = SUFFIX.exec(spec);
  const selector = (suffix === null ? spec : spec.slice(0, suffix.index)).trim();
  if (selector === '') throw new ExtractRuleError(`"${name}": expected a CSS selector, got ${JSON.stringify(spec)}`);
  if (suffix === null && /::/.test(spec)) {
    throw new ExtractRuleError(`"${name}": ${JSON.stringify(spec)}: only ::text, ::html and ::attr(name) may follow the selector`);
  }
  try {
    cheerio().load(PROBE)(selector);
  } catch (error) {
    throw new ExtractRuleError(`"${name}": invalid CSS selector ${JSON.stringify(selector)}: ${(error as Error).message}`);
  }
  const take: ExtractRule['take'] = suffix?.[2] !== undefined ? { attr: suffix[2].toLowerCase() } : suffix?.[1] === 'html' ? 'html' : 'text';
  return { name: named[1], selector, take, all: named[2] !== undefined };
}

/** `name=selector…` as typed after --extract. */
export function parseExtractFlag(text: string): ExtractRule {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new ExtractRuleError(`expected name=selector (e.g. "title=h1" or "links[]=a::attr(href)"), got ${JSON.stringify(text)}`);
  return parseExtractRule(text.slice(0, eq).trim(), text.slice(eq + 1));
}
