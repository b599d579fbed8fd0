/**
 * `crawl keys new DIR` and `crawl keys check ORIGIN`: the signing key's life
 * outside the crawl (src/identity/). This file only words the results.
 */
import type { Io, KeysFlags } from './flags.js';
import { EXIT } from './flags.js';
import { DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, newKeyPair } from '../identity/key-directory.js';

export async function keysCommand(action: 'new' | 'check', arg: string, flags: KeysFlags, io: Io): Promise<number> {
  if (action === 'check') return (await import('./keys-check.js')).keysCheck(arg, flags, io);
  const made = await newKeyPair(arg, { cwd: io.cwd, keep: flags.keep, force: flags.force });
  const lines = [
    `wrote ${made.privateFile}: the private key (mode 0600). Keep it secret: never publish, commit or share it.`,
    `wrote ${made.directoryFile}: the public key${made.kept.length > 0 ? `, and ${made.kept.length} kept from --keep` : ''} (a JWK Set), to publish.`,
    `keyid: ${made.keyid}`,
    '',
    'Publish the directory file at',
    `  https://YOUR-ORIGIN${DIRECTORY_PATH}`,
    `served with Content-Type: ${DIRECTORY_MEDIA_TYPE}, then crawl with`,
    `  crawl --sign-key ${made.privateFile} --signature-agent https://YOUR-ORIGIN URL`,
    `and check what you published with: crawl keys check https://YOUR-ORIGIN --sign-key ${made.privateFile}`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
