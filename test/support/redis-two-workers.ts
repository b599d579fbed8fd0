/**
 * Two real worker processes of one Redis crawl of one generated site (60
 * pages at 5/s, one request at a time), returned once both have joined (each
 * has held a lease) and a few pages are fetched: the moment the Redis
 * losing-or-keeping tests pull the rug. Shared by redis-lost and
 * redis-restart, which run in parallel.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startWeb, type Web } from '../../fixtures/web.js';
import { jsonLines, sendLog, startCrawl } from './spawn-crawl.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const PAGES = 60;

/** Two workers crawling through `redisUrl` in `dir` (outputs w0.jsonl, w1.jsonl), with an admin client on the same Redis. */
export async function twoWorkers(redisUrl: string, dir: string, extra: string[] = []) {
  const web: Web = await startWeb({ sites: { 'a.localhost': { delayMs: 50, generate: { pages: PAGES, linksPerPage: 3 } } } });
  const crawlId = `lost-${randomUUID()}`;
  const args = (i: number) => [
    '--redis',
    redisUrl,
    '--crawl-id',
    crawlId,
    '--rate',
    '5/s',
    '--host-concurrency',
    '1',
    '--worker',
    `w${i}`,
    '-o',
    `w${i}.jsonl`,
    ...extra,
    web.url('a.localhost', '/'),
  ];
  // When each worker wrote each request (fixtures/send-log.js), appended as written: a killed or cut-off worker keeps its log.
  const sent = sendLog(join(dir, 'sent.jsonl'));
  const workers = [0, 1].map((i) => startCrawl(args(i), dir, sent.opts));
  // Mid-crawl: both workers have joined (each has held a lease) and a few pages are fetched.
  const { createClient } = await import('redis');
  const admin = createClient({ url: redisUrl });
  admin.on('error', () => {}); // a restart drops its connection too
  await admin.connect();
  const owners = new Set<string>();
  while (owners.size < 2 || web.requests().filter((e) => e.path !== '/robots.txt').length < 6) {
    const leases = await admin.hGetAll(`crawl:{${crawlId}}:leases`);
    for (const [field, owner] of Object.entries(leases)) if (field.endsWith(':o')) owners.add(owner);
    await sleep(10);
  }
  return { web, crawlId, workers, admin, sent };
}

/** Both workers' records, from their finished outputs or else their .partial ones. */
export async function workerOutputs(dir: string): Promise<Array<{ type: string; url: string }>> {
  const read = async (i: number) => readFile(join(dir, `w${i}.jsonl`), 'utf8').catch(() => readFile(join(dir, `w${i}.jsonl.partial`), 'utf8'));
  return (await Promise.all([0, 1].map(async (i) => jsonLines<{ type: string; url: string }>(await read(i))))).flat();
}
