/**
 * What a redis-server has spent so far, for the Redis benchmarks to take
 * differences of: its CPU (µs, user + system, `INFO cpu`) and, per command
 * (`INFO commandstats`), calls and µs.
 */

const ADMIN_COMMANDS = new Set([
  'evalsha',
  'eval',
  'info',
  'flushall',
  'config|set',
  'slowlog|get',
  'slowlog|reset',
  'hello',
  'ping',
  'script|load',
  'client|setinfo',
  'quit',
]);

/** @param {{ info(section: string): Promise<string> }} admin */
export async function redisUsage(admin) {
  const cpu = await admin.info('cpu');
  const sec = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)[1]);
  const stats = await admin.info('commandstats');
  const cmd = (name) => {
    const m = new RegExp(`cmdstat_${name}:calls=(\\d+),usec=(\\d+)`).exec(stats);
    return m ? { calls: Number(m[1]), usec: Number(m[2]) } : { calls: 0, usec: 0 };
  };
  // Every command the crawl ran, those its scripts ran inside Redis included (commandstats counts them too),
  // without the scripts themselves and the benchmark's own admin commands: an exact count, where CPU is noisy.
  let commands = 0;
  for (const m of stats.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) if (!ADMIN_COMMANDS.has(m[1])) commands += Number(m[2]);
  return { cpuUs: (sec('used_cpu_user') + sec('used_cpu_sys')) * 1e6, rpush: cmd('rpush'), evalsha: cmd('evalsha'), commands };
}

/**
 * Script names by SHA-1 for each build given as [label, root]: the names of
 * its dist/store/redis-scripts.js (`SCRIPTS`, `scriptSource`). Two builds
 * with different scripts each name their own.
 */
export async function scriptNames(...builds) {
  const { createHash } = await import('node:crypto');
  const { resolve } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const names = new Map();
  for (const [label, root] of builds) {
    const { SCRIPTS, scriptSource } = await import(pathToFileURL(resolve(root, 'dist/store/redis-scripts.js')).href);
    for (const name of Object.keys(SCRIPTS)) {
      const sha = createHash('sha1').update(scriptSource(name)).digest('hex');
      if (!names.has(sha)) names.set(sha, name);
      else if (names.get(sha) !== name) names.set(sha, `${names.get(sha)}/${name} (${label})`);
    }
  }
  return names;
}
