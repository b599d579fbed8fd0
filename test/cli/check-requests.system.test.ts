/**
 * `crawl check` with the request flags a crawl takes (--header, --cookie,
 * --cookie-jar, --proxy, --insecure, --ca): its `request:` line shows what a
 * crawl with them would send (secrets masked), and robots.txt is fetched with
 * them. And what it says of a host that refuses connections: what a crawl
 * now does (page records carrying the error), not the old robots skip.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { explain } from '../../src/index.js';
import { INSECURE_WARNING } from '../../src/fetch/tls.js';
import { memoryIo } from '../support/memory-io.js';

let dir = '';
let web: Server;
let secure: Server;
let proxy: Server;
let webPort = 0;
let securePort = 0;
let proxyPort = 0;
/** What the proxy forwarded: "GET <absolute URL>" with the request's headers. */
let forwarded: Array<{ line: string; headers: IncomingHttpHeaders }> = [];

const portOf = (s: Server) => (s.address() as AddressInfo).port;
const listen = (s: Server) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
const close = (s: Server) => new Promise((resolve) => s.close(resolve));
const ROBOTS = 'User-agent: *\nDisallow: /private\n';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'check-requests-'));
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
  };
  web = createHttpServer(handler);
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
  secure = createHttpsServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) }, handler);
  proxy = createHttpServer((req, res) => {
    forwarded.push({ line: `${req.method} ${req.url}`, headers: req.headers });
    const target = new URL(req.url!);
    const upstream = request({ host: '127.0.0.1', port: target.port, path: target.pathname, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await Promise.all([listen(web), listen(secure), listen(proxy)]);
  [webPort, securePort, proxyPort] = [portOf(web), portOf(secure), portOf(proxy)];
  await writeFile(join(dir, 'cookies.txt'), `# Netscape HTTP Cookie File\na.localhost\tFALSE\t/\tFALSE\t0\tjarred\tj1\n`);
});

afterAll(async () => {
  await Promise.all([close(web), close(secure), close(proxy)]);
});

beforeEach(() => {
  forwarded = [];
});

async function check(args: string[]) {
  const io = memoryIo(dir);
  // No proxy from the environment of whoever runs the tests.
  const saved = { ...process.env };
  for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) delete process.env[name];
  try {
    const code = await main(args, io);
    return { code, out: io.out(), err: io.err() };
  } finally {
    Object.assign(process.env, saved);
  }
}

describe('crawl check with the request flags', () => {
  it('shows the headers, cookies and proxy a crawl would use (secrets masked) and fetches robots.txt with them', async () => {
    const url = `http://a.localhost:${webPort}/page`;
    const r = await check([
      'check',
      '--header',
      'X-Team: crawl',
      '--header',
      'X-Api-Key: s3cret',
      '--cookie',
      'sid=abc',
      '--cookie-jar',
      'cookies.txt',
      '--proxy',
      `http://user:pw@127.0.0.1:${proxyPort}`,
      url,
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines.find((l) => l.startsWith('request:'))).toBe(
      `request: via proxy http://***@127.0.0.1:${proxyPort} (from the config or --proxy); auth: none; cookies: jarred, sid`,
    );
    expect(lines).toContain('         header x-team: crawl');
    expect(lines).toContain('         header x-api-key: ***');
    expect(r.out).not.toMatch(/s3cret|abc|pw@/);
    expect(r.out).toMatch(/^robots: +allowed: no rule matches/m);
    // robots.txt went through the proxy, carrying what a crawl's requests carry.
    expect(forwarded.map((f) => f.line)).toEqual([`GET http://a.localhost:${webPort}/robots.txt`]);
    expect(forwarded[0].headers).toMatchObject({
      'x-team': 'crawl',
      'x-api-key': 's3cret',
      'proxy-authorization': `Basic ${Buffer.from('user:pw').toString('base64')}`,
    });
    expect(forwarded[0].headers.cookie?.split('; ').sort()).toEqual(['jarred=j1', 'sid=abc']);
  });

  it('takes them before `check` too (they were refused there)', async () => {
    const r = await check(['--header', 'X-Team: early', '--cookie', 'sid=1', 'check', '--no-robots', `http://a.localhost:${webPort}/`]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^request: direct \(no proxy\); auth: none; cookies: sid$/m);
    expect(r.out).toContain('         header x-team: early');
  });

  it('a bad --header or --proxy is one line, exit 2', async () => {
    const header = await check(['check', '--header', 'no colon', `http://a.localhost:${webPort}/`]);
    expect(header.code).toBe(2);
    expect(header.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(header.err).toMatch(/^crawl: --header/);
    const proxied = await check(['check', '--proxy', 'socks9://x', `http://a.localhost:${webPort}/`]);
    expect(proxied.code).toBe(2);
    expect(proxied.err).toBe('crawl: --proxy: expected an http:// or https:// proxy URL, got a socks9: one\n');
  });

  it('--insecure and --ca decide whether robots.txt of a self-signed host can be read', async () => {
    const url = `https://127.0.0.1:${securePort}/private/x`;
    const plain = await check(['check', url]);
    expect(plain.out).toMatch(/^robots: +not reachable: robots\.txt could not be fetched: TLS_ERROR; .*page records with error TLS_ERROR/m);
    const insecure = await check(['check', '--insecure', url]);
    expect(insecure.err).toBe(`crawl: warning: ${INSECURE_WARNING}\n`);
    expect(insecure.out).toMatch(/^robots: +disallowed by "Disallow: \/private" \(line 2\)/m);
    expect(insecure.code).toBe(1);
    const trusted = await check(['check', '--ca', 'cert.pem', url]);
    expect(trusted.err).toBe('');
    expect(trusted.out).toMatch(/^robots: +disallowed by "Disallow: \/private"/m);
  });
});

describe('crawl check on a host that refuses connections', () => {
  it('says a crawl records its URLs as pages with the error, not that it skips the host', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}/page`;
    const r = await check(['check', url]);
    expect(r.out).toMatch(
      /^robots: +not reachable: robots\.txt could not be fetched: CONNECTION_REFUSED; a crawl re-tries it for a few seconds, then gives the host up: its URLs become page records with error CONNECTION_REFUSED, not requested$/m,
    );
    expect(r.out).toMatch(/^verdict: would be recorded with error CONNECTION_REFUSED, not requested$/m);
    expect(r.out).not.toMatch(/treats the whole host as disallowed/);
    const result = await explain(url);
    expect(result.robots).toMatchObject({ checked: true, kind: 'unavailable', connectError: 'CONNECTION_REFUSED' });
  });
});
