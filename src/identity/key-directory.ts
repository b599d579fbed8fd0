/**
 * The published half of a crawler's identity: the HTTP Message Signatures
 * Directory, a JWK Set at /.well-known/http-message-signatures-directory of
 * the Signature-Agent origin, served as
 * application/http-message-signatures-directory+json
 * (draft-meunier-webbotauth-httpsig-protocol-02, which took in
 * draft-meunier-http-message-signatures-directory). `crawl keys new` writes a
 * key pair and that file.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ed25519Thumbprint, SigningKeyError, type PublicJwk } from './signing-key.js';

export const DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
export const DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
/** The file names `crawl keys new DIR` writes. */
export const PRIVATE_KEY_FILE = 'private.jwk';
export const DIRECTORY_FILE = 'http-message-signatures-directory';

export interface NewKeyPair {
  /** Paths as written (DIR joined with the file names). */
  privateFile: string;
  directoryFile: string;
  /** The new key's thumbprint: the `keyid` its signatures carry. */
  keyid: string;
  /** Thumbprints of the older keys the directory still lists (`keep`). */
  kept: string[];
}

/** The public keys a file holds: a JWK Set (a directory) or one JWK (a private.jwk: only its public half is taken). */
async function publicKeysIn(path: string, shown: string): Promise<PublicJwk[]> {
  let parsed: { keys?: unknown; kty?: unknown; crv?: unknown; x?: unknown };
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as typeof parsed;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SigningKeyError(`--keep ${shown}: ${code === 'ENOENT' ? 'file not found' : code !== undefined ? code : 'not JSON'}`);
  }
  const jwks = Array.isArray(parsed.keys) ? (parsed.keys as (typeof parsed)[]) : [parsed];
  const out: PublicJwk[] = [];
  for (const jwk of jwks) {
    if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new SigningKeyError(`--keep ${shown}: expected Ed25519 JWKs`);
    out.push({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: await ed25519Thumbprint(jwk.x) });
  }
  return out;
}

/** Writes `content` to a new file with `mode`; an existing file is a problem unless `force`. */
async function writeNew(path: string, shown: string, content: string, mode: number, force: boolean): Promise<void> {
  let handle;
  try {
    handle = await open(path, force ? 'w' : 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new SigningKeyError(`${shown} already exists: keep it, or pass --force to replace the key`);
    throw err;
  }
  try {
    // A file replaced with --force keeps its old mode: set it.
    await handle.chmod(mode);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/**
 * A new Ed25519 key pair in `dir` (created, mode 0700): `private.jwk` (mode
 * 0600) and the directory listing its public key, and those of `keep` (a
 * rotation's older keys) after it.
 */
export async function newKeyPair(dir: string, opts: { cwd: string; keep?: string[]; force?: boolean }): Promise<NewKeyPair> {
  const kept = (await Promise.all((opts.keep ?? []).map((file) => publicKeysIn(resolve(opts.cwd, file), file)))).flat();
  const { privateKey } = generateKeyPairSync('ed25519');
  const { d, x } = privateKey.export({ format: 'jwk' }) as { d: string; x: string };
  const keyid = await ed25519Thumbprint(x);
  const publicJwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x, kid: keyid };
  const absolute = resolve(opts.cwd, dir);
  await mkdir(absolute, { recursive: true, mode: 0o700 });
  const privateFile = join(dir, PRIVATE_KEY_FILE);
  const directoryFile = join(dir, DIRECTORY_FILE);
  const keys = [publicJwk, ...kept.filter((k) => k.kid !== keyid)];
  await writeNew(
    join(absolute, PRIVATE_KEY_FILE),
    privateFile,
    `${JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d, x, kid: keyid }, null, 2)}\n`,
    0o600,
    opts.force === true,
  );
  await writeNew(join(absolute, DIRECTORY_FILE), directoryFile, `${JSON.stringify({ keys }, null, 2)}\n`, 0o644, true);
  return { privateFile, directoryFile, keyid, kept: kept.map((k) => k.kid) };
}
