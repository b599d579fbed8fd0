#!/usr/bin/env node
/**
 * `npm run lint`: ESLint, which also reports TypeScript's errors in src/,
 * test/ and vitest.config.ts (scripts/eslint-type-errors.js: from the
 * program its type-aware rules build anyway, instead of a tsc run that
 * built a second one), and Prettier's check, run at once rather than one
 * after another. Each tool's output is printed whole once it finishes, in a
 * fixed order, so the log reads as before; the exit code is 1 if any of
 * them failed.
 *
 * Prettier keeps its cache under node_modules/.cache (exact: it re-checks
 * what changed). ESLint runs uncached: its type-aware rules and the type
 * errors read other files than the one they judge, which its cache does not
 * track.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

const cache = 'node_modules/.cache/polite-crawler';
mkdirSync(cache, { recursive: true });

/** A package's own command file, from its package.json (some packages do not export their bin paths). */
const bin = (pkg, name) => {
  const dir = new URL(`../node_modules/${pkg}/`, import.meta.url);
  const { bin: bins } = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8'));
  return new URL(typeof bins === 'string' ? bins : bins[name], dir).pathname;
};
const tools = [
  ['eslint', bin('eslint', 'eslint'), ['src', 'test', 'vitest.config.ts']],
  [
    'prettier',
    bin('prettier', 'prettier'),
    ['--check', '--log-level', 'warn', '--cache', '--cache-location', `${cache}/prettier`, 'src/**/*.ts', 'test/**/*.ts'],
  ],
];

const runs = tools.map(
  ([name, file, args]) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      const out = [];
      child.stdout.on('data', (d) => out.push(d));
      child.stderr.on('data', (d) => out.push(d));
      child.on('error', (err) => resolve({ name, code: 1, text: `${err.message}\n` }));
      child.on('close', (code) => resolve({ name, code: code ?? 1, text: Buffer.concat(out).toString() }));
    }),
);

let failed = false;
for (const run of runs) {
  const { name, code, text } = await run;
  if (text !== '') process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  if (code !== 0) {
    failed = true;
    process.stdout.write(`lint: ${name} failed (exit ${code})\n`);
  }
}
process.exitCode = failed ? 1 : 0;
