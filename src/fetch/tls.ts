/**
 * TLS trust for the crawl's connections: `--insecure` (certificates are not
 * verified at all: for staging servers with self-signed certificates) and
 * `--ca FILE` (PEM certificates trusted on top of Node's bundled roots, for
 * a private CA). Both apply to every https connection, through a proxy's
 * tunnel too.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates, type ConnectionOptions } from 'node:tls';

export interface TlsSettings {
  /** Accept any certificate. @default false */
  insecure?: boolean;
  /** Extra trusted CA certificates, PEM text. @default none */
  ca?: string;
}

/** The warning a crawl prints once when certificates are not checked. */
export const INSECURE_WARNING = 'TLS certificates are NOT verified (--insecure): any server, or anyone between you and it, can pose as the site you crawl';

/** Options for tls.connect (and undici's connector); empty when nothing differs from Node's defaults. */
export function tlsConnectOptions(tls: TlsSettings | undefined): ConnectionOptions {
  if (!tls) return {};
  const out: ConnectionOptions = {};
  if (tls.insecure) out.rejectUnauthorized = false;
  // `ca` replaces the bundled roots, so they are passed along with the extra ones.
  if (tls.ca !== undefined) out.ca = [...rootCertificates, tls.ca];
  return out;
}

/** A CA file that cannot be used; `code` makes the CLI print one line and exit 2. */
export class CaFileError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/** Reads a PEM file of one or more certificates; `shown` names it in messages as the user wrote it. */
export function readCaFile(path: string, shown: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : (code ?? String(err));
    throw new CaFileError(`cannot read CA file ${shown}: ${why}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new CaFileError(`CA file ${shown} holds no PEM certificate (expected "-----BEGIN CERTIFICATE-----")`);
  return text;
}
