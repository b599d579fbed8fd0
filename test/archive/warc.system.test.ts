/**
 * --warc: the file a crawl writes, read back member by member
 * (support/warc-reader.ts): a warcinfo record first, a request and a
 * response record per fetched URL, digests that match, truncation marked,
 * the response bytes as the server sent them; the resume and bad-name
 * rules; and, where Python's warcio is installed, its own `check`/`index`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { base32 } from '../../src/archive/warc-record.js';
import { main } from '../../src/cli/cli.js';
import type { PageRecord } from '../../src/types.js';
import { memoryIo } from '../support/memory-io.js';
import { readWarc, splitHttp, type WarcRecordRead } from '../support/warc-reader.js';

const run = promisify(execFile);

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const sha1 = (...parts: Buffer[]) => {
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return `sha1:${base32(h.digest())}`;
};

function pages(out: string): PageRecord[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PageRecord)
    .filter((r) => r.type === 'page');
}

const PNG = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 255, 0, 128]);
const ZIPPED = gzipSync('<title>z</title>zipped page');

async function crawlSite(extra: string[] = []): Promise<{ dir: string; file: Buffer; records: WarcRecordRead[]; pages: PageRecord[]; err: string }> {
  web = await startWeb({
    sites: {
      'a.localhost': {
        robots: 'User-agent: *\nAllow: /\n',
        pages: {
          '/': '<title>home</title><a href="/img.png">i</a> <a href="/z">z</a> <a href="/chunked">c</a> <a href="/old">o</a> <a href="/missing">m</a> <a href="/big.bin">b</a>',
          '/img.png': { headers: { 'content-type': 'image/png', 'x-custom-case': 'Kept' }, body: PNG },
          '/z': { headers: { 'content-encoding': 'gzip' }, body: ZIPPED },
          '/chunked': { chunks: { parts: ['<p>one ', 'two ', 'three</p>'] } },
          '/old': { status: 301, headers: { location: '/new' } },
          '/new': 'new place',
          '/missing': { status: 404, body: 'gone' },
          '/big.bin': { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(40_000, 1) },
        },
      },
    },
  });
  const dir = await mkdtemp(join(tmpdir(), 'warc-'));
  const io = memoryIo(dir);
  const code = await main(['--warc', 'site.warc.gz', '--max-body', '16KiB', '--rate', '200/s', '-q', ...extra, web.url('a.localhost', '/')], io);
  expect(io.err()).toBe('');
  expect(code).toBe(0);
  const file = await readFile(join(dir, 'site.warc.gz'));
  return { dir, file, records: readWarc(file), pages: pages(io.out()), err: io.err() };
}

describe('WARC records', () => {
  it('base32 digests are RFC 4648 (the known SHA-1 of an empty payload)', () => {
    expect(base32(Buffer.from('foobar'))).toBe('MZXW6YTBOI======');
    expect(sha1(Buffer.alloc(0))).toBe('sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
  });

  it('a crawl writes warcinfo first, then a request and a response per fetched URL, with matching digests', async () => {
    const { file, records, pages } = await crawlSite();
    // One valid multi-member gzip stream as a whole, too.
    expect(gunzipSync(file).toString('latin1').startsWith('WARC/1.1\r\n')).toBe(true);
    const [info, ...rest] = records;
    expect(info.version).toBe('WARC/1.1');
    expect(info.header('WARC-Type')).toBe('warcinfo');
    expect(info.header('WARC-Filename')).toBe('site.warc.gz');
    expect(info.header('Content-Type')).toBe('application/warc-fields');
    expect(info.block.toString()).toMatch(/^software: polite-crawler\/.+\r\nformat: WARC File Format 1\.1\r\n/);

    const ids = new Set<string>();
    for (const r of records) {
      expect(r.version).toBe('WARC/1.1');
      const id = r.header('WARC-Record-ID')!;
      expect(id).toMatch(/^<urn:uuid:[0-9a-f-]{36}>$/);
      expect(ids.has(id)).toBe(false);
      ids.add(id);
      expect(r.header('WARC-Date')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(r.header('WARC-Block-Digest')).toBe(sha1(r.block));
    }
    const responses = rest.filter((r) => r.header('WARC-Type') === 'response');
    const requests = rest.filter((r) => r.header('WARC-Type') === 'request');
    expect(rest.length).toBe(responses.length + requests.length);
    // Every fetched URL has its response, at the offset its record names, and its request just before it.
    expect(pages.length).toBe(8);
    expect(responses.length).toBe(pages.length);
    for (const page of pages) {
      const response = records.find((r) => r.offset === page.warcOffset)!;
      expect(response.header('WARC-Type')).toBe('response');
      expect(response.header('WARC-Target-URI')).toBe(page.url);
      expect(response.header('WARC-Warcinfo-ID')).toBe(info.header('WARC-Record-ID'));
      expect(response.header('Content-Type')).toBe('application/http;msgtype=response');
      const request = records[records.indexOf(response) - 1];
      expect(request.header('WARC-Type')).toBe('request');
      expect(request.header('WARC-Concurrent-To')).toBe(response.header('WARC-Record-ID'));
      expect(request.header('WARC-Target-URI')).toBe(page.url);
      expect(request.header('Content-Type')).toBe('application/http;msgtype=request');
      const sent = splitHttp(request.block);
      expect(sent.startLine).toBe(`GET ${new URL(page.url).pathname} HTTP/1.1`);
      expect(sent.headers).toContainEqual(['host', new URL(page.url).host]);
      const http = splitHttp(response.block);
      expect(http.startLine).toMatch(new RegExp(`^HTTP/1\\.1 ${page.status} `));
      expect(response.header('WARC-Payload-Digest')).toBe(sha1(http.body));
    }
  });

  it('keeps the response as sent: header names and order, gzip bodies still compressed, chunked bodies de-chunked and said so', async () => {
    const { records, pages } = await crawlSite();
    const responseFor = (path: string) => {
      const page = pages.find((p) => new URL(p.url).pathname === path)!;
      return splitHttp(records.find((r) => r.offset === page.warcOffset)!.block);
    };
    const img = responseFor('/img.png');
    expect(img.body).toEqual(PNG);
    // Names in the case and order the server sent them (Node's http: its own headers capitalised, ours as set).
    expect(img.headers.map(([n]) => n)).toEqual(['content-type', 'x-custom-case', 'content-length', 'Date', 'Connection', 'Keep-Alive']);
    expect(img.headers).toContainEqual(['x-custom-case', 'Kept']);
    const zipped = responseFor('/z');
    expect(zipped.headers.find(([n]) => n.toLowerCase() === 'content-encoding')?.[1]).toBe('gzip');
    expect(zipped.body).toEqual(ZIPPED);
    const chunked = responseFor('/chunked');
    expect(chunked.body.toString()).toBe('<p>one two three</p>');
    expect(chunked.headers.find(([n]) => n.toLowerCase() === 'transfer-encoding')).toBeUndefined();
    expect(chunked.headers.find(([n]) => n.toLowerCase() === 'x-archive-orig-transfer-encoding')?.[1]).toBe('chunked');
    const redirect = responseFor('/old');
    expect(redirect.startLine).toBe('HTTP/1.1 301 Moved Permanently');
    expect(redirect.headers.find(([n]) => n.toLowerCase() === 'location')?.[1]).toBe('/new');
    expect(responseFor('/missing').startLine).toBe('HTTP/1.1 404 Not Found');
  });

  it('marks a body cut at --max-body with WARC-Truncated: length', async () => {
    const { records, pages } = await crawlSite();
    const big = pages.find((p) => p.url.endsWith('/big.bin'))!;
    expect(big.truncated).toBe(true);
    const response = records.find((r) => r.offset === big.warcOffset)!;
    expect(response.header('WARC-Truncated')).toBe('length');
    expect(splitHttp(response.block).body.length).toBe(16 * 1024);
    const whole = records.filter((r) => r.header('WARC-Type') === 'response' && r !== response);
    expect(whole.every((r) => r.header('WARC-Truncated') === undefined)).toBe(true);
  });

  it('is written through FILE.partial, so the final name only ever holds a finished file', async () => {
    const { dir } = await crawlSite(['--save-dir', 'm']);
    const names = await readdir(dir);
    expect(names.sort()).toEqual(['m', 'site.warc.gz']);
  });
});

describe('WARC and credentials', () => {
  it('never writes a credential: auth, cookies, secret-valued and credential-named headers are *** in request records', async () => {
    const secrets = { WARC_TEST_KEY: 'k3y-from-env-7f1', WARC_TEST_PASS: 'pa55-from-env-9c2' };
    Object.assign(process.env, secrets);
    try {
      web = await startWeb({
        sites: {
          'a.localhost': {
            robots: null,
            pages: { '/': { headers: { 'set-cookie': 'sid=cookie-value-5e8; Path=/' }, body: '<a href="/2">2</a>' }, '/2': 'two' },
          },
        },
      });
      const dir = await mkdtemp(join(tmpdir(), 'warc-'));
      const config = {
        allowPrivate: true,
        domains: {
          'a.localhost': {
            headers: { 'X-Plain': 'shown', 'X-Team-Id': { env: 'WARC_TEST_KEY' }, 'X-Auth-Token': 'plain-token-3a7' },
            auth: { basic: { user: 'crawler', password: { env: 'WARC_TEST_PASS' } } },
          },
        },
      };
      await import('node:fs/promises').then((fs) => fs.writeFile(join(dir, 'c.json'), JSON.stringify(config)));
      const io = memoryIo(dir);
      const code = await main(['--config', 'c.json', '--warc', 'site.warc.gz', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io);
      expect(io.err()).toBe('');
      expect(code).toBe(0);
      // The server got them all …
      const got = web.requests('a.localhost').find((r) => r.path === '/2')!.headers;
      expect(got['x-team-id']).toBe(secrets.WARC_TEST_KEY);
      expect(got.cookie).toBe('sid=cookie-value-5e8');
      // … the archive none.
      const text = gunzipSync(await readFile(join(dir, 'site.warc.gz'))).toString('latin1');
      for (const value of [
        ...Object.values(secrets),
        'cookie-value-5e8',
        'plain-token-3a7',
        Buffer.from(`crawler:${secrets.WARC_TEST_PASS}`).toString('base64'),
      ]) {
        const inRequests = readWarc(await readFile(join(dir, 'site.warc.gz')))
          .filter((r) => r.header('WARC-Type') === 'request')
          .some((r) => r.block.toString('latin1').includes(value));
        expect(inRequests, value).toBe(false);
      }
      expect(text).toMatch(/x-team-id: \*\*\*/i);
      expect(text).toMatch(/authorization: \*\*\*/i);
      expect(text).toMatch(/x-plain: shown/i);
    } finally {
      for (const name of Object.keys(secrets)) delete process.env[name];
    }
  });
});

