/**
 * Signs requests as Web Bot Auth asks (draft-meunier-webbotauth-httpsig-
 * protocol-02, over RFC 9421 HTTP Message Signatures): each request carries
 *
 *   Signature-Agent: sig1="https://bot.example.com"
 *   Signature-Input: sig1=("@authority" "signature-agent";key="sig1");created=…;
 *                    keyid="<JWK thumbprint>";alg="ed25519";expires=…;nonce="…";tag="web-bot-auth"
 *   Signature: sig1=:<Ed25519 signature>:
 *
 * The signature base and the fields are built by Cloudflare's RFC 9421
 * implementation (`http-message-sig`), which reproduces the draft's Ed25519
 * test vector byte for byte (test/identity/); the Signature-Agent dictionary
 * is serialised by `structured-headers`. Signing itself is Node's Ed25519.
 *
 * `sign(url)` is called by the fetcher as the request is handed to its
 * connection (fetch/fetcher.ts), after the limiter released it: `created`
 * is then, not when the URL was queued, and `@authority` is the host being
 * contacted by that very request (a redirect hop, robots.txt, a browser's
 * subresource: each its own). Every call draws a fresh nonce, so no two
 * requests carry the same signature.
 *
 * This module is loaded only when a key is given (request-setup.ts).
 */
import { randomFillSync, sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { component, createSignatureSync } from 'http-message-sig';
import { serializeDictionary } from 'structured-headers';
import { resolve } from 'node:path';
import type { IdentitySettings } from '../config/identity-schema.js';
import { readSigningKey, SigningKeyError, type SigningKey } from './signing-key.js';

/** The signature's label, and the key of our Signature-Agent member (the draft: each signer's member is keyed to its label). */
export const SIGNATURE_LABEL = 'sig1';
/** `tag` of a Web Bot Auth request signature. */
export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
/**
 * `expires` - `created`. Anyone who sees a request may replay its signature
 * to the same authority until then (it covers the authority, not the path):
 * short, but long enough for a server whose clock is a little behind ours.
 * The draft recommends at most 24 h.
 */
export const SIGNATURE_VALIDITY_S = 300;
/** Random bytes in each nonce (as Cloudflare's web-bot-auth draws them). */
const NONCE_BYTES = 64;

export interface RequestSigner {
  /** The signing key's JWK thumbprint (`keyid`). */
  readonly keyid: string;
  /** Every key given, the signing one first (a rotation's old key second). */
  readonly keys: readonly SigningKey[];
  /** The Signature-Agent origin. */
  readonly signatureAgent: string;
  /** The headers (lowercased names) that sign a request to `url` made now. */
  sign(url: URL, method?: string): Record<string, string>;
}

export interface RequestSignerOptions {
  /** The first signs. */
  keys: readonly SigningKey[];
  signatureAgent: string;
  /** Epoch milliseconds: `created` and `expires` are wall-clock time. */
  now: () => number;
}

/** Nonces from one pool of random bytes, refilled when used up: one getrandom call per 64 requests, not per request. */
function noncePool(): () => string {
  const pool = Buffer.alloc(NONCE_BYTES * 64);
  let offset = pool.length;
  return () => {
    if (offset === pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const nonce = pool.toString('base64', offset, offset + NONCE_BYTES);
    offset += NONCE_BYTES;
    return nonce;
  };
}

/** What one signature says; all of it but the key is public. */
export interface SignatureInputs {
  /** The signature's label; the Signature-Agent member it covers has the same key unless `memberKey` says otherwise. */
  label: string;
  memberKey?: string;
  signatureAgent: string;
  keyid: string;
  /** Epoch seconds. */
  created: number;
  expires: number;
  nonce: string;
  privateKey: KeyObject;
}

/**
 * The three fields that sign a request to `target` (lowercased names). Pure
 * but for the key: the draft's test vectors come out byte for byte.
 */
export function webBotAuthFields(target: URL, p: SignatureInputs, method = 'GET'): Record<string, string> {
  const memberKey = p.memberKey ?? p.label;
  const agentField = serializeDictionary(new Map([[memberKey, [p.signatureAgent, new Map()]]]));
  const signed = createSignatureSync(
    { kind: 'request', method, targetUri: target.href, fields: [{ name: 'signature-agent', value: agentField }] },
    {
      label: p.label,
      components: ['@authority', component('signature-agent', { key: memberKey })],
      // In the draft's order: created, keyid, alg, expires, nonce, tag.
      parameters: { created: p.created, keyid: p.keyid, alg: 'ed25519', expires: p.expires, nonce: p.nonce, tag: WEB_BOT_AUTH_TAG },
      signer: { algorithm: 'ed25519', sign: (data) => ed25519Sign(null, data, p.privateKey) },
    },
  );
  return { 'signature-agent': agentField, 'signature-input': signed.signatureInput, signature: signed.signature };
}

export function createRequestSigner(opts: RequestSignerOptions): RequestSigner {
  const [key] = opts.keys;
  if (key === undefined) throw new TypeError('Expected `keys` to hold a signing key, got none');
  const nonce = noncePool();
  const { signatureAgent } = opts;
  return {
    keyid: key.thumbprint,
    keys: opts.keys,
    signatureAgent,
    sign(url, method = 'GET') {
      const created = Math.floor(opts.now() / 1000);
      const inputs = {
        label: SIGNATURE_LABEL,
        signatureAgent,
        keyid: key.thumbprint,
        created,
        expires: created + SIGNATURE_VALIDITY_S,
        nonce: nonce(),
        privateKey: key.privateKey,
      };
      return webBotAuthFields(url, inputs, method);
    },
  };
}

/**
 * Reads the identity's key files (relative to `cwd`) and makes its signer.
 * @throws SigningKeyError (exit 2): a key file that cannot be used, or the same key named twice.
 */
export async function openRequestSigner(identity: IdentitySettings, opts: { cwd: string; now: () => number }): Promise<RequestSigner> {
  const keys = await Promise.all(identity.keys.map((file) => readSigningKey(resolve(opts.cwd, file), file)));
  if (keys.length === 2 && keys[0].thumbprint === keys[1].thumbprint) {
    throw new SigningKeyError(`--sign-key ${keys[1].file}: the same key as ${keys[0].file}; a rotation names the new key, then the old one`);
  }
  return createRequestSigner({ keys, signatureAgent: identity.signatureAgent, now: opts.now });
}
