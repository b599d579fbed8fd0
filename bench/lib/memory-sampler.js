/**
 * Preloaded into a benchmarked child (`node --import ./bench/lib/memory-sampler.js …`),
 * like probe.js: samples `process.memoryUsage()` every PROBE_SAMPLE_MS (50)
 * and, at exit, writes the peak RSS and heap, when each was reached (ms since
 * the process started) and a coarse timeline to the JSON file named by
 * PROBE_MEMORY_FILE. With PROBE_SNAPSHOT_AT_MS=T and PROBE_SNAPSHOT_FILE=F it
 * also writes a V8 heap snapshot to F once, T ms after start (the program
 * stops while it is written; the snapshot is of the live heap, after a GC);
 * with PROBE_SNAPSHOT_AT_HEAP_MB=M instead, once the used heap first reaches M MB.
 * The program under test is the real one, unchanged.
 */
import { writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';

const target = process.env.PROBE_MEMORY_FILE;
if (target) {
  const every = Number(process.env.PROBE_SAMPLE_MS ?? 50);
  const snapshotAt = Number(process.env.PROBE_SNAPSHOT_AT_MS ?? Infinity);
  const snapshotAtHeap = Number(process.env.PROBE_SNAPSHOT_AT_HEAP_MB ?? Infinity) * 1024 * 1024;
  const snapshotFile = process.env.PROBE_SNAPSHOT_FILE;
  const t0 = performance.now();
  const peak = { rss: 0, rssAtMs: 0, heapUsed: 0, heapAtMs: 0, external: 0, arrayBuffers: 0 };
  const timeline = [];
  let snapshotTaken = false;
  const sample = () => {
    const at = Math.round(performance.now() - t0);
    const m = process.memoryUsage();
    if (m.rss > peak.rss) Object.assign(peak, { rss: m.rss, rssAtMs: at });
    if (m.heapUsed > peak.heapUsed) Object.assign(peak, { heapUsed: m.heapUsed, heapAtMs: at, external: m.external, arrayBuffers: m.arrayBuffers });
    if (timeline.length === 0 || at - timeline.at(-1).at >= 250) timeline.push({ at, rss: m.rss, heapUsed: m.heapUsed });
    if (!snapshotTaken && snapshotFile && (at >= snapshotAt || m.heapUsed >= snapshotAtHeap)) {
      snapshotTaken = true;
      const took = performance.now();
      writeHeapSnapshot(snapshotFile);
      peak.snapshot = { atMs: at, tookMs: Math.round(performance.now() - took) };
    }
  };
  setInterval(sample, every).unref();
  process.on('exit', () => {
    sample();
    writeFileSync(target, JSON.stringify({ ...peak, timeline }));
  });
}
