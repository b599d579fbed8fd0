import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Io } from '../../src/cli/flags.js';

/** An Io for running the CLI in-process: stdout and stderr collected as text, signals on an emitter. */
export function memoryIo(cwd: string): Io & { out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { stdout, stderr, stdin: new PassThrough(), signals: new EventEmitter(), cwd, out: () => out, err: () => err };
}
