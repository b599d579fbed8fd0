/**
 * The package as a user gets it: `npm pack` the repository (with the dist/
 * that `npm test` builds first), install the tarball into an empty project,
 * and use it there by name — the library example (docs/library.md) verbatim, a script
 * importing the API, the shipped type declarations and the `crawl` binary.
 * Slow-ish (an npm install, from the local cache), hence one test.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name: string; version: string };

/**
 * npm passes its own settings to the scripts it runs as npm_config_* variables;
 * a prefix among them could point the install below back at this repository.
 */
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(config_(local_)?prefix|config_global|config_location|package_|lifecycle_)/i.test(k)),
);
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env: npmEnv, maxBuffer: 16 * 1024 * 1024 });

/** The first ```js block of the "Use it as a library" section (docs/library.md, linked from the README). */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(root, 'docs', 'library.md'), 'utf8');
  const section = readme.split(/^## Use it as a library$/m)[1];
  const code = section && /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('docs/library.md has no ```js example under "## Use it as a library"');
  return code;
}

let dir: string;
beforeAll(async () => {
  await access(join(root, 'dist', 'index.js')).catch(() => {
    throw new Error('dist/ is missing: run `npm run build` (npm test does it)');
  });
  dir = await mkdtemp(join(tmpdir(), 'crawl-package-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('installs from its tarball and works by name: library, README example, types and the crawl binary', async () => {
  // --ignore-scripts: `prepare` would rebuild dist/ under tests running alongside.
  const packed = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root);
  const [tarball] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const shipped = tarball.files.map((f) => f.path);
  expect(shipped).toEqual(
    expect.arrayContaining([
      'bin/crawl.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/cli.js',
      'package.json',
      'README.md',
      'docs/library.md',
      'docs/cli-and-config.md',
    ]),
  );
  expect(shipped.filter((p) => /^(src|test|fixtures|bench)\//.test(p))).toEqual([]);

  const app = join(dir, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // --ignore-scripts: better-sqlite3 (only loaded for --state) would compile from source for a
  // minute here; the library and the CLI without --state must work without it anyway.
  await npm(['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', app, join(dir, tarball.filename)], app);

  // The declarations the package points TypeScript at are there.
  const installed = join(app, 'node_modules', pkg.name);
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { exports: { '.': { types: string } }; types: string };
  await access(join(installed, manifest.exports['.'].types));
  await access(join(installed, manifest.types));
  expect(await readFile(join(installed, manifest.types), 'utf8')).toMatch(/export \{ crawl\b/);

  // The library example, as a reader would paste it.
  await writeFile(join(app, 'example.mjs'), await readmeExample());
  const example = await run(process.execPath, ['example.mjs'], { cwd: app, timeout: 20_000 });
  const lines = example.stdout.trim().split('\n');
  expect(lines).toHaveLength(5);
  lines.forEach((line, i) => expect(line).toMatch(new RegExp(`^200 http://127\\.0\\.0\\.1:\\d+/${i === 0 ? '' : i}$`)));

  // The API by name against a multi-host local web.
  const web = pathToFileURL(join(root, 'fixtures', 'web.js')).href;
  await writeFile(
    join(app, 'check.mjs'),
    `import { crawl, explain, ConfigError } from '${pkg.name}';
import { startWeb } from '${web}';
const web = await startWeb({ sites: { 'pkg.localhost': { robots: 'User-agent: *\\nDisallow: /private\\n', pages: { '/': '<a href="/a">a</a> <a href="/private/x">p</a>', '/a': 'a' } } } });
const records = [];
for await (const r of crawl({ seeds: [web.url('pkg.localhost')], defaults: { rate: '100/s' }, emitSkipped: true })) records.push(r);
let problems;
try { crawl({ seeds: [web.url('pkg.localhost')], concurrency: 0 }); } catch (e) { problems = e instanceof ConfigError ? e.problems : String(e); }
const why = await explain(web.url('pkg.localhost', '/private/x'));
await web.close();
console.log(JSON.stringify({ records: records.map((r) => [r.type, new URL(r.url).pathname, r.status ?? r.reason]), problems, why: [why.wouldFetch, why.robots.rule] }));
`,
  );
  const check = await run(process.execPath, ['check.mjs'], { cwd: app, timeout: 20_000 });
  const out = JSON.parse(check.stdout) as { records: string[][]; problems: string[]; why: unknown[] };
  expect(out.records.sort()).toEqual([
    ['page', '/', 200],
    ['page', '/a', 200],
    ['skipped', '/private/x', 'robots'],
  ]);
  expect(out.problems).toEqual(['options: concurrency: expected an integer from 1 to 1000, got 0']);
  expect(out.why).toEqual([false, 'Disallow: /private']);

  // The command the package installs.
  const version = await run(join(app, 'node_modules', '.bin', 'crawl'), ['--version'], { cwd: app });
  expect(version.stdout.trim()).toBe(pkg.version);
}, 120_000);
