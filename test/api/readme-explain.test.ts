/**
 * The description of `explain()` (docs/library.md) names the fields the result really
 * has (it promised `scope.verdict`, which never existed: the field is
 * `inScope`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { explain } from '../../src/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('docs/library.md names exactly the fields of explain().scope', async () => {
  const readme = await readFile(join(root, 'docs', 'library.md'), 'utf8');
  const paragraph = /`await explain\(url, options\)`[^]*?\n\n/.exec(readme)?.[0] ?? '';
  const listed = /`scope` \(([^)]*)\)/.exec(paragraph.replace(/\s+/g, ' '))?.[1];
  expect(listed, 'docs/library.md: "`scope` (…)" in the explain() paragraph').toBeDefined();
  const named = new Set([...listed!.matchAll(/`(\w+)`/g)].map((m) => m[1]));

  // No network: a robots.txt is given and the host is an address literal.
  const inside = await explain('http://127.0.0.1:9/a', { robotsTxt: '', allowPrivate: true });
  const outside = await explain('http://127.0.0.2:9/b', { seeds: ['http://127.0.0.1:9/'], robotsTxt: '', allowPrivate: true });
  expect(outside.scope.inScope).toBe(false);
  const actual = new Set([...Object.keys(inside.scope), ...Object.keys(outside.scope)]);
  expect([...named].sort()).toEqual([...actual].sort());
});
