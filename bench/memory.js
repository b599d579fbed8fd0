#!/usr/bin/env node
/**
 * Benchmark 3b: bytes per URL held by the frontier (a queued URL: its string,
 * its entry, its seen-set slot) and by the seen set alone (a URL already
 * fetched), at a million URLs. Each is measured in a fresh process
 * (memory-probe.js) so nothing else is on the heap. The seen set's worst case
 * over its growth cycle is computed exactly from its table size.
 *
 *   node bench/memory.js [--quick] [--urls N]
 */
import { readFileSync } from 'node:fs';
import { SeenSet, fingerprint } from '../dist/util/seen-set.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { round } from './lib/stats.js';

/** @param {{ quick?: boolean, urls?: number }} [opts] */
export async function run(opts = {}) {
  const urls = opts.urls ?? 1_000_000;
  const scratch = scratchDir();
  try {
    const probe = async (mode) => {
      const out = scratch.file(`${mode}.json`);
      expectSuccess(`memory probe (${mode})`, await runNode(['bench/memory-probe.js', mode, String(urls)], { nodeArgs: ['--expose-gc'], stdoutFile: out }));
      return JSON.parse(readFileSync(out, 'utf8'));
    };
    const queued = await probe('queued');
    const seen = await probe('seen');
    const bench = `3. Memory (${urls.toLocaleString('en')} URLs)`;
    return [
      { bench, metric: 'bytes per queued URL (frontier + seen set)', value: round(queued.bytesPerUrl), unit: 'B', target: { op: '<=', value: 150 },
        note: `mean URL ${round(queued.meanUrlLength)} characters, of which the string itself is ~${queued.stringBytesPerUrl} B` },
      { bench, metric: 'bytes per seen-only URL', value: round(seen.bytesPerUrl, 3), unit: 'B', target: { op: '<=', value: 16 },
        note: `53-bit fingerprints, open addressing; worst case over the growth cycle ${round(worstSeenBytes(urls), 3)} B` },
    ];
  } finally {
    scratch.cleanup();
  }
}

/** The most table bytes per entry at any size from 1,024 to `upTo` (just after each growth). */
function worstSeenBytes(upTo) {
  const s = new SeenSet();
  let worst = 0;
  for (let i = 0; i < upTo; i++) {
    s.addFingerprint(fingerprint(`u${i}`));
    if (s.size >= 1024) worst = Math.max(worst, s.byteLength / s.size);
  }
  return worst;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run(parseArgs(process.argv.slice(2))));
}
