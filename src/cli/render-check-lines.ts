/**
 * The words of `crawl check --render`'s browser part (api/render-check.ts):
 * whether the page was rendered, then one line per host its browser asked
 * something of, with that host's limits and what its robots.txt said.
 */
import type { RenderCheck, SubresourceHost } from '../api/render-check.js';
import { redactCredentials } from '../fetch/redact.js';

export function formatRenderCheck(r: RenderCheck): string {
  const page = r.page;
  const lines: string[] = [];
  if (page === undefined) lines.push('browser: the page was not fetched, so not rendered');
  else if (page.rendered !== true) {
    const why = page.error
      ? `${page.error.code}: ${page.error.message}`
      : page.renderReason === 'static'
        ? 'render "auto" found no application shell'
        : `status ${page.status ?? 'none'}, ${page.renderReason ?? 'not HTML'}`;
    lines.push(`browser: not rendered (${why})`);
  } else lines.push(`browser: rendered (${page.renderReason}); its requests went to ${r.hosts.length} host${r.hosts.length === 1 ? '' : 's'}:`);
  for (const h of r.hosts) lines.push(`         ${hostLine(h)}`);
  return lines.join('\n') + '\n';
}

function hostLine(h: SubresourceHost): string {
  const o = h.outcomes;
  const asked = o.fetched + o.cached + o.disallowed + o.failed;
  const robots =
    o.disallowed === 0
      ? asked === 0
        ? 'nothing asked of its robots.txt'
        : 'robots.txt allows what was asked'
      : `robots.txt disallows ${o.disallowed} of ${asked} (${h.disallowed.map(redactCredentials).join(', ')}${o.disallowed > h.disallowed.length ? ', …' : ''})`;
  const counts = (['fetched', 'cached', 'blocked', 'disallowed', 'failed'] as const)
    .filter((k) => o[k] > 0)
    .map((k) => `${o[k]} ${k}`)
    .join(', ');
  return `${h.host}: rate ${h.rateLabel}, ${h.concurrency} at once; ${robots}; ${counts}`;
}
