/**
 * `crawl check --render URL`, the part that needs a browser: the page is
 * rendered once, as a one-page crawl would render it (its document fetched
 * after its robots.txt, every browser request through its host's robots.txt
 * and limits), and what the browser asked for is grouped by the host it
 * went to, with that host's policy. So the check makes real, polite
 * requests: the page, and the subresources a render of it needs.
 */
import type { SubrequestEvent } from '../render/page-requests.js';
import type { RecordSink } from '../output/sink.js';
import type { CrawlSettings } from '../config/settings-types.js';
import type { PageRecord } from '../types.js';
import { createCrawlSession, loadRendering } from './crawl-session.js';
import { sleep, systemClock } from '../clock.js';
import { gapWithMargin } from '../politeness/host-limiter.js';
import type { CrawlLog } from './options.js';

/** One host the rendering browser asked something of. */
export interface SubresourceHost {
  host: string;
  rateLabel: string;
  concurrency: number;
  /** Requests by what became of them (`failed`: our request for it failed). */
  outcomes: Record<SubrequestEvent['outcome'], number>;
  /** Up to three URLs its robots.txt disallows, as examples. */
  disallowed: string[];
}

export interface RenderCheck {
  /** The page's record: `rendered`, `renderReason`, `error` (RENDER_TIMEOUT, …). Undefined when the crawl wrote none. */
  page: PageRecord | undefined;
  /** Most requests first. */
  hosts: SubresourceHost[];
}

const EXAMPLES = 3;

/** Renders `url` once through a one-page crawl and groups its browser's requests by host. */
export async function renderCheck(
  url: string,
  settings: CrawlSettings,
  opts: {
    cwd?: string;
    log?: CrawlLog;
    /** A request the caller made to the host (`check`'s robots.txt) at `at` (systemClock ms): the render's first waits out `gapMs` after it, with the limiter's margin. */
    after?: { at: number; gapMs: number };
  } = {},
): Promise<RenderCheck> {
  const byHost = new Map<string, SubresourceHost>();
  const records: PageRecord[] = [];
  const sink: RecordSink = {
    write: async (record) => void (record.type === 'page' && records.push(record)),
    close: async () => {},
    broken: false,
    get written() {
      return records.length;
    },
  };
  const onSubrequest = (_page: string, event: SubrequestEvent): void => {
    if (event.host === '') return;
    let row = byHost.get(event.host);
    if (row === undefined) {
      const policy = settings.policyFor(event.host);
      row = {
        host: event.host,
        rateLabel: policy.rateLabel,
        concurrency: policy.concurrency,
        outcomes: { fetched: 0, cached: 0, blocked: 0, disallowed: 0, failed: 0 },
        disallowed: [],
      };
      byHost.set(event.host, row);
    }
    row.outcomes[event.outcome]++;
    if (event.outcome === 'disallowed' && row.disallowed.length < EXAMPLES) row.disallowed.push(event.url);
  };
  // This module is itself loaded only for `check --render`: the renderer and the browser lookup come with it.
  const { findBrowser } = await import('../render/browser-path.js');
  const render = settings.render?.enabled ? await loadRendering(findBrowser(settings.render.browser, process.env, opts.cwd)) : undefined;
  // The render is a crawl of its own, which asks for robots.txt again: one gap of the host after the caller's request
  // (sent before `at`), not 30 ms (issue 42, item 8).
  if (opts.after !== undefined) {
    const wait = opts.after.at + gapWithMargin(opts.after.gapMs) - systemClock.now();
    if (wait > 0) await sleep(systemClock, wait);
  }
  const session = createCrawlSession({ settings: { ...settings, maxPages: 1 }, seeds: [url], sink, cwd: opts.cwd, log: opts.log, onSubrequest, render });
  await session.run();
  const total = (h: SubresourceHost) => Object.values(h.outcomes).reduce((a, b) => a + b, 0);
  return { page: records[0], hosts: [...byHost.values()].sort((a, b) => total(b) - total(a) || a.host.localeCompare(b.host)) };
}
