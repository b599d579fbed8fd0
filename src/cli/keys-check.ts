/**
 * `crawl keys check ORIGIN`: one GET of the origin's HTTP Message Signatures
 * Directory (no redirect followed: the draft forbids it), then what a
 * verifier would find there — whether it lists the key in use (by JWK
 * thumbprint), and whether the response carries a valid directory signature
 * per key (draft-meunier-webbotauth-httpsig-protocol-02, appendix "Possession
 * Proof on the Directory Response": `"@authority";req` and `content-digest`
 * covered, `created`, `expires`, `keyid`, `tag="http-message-signatures-
 * directory"`), checked with http-message-sig and Content-Digest recomputed.
 */
import { createHash, createPublicKey, verify as ed25519Verify } from 'node:crypto';
import { resolve } from 'node:path';
import type { Io, KeysFlags } from './flags.js';
import { EXIT } from './flags.js';
import { UsageError } from '../config/seeds.js';
import { signatureAgentProblem } from '../config/identity-schema.js';
import { parseDuration, secondsIfBare } from '../config/units.js';
import { DEFAULT_USER_AGENT } from '../config/file-schema.js';
import { createFetcher, type FetchResult } from '../fetch/fetcher.js';
import { readCaFile } from '../fetch/tls.js';
import { systemClock } from '../clock.js';
import { DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH } from '../identity/key-directory.js';
import { ed25519Thumbprint, readSigningKey } from '../identity/signing-key.js';

export const DIRECTORY_TAG = 'http-message-signatures-directory';

interface ListedKey {
  kid: string;
  x: string;
}

export async function keysCheck(origin: string, flags: KeysFlags, io: Io): Promise<number> {
  const problem = signatureAgentProblem(origin);
  if (problem) throw new UsageError(`keys check: ${problem}`);
  const url = new URL(DIRECTORY_PATH, origin).href;
  const inUse = await Promise.all((flags.signKey ?? []).map((file) => readSigningKey(resolve(io.cwd, file), file)));
  const timeoutMs = flags.timeout === undefined ? 30_000 : parseDuration(secondsIfBare(flags.timeout) as string | number);
  const fetcher = createFetcher({
    userAgent: flags.userAgent ?? DEFAULT_USER_AGENT,
    timeouts: { connectMs: timeoutMs, headersMs: timeoutMs, bodyMs: timeoutMs, totalMs: timeoutMs },
    maxBodyBytes: 1 << 20,
    clock: systemClock,
    tls: { insecure: flags.insecure === true, ...(flags.ca !== undefined && { ca: readCaFile(resolve(io.cwd, flags.ca), flags.ca) }) },
  });
  const out: string[] = [];
  const say = (line: string) => out.push(line);
  let ok = true;
  try {
    let res: FetchResult;
    try {
      res = await fetcher.fetch(url, { read: 'text' });
    } catch (err) {
      io.stdout.write(`${url}: not fetched: ${err instanceof Error ? err.message : String(err)}\n`);
      return EXIT.internal;
    }
    say(`${url}: ${res.status}${res.location ? ` (redirect to ${res.location}: verifiers do not follow it)` : ''}`);
    if (res.status !== 200) return (io.stdout.write(`${out.join('\n')}\nno key directory: verifiers need a 200 answer\n`), EXIT.internal);
    const type = res.contentType;
    say(
      type === DIRECTORY_MEDIA_TYPE
        ? `content type: ${type}`
        : `content type: ${type ?? 'none'} — should be ${DIRECTORY_MEDIA_TYPE} (some verifiers accept application/json)`,
    );
    const listed = await listedKeys(res.body ?? '');
    if (listed === null) return (io.stdout.write(`${out.join('\n')}\nnot a JWK Set of Ed25519 keys ({"keys": [...]})\n`), EXIT.internal);
    say(`keys listed: ${listed.length === 0 ? 'none' : listed.map((k) => k.kid).join(', ')}`);
    for (const [i, key] of inUse.entries()) {
      const found = listed.some((k) => k.kid === key.thumbprint);
      if (!found) ok = false;
      say(`${i === 0 ? 'signing key' : 'old key'} ${key.thumbprint} (${key.file}): ${found ? 'listed' : 'NOT listed: verifiers cannot check its signatures'}`);
    }
    if (listed.length === 0) ok = false;
    for (const line of await responseSignatures(res, url, listed)) say(line);
  } finally {
    await fetcher.close();
  }
  io.stdout.write(`${out.join('\n')}\n`);
  return ok ? EXIT.ok : EXIT.internal;
}

/** The directory's Ed25519 keys with their thumbprints, or null when the body is not a JWK Set. */
async function listedKeys(body: string): Promise<ListedKey[] | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return null;
  const out: ListedKey[] = [];
  for (const jwk of keys as Array<Record<string, unknown>>) {
    if (jwk?.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string') out.push({ kid: await ed25519Thumbprint(jwk.x), x: jwk.x });
  }
  return out;
}

/** One line per directory signature the response carries, checked; one line when it carries none. */
async function responseSignatures(res: FetchResult, url: string, listed: ListedKey[]): Promise<string[]> {
  if (res.headers.signature === undefined || res.headers['signature-input'] === undefined) {
    return ['response signature: none (the draft recommends one per key, covering "@authority";req and content-digest)'];
  }
  const sig = await import('http-message-sig');
  const { parseDictionary } = await import('structured-headers');
  const labels = [...parseDictionary(res.headers['signature-input']).keys()];
  const digest = contentDigestProblem(res.headers['content-digest'], res.body ?? '');
  const lines: string[] = [];
  for (const label of labels) {
    try {
      const verified = await sig.verifySignature(
        {
          kind: 'response',
          status: res.status,
          fields: Object.entries(res.headers).map(([name, value]) => ({ name, value })),
          request: { kind: 'request', method: 'GET', targetUri: url, fields: [] },
        },
        {
          label,
          policy: {
            algorithms: ['ed25519'],
            requiredComponents: [sig.component('@authority', { req: true }), 'content-digest'],
            requiredParameters: ['created', 'expires', 'keyid', 'tag'],
            clockSkew: 60,
            validate: (v) => v.parameters.tag === DIRECTORY_TAG,
          },
          resolveVerifier: (candidate) => {
            const key = listed.find((k) => k.kid === candidate.parameters.keyid);
            if (key === undefined) throw new Error(`keyid ${String(candidate.parameters.keyid)} is not in the directory`);
            const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.x }, format: 'jwk' });
            return { algorithm: 'ed25519', verify: (data, signature) => ed25519Verify(null, data, publicKey, signature) };
          },
        },
      );
      lines.push(
        digest === undefined
          ? `response signature ${label}: valid, by ${String(verified.parameters.keyid)}`
          : `response signature ${label}: signature valid, but ${digest}`,
      );
    } catch (err) {
      lines.push(`response signature ${label}: not valid: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return lines;
}

/** Why the Content-Digest field does not match the body, or undefined when a sha-256 or sha-512 member does. */
function contentDigestProblem(field: string | undefined, body: string): string | undefined {
  if (field === undefined) return 'no Content-Digest field';
  for (const [alg, name] of [
    ['sha-256', 'sha256'],
    ['sha-512', 'sha512'],
  ] as const) {
    const member = new RegExp(`(?:^|,)\\s*${alg}=:([A-Za-z0-9+/=]+):`).exec(field);
    if (member) return createHash(name).update(body, 'utf8').digest('base64') === member[1] ? undefined : `Content-Digest ${alg} does not match the body`;
  }
  return 'Content-Digest has no sha-256 or sha-512 member';
}
