#!/usr/bin/env node
/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by
 * function and by file, and inclusive time for functions, so a profile can be
 * read in a terminal and quoted in BENCHMARKS.md.
 *
 *   node bench/profile-summary.js CPU.….cpuprofile [--top 30]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const topIndex = args.indexOf('--top');
const top = topIndex === -1 ? 30 : Number(args[topIndex + 1]);
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.js FILE.cpuprofile [--top N]\n');
  process.exit(2);
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

// Sample counts -> time: each sample lasts until the next one.
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i + 1] ?? 0;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** A readable place: package name for node_modules, path below the cwd for ours, node: internals. */
function where(url) {
  if (!url) return '(native)';
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = p.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (p.startsWith('node:')) return p;
  return path.relative(process.cwd(), p);
}

const fnSelf = new Map();
const fileSelf = new Map();
const fnTotal = new Map();
for (const [id, us] of selfUs) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const label = `${cf.functionName || '(anonymous)'} ${where(cf.url)}:${cf.lineNumber + 1}`;
  fnSelf.set(label, (fnSelf.get(label) ?? 0) + us);
  const w = cf.url ? where(cf.url) : `(${cf.functionName || 'native'})`;
  fileSelf.set(w, (fileSelf.get(w) ?? 0) + us);
  // Inclusive: credit every distinct ancestor frame once.
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parentOf.get(cur)) {
    const f = byId.get(cur).callFrame;
    const l = `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
    if (seen.has(l)) continue;
    seen.add(l);
    fnTotal.set(l, (fnTotal.get(l) ?? 0) + us);
  }
}

const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
show('Self time by file/package', fileSelf);
show('Self time by function', fnSelf);
show('Inclusive time by function', fnTotal);
