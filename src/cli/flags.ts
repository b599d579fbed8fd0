/**
 * What the CLI boundary (cli.ts) hands to its commands: exit codes, parsed
 * flags and the process streams. Kept apart so commands and the boundary
 * import it without importing each other.
 */

export const EXIT = { ok: 0, internal: 1, usage: 2, interrupted: 130 } as const;

export interface CrawlFlags {
  config?: string;
  concurrency?: string;
  rate?: string;
  hostConcurrency?: string;
  maxDepth?: string;
  maxPages?: string;
  maxPagesPerHost?: string;
  maxQueued?: string;
  scope?: string;
  include?: string[];
  exclude?: string[];
  userAgent?: string;
  timeout?: string;
  maxBody?: string;
  output?: string;
  seedsFile?: string;
  emitSkipped?: boolean;
  links?: boolean;
  allowPrivate?: boolean;
  robots?: boolean;
  quiet?: boolean;
  state?: string;
  fresh?: boolean;
  redis?: string;
  crawlId?: string;
  worker?: string;
  lease?: string;
  report?: string;
  stats?: string;
  maxTime?: string;
}

export interface StatusFlags {
  state?: string;
  redis?: string;
  crawlId?: string;
  json?: boolean;
  top?: string;
}

export interface ReportFlags {
  output?: string;
  config?: string;
  rate?: string;
  quiet?: boolean;
}

export interface CheckFlags {
  config?: string;
  seed?: string[];
  scope?: string;
  include?: string[];
  exclude?: string[];
  userAgent?: string;
  robotsFile?: string;
  robots?: boolean;
  timeout?: string;
}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** Where signals are listened for; tests pass an EventEmitter. */
  signals: NodeJS.EventEmitter;
  cwd: string;
}
