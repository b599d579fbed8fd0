/**
 * `crawl check <url>`: prints what explainWith() (src/api/check.ts) finds —
 * scope, the host policy and which config entry decided it, the robots.txt
 * verdict with its deciding rule, and whether the SSRF guard lets the crawl
 * connect to the host — fetching nothing but robots.txt.
 * This file only gathers the flags and words the result.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CheckFlags, Io } from './flags.js';
import { buildSettings } from '../config/settings.js';
import { loadConfig } from '../config/load-config.js';
import { checkSeeds, UsageError } from '../config/seeds.js';
import { explainWith, type CheckResult, type RobotsResult } from '../api/check.js';
import { redactCredentials } from '../fetch/redact.js';
import { INSECURE_WARNING } from '../fetch/tls.js';
import { robotsCutMessage } from '../robots/gate.js';
import { ruleLabel } from '../usage/robots-usage.js';
import { systemClock } from '../clock.js';
import type { HostPolicy } from '../config/settings-types.js';

export async function checkCommand(rawUrl: string, flags: CheckFlags, io: Io): Promise<number> {
  const [url] = checkSeeds([rawUrl]);
  const seeds = flags.seed && flags.seed.length > 0 ? checkSeeds(flags.seed) : [url];
  const file = await loadConfig(flags.config, io.cwd);
  const settings = buildSettings(file, {
    scope: flags.scope,
    include: flags.include,
    exclude: flags.exclude,
    userAgent: flags.userAgent,
    timeout: flags.timeout,
    rate: flags.rate,
    hostConcurrency: flags.hostConcurrency,
    ipRate: flags.ipRate,
    ipConcurrency: flags.ipConcurrency,
    allowPrivate: flags.allowPrivate,
    robots: flags.robots === false ? false : undefined,
    headers: flags.header,
    cookies: flags.cookie,
    cookieJar: flags.cookieJar,
    proxy: flags.proxy,
    insecure: flags.insecure,
    ca: flags.ca,
    signKey: flags.signKey,
    signatureAgent: flags.signatureAgent,
    render: flags.render,
    purpose: flags.purpose,
    fetchDenied: flags.fetchDenied,
  });
  if (settings.requests.tls.insecure) io.stderr.write(`crawl: warning: ${INSECURE_WARNING}\n`);
  // The file is only read when robots.txt is checked at all.
  const robotsTxt = flags.robotsFile !== undefined && settings.robots.enabled ? await readRobotsFile(flags.robotsFile, io.cwd) : undefined;
  const result = await explainWith({ url: url, seeds, settings, robotsTxt, cwd: io.cwd });
  const explainedAt = systemClock.now();
  io.stdout.write(formatCheck(result));
  // --render: render the page once, politely, and list the hosts its browser asks things of (api/render-check.ts).
  if (flags.render !== undefined && result.wouldFetch && result.policy.render !== false) {
    const [{ renderCheck }, { formatRenderCheck }] = await Promise.all([import('../api/render-check.js'), import('./render-check-lines.js')]);
    // The check's own robots.txt request went out before the explanation ended: the render's crawl keeps the host's gap after it.
    const after =
      result.robots.checked && robotsTxt === undefined ? { at: explainedAt, gapMs: Math.max(result.policy.intervalMs, result.crawlDelayMs ?? 0) } : undefined;
    io.stdout.write(formatRenderCheck(await renderCheck(url, settings, { cwd: io.cwd, after })));
  }
  return result.wouldFetch ? 0 : 1;
}

async function readRobotsFile(file: string, cwd: string): Promise<string> {
  try {
    return await readFile(resolve(cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read robots file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** The report `crawl check` prints, one aligned line per aspect. */
export function formatCheck(r: CheckResult): string {
  const out: string[] = [`url:     ${redactCredentials(r.url)}`];
  out.push(`scope:   ${r.scope.explanation}`);
  out.push(`policy:  ${describePolicy(r.hostKey, r.policy)}`);
  out.push(`per-ip:  ${r.perIp.explanation}`);
  out.push(`robots:  ${describeRobots(r.robots)}`);
  if (r.robots.checked && r.robots.kind === 'rules' && r.robots.crawlDelayMs !== null) {
    out.push(`         Crawl-delay ${r.robots.crawlDelayMs / 1000}s (a floor on the gap unless the policy ignores it)`);
  }
  if (r.robots.checked && r.robots.kind === 'rules' && r.robots.truncatedAt !== undefined) {
    out.push(`         ${robotsCutMessage(r.robots.source, r.robots.truncatedAt)}`);
  }
  out.push(...describeUsage(r));
  out.push(`network: ${r.network.explanation}`);
  out.push(`render:  ${describeRender(r)}`);
  out.push(...describeRequests(r));
  const unreachable = r.scope.inScope && r.network.allowed && r.robots.checked && r.robots.kind === 'unavailable' ? r.robots.connectError : undefined;
  out.push(`verdict: ${r.wouldFetch ? 'would be fetched' : unreachable ? `would be recorded with error ${unreachable}, not requested` : 'would be skipped'}`);
  return out.join('\n') + '\n';
}

