/**
 * The config field (and flags) that say who the crawler is, verifiably
 * (Web Bot Auth, src/identity/): `identity: { key, signatureAgent }`, set
 * by `--sign-key` and `--signature-agent`. Only paths and a URL live here;
 * the key file itself is read (and its permissions checked) when a crawl
 * starts, not when the config is parsed, so `crawl check` of a config on
 * another machine still reads it.
 */
import { z } from 'zod';
import { comment, once } from './fields.js';
import { showValue } from './units.js';

/** What a crawl signs with; absent from the settings: nothing is signed. */
export interface IdentitySettings {
  /** Private key files (JWK), as written: the first signs, a second (the previous key, during a rotation) stays published and accepted by other workers. */
  keys: string[];
  /** The `Signature-Agent` URL: the origin whose /.well-known/http-message-signatures-directory lists the public keys. */
  signatureAgent: string;
}

/** Why `text` cannot be a Signature-Agent value, or undefined when it can (an https origin; the draft's `directory` type). */
export function signatureAgentProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `expected an https origin like "https://bot.example.com", got ${showValue(text)}`;
  }
  if (url.protocol !== 'https:') return `expected an https origin (verifiers fetch the key directory over TLS), got ${showValue(text)}`;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return `expected an origin only (the directory is at /.well-known/http-message-signatures-directory), got ${showValue(text)}`;
  }
  return undefined;
}

/** An https origin → its ASCII serialization ("https://bot.example.com"). */
export function signatureAgentField() {
  return z.string({ error: (i) => `expected an https origin like "https://bot.example.com", got ${showValue(i.input)}` }).transform((text, ctx) => {
    const problem = signatureAgentProblem(text.trim());
    if (problem === undefined) return new URL(text.trim()).origin;
    ctx.addIssue({ code: 'custom', message: problem, input: text });
    return z.NEVER;
  });
}

/** One key file, or two: the new key first (it signs), the old one second. */
export function keyFilesField() {
  const file = z.string({ error: (i) => `expected a key file path, got ${showValue(i.input)}` }).min(1, { error: 'expected a key file path' });
  return z.union(
    [
      file.transform((f) => [f]),
      z.array(file).min(1, { error: 'expected one or two key files' }).max(2, { error: 'expected one or two key files (new, then old)' }),
    ],
    {
      error: (i) => `expected a key file path or a list of two (new, then old), got ${showValue(i.input)}`,
    },
  );
}

export const identitySchema = once(() =>
  z
    .strictObject({
      $comment: comment(),
      key: keyFilesField().describe(
        'Private Ed25519 key file (a JWK, as `crawl keys new DIR` writes it: DIR/private.jwk), readable by its owner only. ' +
          'Two files during a key rotation: the new key first (it signs every request), the old one second (still published; other workers may still sign with it).',
      ),
      signatureAgent: signatureAgentField().describe(
        'The https origin that publishes the public keys at /.well-known/http-message-signatures-directory, sent as the Signature-Agent header.',
      ),
    })
    .describe(
      'Sign every request (Web Bot Auth: RFC 9421 HTTP Message Signatures with Ed25519), so sites can verify who the crawler is. Like --sign-key and --signature-agent. Default: requests are not signed.',
    ),
);