describe('--warc rules', () => {
  it('a name not ending in .warc.gz is one clear line and exit 2', async () => {
    const io = memoryIo(await mkdtemp(join(tmpdir(), 'warc-')));
    expect(await main(['--warc', 'out.warc', 'http://a.localhost/'], io)).toBe(2);
    expect(io.err().trim().split('\n')).toEqual(['crawl: --warc: expected a file name ending in .warc.gz (each record is gzip-compressed), got "out.warc"']);
  });

  it('a resumed crawl (--state) never appends: it writes FILE-1.warc.gz and says so', async () => {
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 6, linksPerPage: 1 } } } });
    const dir = await mkdtemp(join(tmpdir(), 'warc-'));
    const args = ['--state', 'crawl.db', '--warc', 'c.warc.gz', '--rate', '200/s', web.url('a.localhost', '/p/0')];
    const first = memoryIo(dir);
    expect(await main(['--max-pages', '2', ...args], first)).toBe(0);
    const second = memoryIo(dir);
    expect(await main(['--max-pages', '4', ...args], second)).toBe(0);
    expect(second.err()).toContain("--warc: c.warc.gz holds an earlier run of this crawl; this run's records go to c-1.warc.gz");
    const one = readWarc(await readFile(join(dir, 'c.warc.gz'))).filter((r) => r.header('WARC-Type') === 'response');
    const two = readWarc(await readFile(join(dir, 'c-1.warc.gz'))).filter((r) => r.header('WARC-Type') === 'response');
    expect(one.length).toBe(2);
    expect(two.length).toBe(2);
    const uris = [...one, ...two].map((r) => r.header('WARC-Target-URI'));
    expect(new Set(uris).size).toBe(4);
  });
});

