/**
 * A crawl's signing key: an Ed25519 private key in a JWK file (`crawl keys
 * new` writes one), read once at the start. Like ssh with an identity file,
 * a file that group or others may read is refused, in one line naming the
 * file and the fix. The key never leaves this module's KeyObject: no message,
 * log line, record or archive holds `d` (a KeyObject prints as its type only).
 *
 * The key id is the key's JWK SHA-256 thumbprint (RFC 7638; for OKP keys
 * RFC 8037 Appendix A.3), computed by `jose`, as the Web Bot Auth draft asks.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { calculateJwkThumbprint } from 'jose';

/** A key file that cannot be used; `code` makes the CLI print the line and exit 2. */
export class SigningKeyError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/** The public half as a directory lists it. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  /** The thumbprint (the draft: a directory's `kid`, when set, is the thumbprint). */
  kid: string;
}

export interface SigningKey {
  /** The file, as the user wrote it (messages name it so). */
  file: string;
  /** JWK SHA-256 thumbprint, base64url: the `keyid` of every signature. */
  thumbprint: string;
  publicJwk: PublicJwk;
  /** Signs; never serialised. */
  privateKey: KeyObject;
}

/** The thumbprint of an Ed25519 public key (`x`): what `keyid` says. */
export function ed25519Thumbprint(x: string): Promise<string> {
  return calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }, 'sha256');
}

/**
 * Reads `path` (resolved; `shown` is how the user wrote it).
 * @throws SigningKeyError: missing, unreadable, readable by group or others, not an Ed25519 private JWK.
 */
export async function readSigningKey(path: string, shown: string): Promise<SigningKey> {
  let mode: number;
  let text: string;
  try {
    mode = (await stat(path)).mode;
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory, not a file' : String(code ?? err);
    throw new SigningKeyError(`--sign-key ${shown}: cannot read the key: ${why} (crawl keys new DIR makes one)`);
  }
  // As ssh refuses an identity file others can read: a signing key that leaked is someone else's crawler.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SigningKeyError(
      `--sign-key ${shown}: the private key is readable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): run chmod 600 ${shown}`,
    );
  }
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not the parser's message: it may quote the file, and the file is a secret.
    throw new SigningKeyError(`--sign-key ${shown}: not a JSON Web Key (JSON did not parse)`);
  }
  if (jwk === null || typeof jwk !== 'object' || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw new SigningKeyError(`--sign-key ${shown}: expected an Ed25519 JWK ({"kty": "OKP", "crv": "Ed25519", …})`);
  }
  if (typeof jwk.d !== 'string') throw new SigningKeyError(`--sign-key ${shown}: holds no private key ("d"): name private.jwk, not the published directory`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x }, format: 'jwk' });
  } catch {
    throw new SigningKeyError(`--sign-key ${shown}: not a valid Ed25519 private key`);
  }
  // A file whose "x" is not d's public key would sign with one key and name another.
  const x = (createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x;
  if (x !== jwk.x) throw new SigningKeyError(`--sign-key ${shown}: its public key ("x") does not belong to its private key ("d")`);
  const thumbprint = await ed25519Thumbprint(x);
  return { file: shown, thumbprint, publicJwk: { kty: 'OKP', crv: 'Ed25519', x, kid: thumbprint }, privateKey };
}
