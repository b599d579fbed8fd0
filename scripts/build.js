#!/usr/bin/env node
/**
 * `npm run build`: tsc, then the bundle (scripts/bundle.js).
 *
 * tsc runs in build mode (`tsc -b`) with its state in dist/.tsbuildinfo:
 * when no source changed since the last build it checks nothing and writes
 * nothing (0.2 s instead of ~8 s), and after a change it checks and writes
 * what the change affects. `npm install` builds (the `prepare` script) and
 * `npm test` builds again, so a fresh clone's test run no longer compiles
 * everything twice. Deleting dist/ deletes that state with it: the next
 * build is a whole one.
 *
 * Build mode never removes what a deleted or renamed source left in dist/,
 * which the whole-folder delete before each build used to do, so that is
 * done here: every compiled file without its source goes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const compiled = spawnSync(process.execPath, [tsc, '-b', join(root, 'tsconfig.json')], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

/** What tsc writes for src/NAME.ts: NAME.js, NAME.d.ts and their maps. */
const OUTPUT = /^(.*?)\.(?:js|d\.ts)(?:\.map)?$/;
const prune = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (file === join(dist, 'bundle')) continue; // the bundle's own step rebuilds it whole
      prune(file);
      if (readdirSync(file).length === 0) rmSync(file, { recursive: true });
      continue;
    }
    const name = OUTPUT.exec(relative(dist, file));
    if (name && !existsSync(join(root, 'src', `${name[1]}.ts`))) rmSync(file);
  }
};
prune(dist);

const bundled = spawnSync(process.execPath, [join(root, 'scripts/bundle.js')], { stdio: 'inherit' });
process.exit(bundled.status ?? 1);
