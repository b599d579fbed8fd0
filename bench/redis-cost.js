#!/usr/bin/env node
/**
 * What Redis costs a page, this build against another, side by side: one
 * worker (`bin/crawl.js --redis`) crawls benchmark 10's web (20 hosts ×
 * `--pages-per-host`, at `--rate`: unlimited by default, where the per-page
 * work shows; a polite rate such as 20/s shows what a worker costs Redis
 * while it waits out its hosts' gaps) with each build in turn, `--rounds`
 * times, against one throwaway redis-server (FLUSHALL before each crawl).
 * The two builds alternate, and which goes first flips every round.
 * Per page: the worker's CPU (user + system, from the probe) and
 * redis-server's (`INFO cpu`), the script calls, and the commands Redis ran
 * (`INFO commandstats`, which counts those scripts run too: an exact figure
 * where the CPU is noisy), and the time Redis measured inside the scripts.
 * Benchmark 10 measures the same against the memory store, but not against
 * another build; this is its before/after.
 *
 *   node bench/redis-cost.js --base DIR [--rounds N] [--pages-per-host N] [--rate R] [--by-script]
 *
 * --by-script: also where redis-server's time goes, per script (calls and
 * µs a page, from SLOWLOG with its threshold at 0, which logs every command
 * with its own duration; the logging itself adds to the times, so read them
 * as shares, not as the CPU figure above).
 */
import { createClient } from 'redis';
import { startWeb } from '../fixtures/web.js';
import { startRedisServer } from '../fixtures/redis-server.js';
import { expectSuccess, runNode, scratchDir } from './lib/child.js';
import { median, round } from './lib/stats.js';
import { redisUsage, scriptNames } from './lib/redis-usage.js';

const HOSTS = Array.from({ length: 20 }, (_, i) => `h${String(i + 1).padStart(2, '0')}.localhost`);
const PAGE_PATH = /^\/p\/\d+$/;

