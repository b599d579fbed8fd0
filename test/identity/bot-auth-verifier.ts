/**
 * A Web Bot Auth verifier for tests, built on a different RFC 9421
 * implementation (`http-message-signatures`) than the crawler signs with
 * (Cloudflare's `http-message-sig`): a request verifies when its signature
 * is valid under the given public key, covers `@authority` and the
 * Signature-Agent member of its label, carries the draft's parameters, has
 * not expired, and its nonce was never seen before (replay).
 */
import { createPublicKey, verify as ed25519Verify, type KeyObject } from 'node:crypto';
import { httpbis } from 'http-message-signatures';
import { parseDictionary, Token, type BareItem, type InnerList } from 'structured-headers';

/** A bare item as text (a string, token or number: what these parameters hold). */
function text(item: BareItem | undefined): string {
  if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') return String(item);
  if (item instanceof Token) return item.toString();
  return '';
}

export interface VerifiedRequest {
  keyid: string;
  created: number;
  expires: number;
  nonce: string;
  signatureAgent: string;
  components: string[];
}

export interface BotAuthVerifier {
  /** Throws with the reason when the request does not verify; `now` in epoch seconds. */
  verify(req: { method: string; url: string; headers: Record<string, string | string[] | undefined> }, now?: number): Promise<VerifiedRequest>;
}

export function createVerifier(publicJwk: { x: string }, keyid: string): BotAuthVerifier {
  const publicKey: KeyObject = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicJwk.x }, format: 'jwk' });
  const nonces = new Set<string>();
  return {
    async verify(req, now = Date.now() / 1000) {
      const header = (name: string) => {
        const value = req.headers[name];
        if (typeof value !== 'string') throw new Error(`no ${name} field`);
        return value;
      };
      const inputs = parseDictionary(header('signature-input'));
      if (inputs.size !== 1) throw new Error(`expected one signature, got ${inputs.size}`);
      const [[label, member]] = [...inputs];
      const [items, params] = member as InnerList;
      const components = items.map(([name, p]) => (p.has('key') ? `${text(name)};key=${text(p.get('key'))}` : text(name)));
      if (!components.includes('@authority')) throw new Error('@authority not covered');
      if (!components.includes(`signature-agent;key=${label}`)) throw new Error(`the Signature-Agent member ${label} is not covered`);
      if (params.get('tag') !== 'web-bot-auth') throw new Error(`tag is ${text(params.get('tag'))}`);
      if (params.get('alg') !== 'ed25519') throw new Error(`alg is ${text(params.get('alg'))}`);
      if (params.get('keyid') !== keyid) throw new Error(`keyid ${text(params.get('keyid'))} is not ours`);
      const created = Number(params.get('created'));
      const expires = Number(params.get('expires'));
      const nonce = text(params.get('nonce'));
      if (!Number.isInteger(created) || !Number.isInteger(expires) || !params.has('nonce')) throw new Error('created, expires and nonce are required');
      if (expires <= now) throw new Error(`expired at ${expires} (now ${now})`);
      if (created > now + 1) throw new Error('created in the future');
      const agents = parseDictionary(header('signature-agent'));
      const agent = agents.get(label);
      if (agent === undefined || typeof agent[0] !== 'string') throw new Error(`no Signature-Agent member ${label}`);
      const ok = await httpbis.verifyMessage(
        {
          keyLookup: async () => ({
            id: keyid,
            algs: ['ed25519'],
            verify: async (data: Buffer, signature: Buffer) => ed25519Verify(null, data, publicKey, signature),
          }),
          notAfter: now + 1,
          requiredParams: ['created', 'expires', 'keyid', 'nonce', 'tag'],
        },
        { method: req.method, url: req.url, headers: req.headers as Record<string, string> },
      );
      if (ok !== true) throw new Error('signature does not verify');
      // Checked last, recorded only for a valid signature: a forged request must not burn a real nonce.
      if (nonces.has(nonce)) throw new Error('nonce seen before: a replay');
      nonces.add(nonce);
      return { keyid, created, expires, nonce, signatureAgent: agent[0], components };
    },
  };
}
