/** What the numbers were measured on: they only mean something next to this. */
import os from 'node:os';
import { readFileSync } from 'node:fs';

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    undici: packageVersion('undici'),
    htmlparser2: packageVersion('htmlparser2'),
    cheerio: packageVersion('cheerio'),
    loadAverage: os.loadavg().map((l) => l.toFixed(2)).join(' '),
    date: new Date().toISOString(),
  };
}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}
