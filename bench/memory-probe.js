#!/usr/bin/env node
/**
 * Measures, in its own process, the heap bytes per URL of the frontier and
 * of the seen set, at N URLs. Run by memory.js as
 *
 *   node --expose-gc bench/memory-probe.js queued|seen N
 *
 * and prints one JSON line. URLs are made the way the crawler makes them:
 * hrefs of realistic shape and length resolved by the parser's resolver,
 * then marked seen (and, for `queued`, pushed with a parent shared by the
 * ten links of one page). Bytes are the growth of V8 heap plus array buffers
 * after full collections, so strings, entries, columns and tables all count.
 */
import { MemoryFrontier } from '../dist/store/memory-frontier.js';
import * as parser from '../dist/parse/parser.js';
import { SeenSet } from '../dist/util/seen-set.js';
import { resolveLink } from '../dist/parse/url.js';

// Builds from before linkResolver existed resolved every href with resolveLink.
const linkResolver = parser.linkResolver ?? ((base) => (href) => resolveLink(href, base));

const [mode, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 1_000_000);
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

function heapBytes() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const HOSTS = 200;
const WORDS = ['catalog', 'products', 'blog', 'news', 'article', 'category', 'tag', 'search', 'user', 'docs', 'guide', 'en-us', 'archive'];
/** A deterministic mix of href shapes, like the links of real pages. */
function href(i) {
  const w = (k) => WORDS[(i * 7 + k * 13) % WORDS.length];
  switch (i % 10) {
    case 0: return `https://cdn${i % 3}.static-host-${i % HOSTS}.net/${w(1)}/${w(2)}/asset-${i}.html`; // absolute, other host
    case 1: return `${w(1)}-${i}.html?page=${i % 50}`; // relative to the page
    case 2: return `/${w(1)}/${w(2)}/${w(3)}-item-${i}?utm_source=list&ref=${i % 97}#reviews`; // with a fragment
    default: return `/${w(1)}/${w(2)}/${w(3)}-${i}-${w(4)}?sort=price&page=${i % 13}`;
  }
}

const bases = Array.from({ length: HOSTS }, (_, h) => `https://www.example-shop-${h}.com/${WORDS[h % WORDS.length]}/index.html`);
const resolvers = bases.map(linkResolver);

const before = heapBytes();
let kept;
let totalLength = 0;
if (mode === 'queued') {
  const frontier = new MemoryFrontier();
  let parent = null;
  for (let i = 0; i < count; i++) {
    const host = i % HOSTS;
    const url = resolvers[host](href(i));
    totalLength += url.length;
    if (i % 10 === 0) parent = url;
    frontier.markSeen(url);
    frontier.push(`www.example-shop-${host}.com`, { url, depth: 3, parent, hops: 0, attempt: 0 });
  }
  kept = frontier;
} else if (mode === 'seen') {
  const seen = new SeenSet();
  for (let i = 0; i < count; i++) {
    const url = resolvers[i % HOSTS](href(i));
    totalLength += url.length;
    seen.add(url);
  }
  kept = seen;
} else {
  throw new Error(`unknown mode ${mode}`);
}
const after = heapBytes();
const meanUrlLength = totalLength / count;
// What the URL text alone must cost in V8: a one-byte string is a 16-byte header plus its characters, 8-byte aligned.
const stringBytes = mode === 'queued' ? Math.ceil((16 + meanUrlLength) / 8) * 8 : 0;
process.stdout.write(JSON.stringify({
  mode,
  count,
  bytesPerUrl: (after - before) / count,
  meanUrlLength,
  stringBytesPerUrl: stringBytes,
  seenTableBytesPerUrl: mode === 'seen' ? kept.byteLength / kept.size : undefined,
}) + '\n');
