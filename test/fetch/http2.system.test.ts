/**
 * `--http2` against a local `node:http2` secure server (HTTP/1.1 allowed,
 * self-signed certificate made here by openssl), judged from the server's
 * own log of arrivals: robots.txt first and honoured, the host's concurrency
 * kept, all of it over ONE connection, and each
 * record saying which protocol carried it. An HTTP/1.1-only https server
 * under `--http2` is crawled as before, its records saying "1.1"; without
 * the flag nothing changes (no `httpVersion`, HTTP/1.1 on the wire).
 *
 * The rate's gaps are judged as the crawler wrote its requests (undici's
 * own diagnostics channel, in this process), every arrival among them: the
 * server shares this process, and a late read of one stream would show as
 * two arrivals closer than the crawler sent them (86 ms for 100 in one CI run).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';
import { parseRecords, pathOf, writtenDuring } from '../support/crawl-harness.js';

interface Arrival {
  at: number;
  path: string;
  version: string;
  inFlight: number;
}

/** A site of 12 pages behind robots.txt (Disallow: /private/), each answer held 250 ms so requests overlap. */
function site(log: Arrival[]) {
  let inFlight = 0;
  return (req: http2.Http2ServerRequest | import('node:http').IncomingMessage, res: http2.Http2ServerResponse | import('node:http').ServerResponse) => {
    const path = req.url ?? '/';
    inFlight++;
    log.push({ at: performance.now(), path, version: req.httpVersion, inFlight });
    const reply = (status: number, type: string, body: string) =>
      setTimeout(
        () => {
          inFlight--;
          res.writeHead(status, { 'content-type': type });
          res.end(body);
        },
        path === '/robots.txt' ? 0 : 250,
      );
    if (path === '/robots.txt') return reply(200, 'text/plain', 'User-agent: *\nDisallow: /private/\n');
    if (path === '/') {
      const links = Array.from({ length: 11 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('');
      return reply(200, 'text/html', `<html><title>home</title>${links}<a href="/private/x">secret</a></html>`);
    }
    return reply(200, 'text/html', `<html><title>${path}</title></html>`);
  };
}

let dir = '';
let key: Buffer;
let cert: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'h2-'));
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
  [key, cert] = await Promise.all([readFile(join(dir, 'key.pem')), readFile(join(dir, 'cert.pem'))]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `server`, crawls it with `flags` (rate 10/s, 3 at once, trusting the test CA), stops it. */
async function crawlServer(server: http2.Http2SecureServer | https.Server, flags: string[]) {
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const seed = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const io = memoryIo(dir);
  try {
    const sent = await writtenDuring(() => main(['--rate', '10/s', '--host-concurrency', '3', '--ca', 'cert.pem', ...flags, seed], io));
    const code = sent.result;
    const written = sent.written.map((w) => w.at);
    const { pages } = parseRecords(
      io
        .out()
        .split('\n')
        .filter((l) => l !== ''),
    );
    return { code, pages, connections, written, err: io.err() };
  } finally {
    // An h2 server's close waits for its sessions; the crawl has ended, so they are idle.
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The gaps between the requests as written, once every arrival is known to be among them. */
function writtenGaps(run: { written: number[] }, log: Arrival[]): number[] {
  expect(run.written).toHaveLength(log.length);
  return run.written.slice(1).map((at, i) => at - run.written[i]);
}

describe('--http2', () => {
  it('crawls an h2 server over one connection, with robots.txt, the gaps and the concurrency kept', async () => {
    const log: Arrival[] = [];
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, site(log));
    const run = await crawlServer(server, ['--http2']);
    expect(run.code).toBe(0);
    expect(log[0].path).toBe('/robots.txt');
    expect(log.some((a) => a.path.startsWith('/private/'))).toBe(false);
    expect(log.map((a) => a.version)).toEqual(log.map(() => '2.0'));
    expect(run.connections).toBe(1);
    expect(Math.min(...writtenGaps(run, log))).toBeGreaterThanOrEqual(100 - 3);
    expect(Math.max(...log.map((a) => a.inFlight))).toBeLessThanOrEqual(3);
    // 250 ms answers at 10/s overlap: several streams shared the one connection.
    expect(Math.max(...log.map((a) => a.inFlight))).toBeGreaterThanOrEqual(2);
    expect(run.pages.map((p) => pathOf(p.url)).sort()).toEqual(['/', ...Array.from({ length: 11 }, (_, i) => `/p/${i}`)].sort());
    expect(run.pages.every((p) => p.status === 200 && p.httpVersion === '2')).toBe(true);
  });

  it('an https server without h2 is crawled over HTTP/1.1, its records saying so', async () => {
    const log: Arrival[] = [];
    const server = https.createServer({ key, cert }, site(log));
    const run = await crawlServer(server, ['--http2']);
    expect(run.code).toBe(0);
    expect(log[0].path).toBe('/robots.txt');
    expect(log.some((a) => a.path.startsWith('/private/'))).toBe(false);
    expect(new Set(log.map((a) => a.version))).toEqual(new Set(['1.1']));
    expect(Math.min(...writtenGaps(run, log))).toBeGreaterThanOrEqual(100 - 3);
    expect(Math.max(...log.map((a) => a.inFlight))).toBeLessThanOrEqual(3);
    expect(run.pages).toHaveLength(12);
    expect(run.pages.every((p) => p.status === 200 && p.httpVersion === '1.1')).toBe(true);
  });

  it('without the flag an h2 server is asked over HTTP/1.1 and records carry no httpVersion', async () => {
    const log: Arrival[] = [];
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, site(log));
    const run = await crawlServer(server, []);
    expect(run.code).toBe(0);
    expect(new Set(log.map((a) => a.version))).toEqual(new Set(['1.1']));
    expect(run.pages).toHaveLength(12);
    expect(run.pages.some((p) => 'httpVersion' in p)).toBe(false);
  });
});
