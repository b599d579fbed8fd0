/**
 * Redis as operators secure it: TLS (`rediss://`, a private CA given with
 * `--redis-ca`) and an ACL user with a password in the URL
 * (`rediss://user:pass@host:port`). A real redis-server with a TLS port and
 * a throwaway CA made with openssl in the test's temp dir; the real binary.
 * The password is never printed: not by a crawl, `crawl status`, `crawl
 * report`, a record, or any failure (wrong password, untrusted certificate,
 * nothing listening).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type Web } from '../../fixtures/web.js';
import { redisServerMissing, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { requireBuilt, startCrawl, type CrawlRun } from '../support/spawn-crawl.js';

const PASSWORD = 'Pw-7f3kq2-never-printed';
let redis: RedisServer | undefined;
let web: Web | undefined;
let dir = '';
let tlsPort = 0;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** A CA and a server certificate for 127.0.0.1 signed by it, in `dir`. */
async function makeCertificates(): Promise<void> {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=crawl-test-ca');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  await writeFile(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'ext.cnf');
}

const run = async (args: string[]): Promise<CrawlRun> => startCrawl(args, dir).done;
const secure = (password = PASSWORD) => `rediss://crawler:${password}@127.0.0.1:${tlsPort}/0`;

/** Nothing the process printed or wrote holds the password. */
async function expectNoPassword(r: CrawlRun, password = PASSWORD): Promise<void> {
  expect(r.stdout).not.toContain(password);
  expect(r.stderr).not.toContain(password);
  for (const name of await readdir(dir)) {
    if (/\.(jsonl|html|json|partial)$/.test(name)) expect(await readFile(join(dir, name), 'utf8'), name).not.toContain(password);
  }
}

function expectOneLine(r: CrawlRun, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
}

describe.skipIf(redisServerMissing !== undefined)(redisServerMissing ?? 'Redis over TLS with an ACL user', () => {
  beforeAll(async () => {
    await requireBuilt();
    dir = await mkdtemp(join(tmpdir(), 'crawl-tls-'));
    await makeCertificates();
    tlsPort = await freePort();
    redis = await startRedisServer(5_000, {
      args: [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        join(dir, 'server.pem'),
        '--tls-key-file',
        join(dir, 'server.key'),
        '--tls-ca-cert-file',
        join(dir, 'ca.pem'),
        '--tls-auth-clients',
        'no',
      ],
    });
    // An ACL user limited to the crawl's keys, with the rules in docs/redis.md (the plain port stays for this admin connection).
    const { createClient } = await import('redis');
    const admin = createClient({ url: redis.url });
    await admin.connect();
    await admin.sendCommand(['ACL', 'SETUSER', 'crawler', 'on', `>${PASSWORD}`, '~crawl:*', '+@all', '-@dangerous', '+script|load', '+time']);
    await admin.quit();
    web = await startWeb({ sites: { 'a.localhost': { generate: { pages: 8, linksPerPage: 2 } } } });
  });
  afterAll(async () => {
    await web?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('rediss:// with --redis-ca and user:password: crawls, and crawl status and crawl report read it; the password appears nowhere', async () => {
    const crawlId = `tls-${randomUUID()}`;
    const shared = ['--redis', secure(), '--redis-ca', 'ca.pem', '--crawl-id', crawlId];
    const crawl = await run([...shared, '--rate', '50/s', '-o', 'pages.jsonl', '--report', 'r.html', '--stats', 's.json', web!.url('a.localhost', '/')]);
    expect(crawl.code, crawl.stderr).toBe(0);
    expect(crawl.stderr).toMatch(/state in Redis crawl/);
    const pages = (await readFile(join(dir, 'pages.jsonl'), 'utf8')).trim().split('\n');
    expect(pages).toHaveLength(9);
    await expectNoPassword(crawl);

    const status = await run(['status', ...shared]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/finished/i);
    await expectNoPassword(status);
    const json = await run(['status', ...shared, '--json']);
    expect(json.code, json.stderr).toBe(0);
    await expectNoPassword(json);

    const report = await run(['report', ...shared, '-o', 'shared.html']);
    expect(report.code, report.stderr).toBe(0);
    await expectNoPassword(report);
  }, 60_000);

  it('failures name the Redis without its password: wrong password, untrusted certificate, nothing listening, --redis-ca without TLS', async () => {
    const seed = web!.url('a.localhost', '/');
    const id = ['--crawl-id', `fail-${randomUUID()}`];
    const wrong = 'Wrong-pw-also-secret-91';
    const badPassword = await run(['--redis', secure(wrong), '--redis-ca', 'ca.pem', ...id, seed]);
    expectOneLine(badPassword, 2, /^crawl: cannot use Redis at rediss:\/\/crawler:\*\*\*@127\.0\.0\.1:\d+\/0: /);
    await expectNoPassword(badPassword, wrong);

    const untrusted = await run(['--redis', secure(), ...id, seed]);
    expectOneLine(untrusted, 2, /^crawl: cannot use Redis at rediss:\/\/crawler:\*\*\*@127\.0\.0\.1:\d+\/0: .*certificate/i);
    await expectNoPassword(untrusted);

    const closed = await freePort();
    const nobody = await run(['--redis', `rediss://crawler:${PASSWORD}@127.0.0.1:${closed}/0`, '--redis-ca', 'ca.pem', ...id, seed]);
    expectOneLine(nobody, 2, /^crawl: cannot use Redis at rediss:\/\/crawler:\*\*\*@127\.0\.0\.1:\d+\/0: .*ECONNREFUSED/);
    await expectNoPassword(nobody);

    for (const args of [
      ['status', '--redis', secure(wrong), '--redis-ca', 'ca.pem', ...id],
      ['report', '--redis', secure(wrong), '--redis-ca', 'ca.pem', ...id, '-o', 'x.html'],
    ]) {
      const r = await run(args);
      expectOneLine(r, 2, /^crawl: cannot use Redis at rediss:\/\/crawler:\*\*\*@/);
      await expectNoPassword(r, wrong);
    }

    const plain = await run(['--redis', `redis://crawler:${PASSWORD}@127.0.0.1:${redis!.port}/0`, '--redis-ca', 'ca.pem', ...id, seed]);
    expectOneLine(plain, 2, /^crawl: --redis-ca goes with a TLS Redis URL/);
    await expectNoPassword(plain);

    const missing = await run(['--redis', secure(), '--redis-ca', 'nope.pem', ...id, seed]);
    expectOneLine(missing, 2, /^crawl: cannot read CA file nope\.pem: file not found/);
    await expectNoPassword(missing);
  }, 90_000);
});
