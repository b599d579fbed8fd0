/**
 * The bundle gives the code scripts/undici-lean.cjs for `undici`: every value
 * src/ imports from undici must be there, and be undici's own (a name
 * missing from it would be undefined only in the bundled binary).
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);

/** The value names imported from 'undici' anywhere in src/ (type-only imports left out). */
async function importedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const files = (await readdir(join(root, 'src'), { recursive: true })).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const text = await readFile(join(root, 'src', file), 'utf8');
    for (const m of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'undici'/g)) {
      if (m[1]) continue;
      for (const part of m[2]
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        if (!part.startsWith('type ')) names.add(part.split(/\s+as\s+/)[0]);
      }
    }
    expect(text, `${file} imports undici in a form this test does not read`).not.toMatch(
      /import\s+\*\s+as\s+\w+\s+from\s+'undici'|import\s+\w+\s+from\s+'undici'|import\('undici'\)/,
    );
  }
  return names;
}

it('scripts/undici-lean.cjs provides every value src/ imports from undici, as undici exports it', async () => {
  const lean = require(join(root, 'scripts', 'undici-lean.cjs')) as Record<string, unknown>;
  const undici = require('undici') as Record<string, unknown>;
  const names = await importedNames();
  expect(names.size).toBeGreaterThan(0);
  for (const name of names) {
    expect(lean[name], `undici-lean.cjs lacks ${name}`).toBeDefined();
    expect(lean[name]).toBe(undici[name]);
  }
});
