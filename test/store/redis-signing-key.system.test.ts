/**
 * Signed Redis crawls (docs/identity.md): the crawl keeps its signing key's
 * thumbprint, a worker joins only with that key among its own (one line and
 * exit 2 otherwise, with a key or without one), and a worker given the new
 * key and the crawl's moves the crawl to the new key: the old key alone is
 * refused from then on. Against a real redis-server.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { main } from '../../src/cli/cli.js';
import { readSigningKey } from '../../src/identity/signing-key.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { memoryIo } from '../support/memory-io.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';

let redis: RedisServer | undefined;
let web: Web | undefined;
let dir: string;
const thumbprint: Record<string, string> = {};
const AGENT = ['--signature-agent', 'https://bot.example.com'];

/** Runs one worker in-process from `dir` (quiet unless told); its exit code and stderr. */
async function worker(args: string[], quiet = true): Promise<{ code: number; err: string }> {
  const io = memoryIo(dir);
  const code = await main([...(quiet ? ['-q'] : []), ...args], io);
  return { code, err: io.err() };
}

/** The keyid each request to the web carried ('' for an unsigned one), in order. */
const keyids = (): string[] => web!.requests().map((r) => /keyid="([^"]+)"/.exec(String(r.headers['signature-input'] ?? ''))?.[1] ?? '');

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'a signed Redis crawl and its workers’ keys', () => {
  beforeAll(async () => {
    redis = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), 'crawl-redis-keys-'));
    for (const name of ['old', 'new', 'other']) {
      expect(await main(['keys', 'new', name], memoryIo(dir))).toBe(0);
      thumbprint[name] = (await readSigningKey(join(dir, name, 'private.jwk'), name)).thumbprint;
    }
  });
  afterAll(async () => {
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await web?.close();
    web = undefined;
  });

  it('refuses a worker without the crawl key, in one line, and rotates to a new key given with the old one', async () => {
    // Slow enough that each worker stops (--max-time) with pages left for the next.
    web = await startWeb({ sites: { 'k.localhost': { generate: { pages: 30, linksPerPage: 3 } } } });
    const shared = ['--redis', redis!.url, '--crawl-id', `keys-${randomUUID()}`, '--rate', '10/s', ...AGENT];
    const crawl = `Redis crawl "${shared[3]}"`;
    const first = await worker([...shared, '--sign-key', 'old/private.jwk', '--max-time', '1', web.url('k.localhost', '/')]);
    expect(first, first.err).toMatchObject({ code: 0 });
    const fetched = web.requests().length;
    expect(fetched).toBeGreaterThan(2);

    expect(await worker(shared.filter((a) => a !== '--signature-agent' && a !== AGENT[1]))).toEqual({
      code: 2,
      err: `crawl: ${crawl} is signed with key ${thumbprint.old}, and this worker has no --sign-key: give it that key\n`,
    });
    expect(await worker([...shared, '--sign-key', 'other/private.jwk'])).toEqual({
      code: 2,
      err: `crawl: ${crawl} is signed with key ${thumbprint.old}, not with --sign-key other/private.jwk (${thumbprint.other}): give the crawl's key (to rotate: the new key, then the crawl's)\n`,
    });
    expect(web.requests().length).toBe(fetched); // a refused worker requests nothing

    // The rotation: the new key signs, the old one is the crawl's.
    const rotating = await worker([...shared, '--sign-key', 'new/private.jwk', '--sign-key', 'old/private.jwk', '--max-time', '1'], false);
    expect(rotating.code, rotating.err).toBe(0);
    expect(rotating.err).toContain(`${crawl}: signed with --sign-key new/private.jwk from now on, not old/private.jwk`);
    expect(web.requests().length).toBeGreaterThan(fetched);
    expect(new Set(keyids().slice(fetched))).toEqual(new Set([thumbprint.new]));

    // From then on the old key alone is refused; the new one finishes the crawl.
    const stale = await worker([...shared, '--sign-key', 'old/private.jwk']);
    expect(stale).toEqual({
      code: 2,
      err: `crawl: ${crawl} is signed with key ${thumbprint.new}, not with --sign-key old/private.jwk (${thumbprint.old}): give the crawl's key (to rotate: the new key, then the crawl's)\n`,
    });
    const last = await worker([...shared, '--sign-key', 'new/private.jwk']);
    expect(last, last.err).toMatchObject({ code: 0 });
    expect(web.count('k.localhost')).toBe(32); // robots.txt, /, 30 pages: each once across the workers
    expect(new Set(keyids().slice(0, fetched))).toEqual(new Set([thumbprint.old]));
  });

  it('refuses a worker with a key joining an unsigned crawl', async () => {
    web = await startWeb({ sites: { 'u.localhost': { generate: { pages: 3, linksPerPage: 1 } } } });
    const shared = ['--redis', redis!.url, '--crawl-id', `unsigned-${randomUUID()}`];
    expect(await worker([...shared, web.url('u.localhost', '/')])).toMatchObject({ code: 0 });
    expect(await worker([...shared, '--sign-key', 'new/private.jwk', ...AGENT])).toEqual({
      code: 2,
      err: `crawl: Redis crawl "${shared[3]}" is not signed, and this worker would sign with --sign-key new/private.jwk: join it without --sign-key, or sign another crawl\n`,
    });
  });

  it('checks again as a worker joins: of two workers racing to join with different keys, the second is refused', async () => {
    const crawlId = `race-${randomUUID()}`;
    const keys = (name: string) => [{ file: `${name}/private.jwk`, thumbprint: thumbprint[name] }];
    const a = new RedisStore({ url: redis!.url, crawlId, signingKeys: keys('old') });
    const b = new RedisStore({ url: redis!.url, crawlId, signingKeys: keys('other') });
    const unsigned = new RedisStore({ url: redis!.url, crawlId });
    try {
      // Both found no crawl (nothing to check yet); the first OPEN creates it with its key.
      expect(await a.peekMeta()).toBeUndefined();
      expect(await b.peekMeta()).toBeUndefined();
      await a.open({ seeds: ['http://s1/'], configFingerprint: 'f1' });
      await expect(b.open({ seeds: [], configFingerprint: 'f1' })).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        message: `Redis crawl "${crawlId}" is signed with key ${thumbprint.old}, not with --sign-key other/private.jwk (${thumbprint.other}): give the crawl's key (to rotate: the new key, then the crawl's)`,
      });
      await expect(unsigned.open({ seeds: [], configFingerprint: 'f1' })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /has no --sign-key/ });
      expect(await unsigned.peekMeta()).toMatchObject({ keyid: thumbprint.old, seeds: ['http://s1/'] }); // the refused changed nothing
    } finally {
      await Promise.all([a.close(), b.close(), unsigned.close()]);
    }
  });
});
