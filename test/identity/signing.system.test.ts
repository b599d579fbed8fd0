/**
 * Web Bot Auth signing: the draft's Ed25519 test vector reproduced byte for
 * byte, and every request of a real crawl (robots.txt, pages, a redirect, a
 * retry after 429) verified on arrival by a verifier built on another RFC
 * 9421 implementation (bot-auth-verifier.ts), which rejects an expired or
 * replayed signature. Also `crawl keys new`, the key file's permissions and
 * `crawl check --sign-key`.
 */
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrivateKey, sign } from 'node:crypto';
import { component, createSignatureSync } from 'http-message-sig';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { memoryIo } from '../support/memory-io.js';
import { createRequestSigner, webBotAuthFields } from '../../src/identity/request-signer.js';
import { readSigningKey } from '../../src/identity/signing-key.js';
import { createVerifier, type VerifiedRequest } from './bot-auth-verifier.js';
import { chromium } from '../support/system-fixtures.js';

/** RFC 9421 Appendix B.1.4's Ed25519 test key, which the draft's vectors use. */
const RFC9421_ED25519 = { kty: 'OKP', crv: 'Ed25519', d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs' };
const AGENT = 'https://bot.example.com';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crawl-identity-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('draft-meunier-webbotauth-httpsig-protocol-02 test vector (Ed25519, Signature-Agent dictionary)', () => {
  it('is reproduced byte for byte', () => {
    const fields = webBotAuthFields(new URL('https://example.com/'), {
      label: 'sig2',
      memberKey: 'agent2',
      signatureAgent: 'https://signature-agent.test',
      keyid: 'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U',
      created: 1735689600,
      expires: 4889289600,
      nonce: 'n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==',
      privateKey: createPrivateKey({ key: RFC9421_ED25519, format: 'jwk' }),
    });
    expect(fields).toEqual({
      'signature-agent': 'agent2="https://signature-agent.test"',
      'signature-input':
        'sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"',
      signature: 'sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:',
    });
  });
});

describe('the signature base, written directly', () => {
  // What the crawler signed with before it wrote the base itself: the same inputs must give the same bytes.
  it('is the one the RFC 9421 library builds, for every kind of authority', () => {
    const privateKey = createPrivateKey({ key: RFC9421_ED25519, format: 'jwk' });
    const urls = [
      'https://EXAMPLE.com:443/a',
      'http://h1.localhost:8080/p/1?q=2',
      'http://[::1]:8080/',
      'https://bücher.example/x',
      'http://127.0.0.1/robots.txt',
    ];
    for (const href of urls) {
      const target = new URL(href);
      const inputs = {
        label: 'sig1',
        signatureAgent: 'https://bot.example.com:8443',
        keyid: 'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U',
        created: 1767225600,
        expires: 1767225900,
      };
      const nonce = 'n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==';
      const ours = webBotAuthFields(target, { ...inputs, nonce, privateKey });
      const agentField = 'sig1="https://bot.example.com:8443"';
      const theirs = createSignatureSync(
        { kind: 'request', method: 'GET', targetUri: target.href, fields: [{ name: 'signature-agent', value: agentField }] },
        {
          label: 'sig1',
          components: ['@authority', component('signature-agent', { key: 'sig1' })],
          parameters: { created: inputs.created, keyid: inputs.keyid, alg: 'ed25519', expires: inputs.expires, nonce, tag: 'web-bot-auth' },
          signer: { algorithm: 'ed25519', sign: (data) => sign(null, data, privateKey) },
        },
      );
      expect(ours, href).toEqual({ 'signature-agent': agentField, 'signature-input': theirs.signatureInput, signature: theirs.signature });
    }
  });

  it('refuses what a structured field cannot carry, rather than sign it', () => {
    const privateKey = createPrivateKey({ key: RFC9421_ED25519, format: 'jwk' });
    const inputs = { label: 'sig1', signatureAgent: AGENT, keyid: 'k', created: 1, expires: 2, nonce: 'n', privateKey };
    expect(() => webBotAuthFields(new URL('https://example.com/'), { ...inputs, nonce: 'a\nb' })).toThrow(/printable ASCII/);
    expect(() => webBotAuthFields(new URL('https://example.com/'), { ...inputs, label: 'Sig1' })).toThrow(/structured-field key/);
    expect(() => webBotAuthFields(new URL('https://example.com/'), { ...inputs, created: 1.5 })).toThrow(/integer seconds/);
  });
});

describe('crawl keys new, and the key file', () => {
  it('writes a 0600 private JWK and a publishable JWK Set, and says where and how to publish it', async () => {
    const io = memoryIo(dir);
    expect(await main(['keys', 'new', 'k1'], io)).toBe(0);
    expect((await stat(join(dir, 'k1', 'private.jwk'))).mode & 0o777).toBe(0o600);
    const published = JSON.parse(await readFile(join(dir, 'k1', 'http-message-signatures-directory'), 'utf8')) as { keys: Array<Record<string, string>> };
    const key = await readSigningKey(join(dir, 'k1', 'private.jwk'), 'k1/private.jwk');
    expect(published.keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x, kid: key.thumbprint }]);
    expect(io.out()).toContain(`keyid: ${key.thumbprint}`);
    expect(io.out()).toContain('/.well-known/http-message-signatures-directory');
    expect(io.out()).toContain('application/http-message-signatures-directory+json');
    // A second `keys new` into the same place keeps the key it would lose.
    const again = memoryIo(dir);
    expect(await main(['keys', 'new', 'k1'], again)).toBe(2);
    expect(again.err()).toContain('already exists');
  });

  it('refuses a private key readable by group or others, in one line naming the file and the fix (exit 2)', async () => {
    await main(['keys', 'new', 'k2'], memoryIo(dir));
    await chmod(join(dir, 'k2', 'private.jwk'), 0o644);
    const io = memoryIo(dir);
    expect(await main(['--sign-key', 'k2/private.jwk', '--signature-agent', AGENT, 'http://127.0.0.1:9/'], io)).toBe(2);
    expect(io.err()).toBe('crawl: --sign-key k2/private.jwk: the private key is readable by group or others (mode 0644): run chmod 600 k2/private.jwk\n');
  });
});

