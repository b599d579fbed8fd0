#!/usr/bin/env node
/**
 * Benchmark 10b: memory in Redis per URL of a shared crawl (`--redis`).
 *
 * A throwaway redis-server; a RedisStore (dist/) adds N URLs only marked seen
 * (a fetched page's links already known), then N URLs queued with entries as
 * a crawl gives them: ~75-character URLs on 100 hosts, depth 1–3, each parent
 * (a page on the same host) linking ~10 of them. `INFO memory` used_memory
 * before and after each phase gives bytes per seen URL and per queued URL
 * (the queued figure includes that URL's seen-set member, and is reported
 * minus the URL's length); MEMORY USAGE of sample keys shows where it goes.
 * Then every queued URL is claimed and completed as a fetched page with its
 * history (status, fetch time, a strong ETag, Last-Modified, a sha256
 * digest): half with no outlinks, half with 20 (redis-history.ts): bytes per
 * completed page and per outlink, what `--recrawl` needs kept.
 *
 *   node bench/redis-memory.js [--urls N]
 */
import { createClient } from 'redis';
import { RedisStore } from '../dist/store/redis-store.js';
import { startRedisServer } from '../fixtures/redis-server.js';
import { round } from './lib/stats.js';

const HOSTS = 100;
const CHILDREN_PER_PARENT = 10;
const BATCH = 2_000;

/** The i-th URL of a phase: realistic shape, ~75 characters, on host i % 100. */
export function benchUrl(phase, i) {
  const h = i % HOSTS;
  const n = Math.floor(i / HOSTS);
  const host = `www.shop-${String(h).padStart(3, '0')}.example.com`;
  const section = ['products', 'category', 'blog/2025', 'help/articles'][n % 4];
  return `https://${host}/${section}/${phase}${n}-item-name-${(n * 7919) % 100_000}?ref=nav&p=${n % 50}`;
}

