/** Shared argv handling for running one benchmark file on its own. */
import { textTable } from './report.js';

/**
 * `--quick`, `--name value` pairs as numbers (`--pages-per-host 500` →
 * pagesPerHost: 500), and a `--flag` with no value (last, or before another
 * `--name`) as true.
 */
export function parseArgs(argv) {
  const out = { quick: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') out.quick = true;
    else if (arg.startsWith('--')) {
      const key = arg.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
      if (i + 1 >= argv.length || argv[i + 1].startsWith('--')) {
        out[key] = true;
        continue;
      }
      const value = argv[++i];
      out[key] = /^\d+(\.\d+)?$/.test(value ?? '') ? Number(value) : value;
    }
  }
  return out;
}

export function printRows(rows) {
  process.stdout.write(textTable(rows) + '\n');
}
