/**
 * Signs requests as Web Bot Auth asks (draft-meunier-webbotauth-httpsig-
 * protocol-02, over RFC 9421 HTTP Message Signatures): each request carries
 *
 *   Signature-Agent: sig1="https://bot.example.com"
 *   Signature-Input: sig1=("@authority" "signature-agent";key="sig1");created=…;
 *                    keyid="<JWK thumbprint>";alg="ed25519";expires=…;nonce="…";tag="web-bot-auth"
 *   Signature: sig1=:<Ed25519 signature>:
 *
 * The fields and the signature base (RFC 9421 §2.5) are written here as
 * strings: every signature of a crawl covers the same two components with
 * the same parameters, so all but `created`, `expires`, the nonce and the
 * authority is serialised once per signer, by RFC 8941's rules (`sfKey`,
 * `sfString` below), and a request costs its Ed25519 signature and a few
 * concatenations. A generic RFC 9421 library (Cloudflare's
 * `http-message-sig`, which signed here before) validates, copies and
 * re-serialises every component and parameter and parses the
 * Signature-Agent field back on each call: 2-3x the Ed25519 operation per
 * request in a crawl. The output is checked against the draft's test vector
 * byte for byte, and every request of a real crawl is verified by another
 * implementation (`http-message-signatures`, test/identity/). Signing
 * itself is Node's Ed25519.
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
  /** The headers (lowercased names) that sign a request to `url` made now, whatever its method (only `@authority` is covered). */
  sign(url: URL): Record<string, string>;
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

/** An RFC 8941 key (a dictionary member's or a parameter's name). */
function sfKey(key: string): string {
  if (!/^[a-z*][a-z0-9_.*-]*$/.test(key)) throw new TypeError(`Expected a structured-field key (a-z, 0-9, _.*-), got ${JSON.stringify(key)}`);
  return key;
}

/** An RFC 8941 String: printable ASCII only, `"` and `\` escaped. */
function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new TypeError(`Expected printable ASCII for a structured-field string, got ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** What every signature with one label, key and agent shares, serialised once. */
interface SignatureTemplate {
  label: string;
  /** The Signature-Agent field: one dictionary member. */
  agentField: string;
  /** The signature base's line for that member (RFC 9421 §2.1.2: its serialised value, under `;key=`). */
  agentLine: string;
  /** The covered components, as an inner list. */
  components: string;
  keyid: string;
  tag: string;
}

function signatureTemplate(label: string, memberKey: string, signatureAgent: string, keyid: string): SignatureTemplate {
  const member = sfString(signatureAgent);
  const agentComponent = `"signature-agent";key=${sfString(sfKey(memberKey))}`;
  return {
    label: sfKey(label),
    agentField: `${memberKey}=${member}`,
    agentLine: `${agentComponent}: ${member}`,
    components: `("@authority" ${agentComponent})`,
    keyid: sfString(keyid),
    tag: sfString(WEB_BOT_AUTH_TAG),
  };
}

/**
 * The three fields for one request to `authority` (RFC 9421 §2.2.3: the
 * target URI's host, lowercase, without a default port, as `URL.host` is).
 * The signature base (§2.5) is one line per component, then
 * `"@signature-params"` with the very string Signature-Input carries.
 * `nonceItem` is the nonce already serialised as a String.
 */
function signedFields(
  t: SignatureTemplate,
  authority: string,
  created: number,
  expires: number,
  nonceItem: string,
  privateKey: KeyObject,
): Record<string, string> {
  if (!Number.isSafeInteger(created) || !Number.isSafeInteger(expires))
    throw new TypeError(`Expected integer seconds for created and expires, got ${created} and ${expires}`);
  // In the draft's order: created, keyid, alg, expires, nonce, tag.
  const params = `${t.components};created=${created};keyid=${t.keyid};alg="ed25519";expires=${expires};nonce=${nonceItem};tag=${t.tag}`;
  const base = `"@authority": ${authority}\n${t.agentLine}\n"@signature-params": ${params}`;
  const signature = ed25519Sign(null, Buffer.from(base, 'latin1'), privateKey);
  return { 'signature-agent': t.agentField, 'signature-input': `${t.label}=${params}`, signature: `${t.label}=:${signature.toString('base64')}:` };
}

/**
 * The three fields that sign a request to `target` (lowercased names). Pure
 * but for the key: the draft's test vectors come out byte for byte. Only
 * `@authority` is covered, so the method is not part of the signature.
 */
export function webBotAuthFields(target: URL, p: SignatureInputs): Record<string, string> {
  const template = signatureTemplate(p.label, p.memberKey ?? p.label, p.signatureAgent, p.keyid);
  return signedFields(template, target.host, p.created, p.expires, sfString(p.nonce), p.privateKey);
}

export function createRequestSigner(opts: RequestSignerOptions): RequestSigner {
  const [key] = opts.keys;
  if (key === undefined) throw new TypeError('Expected `keys` to hold a signing key, got none');
  const nonce = noncePool();
  const { signatureAgent } = opts;
  const template = signatureTemplate(SIGNATURE_LABEL, SIGNATURE_LABEL, signatureAgent, key.thumbprint);
  return {
    keyid: key.thumbprint,
    keys: opts.keys,
    signatureAgent,
    sign(url) {
      const created = Math.floor(opts.now() / 1000);
      // Base64 needs no escaping in a String.
      return signedFields(template, url.host, created, created + SIGNATURE_VALIDITY_S, `"${nonce()}"`, key.privateKey);
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