/** @param {{ urls?: number, log?: (s: string) => void }} [opts] */
export async function run(opts = {}) {
  const n = Number(opts.urls ?? 200_000);
  const log = opts.log ?? (() => {});
  const server = await startRedisServer();
  const admin = createClient({ url: server.url });
  await admin.connect();
  const store = new RedisStore({ url: server.url, crawlId: 'mem' });
  try {
    await store.open({ seeds: [benchUrl('seed', 0)], configFingerprint: 'bench' });
    const used = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))[1]);
    const keyOf = (url) => new URL(url).host;

    const before = await used();
    await addAll(store, n, (i) => {
      const url = benchUrl('s', i);
      return [url, keyOf(url), null];
    });
    const afterSeen = await used();

    let urlChars = 0;
    await addAll(store, n, (i) => {
      const url = benchUrl('q', i);
      urlChars += url.length;
      // The parent: a page on the same host that linked this one and ~9 more.
      const p = Math.floor(i / (HOSTS * CHILDREN_PER_PARENT)) * HOSTS + (i % HOSTS);
      const entry = { url, depth: 1 + (p % 3), parent: benchUrl('s', p), hops: 0, attempt: 0 };
      return [url, keyOf(url), entry];
    });
    const afterQueued = await used();
    // The seen set's cost past its fixed part (65,536 bucket keys): N more seen-only URLs.
    await addAll(store, n, (i) => {
      const url = benchUrl('t', i);
      return [url, keyOf(url), null];
    });
    const afterMore = await used();
    const counts = store.counts();
    if (counts.seen !== 3 * n || counts.queued !== n) throw new Error(`store counts ${JSON.stringify(counts)}, expected ${3 * n} seen and ${n} queued`);
    const parents = await admin.hLen(`${store.keyPrefix}par`);

    const P = store.keyPrefix;
    const sampleQueue = `${P}q:${keyOf(benchUrl('q', 0))}`;
    const qLen = await admin.lLen(sampleQueue);
    const qBytes = await admin.memoryUsage(sampleQueue, { SAMPLES: 0 });
    const bucket = `${P}s:0000`;
    const bBytes = await admin.memoryUsage(bucket, { SAMPLES: 0 });
    const bLen = await admin.sCard(bucket);
    const keys = await admin.dbSize();

    // Completed pages with their history (what a re-crawl needs): half without outlinks, half with 20.
    const half = Math.floor(n / 2);
    const beforePages = await used();
    await completeAll(store, 0, half, () => []);
    const afterPlain = await used();
    await completeAll(store, half, n - half, (i) => Array.from({ length: 20 }, (_, k) => benchUrl('q', (i + 1 + k * 97) % n)));
    const afterLinked = await used();
    const perPage = (afterPlain - beforePages) / half;
    const perLinked = (afterLinked - afterPlain) / (n - half);

    const meanUrl = urlChars / n;
    const perSeen = (afterSeen - before) / n;
    const perQueued = (afterQueued - afterSeen) / n;
    const perMoreSeen = (afterMore - afterQueued) / n;
    log(`  ${n.toLocaleString('en')} seen: +${round((afterSeen - before) / 2 ** 20)} MiB; ${n.toLocaleString('en')} queued: +${round((afterQueued - afterSeen) / 2 ** 20)} MiB; ${keys} keys`);
    log(`  sample queue ${sampleQueue}: ${qLen} entries, ${qBytes} B (${round(qBytes / qLen)} B each); bucket s:0000: ${bLen} members, ${bBytes} B`);
    const bench = `10. Redis memory (${n.toLocaleString('en')} URLs each)`;
    return [
      { bench, metric: 'bytes per seen URL in Redis', value: round(perSeen), unit: 'B', target: { op: '<=', value: 40 },
        note: `INFO used_memory delta over the first ${n.toLocaleString('en')} seen-only URLs, 65,536 bucket keys included; the next ${n.toLocaleString('en')} (after ${(2 * n).toLocaleString('en')}) cost ${round(perMoreSeen)} B each; a bucket of ${bLen} is ${bBytes} B (MEMORY USAGE)` },
      { bench, metric: 'bytes per queued URL in Redis, minus its length', value: round(perQueued - meanUrl), unit: 'B', target: { op: '<=', value: 48 },
        note: `${round(perQueued)} B per queued URL (entry, seen-set member, ${parents.toLocaleString('en')} interned parents), mean URL ${round(meanUrl)} characters; one queue of ${qLen}: ${round(qBytes / qLen)} B an entry (MEMORY USAGE)` },
      { bench, metric: 'bytes per completed page with history in Redis, beyond its queued entry', value: round(perPage), unit: 'B', target: { op: '<=', value: 48 },
        note: `INFO used_memory delta as ${half.toLocaleString('en')} queued URLs are completed with history and no outlinks (the queued entry is kept for a new pass, so only the history and the page key are new); with 20 outlinks each: ${round(perLinked)} B, ${round((perLinked - perPage) / 20)} B an outlink` },
    ];
  } finally {
    await store.close();
    await admin.quit().catch(() => {});
    await server.stop();
  }
}

/** Claims `count` queued URLs and completes each as a page fetched with history and `links(i)` as its outlinks. */
async function completeAll(store, from, count, links) {
  const digest = `sha256:${'A'.repeat(52)}`;
  for (let done = 0; done < count; done += BATCH) {
    const calls = [];
    for (let i = from + done; i < from + Math.min(count, done + BATCH); i++) {
      calls.push(
        (async () => {
          const lease = await store.claim(new URL(benchUrl('q', i)).host);
          if (!lease || !('id' in lease)) throw new Error('a queued bench URL could not be claimed');
          const page = { status: 200, fetchedAt: 1_764_000_000_000 + i * 1000, etag: `"${(i * 2654435761 >>> 0).toString(16)}-1"`, lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT', digest };
          await store.history.put(lease.entry.url, page, links(i));
          await store.complete(lease, '200');
        })(),
      );
    }
    await Promise.all(calls);
  }
}

/** Adds `n` URLs through the store, `BATCH` calls in flight at a time (node-redis pipelines them). */
async function addAll(store, n, make) {
  for (let from = 0; from < n; from += BATCH) {
    const calls = [];
    for (let i = from; i < Math.min(n, from + BATCH); i++) {
      const [url, key, entry] = make(i);
      calls.push(store.add(url, key, entry));
    }
    const answers = await Promise.all(calls);
    if (answers.some((a) => a !== true)) throw new Error('a bench URL was not new: the URL generator repeats itself');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