/** What robots.txt states the page may be used for, against the declared purposes; nothing when neither says anything. */
function describeUsage(r: CheckResult): string[] {
  const { purposes, stated, usage, denied, fetchDenied } = r.usage;
  if (purposes.length === 0 && stated.length === 0) return [];
  const said = Object.entries(usage).map(([use, v]) => `${use}=${v}`);
  const head = said.length === 0 ? 'robots.txt (and tdmrep.json) state nothing about its use' : `stated before the request: ${said.join(', ')}`;
  const verdict =
    purposes.length === 0
      ? 'no purpose declared (--purpose): the record carries what was stated'
      : denied === null
        ? `may be used for ${purposes.join(', ')} as far as robots.txt says; its response (Content-Usage, tdm-reservation, noai) is read when fetched`
        : fetchDenied
          ? `denied for ${denied}: fetched anyway (--fetch-denied), its content withheld`
          : `denied for ${denied}: not requested (a usage-denied skip; --fetch-denied fetches it for its links)`;
  const lines = [`usage:   ${head}; ${verdict}`];
  for (const s of stated) {
    if (s.source === 'robots') lines.push(`         line ${s.line} of ${redactCredentials(s.url)}: ${ruleLabel(s.name)}: ${s.value}`);
    else if (s.source === 'tdmrep') lines.push(`         ${redactCredentials(s.url)}: ${s.value}`);
  }
  return lines;
}

/** Whether a crawl would render the page (render/render-decision.ts), and how to see what the browser would ask for. */
function describeRender(r: CheckResult): string {
  const mode = r.policy.render;
  if (mode === false) return 'not rendered: render is false for this host (--render, or "render": true or "auto" in the config, turns it on)';
  const list = `to list what the browser would fetch, from which hosts under which limits: crawl --render -v --max-pages 1 ${redactCredentials(r.url)}`;
  if (mode === true)
    return `rendered in a browser if it is 2xx HTML (render true); every request the browser makes goes through its host's robots.txt and limits; ${list}`;
  return `rendered only if its HTML looks like an application shell (render "auto": an empty mount element, a <noscript> asking for JavaScript, or a script bundle with few links and little text); ${list}`;
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

/** Headers (secrets as ***), credentials by kind, proxy and cookie names: never a secret's value. */
function describeRequests(r: CheckResult): string[] {
  const q = r.requests;
  const proxy =
    q.proxy === null
      ? 'direct (no proxy)'
      : `via proxy ${q.proxy} (${q.proxySource === 'environment' ? 'from HTTP_PROXY/HTTPS_PROXY' : 'from the config or --proxy'})`;
  const lines = [`request: ${proxy}; auth: ${q.auth ?? 'none'}; cookies: ${q.cookies.length === 0 ? 'none' : q.cookies.join(', ')}`];
  for (const header of q.headers) lines.push(`         header ${header}`);
  return lines;
}

function describeRobots(r: RobotsResult): string {
  if (!r.checked) return 'not checked (--no-robots)';
  switch (r.kind) {
    case 'allow-all':
      return `allowed: ${r.reason}, so everything is allowed`;
    case 'unavailable':
      if (r.connectError) {
        return `not reachable: ${r.reason}; a crawl re-tries it for a few seconds, then gives the host up: its URLs become page records with error ${r.connectError}, not requested`;
      }
      return `disallowed: robots.txt is unavailable (${r.reason}); a crawl treats the whole host as disallowed until it answers, then (after robots.unavailableRetries re-fetches) skips its URLs as robots-unavailable`;
    case 'rules': {
      const group = r.group ? ` in group "${r.group}"` : ' (no group applies to our user agent)';
      if (r.rule === null) return `${r.allowed ? 'allowed' : 'disallowed'}: no rule matches${group} — ${r.source}`;
      return `${r.allowed ? 'allowed' : 'disallowed'} by "${r.rule}" (line ${r.line})${group} — ${r.source}`;
    }
  }
}
