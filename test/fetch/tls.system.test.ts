/**
 * TLS trust: a local https server with a self-signed certificate generated
 * here by openssl. Without a flag the page is a TLS_ERROR record; with
 * --insecure (and one loud warning) or --ca naming the certificate it is
 * fetched.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { INSECURE_WARNING } from '../../src/fetch/tls.js';
import { memoryIo } from '../support/memory-io.js';
import { parseRecords } from '../support/crawl-harness.js';

let dir = '';
let server: Server;
let seed = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tls-'));
  // Test-only key and certificate, valid for 127.0.0.1 and localhost.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const [key, cert] = await Promise.all([readFile(join(dir, 'key.pem')), readFile(join(dir, 'cert.pem'))]);
  server = createServer({ key, cert }, (req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><title>secure</title></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  seed = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function run(args: string[]) {
  const io = memoryIo(dir);
  const code = await main(['--rate', 'unlimited', '--no-robots', ...args, seed], io);
  const { pages } = parseRecords(
    io
      .out()
      .split('\n')
      .filter((l) => l !== ''),
  );
  return { code, page: pages[0], err: io.err() };
}

describe('TLS', () => {
  it('a self-signed certificate is a TLS_ERROR record without a flag', async () => {
    const r = await run([]);
    expect(r.page.status).toBeNull();
    expect(r.page.error?.code).toBe('TLS_ERROR');
  });

  it('--insecure fetches it, and says so loudly, once', async () => {
    const r = await run(['--insecure']);
    expect(r.page.status).toBe(200);
    expect(r.page.title).toBe('secure');
    expect(r.err.split(INSECURE_WARNING).length - 1).toBe(1);
  });

  it('--ca with the certificate fetches it, with certificates still checked', async () => {
    const r = await run(['--ca', 'cert.pem']);
    expect(r.page.status).toBe(200);
    expect(r.err).not.toContain(INSECURE_WARNING);
  });

  it('a --ca file that is missing or holds no certificate is one line, exit 2', async () => {
    const missing = await run(['--ca', 'nope.pem']);
    expect(missing.code).toBe(2);
    expect(missing.err.trim()).toBe('crawl: cannot read CA file nope.pem: file not found');
    const notPem = await run(['--ca', 'key.pem']);
    expect(notPem.code).toBe(2);
    expect(notPem.err.trim()).toBe('crawl: CA file key.pem holds no PEM certificate (expected "-----BEGIN CERTIFICATE-----")');
  });
});