/** @param {{ base?: string, rounds?: number, pagesPerHost?: number, rate?: string, log?: (s: string) => void }} opts */
export async function run(opts = {}) {
  if (opts.base === undefined) throw new Error('--base DIR: the build to compare with (a worktree, built)');
  const builds = [
    ['base', `${String(opts.base).replace(/\/$/, '')}/bin/crawl.js`],
    ['this', 'bin/crawl.js'],
  ];
  const rounds = Number(opts.rounds ?? 3);
  const pagesPerHost = Number(opts.pagesPerHost ?? 1_000);
  const rate = String(opts.rate ?? 'unlimited');
  const log = opts.log ?? (() => {});
  const sites = {};
  for (const host of HOSTS) sites[host] = { generate: { pages: pagesPerHost, linksPerPage: 10, crossHosts: HOSTS.filter((h) => h !== host).slice(0, 3) } };
  const web = await startWeb({ sites });
  const redis = await startRedisServer();
  const admin = createClient({ url: redis.url });
  await admin.connect();
  const scratch = scratchDir();
  const results = { base: [], this: [] };
  const byScript = { base: new Map(), this: new Map() };
  const bySha = opts.byScript ? await scriptNames(['base', String(opts.base)], ['this', '.']) : undefined;
  try {
    for (let r = 0; r < rounds; r++) {
      // The order flips every round: the second crawl after a FLUSHALL measured ~7% more redis-server
      // CPU a page than the first with the same build on both sides (107 against 114 µs).
      for (const [name, bin] of r % 2 === 0 ? builds : [...builds].reverse()) {
        web.reset();
        await admin.flushAll();
        if (bySha) {
          await admin.sendCommand(['CONFIG', 'SET', 'slowlog-log-slower-than', '0']);
          await admin.sendCommand(['CONFIG', 'SET', 'slowlog-max-len', '10000000']);
          await admin.sendCommand(['SLOWLOG', 'RESET']);
        }
        const before = await redisUsage(admin);
        const args = [bin, '--redis', redis.url, '--crawl-id', `cost-${r}-${name}`, '--rate', rate, '--host-concurrency', '64', '-c', '64', '-q'];
        const out = expectSuccess(name, await runNode([...args, ...HOSTS.map((h) => web.url(h, '/p/0'))], { stdoutFile: scratch.file('out.jsonl') }));
        const after = await redisUsage(admin);
        const pages = web.requests().filter((e) => PAGE_PATH.test(e.path)).length;
        if (bySha) {
          // Each entry: id, time, µs, [command, args…]; a script is named by its SHA-1 (EVALSHA's first argument).
          for (const [, , us, [command, sha]] of await admin.sendCommand(['SLOWLOG', 'GET', '-1'])) {
            const lower = String(command).toLowerCase();
            if (lower !== 'evalsha') continue;
            const script = bySha.get(String(sha)) ?? 'other';
            const sum = byScript[name].get(script) ?? { calls: 0, us: 0 };
            sum.calls += 1 / pages;
            sum.us += Number(us) / pages;
            byScript[name].set(script, sum);
          }
          await admin.sendCommand(['CONFIG', 'SET', 'slowlog-log-slower-than', '10000']);
        }
        if (pages !== HOSTS.length * pagesPerHost) throw new Error(`${name}: ${pages} of ${HOSTS.length * pagesPerHost} pages`);
        results[name].push({
          worker: (out.cpuMs * 1000) / pages,
          redis: (after.cpuUs - before.cpuUs) / pages,
          scripts: (after.evalsha.calls - before.evalsha.calls) / pages,
          commands: (after.commands - before.commands) / pages,
          inside: (after.evalsha.usec - before.evalsha.usec) / pages,
        });
        const last = results[name].at(-1);
        log(
          `  round ${r + 1} ${name}: worker ${round(last.worker)} µs, redis-server ${round(last.redis)} µs, ${round(last.scripts, 2)} scripts and ${round(last.commands, 1)} commands a page, ${round(last.inside)} µs inside scripts`,
        );
      }
    }
  } finally {
    scratch.cleanup();
    await admin.quit().catch(() => {});
    await redis.stop();
    await web.close();
  }
  const bench = `Redis cost per page, this build against --base (1 worker, ${HOSTS.length} × ${pagesPerHost} pages, rate ${rate})`;
  const med = (name, key) => median(results[name].map((x) => x[key]));
  const rows = ['worker', 'redis', 'inside', 'scripts', 'commands'].map((key) => ({
    bench,
    metric: {
      worker: 'worker CPU per page',
      redis: 'redis-server CPU per page',
      inside: 'time inside scripts per page (commandstats)',
      scripts: 'script calls per page',
      commands: 'Redis commands per page (inside scripts too)',
    }[key],
    value: `${round(med('base', key), 2)} → ${round(med('this', key), 2)}`,
    note: `median of ${rounds}, alternating`,
  }));
  if (bySha) {
    // Summed over the rounds, shown per round.
    const each = (name, script) => byScript[name].get(script) ?? { calls: 0, us: 0 };
    const scripts = [...new Set([...byScript.base.keys(), ...byScript.this.keys()])].sort((a, b) => each('this', b).us - each('this', a).us);
    for (const script of scripts) {
      const [b, t] = [each('base', script), each('this', script)];
      rows.push({
        bench,
        metric: `SLOWLOG: ${script}, µs a page (calls a page)`,
        value: `${round(b.us / rounds, 1)} (${round(b.calls / rounds, 2)}) → ${round(t.us / rounds, 1)} (${round(t.calls / rounds, 2)})`,
        note: 'inside redis-server, logging included',
      });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs, printRows } = await import('./lib/cli.js');
  printRows(await run({ ...parseArgs(process.argv.slice(2)), log: (s) => process.stderr.write(s + '\n') }));
}
