/**
 * Proxies: a tiny forward proxy on 127.0.0.1, written here, that serves
 * absolute-form GETs (http URLs) and CONNECT tunnels (https URLs) and logs
 * what passed through it. --proxy, HTTP_PROXY/HTTPS_PROXY/NO_PROXY and a
 * domain entry's `proxy`, the politeness key staying the target host, and
 * the SSRF guard still judging the target.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { noProxyMatches, parseNoProxy, readEnvProxies, selectProxy } from '../../src/fetch/proxy.js';
import { memoryIo } from '../support/memory-io.js';
import { parseRecords } from '../support/crawl-harness.js';
import { jsonLines, requireBuilt, startCrawl } from '../support/spawn-crawl.js';

let dir = '';
let web: Server;
let secure: Server;
let proxy: Server;
let webPort = 0;
let securePort = 0;
let proxyUrl = '';
/** What the proxy was asked for: "GET http://…" or "CONNECT host:port". */
let passed: string[] = [];
/** Host headers the web server saw. */
let served: string[] = [];

const portOf = (s: Server) => (s.address() as AddressInfo).port;
const listen = (s: Server) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
const close = (s: Server) => new Promise((resolve) => s.close(resolve));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'proxy-'));
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    served.push(`${req.headers.host}${req.url}`);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const links = req.url === '/' ? `<a href="/next">n</a><a href="http://127.0.0.2:${webPort}/private">p</a>` : '';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links}</body></html>`);
  };
  web = createHttpServer(handler);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  secure = createHttpsServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) }, handler);

  proxy = createHttpServer((req, res) => {
    passed.push(`${req.method} ${req.url}`);
    const target = new URL(req.url!);
    // Every *.localhost name and 127.x address here is this machine.
    const upstream = request(
      { host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  proxy.on('connect', (req, socket, head) => {
    passed.push(`CONNECT ${req.url}`);
    const port = Number(req.url!.split(':').pop());
    const upstream = net.connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await Promise.all([listen(web), listen(secure), listen(proxy)]);
  webPort = portOf(web);
  securePort = portOf(secure);
  proxyUrl = `http://127.0.0.1:${portOf(proxy)}`;
});

afterAll(async () => {
  await Promise.all([close(web), close(secure), close(proxy)]);
});

beforeEach(() => {
  passed = [];
  served = [];
});

async function run(args: string[], config?: Record<string, unknown>) {
  const io = memoryIo(dir);
  const extra: string[] = [];
  if (config) {
    await writeFile(join(dir, 'config.json'), JSON.stringify(config));
    extra.push('--config', 'config.json');
  }
  const code = await main([...extra, '--rate', 'unlimited', '--emit-skipped', '-q', ...args], io);
  return {
    code,
    err: io.err(),
    ...parseRecords(
      io
        .out()
        .split('\n')
        .filter((l) => l !== ''),
    ),
  };
}

/** Sets proxy variables for one test (lowercase ones too, which win). */
async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const names = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  for (const n of names) delete process.env[n];
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
    }
  }
}