const hasPythonWarcio = await run('python3', ['-c', 'import warcio'], { timeout: 10_000 }).then(
  () => true,
  () => false,
);

describe('read by warcio (Python)', () => {
  it.skipIf(!hasPythonWarcio)(
    '`warcio check` and `warcio index` accept the file (skipped where `python3 -m warcio` is not installed: pip install warcio)',
    async () => {
      const { dir, pages } = await crawlSite();
      const path = join(dir, 'site.warc.gz');
      const check = await run('python3', ['-m', 'warcio', 'check', '-v', path], { timeout: 30_000 });
      expect(check.stdout).not.toMatch(/digest (failed|not present)/i);
      const index = await run('python3', ['-m', 'warcio', 'index', '-f', 'warc-type,warc-target-uri,offset', path], { timeout: 30_000 });
      const lines = index.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, string>);
      for (const page of pages) expect(lines).toContainEqual({ 'warc-type': 'response', 'warc-target-uri': page.url, offset: String(page.warcOffset) });
    },
  );
  if (!hasPythonWarcio)
    it('notes that warcio (Python) is not installed here, so only the JS reader checked the file', () => {
      // A visible marker in the run, not a silent pass.
      console.warn('warc.test.ts: python3 -m warcio not available (pip install warcio); WARC checked by the JS reader only');
    });
});
