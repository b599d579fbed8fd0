/** The loader-thread half of load-trace.js: one line per ESM module loaded. */
import { appendFileSync } from 'node:fs';

let target;

export function initialize(data) {
  target = data.target;
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('node:')) appendFileSync(target, `esm ${url}\n`);
  return nextLoad(url, context);
}
