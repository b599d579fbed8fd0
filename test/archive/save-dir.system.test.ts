/**
 * --save-dir: the URL → path mapping (a table: traversal, escapes, queries,
 * long names), the collision rules, and whole crawls through the CLI
 * against a local web: what is saved, as which bytes, with which savedPath.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { MAX_PATH_BYTES, MAX_SEGMENT_BYTES, PathAllocator, urlPathSegments } from '../../src/archive/url-path.js';
import type { PageRecord } from '../../src/types.js';
import { memoryIo } from '../support/memory-io.js';

let web: Web | undefined;
afterEach(async () => {
  await web?.close();
  web = undefined;
});

const pathOf = (url: string) => urlPathSegments(url).join('/');

describe('URL → path', () => {
  const table: Array<[string, string]> = [
    ['http://Example.COM/', 'example.com/index.html'],
    ['http://example.com', 'example.com/index.html'],
    ['http://example.com/a/b.html', 'example.com/a/b.html'],
    ['http://example.com/a/b/', 'example.com/a/b/index.html'],
    ['https://example.com:443/x', 'example.com/x'],
    ['http://example.com:8080/x', 'example.com_8080/x'],
    ['http://[::1]:81/x', '[%3A%3A1]_81/x'],
    // Dot segments are resolved by the URL parser, encoded or not: never a way out.
    ['http://example.com/a/../../../etc/passwd', 'example.com/etc/passwd'],
    ['http://example.com/a/%2e%2e/%2E%2e/etc/passwd', 'example.com/etc/passwd'],
    // Encoded separators and NUL stay inside one name.
    ['http://example.com/..%2F..%2Fetc%2Fpasswd', 'example.com/%2E.%2F..%2Fetc%2Fpasswd'],
    ['http://example.com/a%5C..%5Cb', 'example.com/a%5C..%5Cb'],
    ['http://example.com/nul%00byte', 'example.com/nul%00byte'],
    ['http://example.com/%2e%2e%2f', 'example.com/%2E.%2F'],
    // Decoded for reading, `%` and `@` escaped so no two URLs read the same.
    ['http://example.com/caf%C3%A9.html', 'example.com/café.html'],
    ['http://example.com/100%25', 'example.com/100%25'],
    ['http://example.com/bad%FF', 'example.com/bad%25FF'],
    ['http://example.com/me@home', 'example.com/me%40home'],
    ['http://example.com/a:b*c?', 'example.com/a%3Ab%2Ac'],
    // Queries are kept in the name after "@".
    ['http://example.com/search?q=a/b&p=2', 'example.com/search@q=a%2Fb&p=2'],
    ['http://example.com/?page=2', 'example.com/index.html@page=2'],
    // Windows: device names and trailing dots.
    ['http://example.com/con', 'example.com/co%6E'],
    ['http://example.com/NUL.txt', 'example.com/NU%4C.txt'],
    ['http://example.com/name.', 'example.com/name%2E'],
    ['http://example.com/a//b', 'example.com/a/b'],
    // Nothing a tool acts on: no dot-names, no repository directories, in any case, at any depth.
    ['http://example.com/.git/config', 'example.com/%2Egit/config'],
    ['http://example.com/a/.GIT./HEAD', 'example.com/a/%2EGIT%2E/%48EAD'],
    ['http://example.com/.well-known/security.txt', 'example.com/%2Ewell-known/security.txt'],
    ['http://example.com/.envrc', 'example.com/%2Eenvrc'],
    ['http://example.com/x/_darcs/prefs', 'example.com/x/%5Fdarcs/prefs'],
    ['http://example.com/cvs/Root', 'example.com/%63vs/Root'],
    ['http://example.com/.g%E2%80%8Cit/config', 'example.com/%2Eg%E2%80%8Cit/config'],
    // An 8.3 short name (Windows) reaches an existing long name: `GIT~1` is `.git` where one exists, even a host.
    ['http://example.com/GIT~1/config', 'example.com/GIT%7E1/config'],
    ['http://git~1/config', 'git%7E1/config'],
    ['http://example.com/ab~12.htm', 'example.com/ab%7E12.htm'],
    ['http://example.com/~user/', 'example.com/~user/index.html'],
    ['http://example.com/my~page~2.html', 'example.com/my~page~2.html'],
  ];
  for (const [url, path] of table) {
    it(`${url} → ${path}`, () => {
      expect(pathOf(url)).toBe(path);
    });
  }

  it('never yields an absolute path, a "." or ".." segment, or a separator inside a name', () => {
    const nasty = ['/..', '/%2e%2e/', '/.%2e/x', '/a/%00/..', '/%5C%5C..%5C', '/C:/Windows', '/~/x', '/ /.', '/%20..'];
    for (const p of nasty) {
      const segments = urlPathSegments(`http://h.test${p}`);
      for (const s of segments) {
        expect(s).not.toMatch(/^\.{1,2}$/);
        expect(s).not.toMatch(/[/\\\0:]/);
        expect(s.length).toBeGreaterThan(0);
      }
    }
  });

  it('hashes a name over MAX_SEGMENT_BYTES, keeping its extension, and a path over MAX_PATH_BYTES', () => {
    const long = 'x'.repeat(300);
    const [, name] = urlPathSegments(`http://h.test/${long}.html`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
    expect(name).toMatch(/^x+~[0-9a-f]{16}\.html$/);
    expect(urlPathSegments(`http://h.test/${long}1.html`)[1]).not.toBe(name);
    // Multi-byte characters are never split.
    const [, wide] = urlPathSegments(`http://h.test/${'é'.repeat(150)}`);
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
    expect(wide).toMatch(/^é+~[0-9a-f]{16}$/);
    const deep = `http://h.test/${Array.from({ length: 120 }, (_, i) => `segment${i}`).join('/')}/page.pdf`;
    const path = pathOf(deep);
    expect(Buffer.byteLength(path)).toBeLessThanOrEqual(MAX_PATH_BYTES);
    expect(path).toMatch(/^h\.test\/~long\/[0-9a-f]{32}\.pdf$/);
  });
});

describe('PathAllocator: collisions', () => {
  it('tells apart names that differ only in case (a case-insensitive file system would merge them)', () => {
    const paths = new PathAllocator();
    expect(paths.allocate('http://h.test/Page.html')).toBe('h.test/Page.html');
    expect(paths.allocate('http://h.test/page.html')).toMatch(/^h\.test\/page~[0-9a-f]{8}\.html$/);
  });

  it('tells apart two URLs that map to one name', () => {
    const paths = new PathAllocator();
    const a = paths.allocate('http://h.test/a%2Fb');
    const b = paths.allocate('https://h.test/a%2Fb');
    expect(a).toBe('h.test/a%2Fb');
    expect(b).not.toBe(a);
    expect(b.startsWith('h.test/a%2Fb~')).toBe(true);
  });

  it('a file, then a directory of the same name: the directory moves, and everything below it stays together', () => {
    const paths = new PathAllocator();
    expect(paths.allocate('http://h.test/a')).toBe('h.test/a');
    const b = paths.allocate('http://h.test/a/b');
    const c = paths.allocate('http://h.test/a/c');
    expect(b).toMatch(/^h\.test\/a~[0-9a-f]{8}\/b$/);
    expect(c).toBe(b.replace(/b$/, 'c'));
  });

  it('a directory, then a file of the same name: the file gets a hash', () => {
    const paths = new PathAllocator();
    expect(paths.allocate('http://h.test/a/b')).toBe('h.test/a/b');
    expect(paths.allocate('http://h.test/A')).toMatch(/^h\.test\/A~[0-9a-f]{8}$/);
  });
});

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'save-dir-'));
}

function records(out: string): PageRecord[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PageRecord)
    .filter((r) => r.type === 'page');
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(dir.length + 1)
        .split('\\')
        .join('/'),
    )
    .sort();
}

const PNG = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 255, 0, 128]);

describe('crawl --save-dir', () => {
  it('saves each 2xx body as received (any type, gzip undone, charset untouched) and names it in the record', async () => {
    const latin1 = Buffer.from('<p>caf\xe9</p>', 'latin1');
    web = await startWeb({
      sites: {
        'a.localhost': {
          pages: {
            '/': '<a href="/img.png">i</a> <a href="/notes">n</a> <a href="/docs/">d</a> <a href="/search?q=x/y">s</a> <a href="/old.html">l</a> <a href="/missing">m</a>',
            '/img.png': { headers: { 'content-type': 'image/png' }, body: PNG },
            '/notes': { headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: gzipSync('zipped notes') },
            '/docs/': 'docs index',
            '/search?q=x/y': 'results',
            '/old.html': { headers: { 'content-type': 'text/html; charset=iso-8859-1' }, body: latin1 },
            '/missing': { status: 404, body: 'not here' },
          },
        },
      },
    });
    const dir = await tempDir();
    const io = memoryIo(dir);
    expect(await main(['--save-dir', 'mirror', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(0);
    const host = `a.localhost_${web.port}`;
    const byPath = new Map(records(io.out()).map((r) => [new URL(r.url).pathname + new URL(r.url).search, r]));
    expect(byPath.get('/')!.savedPath).toBe(`${host}/index.html`);
    expect(byPath.get('/img.png')!.savedPath).toBe(`${host}/img.png`);
    // A non-HTML body is read now, so its record has its real size.
    expect(byPath.get('/img.png')!.bytes).toBe(PNG.length);
    expect(byPath.get('/notes')!.savedPath).toBe(`${host}/notes`);
    expect(byPath.get('/docs/')!.savedPath).toBe(`${host}/docs/index.html`);
    expect(byPath.get('/search?q=x/y')!.savedPath).toBe(`${host}/search@q=x%2Fy`);
    expect(byPath.get('/missing')!.status).toBe(404);
    expect(byPath.get('/missing')!.savedPath).toBeUndefined();

    const root = join(dir, 'mirror');
    expect(await readFile(join(root, host, 'img.png'))).toEqual(Buffer.from(PNG));
    expect(await readFile(join(root, host, 'notes'), 'utf8')).toBe('zipped notes');
    expect(await readFile(join(root, host, 'old.html'))).toEqual(latin1); // bytes, not re-encoded text
    // Exactly the saved files: no temporary files left, nothing for the 404.
    expect(await listFiles(root)).toEqual([...byPath.values()].flatMap((r) => (r.savedPath ? [r.savedPath] : [])).sort());
  });

  it('cuts a body at --max-body and says so in the record', async () => {
    const big = Buffer.alloc(50_000, 7);
    web = await startWeb({
      sites: {
        'a.localhost': { pages: { '/': '<a href="/big.bin">b</a>', '/big.bin': { headers: { 'content-type': 'application/octet-stream' }, body: big } } },
      },
    });
    const dir = await tempDir();
    const io = memoryIo(dir);
    expect(await main(['--save-dir', 'm', '--max-body', '10KiB', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(0);
    const rec = records(io.out()).find((r) => r.url.endsWith('/big.bin'))!;
    expect(rec.truncated).toBe(true);
    expect(rec.bytes).toBe(10 * 1024);
    expect((await readFile(join(dir, 'm', rec.savedPath!))).length).toBe(10 * 1024);
  });

  it('a name held on disk by the other kind (a directory from an earlier run) goes to ~conflict, not to an error', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': '<a href="/page">p</a>', '/page': 'page' } } } });
    const dir = await tempDir();
    const host = `a.localhost_${web.port}`;
    await mkdir(join(dir, 'm', host, 'page'), { recursive: true });
    const io = memoryIo(dir);
    expect(await main(['--save-dir', 'm', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(0);
    const rec = records(io.out()).find((r) => r.url.endsWith('/page'))!;
    expect(rec.savedPath).toMatch(new RegExp(`^${host}/~conflict/[0-9a-f]{16}$`));
    expect(await readFile(join(dir, 'm', rec.savedPath!), 'utf8')).toBe('page');
  });

  it('a --save-dir that is a file is one clear line and exit 2, before anything is fetched', async () => {
    web = await startWeb({ sites: { 'a.localhost': { pages: { '/': 'home' } } } });
    const dir = await tempDir();
    await writeFile(join(dir, 'taken'), 'x');
    const io = memoryIo(dir);
    expect(await main(['--save-dir', 'taken', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(2);
    expect(io.err().trim().split('\n')).toEqual(['crawl: cannot write --save-dir taken: not a directory']);
    expect(web.requests()).toEqual([]);
  });

  it('a site cannot plant a repository (or any dot-file) that git or another tool would act on', async () => {
    const out = await tempDir();
    const payload = join(out, 'PWNED');
    const config = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch '${payload}'; false"\n`;
    const bareConfig = config.replace('bare = false', 'bare = true');
    const files: Record<string, string> = {
      '/.git/HEAD': 'ref: refs/heads/main\n',
      '/.git/config': config,
      '/.git/refs/heads/main': '0000000000000000000000000000000000000000\n',
      '/.git/objects/info/packs': '\n',
      '/deep/.GIT./HEAD': 'ref: refs/heads/main\n',
      '/deep/.GIT./config': config,
      '/bare/HEAD': 'ref: refs/heads/main\n',
      '/bare/config': bareConfig,
      '/bare/refs/heads/main': '0000000000000000000000000000000000000000\n',
      '/bare/objects/info/packs': '\n',
      '/.hg/hgrc': '[hooks]\n',
      '/x/.svn/entries': '12\n',
      '/_darcs/prefs/defaults': 'ALL test\n',
      '/CVS/Root': ':local:/tmp\n',
      '/.envrc': `touch '${payload}'\n`,
    };
    const pages: Record<string, { headers: Record<string, string>; body: string } | string> = {
      '/': Object.keys(files)
        .map((p) => `<a href="${p}">f</a>`)
        .join(' '),
    };
    for (const [path, body] of Object.entries(files)) pages[path] = { headers: { 'content-type': 'text/plain' }, body };
    web = await startWeb({ sites: { 'a.localhost': { pages } } });
    const io = memoryIo(out);
    expect(await main(['--save-dir', 'mirror', '--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(0);
    const saved = records(io.out()).filter((r) => r.savedPath !== undefined);
    expect(saved).toHaveLength(Object.keys(files).length + 1);

    const root = join(out, 'mirror');
    const names = (await readdir(root, { recursive: true })).flatMap((p) => p.split(/[\\/]/));
    const vcs = /^(\.|_darcs$|cvs$|head$|_fossil_$)/i;
    expect(names.filter((n) => vcs.test(n.replace(/[. ]+$/, '')))).toEqual([]);

    let git = true;
    try {
      execFileSync('git', ['--version'], { stdio: 'ignore' });
    } catch {
      git = false; // no git on this machine: the names above are the whole check
    }
    if (git) {
      const host = join(root, `a.localhost_${web.port}`);
      // Discovery must not climb out of the mirror into whatever holds the temporary directory.
      const env = { ...process.env, GIT_CEILING_DIRECTORIES: out };
      const repositories: string[] = [];
      for (const dir of [host, join(host, 'bare'), join(host, 'deep')]) {
        try {
          execFileSync('git', ['status'], { cwd: dir, env, stdio: 'ignore' });
        } catch {
          // Failing is fine; running the site's command is not.
        }
        try {
          repositories.push(
            execFileSync('git', ['rev-parse', '--absolute-git-dir'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] })
              .toString()
              .trim(),
          );
        } catch {
          // Not a repository: what we want.
        }
      }
      expect(existsSync(payload)).toBe(false);
      expect(repositories).toEqual([]);
    }
  });

  it('without --save-dir a non-HTML body is still not read and records have no savedPath', async () => {
    web = await startWeb({
      sites: { 'a.localhost': { pages: { '/': '<a href="/img.png">i</a>', '/img.png': { headers: { 'content-type': 'image/png' }, body: PNG } } } },
    });
    const io = memoryIo(await tempDir());
    expect(await main(['--rate', '200/s', '-q', web.url('a.localhost', '/')], io)).toBe(0);
    const recs = records(io.out());
    expect(recs.find((r) => r.url.endsWith('/img.png'))!.bytes ?? 0).toBe(0);
    expect(recs.every((r) => r.savedPath === undefined && r.warcOffset === undefined)).toBe(true);
  });
});
