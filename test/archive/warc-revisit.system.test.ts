/**
 * --warc in a re-crawl (archive/warc-record.ts): an unchanged page is a
 * WARC 1.1 revisit record pointing at the original capture, as Heritrix and
 * browsertrix write them; a changed or new page is a full response.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { twoGenerationSite } from '../../fixtures/generations.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';
import { readWarc, splitHttp } from '../support/warc-reader.js';

let web: Web | undefined;
let dir = '';
beforeAll(requireBuilt);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-warc-revisit-'));
});
afterEach(async () => {
  await web?.close();
  web = undefined;
  await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) => startCrawl(args, dir).done;
const HOST = 'a.localhost';

describe('--warc in a re-crawl', () => {
  it('writes unchanged pages as revisit records (server-not-modified, identical-payload-digest) referring to the first capture', async () => {
    web = await startWeb({ sites: { [HOST]: { robots: null, pages: twoGenerationSite(1) } } });
    const seed = web.url(HOST, '/');
    expect((await run(['--state', 's.db', '--warc', 'one.warc.gz', '-o', 'one.jsonl', '--rate', '20/s', seed])).code).toBe(0);
    web.setPages(HOST, twoGenerationSite(2));
    const second = await run(['--state', 's.db', '--recrawl', '--warc', 'two.warc.gz', '-o', 'two.jsonl', '--rate', '20/s']);
    expect(second.code, second.stderr).toBe(0);
    const first = new Map(jsonLines<{ url: string; fetchedAt: string }>(await readFile(join(dir, 'one.jsonl'), 'utf8')).map((r) => [r.url, r.fetchedAt]));
    const records = readWarc(await readFile(join(dir, 'two.warc.gz')));
    const captures = new Map(
      records
        .filter((r) => r.header('WARC-Type') !== 'request' && r.header('WARC-Type') !== 'warcinfo')
        .map((r) => [new URL(r.header('WARC-Target-URI')!).pathname, r]),
    );

    const notModified = captures.get('/s1')!;
    expect(notModified.header('WARC-Type')).toBe('revisit');
    expect(notModified.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/server-not-modified');
    expect(notModified.header('WARC-Refers-To-Target-URI')).toBe(web.url(HOST, '/s1'));
    // The original capture's WARC-Date, to the second the state keeps.
    expect(notModified.header('WARC-Refers-To-Date')!.slice(0, 19)).toBe(first.get(web.url(HOST, '/s1'))!.slice(0, 19));
    expect(splitHttp(notModified.block).startLine).toBe('HTTP/1.1 304 Not Modified');
    expect(splitHttp(notModified.block).body.length).toBe(0);

    const sameBody = captures.get('/p1')!; // no validators: downloaded again, the same digest
    expect(sameBody.header('WARC-Type')).toBe('revisit');
    expect(sameBody.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/identical-payload-digest');
    expect(sameBody.header('WARC-Payload-Digest')).toMatch(/^sha1:/);
    expect(sameBody.header('WARC-Truncated')).toBe('length');
    expect(splitHttp(sameBody.block).body.length).toBe(0); // the head only: the body is the original's

    for (const p of ['/changed-strong', '/new-page', '/gone404']) expect([p, captures.get(p)!.header('WARC-Type')]).toEqual([p, 'response']);
    // Every capture still has its request record.
    expect(records.filter((r) => r.header('WARC-Type') === 'request')).toHaveLength(captures.size);
  }, 60_000);
});
