/**
 * Preloaded into a benchmarked child (`node --import ./bench/lib/probe.js …`):
 * when the process exits, writes its own resource usage as JSON to the file
 * named by CRAWL_BENCH_PROBE. Peak RSS and CPU time come from the kernel
 * (getrusage), so nothing has to sample the child from outside, and the
 * program under test is the real one, unchanged.
 */
import { writeFileSync } from 'node:fs';

const target = process.env.CRAWL_BENCH_PROBE;
if (target) {
  process.on('exit', (code) => {
    const r = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({
        code,
        maxRssBytes: r.maxRSS * 1024, // getrusage reports KiB on Linux
        userCpuMs: r.userCPUTime / 1000,
        systemCpuMs: r.systemCPUTime / 1000,
      }),
    );
  });
}