describe('a signed crawl', () => {
  let server: Server;
  let origin: string;
  const seen: Array<{ path: string; arrivedAt: number; verified?: VerifiedRequest; problem?: string; checked?: Promise<unknown> }> = [];
  let verify: (req: IncomingMessage, at: number) => Promise<VerifiedRequest>;
  let busy = 0;

  beforeAll(async () => {
    await main(['keys', 'new', 'crawler'], memoryIo(dir));
    const key = await readSigningKey(join(dir, 'crawler', 'private.jwk'), 'crawler/private.jwk');
    const verifier = createVerifier(key.publicJwk, key.thumbprint);
    verify = (req, at) => verifier.verify({ method: req.method!, url: `${origin}${req.url}`, headers: req.headers }, at);
    server = createServer((req, res) => {
      const arrivedAt = Date.now() / 1000;
      const entry: (typeof seen)[number] = { path: req.url ?? '', arrivedAt };
      seen.push(entry);
      entry.checked = verify(req, arrivedAt).then(
        (v) => (entry.verified = v),
        (err: Error) => (entry.problem = err.message),
      );
      const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(body);
      if (req.url === '/robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      else if (req.url === '/') html('<a href="/a">a</a> <a href="/moved">moved</a> <a href="/busy">busy</a>');
      else if (req.url === '/moved') res.writeHead(301, { location: '/b' }).end();
      else if (req.url === '/busy' && busy++ === 0) res.writeHead(429, { 'retry-after': '1' }).end();
      else if (req.url === '/app') html('<div id="out"></div><script src="/app.js"></script>');
      else if (req.url === '/app.js')
        res
          .writeHead(200, { 'content-type': 'text/javascript' })
          .end("fetch('/data.json').then((r) => r.json()).then((d) => { document.getElementById('out').textContent = d.text; });");
      else if (req.url === '/data.json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"rendered"}');
      else html('<p>leaf</p>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('signs every request it makes, each verifying on arrival with a fresh nonce and created within a second', async () => {
    const io = memoryIo(dir);
    const code = await main(['-q', '--rate', '20/s', '--sign-key', 'crawler/private.jwk', '--signature-agent', AGENT, `${origin}/`], io);
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    await Promise.all(seen.map((s) => s.checked ?? Promise.resolve()));
    expect(seen.map((s) => s.path).sort()).toEqual(['/', '/a', '/b', '/busy', '/busy', '/moved', '/robots.txt']);
    for (const s of seen) {
      expect(s.problem, s.path).toBeUndefined();
      expect(s.verified?.signatureAgent).toBe(AGENT);
      expect(s.verified?.components).toEqual(['@authority', 'signature-agent;key=sig1']);
      expect(Math.abs(s.verified!.created - s.arrivedAt), s.path).toBeLessThanOrEqual(1);
    }
    expect(new Set(seen.map((s) => s.verified?.nonce)).size).toBe(seen.length);
  });

  it.skipIf(chromium.missing !== undefined)(
    "signs a rendering browser's requests too, each for its host, as it sends them",
    async () => {
      const before = seen.length;
      const io = memoryIo(dir);
      const args = [
        '-q',
        '--rate',
        '20/s',
        '--render',
        '--browser',
        chromium.path,
        '--max-pages',
        '1',
        '--content',
        'text',
        '--sign-key',
        'crawler/private.jwk',
      ];
      const code = await main([...args, '--signature-agent', AGENT, `${origin}/app`], io);
      expect(code, io.err()).toBe(0);
      expect(io.out()).toContain('rendered');
      const mine = seen.slice(before);
      await Promise.all(mine.map((s) => s.checked ?? Promise.resolve()));
      // The document, then the script and the data the browser asked for while rendering it.
      expect(mine.map((s) => s.path)).toEqual(expect.arrayContaining(['/app', '/app.js', '/data.json']));
      for (const s of mine) {
        expect(s.problem, s.path).toBeUndefined();
        expect(Math.abs(s.verified!.created - s.arrivedAt), s.path).toBeLessThanOrEqual(1);
      }
      expect(new Set(mine.map((s) => s.verified?.nonce)).size).toBe(mine.length);
    },
    60_000,
  );

  it('is checked by a verifier that rejects an expired or a replayed signature', async () => {
    const key = await readSigningKey(join(dir, 'crawler', 'private.jwk'), 'crawler/private.jwk');
    const verifier = createVerifier(key.publicJwk, key.thumbprint);
    const url = new URL(`${origin}/x`);
    const now = Date.now();
    const request = (headers: Record<string, string>) => ({ method: 'GET', url: url.href, headers: { host: url.host, ...headers } });
    // Signed ten minutes ago: expired five minutes later.
    const old = createRequestSigner({ keys: [key], signatureAgent: AGENT, now: () => now - 600_000 }).sign(url);
    await expect(verifier.verify(request(old), now / 1000)).rejects.toThrow(/expired/);
    const fresh = createRequestSigner({ keys: [key], signatureAgent: AGENT, now: () => now }).sign(url);
    await expect(verifier.verify(request(fresh), now / 1000)).resolves.toMatchObject({ keyid: key.thumbprint });
    await expect(verifier.verify(request(fresh), now / 1000)).rejects.toThrow(/replay/);
    // And a signature for another authority does not verify here.
    const elsewhere = createRequestSigner({ keys: [key], signatureAgent: AGENT, now: () => now }).sign(new URL('http://other.example/x'));
    await expect(verifier.verify(request(elsewhere), now / 1000)).rejects.toThrow(/does not verify/);
  });

  it('crawl check --sign-key shows the headers a request would carry, the signature but never the key', async () => {
    const io = memoryIo(dir);
    await main(['check', '--sign-key', 'crawler/private.jwk', '--signature-agent', AGENT, `${origin}/a`], io);
    const out = io.out();
    expect(out).toContain(`header signature-agent: sig1="${AGENT}"`);
    expect(out).toMatch(
      /header signature-input: sig1=\("@authority" "signature-agent";key="sig1"\);created=\d+;keyid="[\w-]{43}";alg="ed25519";expires=\d+;nonce="[^"]+";tag="web-bot-auth"/,
    );
    expect(out).toMatch(/header signature: sig1=:[A-Za-z0-9+/]+={0,2}:/);
    const { d } = JSON.parse(await readFile(join(dir, 'crawler', 'private.jwk'), 'utf8')) as { d: string };
    expect(out + io.err()).not.toContain(d);
  });
});
