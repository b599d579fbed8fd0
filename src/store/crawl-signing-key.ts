/**
 * Which key a shared crawl is signed with, and which workers may join it.
 * Every worker signs with the key it was given, so a crawl whose workers
 * held different keys would show sites two identities. A Redis crawl keeps
 * its signing key's thumbprint (`keyid`; '' for an unsigned crawl) from its
 * first worker on, and a worker joins only when that key is among its own
 * (`--sign-key`, twice during a rotation: the new key, which signs, then the
 * old one). The crawl is signed with the joining worker's key from then on,
 * so the first worker given the new key and the old one moves the crawl to
 * the new key, and a worker with the old key alone is refused after that.
 *
 * The rule is applied atomically by the store (OPEN in redis-scripts.ts);
 * this module says it to the user: one line, exit 2.
 */

/** A worker refused for its signing keys; `code` makes the CLI print the line and exit 2. */
export class SigningKeyMismatchError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/** One of a worker's keys, as far as joining is concerned (a SigningKey fits). */
export interface WorkerKey {
  /** The file, as the user wrote it. */
  file: string;
  thumbprint: string;
}

/**
 * Why a worker holding `keys` (the signing one first; none when it does not
 * sign) may not join `crawl`, whose kept keyid is `kept` ('' for an unsigned
 * crawl, undefined when none is kept yet), or undefined when it may.
 */
export function signingKeyRefusal(crawl: string, kept: string | undefined, keys: readonly WorkerKey[]): string | undefined {
  if (kept === undefined || keys.some((k, i) => i < 2 && k.thumbprint === kept) || (kept === '' && keys.length === 0)) return undefined;
  if (kept === '')
    return `${crawl} is not signed, and this worker would sign with --sign-key ${keys[0].file}: join it without --sign-key, or sign another crawl`;
  if (keys.length === 0) return `${crawl} is signed with key ${kept}, and this worker has no --sign-key: give it that key`;
  const named = keys.map((k) => `${k.file} (${k.thumbprint})`).join(' and ');
  return `${crawl} is signed with key ${kept}, not with --sign-key ${named}: give the crawl's key (to rotate: the new key, then the crawl's)`;
}

/** True when a worker holding `keys` joining a crawl signed with `kept` moves it to its new key (a rotation). */
export function isRotation(kept: string | undefined, keys: readonly WorkerKey[]): boolean {
  return kept !== undefined && kept !== '' && keys.length === 2 && keys[1].thumbprint === kept && keys[0].thumbprint !== kept;
}