describe('--proxy', () => {
  it('sends http URLs as absolute-form GETs through the proxy; the politeness key stays the target host', async () => {
    const seed = `http://a.localhost:${webPort}/`;
    const r = await withEnv({}, () => run(['--proxy', proxyUrl, seed]));
    expect(r.code).toBe(0);
    expect(passed).toEqual([`GET ${seed}robots.txt`, `GET ${seed}`, `GET ${seed}next`]);
    expect(r.pages.map((p) => [p.url, p.status, p.host])).toEqual([
      [seed, 200, `a.localhost:${webPort}`],
      [`${seed}next`, 200, `a.localhost:${webPort}`],
    ]);
  });

  it('still refuses a private target (checked before the proxy sees it)', async () => {
    const seed = `http://a.localhost:${webPort}/`;
    const r = await withEnv({}, () => run(['--proxy', proxyUrl, '--scope', 'any', seed]));
    const skip = r.skipped.find((s) => s.url.startsWith('http://127.0.0.2'));
    expect(skip?.reason).toBe('private-address');
    expect(passed.some((p) => p.includes('127.0.0.2'))).toBe(false);
  });

  it('tunnels https URLs with CONNECT (TLS trust flags apply inside the tunnel)', async () => {
    const seed = `https://localhost:${securePort}/next`;
    const r = await withEnv({}, () => run(['--proxy', proxyUrl, '--insecure', seed]));
    expect(r.pages[0]?.status).toBe(200);
    expect(passed).toEqual([`CONNECT localhost:${securePort}`]);
  });

  // The bundle's undici entry (scripts/undici-lean.cjs) loads ProxyAgent, and the Dispatcher API its tunnels call,
  // only when a crawl first uses a proxy; the tests above run the sources, with undici's whole index.
  it('the shipped binary goes through the proxy too: http as absolute-form GETs, https tunnelled', async () => {
    await requireBuilt();
    const plain = `http://a.localhost:${webPort}/next`;
    const tunnelled = `https://localhost:${securePort}/next`;
    const env = Object.fromEntries(['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'].map((name) => [name, '']));
    const run = await startCrawl(['--proxy', proxyUrl, '--insecure', '--rate', 'unlimited', '-q', plain, tunnelled], dir, { env }).done;
    expect(run.code, run.stderr).toBe(0);
    const pages = jsonLines<{ url: string; status: number }>(run.stdout).map((r) => `${r.status} ${r.url}`);
    expect(pages.sort()).toEqual([`200 ${plain}`, `200 ${tunnelled}`]);
    expect(passed).toContain(`GET ${plain}`);
    expect(passed).toContain(`CONNECT localhost:${securePort}`);
  });

  it('a domain entry with proxy: false connects directly', async () => {
    const seed = `http://a.localhost:${webPort}/next`;
    const r = await withEnv({}, () => run(['--proxy', proxyUrl, seed], { domains: { 'a.localhost': { proxy: false } } }));
    expect(r.pages[0]?.status).toBe(200);
    expect(passed).toEqual([]);
    expect(served).toContain(`a.localhost:${webPort}/next`);
  });

  it('a proxy refusing the tunnel (407 to CONNECT) is PROXY_ERROR with its status, not ABORTED', async () => {
    const guarded = createHttpServer((req, res) => res.writeHead(407, { 'proxy-authenticate': 'Basic realm="p"' }).end());
    guarded.on('connect', (req, socket) => {
      passed.push(`CONNECT ${req.url}`);
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="p"\r\nContent-Length: 0\r\n\r\n');
    });
    await listen(guarded);
    try {
      const seed = `https://localhost:${securePort}/next`;
      const r = await withEnv({}, () => run(['--proxy', `http://127.0.0.1:${portOf(guarded)}`, '--insecure', '--no-robots', seed]));
      expect(r.pages).toHaveLength(1);
      expect(r.pages[0]).toMatchObject({ status: null, error: { code: 'PROXY_ERROR' } });
      expect(r.pages[0].error!.message).toBe(
        `GET ${seed} failed: the proxy answered 407 to CONNECT (Proxy Authentication Required: the proxy URL needs a user name and password)`,
      );
      expect(r.code).toBe(3); // no HTTP answer from the site: nothing reached
      expect(passed[0]).toBe(`CONNECT localhost:${securePort}`);
      // With robots.txt: the host cannot be reached through the proxy, so it is given up within seconds and the page carries the code.
      passed = [];
      const withRobots = await withEnv({}, () => run(['--proxy', `http://127.0.0.1:${portOf(guarded)}`, '--insecure', seed]));
      expect(withRobots.pages.map((p) => p.error?.code)).toEqual(['PROXY_ERROR']);
      expect(passed).toEqual([1, 2, 3].map(() => `CONNECT localhost:${securePort}`)); // robots.txt, tried 3 times; the page not requested
    } finally {
      await close(guarded);
    }
  });

  it('a bad proxy URL is one line, exit 2', async () => {
    const r = await run(['--proxy', 'socks9://x', `http://a.localhost:${webPort}/`]);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('crawl: --proxy: expected an http:// or https:// proxy URL, got a socks9: one');
  });
});

describe('HTTP_PROXY, HTTPS_PROXY and NO_PROXY', () => {
  // site.test is never resolved here: a seed's host skips the guard, and only the proxy (which maps every name to 127.0.0.1) connects to it.
  it('HTTP_PROXY is used when nothing is configured', async () => {
    const seed = `http://site.test:${webPort}/next`;
    const r = await withEnv({ HTTP_PROXY: proxyUrl }, () => run([seed]));
    expect(r.pages[0]?.status).toBe(200);
    expect(passed).toEqual([`GET http://site.test:${webPort}/robots.txt`, `GET ${seed}`]);
  });

  it("NO_PROXY exempts its hosts, and localhost never takes the environment's proxy", async () => {
    const r = await withEnv({ HTTP_PROXY: proxyUrl, NO_PROXY: 'example.org, .test' }, () => run([`http://site.test:${webPort}/next`]));
    expect(r.pages[0]?.error?.code).toBe('DNS_FAILURE');
    const local = await withEnv({ HTTP_PROXY: proxyUrl }, () => run([`http://a.localhost:${webPort}/next`]));
    expect(local.pages[0]?.status).toBe(200);
    expect(passed).toEqual([]);
  });

  it('choice table', () => {
    const env = readEnvProxies({ HTTP_PROXY: 'http://p:1', https_proxy: 'http://s:2', NO_PROXY: 'skip.example, *.inner.example:8080' });
    const pick = (url: string, configured: string | false | null = null) => selectProxy(new URL(url), configured, env);
    expect(pick('http://a.example/')).toBe('http://p:1');
    expect(pick('https://a.example/')).toBe('http://s:2');
    expect(pick('http://skip.example/')).toBeNull();
    expect(pick('http://www.skip.example/')).toBeNull();
    expect(pick('http://x.inner.example:8080/')).toBeNull();
    expect(pick('http://x.inner.example/')).toBe('http://p:1');
    expect(pick('http://skip.example/', 'http://c:3')).toBe('http://c:3');
    expect(pick('http://a.example/', false)).toBeNull();
    expect(pick('http://localhost:3000/')).toBeNull();
    expect(pick('http://127.0.0.1:3000/')).toBeNull();
    expect(pick('http://localhost:3000/', 'http://c:3')).toBe('http://c:3');
    expect(noProxyMatches(parseNoProxy('*'), new URL('http://any.example/'))).toBe(true);
    expect(selectProxy(new URL('https://a.example/'), null, readEnvProxies({ HTTP_PROXY: 'http://p:1' }))).toBe('http://p:1');
  });
});
