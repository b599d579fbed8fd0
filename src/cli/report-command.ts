/**
 * `crawl report <records.jsonl> [-o report.html]`: reads a records file as a
 * stream and writes one self-contained HTML report (src/report/). With
 * `--state FILE` the records come from the record log a `--state` crawl kept
 * (read-only: the crawl may still be running); with `--redis URL --crawl-id
 * ID`, from the one every worker of a shared crawl appends to (likewise
 * readable while it runs). With `--config` / `--rate`,
 * the configured rate per host is taken from them when the records do not
 * carry it. `-o -` writes the HTML to stdout.
 */
import { open, writeFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { OutputError, writeFailure } from '../output/sink.js';
import { checkTargets, type NamedTarget } from '../output/output-targets.js';
import { formatBytes } from '../output/summary.js';
import { aggregateRecords, aggregateValues, renderReport, type ReportData } from '../report/build-report.js';
import { UsageError } from '../config/seeds.js';
import type { PolicyLookup } from '../report/host-stats.js';
import { ReportInputError } from '../report/record-reader.js';
import { sqliteKind } from '../store/sqlite-file.js';
import type { HostKeyMode } from '../config/settings-types.js';
import { EXIT, type Io, type ReportFlags } from './flags.js';
import { groupDigits } from '../util/group-digits.js';

export async function reportCommand(file: string | undefined, flags: ReportFlags, io: Io): Promise<number> {
  if (flags.redis !== undefined || flags.crawlId !== undefined) return reportFromRedis(file, flags, io);
  if (file !== undefined && flags.state !== undefined) throw new UsageError('give a records file or --state FILE, not both');
  if (file === undefined && flags.state === undefined)
    throw new UsageError('no records to report on: give a records file (crawl report pages.jsonl) or --state FILE');
  const out = flags.output ?? defaultOutput(file ?? flags.state!);
  if (out !== '-' && file !== '-')
    await refuseOverwritingInput(out, file === undefined ? { option: '--state', path: flags.state! } : { option: 'records', path: file }, flags, io.cwd);
  const { policyFor, hostKey } = await configuredPolicy(flags, io);
  let data: ReportData;
  if (file === undefined) {
    data = await fromState(flags.state!, io.cwd, { policyFor, hostKey });
  } else {
    const input = file === '-' ? io.stdin : await openInput(file, io.cwd);
    data = await aggregateRecords(input as AsyncIterable<Buffer | string>, { source: file === '-' ? 'stdin' : basename(file), policyFor, hostKey });
  }
  return writeReport(data, out, flags, io);
}

/** Renders the report to `out` ("-": stdout) and says so. */
async function writeReport(data: ReportData, out: string, flags: ReportFlags, io: Io): Promise<number> {
  const html = await renderReport(data);
  if (out === '-') {
    io.stdout.write(html);
  } else {
    try {
      await writeFile(resolve(io.cwd, out), html);
    } catch (err) {
      // Disk full or read-only is the machine's refusal (IO_FAILED, exit 4); a bad path is a usage error.
      const failure = writeFailure(out, err);
      throw failure.code === 'IO_FAILED' ? failure : new OutputError('OUTPUT_UNWRITABLE', failure.message, { cause: err });
    }
  }
  if (!flags.quiet) {
    const records = data.records.pages + data.records.skipped + data.records.robots;
    const bad = data.records.badLines > 0 ? `; ${groupDigits(data.records.badLines)} line(s) were not records (first: line ${data.records.firstBadLine})` : '';
    const where = out === '-' ? 'the report' : out;
    io.stderr.write(`crawl: wrote ${where} (${formatBytes(Buffer.byteLength(html))}) from ${groupDigits(records)} records${bad}\n`);
  }
  return EXIT.ok;
}

/**
 * `crawl report pages.jsonl -o pages.jsonl` would replace the only copy of
 * the records with their report: refused, as is `--state s.db -o s.db` and
 * an -o that is the --config file.
 */
async function refuseOverwritingInput(out: string, input: { option: string; path: string }, flags: ReportFlags, cwd: string): Promise<void> {
  const inputs: NamedTarget[] = [{ option: input.option, path: input.path, writes: false }];
  if (flags.config !== undefined) inputs.push({ option: '--config', path: flags.config, writes: false });
  for (const read of inputs) {
    try {
      await checkTargets([{ option: '-o', path: out, writes: true }, read], cwd);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      const what = read.option === 'records' ? 'the records file' : `the ${read.option} file`;
      throw new UsageError(`-o ${out} is ${what} the report reads (${read.path}): writing the report there would replace it; give another -o`);
    }
  }
}

/** pages.jsonl → pages.html; crawl.db → crawl.html; stdin → report.html. */
export function defaultOutput(file: string): string {
  if (file === '-') return 'report.html';
  const stem = file.replace(/\.(jsonl|ndjson|json|partial|db|sqlite3?)$/i, '').replace(/\.(jsonl|ndjson|json)$/i, '');
  return `${stem}.html`;
}

/** The record log a `--state` crawl kept (sqlite-store.ts `recordLog`), opened read-only. */
async function fromState(file: string, cwd: string, opts: { policyFor?: PolicyLookup; hostKey?: HostKeyMode }): Promise<ReportData> {
  const { SqliteStore } = await import('../store/sqlite-store.js');
  const store = new SqliteStore(resolve(cwd, file), { readOnly: true });
  try {
    return await aggregateValues(store.recordLog().read(), { source: basename(file), ...opts });
  } finally {
    store.close();
  }
}

/** `crawl report --redis URL --crawl-id ID`: the record log of a shared crawl, every worker's records. */
async function reportFromRedis(file: string | undefined, flags: ReportFlags, io: Io): Promise<number> {
  const { checkRedisFlags, redactRedisUrl, redisConnection } = await import('./state-target.js');
  checkRedisFlags(flags, 'the shared crawl to report on');
  if (flags.redis === undefined || flags.crawlId === undefined) throw new UsageError('--crawl-id goes with --redis URL');
  if (file !== undefined || flags.state !== undefined) throw new UsageError('give a records file, --state FILE or --redis URL --crawl-id NAME: one of them');
  const { RedisStore } = await import('../store/redis-store.js');
  const store = new RedisStore({ ...redisConnection(flags, io.cwd), crawlId: flags.crawlId });
  let data: ReportData;
  try {
    if ((await store.peekMeta()) === undefined) throw new UsageError(`Redis holds no crawl named "${flags.crawlId}" at ${redactRedisUrl(flags.redis)}`);
    const { policyFor, hostKey } = await configuredPolicy(flags, io);
    data = await aggregateValues(store.recordLog().read(), { source: `Redis crawl "${flags.crawlId}"`, policyFor, hostKey });
  } finally {
    await store.close();
  }
  return writeReport(data, flags.output ?? `${flags.crawlId.replace(/[^A-Za-z0-9._-]/g, '_')}.html`, flags, io);
}

async function openInput(file: string, cwd: string): Promise<NodeJS.ReadableStream> {
  const path = resolve(cwd, file);
  const cannot = (err: unknown): ReportInputError => {
    const code = (err as NodeJS.ErrnoException).code;
    return new ReportInputError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (code ?? String(err))}`);
  };
  // A state file given as records (crawl report crawl.db) is read the way it must be: with --state.
  const kind = sqliteKind(path);
  if (kind === 'state') throw new ReportInputError(`${file} is a crawl state file; use crawl report --state ${file}`);
  if (kind === 'sqlite') throw new ReportInputError(`${file} is an SQLite database, not JSON-lines records`);
  let handle;
  try {
    handle = await open(path, 'r');
    if ((await handle.stat()).isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
  } catch (err) {
    await handle?.close();
    throw cannot(err);
  }
  return handle.createReadStream({ highWaterMark: 256 * 1024 });
}

async function configuredPolicy(flags: ReportFlags, io: Io): Promise<{ policyFor?: PolicyLookup; hostKey?: HostKeyMode }> {
  if (flags.config === undefined && flags.rate === undefined) return {};
  const { loadConfig } = await import('../config/load-config.js');
  const { buildSettings } = await import('../config/settings.js');
  const file = flags.config !== undefined ? await loadConfig(flags.config, io.cwd) : undefined;
  const settings = buildSettings(file, { rate: flags.rate });
  return {
    hostKey: settings.hostKey,
    policyFor: (host) => {
      const p = settings.policyFor(host);
      return { intervalMs: p.intervalMs, rateLabel: p.rateLabel };
    },
  };
}
