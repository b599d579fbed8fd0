/**
 * A page job that may end before its page does (JobContext.handOff): the
 * rendering browser's pages (render/renderer.ts) and the pages a user's
 * handler waits on (handler/page-handlers.ts). Once the job hands off, the
 * scheduler gets its global slot and its host's concurrency back, while the
 * page's work goes on; `hooks` hear of the hand-off (once) and of the end,
 * so their owner counts such pages and the crawl does not end under them.
 */
import type { Job, JobContext } from '../politeness/host-state.js';

export interface HandOffHooks {
  /** The job handed its slot back (called once). */
  handedOff(): void;
  /** The page's work ended; `handed`: after the job had handed off (the crawl may be done now). */
  ended(handed: boolean): void;
}

export function handOffJob(job: Job, hooks: HandOffHooks): Job {
  return (ctx) =>
    new Promise<void>((resolve) => {
      let handed = false;
      // One shape, no spread: on a page's path a spread's new fields take V8's slow path (docs/architecture.md).
      const inner: JobContext = {
        onDispatched: (at) => ctx.onDispatched(at),
        onResponse: (at) => ctx.onResponse(at),
        detach: ctx.detach && (() => ctx.detach!()),
        handOff: () => {
          if (handed) return;
          handed = true;
          hooks.handedOff();
          resolve();
        },
      };
      const end = () => {
        hooks.ended(handed);
        if (!handed) resolve();
      };
      job(inner).then(end, end);
    });
}
