/**
 * `npm run build` (scripts/build.js) and the launcher's choice between the
 * bundle and tsc's files, on a two-module project in a temp dir with the
 * repository's own tsconfig.json, build script and launcher. The bundle
 * step there is a one-line stand-in that re-exports tsc's cli.js and says
 * so: what is under test is when tsc writes, what the build removes, and
 * which of the two the launcher runs.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/system-fixtures.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));

const STAND_IN_BUNDLE = `import { mkdirSync, writeFileSync } from 'node:fs';
mkdirSync(new URL('../dist/bundle/', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/bundle/cli.js', import.meta.url), "process.stdout.write('bundle ');\\nexport { main } from '../cli/cli.js';\\n");
`;

/** The project's cli.ts: prints the `word` that src/`module`.ts exports. */
const cliImporting = (module: string) =>
  `import { word } from '../${module}.js';\nexport async function main(): Promise<number> {\n  process.stdout.write(\`\${word}\\n\`);\n  return 0;\n}\n`;

describe('npm run build', () => {
  const tmp = useTempDir('crawl-build-');

  async function project(): Promise<{ dir: string; write: (file: string, text: string) => Promise<void> }> {
    const dir = tmp.path;
    await mkdir(join(dir, 'scripts'));
    await mkdir(join(dir, 'bin'));
    await mkdir(join(dir, 'src', 'cli'), { recursive: true });
    await copyFile(join(repo, 'scripts', 'build.js'), join(dir, 'scripts', 'build.js'));
    await copyFile(join(repo, 'bin', 'crawl.js'), join(dir, 'bin', 'crawl.js'));
    await copyFile(join(repo, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    await writeFile(join(dir, 'scripts', 'bundle.js'), STAND_IN_BUNDLE);
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    await symlink(join(repo, 'node_modules'), join(dir, 'node_modules'));
    const write = (file: string, text: string) => writeFile(join(dir, 'src', file), text);
    await write('word.ts', "export const word: string = 'one';\n");
    await write('cli/cli.ts', cliImporting('word'));
    return { dir, write };
  }

  const build = (dir: string) => run(process.execPath, [join(dir, 'scripts', 'build.js')], { cwd: dir });
  const launch = async (dir: string) => (await run(process.execPath, [join(dir, 'bin', 'crawl.js')], { cwd: dir })).stdout;
  const writtenAt = async (dir: string, file: string) => (await stat(join(dir, 'dist', file))).mtimeMs;

  it('compiles only what changed, removes what a deleted source left, and the launcher never runs a stale bundle', async () => {
    const { dir, write } = await project();
    await build(dir);
    expect(await launch(dir)).toBe('bundle one\n');

    // Nothing changed: tsc writes nothing.
    const written = () => Promise.all(['word.js', 'cli/cli.js', '.tsbuildinfo'].map((f) => writtenAt(dir, f)));
    const before = await written();
    await build(dir);
    expect(await written()).toEqual(before);

    // tsc alone after a change rewrites word.js (its declaration is the same, so not cli.js): the launcher runs tsc's files, not the older bundle.
    await write('word.ts', "export const word: string = 'two';\n");
    await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(dir, 'tsconfig.json')], { cwd: dir });
    expect(await launch(dir)).toBe('two\n');
    await build(dir);
    expect(await launch(dir)).toBe('bundle two\n');

    // A source renamed: its old outputs go, the new ones come.
    await rm(join(dir, 'src', 'word.ts'));
    await write('words.ts', "export const word = 'three';\n");
    await write('cli/cli.ts', cliImporting('words'));
    await build(dir);
    expect(await launch(dir)).toBe('bundle three\n');
    const left = await readdir(join(dir, 'dist'));
    expect(left.filter((f) => f.startsWith('word.'))).toEqual([]);
    expect(left).toContain('words.js');
  }, 60_000);

  it('a type error fails the build, nothing is bundled, and the next build does not take it for done', async () => {
    const { dir, write } = await project();
    await write('word.ts', 'export const word: number = "one";\n');
    const failed = { code: 1, stdout: expect.stringMatching(/src\/word\.ts.*TS2322/) };
    await expect(build(dir)).rejects.toMatchObject(failed);
    await expect(stat(join(dir, 'dist', 'bundle', 'cli.js'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(build(dir)).rejects.toMatchObject(failed);
  }, 60_000);
});
