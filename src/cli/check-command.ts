/**
 * `crawl check <url>`: explains what a crawl would do with one URL — scope,
 * the host policy that applies and which config entry decided it, and the
 * robots.txt verdict with its deciding rule — fetching nothing but robots.txt.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CheckFlags, Io } from './flags.js';
import { systemClock } from '../clock.js';
import { buildSettings } from '../config/settings.js';
import { loadConfig } from '../config/load-config.js';
import { createFetcher } from '../fetch/fetcher.js';
import { capRobotsText, parseRobots, RobotsCache, type RobotsState } from '../robots/index.js';
import { createScope, explainScope } from '../parse/scope.js';
import { checkSeeds, UsageError } from '../config/seeds.js';
import type { HostPolicy } from '../types.js';
import { hostKeyOf, originOf } from '../parse/url.js';

export async function checkCommand(rawUrl: string, flags: CheckFlags, io: Io): Promise<number> {
  const [url] = checkSeeds([rawUrl]);
  const seeds = flags.seed && flags.seed.length > 0 ? checkSeeds(flags.seed) : [url!];
  const file = await loadConfig(flags.config, io.cwd);
  const settings = buildSettings(file, {
    scope: flags.scope,
    include: flags.include,
    exclude: flags.exclude,
    userAgent: flags.userAgent,
    timeout: flags.timeout,
    robots: flags.robots === false ? false : undefined,
  });
  const out: string[] = [`url:     ${url}`];
  const scopeOptions = { scope: settings.scope, seeds, include: settings.include, exclude: settings.exclude, maxUrlLength: settings.maxUrlLength };
  const scopeOk = createScope(scopeOptions)(url!).ok;
  out.push(`scope:   ${explainScope(scopeOptions, url!)}`);

  const key = hostKeyOf(url!, settings.hostKey);
  out.push(`policy:  ${describePolicy(key, settings.policyFor(key))}`);

  let robotsOk = true;
  if (!settings.robots.enabled) {
    out.push('robots:  not checked (--no-robots)');
  } else {
    const state = await robotsFor(url!, flags, settings, io);
    const verdict = describeRobots(state, url!);
    robotsOk = verdict.allowed;
    out.push(`robots:  ${verdict.text}`);
    if (state.kind === 'rules' && state.crawlDelayMs !== null) {
      out.push(`         Crawl-delay ${state.crawlDelayMs / 1000}s (a floor on the gap unless the policy ignores it)`);
    }
  }
  const fetched = scopeOk && robotsOk;
  out.push(`verdict: ${fetched ? 'would be fetched' : 'would be skipped'}`);
  io.stdout.write(out.join('\n') + '\n');
  return fetched ? 0 : 1;
}

async function robotsFor(url: string, flags: CheckFlags, settings: ReturnType<typeof buildSettings>, io: Io): Promise<RobotsState> {
  const clock = systemClock;
  if (flags.robotsFile !== undefined) {
    const path = resolve(io.cwd, flags.robotsFile);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read robots file ${flags.robotsFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    // Read exactly as much of the file as a crawl would.
    const capped = capRobotsText(text, settings.robots.maxBytes).text;
    return parseRobots(`${originOf(url)}/robots.txt`, capped, settings.userAgent, clock.now(), settings.robots.cacheTtlMs);
  }
  const fetcher = createFetcher({ userAgent: settings.userAgent, timeouts: settings.timeouts, maxBodyBytes: settings.robots.maxBytes, clock });
  try {
    const cache = new RobotsCache({
      clock,
      userAgent: settings.userAgent,
      maxBytes: settings.robots.maxBytes,
      cacheTtlMs: settings.robots.cacheTtlMs,
      unavailableRetries: 0,
      unavailableRetryDelayMs: settings.robots.unavailableRetryDelayMs,
      fetchOne: (u) => fetcher.fetch(u, { read: 'text', maxBodyBytes: settings.robots.maxBytes }),
    });
    return await cache.load(originOf(url));
  } finally {
    await fetcher.close();
  }
}

function describePolicy(key: string, p: HostPolicy): string {
  const parts = [`rate ${p.rateLabel}`, `${p.concurrency} at once`];
  if (p.windows.length > 0) parts.push(`limits ${p.windows.map((w) => w.label).join(', ')}`);
  if (p.jitterMs > 0) parts.push(`jitter up to ${p.jitterMs} ms`);
  parts.push(p.respectCrawlDelay ? `Crawl-delay honoured up to ${p.maxCrawlDelayMs / 1000}s` : 'Crawl-delay ignored');
  parts.push(`${p.throttleStatuses.join('/')} pause it (Retry-After up to ${p.maxRetryAfterMs / 1000}s${p.adaptive ? ', rate adapts' : ''})`);
  parts.push(`${p.retries} retries on failure`);
  const from = p.matched === 'defaults' ? 'the defaults (no config entry matches)' : `config entry "${p.matched}"`;
  return `host key ${key}: ${parts.join(', ')} — from ${from}`;
}

function describeRobots(state: RobotsState, url: string): { allowed: boolean; text: string } {
  switch (state.kind) {
    case 'allow-all':
      return { allowed: true, text: `allowed: ${state.reason}, so everything is allowed` };
    case 'unavailable':
      return { allowed: false, text: `disallowed: robots.txt is unavailable (${state.reason}); a crawl treats the whole host as disallowed until it answers` };
    case 'rules': {
      const why = state.explain(url);
      const group = why.group ? ` in group "${why.group}"` : ' (no group applies to our user agent)';
      if (why.rule === null) return { allowed: why.allowed, text: `${why.allowed ? 'allowed' : 'disallowed'}: no rule matches${group} — ${state.source}` };
      return { allowed: why.allowed, text: `${why.allowed ? 'allowed' : 'disallowed'} by "${why.rule}" (line ${why.line})${group} — ${state.source}` };
    }
  }
}
