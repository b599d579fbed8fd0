/**
 * docs/architecture.md "One page's trip" names, at each step, a file and the
 * function where it happens. This keeps those names honest: each `file.ts`
 * `name()` pair must name a file under src/ that defines `name` (a function,
 * a method or an interface member), so a rename or a move fails here until
 * the map is updated.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
const section = doc.slice(doc.indexOf("## One page's trip"), doc.indexOf('\n## ', doc.indexOf("## One page's trip") + 1));

/** Every "`dir/file.ts` `name()`" of the section, plus the bare "`name()`" that follow one within its step (they name the same file). */
function namedFunctions(text: string): Array<{ file: string; name: string }> {
  const out: Array<{ file: string; name: string }> = [];
  for (const step of text.split(/\n(?=\d+\. )/)) {
    let file: string | undefined;
    for (const m of step.replace(/\s+/g, ' ').matchAll(/`([\w/-]+\.ts)`|`(\w+)\(\)`/g)) {
      if (m[1] !== undefined) file = m[1];
      else if (file !== undefined) out.push({ file, name: m[2] });
    }
  }
  return out;
}

describe("docs/architecture.md: one page's trip", () => {
  const named = namedFunctions(section);

  it('has ten numbered steps naming files and functions', () => {
    expect(section.match(/^\d+\. /gm)).toHaveLength(10);
    expect(named.length).toBeGreaterThanOrEqual(15);
  });

  it.each(named.map((n) => [`${n.file} ${n.name}()`, n] as const))('%s is defined there', (_label, { file, name }) => {
    const path = join(root, 'src', file);
    expect(existsSync(path), `src/${file} does not exist`).toBe(true);
    const source = readFileSync(path, 'utf8');
    const defined = new RegExp(String.raw`(?:function\s+${name}\b|^\s+(?:(?:private|public|async|static|readonly)\s+)*${name}\s*[(<?]|^\s+${name}\s*:)`, 'm');
    expect(defined.test(source), `${name} is not defined in src/${file}`).toBe(true);
  });

  it('fails for a name the file does not define (the check can fail)', () => {
    const [first] = namedFunctions('1. `crawl/crawler.ts` `noSuchStep()` does nothing.');
    const source = readFileSync(join(root, 'src', first.file), 'utf8');
    expect(new RegExp(String.raw`function\s+${first.name}\b|^\s+${first.name}\s*[(<]`, 'm').test(source)).toBe(false);
  });
});
