/**
 * How much memory the browser's processes hold, for the restart on a cap
 * (browser-pool.ts): the proportional set size (PSS: shared pages split
 * between the processes that share them, so Chromium's many processes are
 * not each charged for the same libraries) summed over every process below
 * the crawl's own, which are the browser's (playwright-core starts Chromium
 * as a child; the crawl starts no other). Read from Linux's /proc; null
 * where it cannot be read (another OS), and then the pages-per-browser
 * restart is what bounds the browser.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Bytes of PSS of every descendant of `rootPid`, or null without /proc. */
export function descendantMemory(rootPid = process.pid): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const children = new Map<number, number[]>();
  for (const pid of pids) {
    const ppid = parentOf(pid);
    if (ppid === null) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(pid));
    else children.set(ppid, [Number(pid)]);
  }
  let total = 0;
  const queue = [...(children.get(rootPid) ?? [])];
  for (let i = 0; i < queue.length; i++) {
    total += pssOf(queue[i]);
    queue.push(...(children.get(queue[i]) ?? []));
  }
  return total;
}

/** The parent pid from /proc/PID/stat (the command name in parentheses may hold spaces and parentheses). */
function parentOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null; // gone meanwhile
  }
}

function pssOf(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0; // gone meanwhile, or not ours to read
  }
}
