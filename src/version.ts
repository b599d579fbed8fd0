/**
 * The package version, read from package.json at runtime so a release only
 * bumps one file. Both src/ (under vitest) and dist/ (after tsc) sit one level
 * below the package root, so the same relative path works from either.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The `version` field of package.json, e.g. "0.1.0". */
export const VERSION: string = (require('../package.json') as { version: string }).version;
