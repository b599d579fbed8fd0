/** Escaping and number formats shared by the HTML renderer. */
import { formatBytes } from '../output/summary.js';
import { groupDigits } from '../util/group-digits.js';

export { formatBytes };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text and attribute values: every URL, title and message in a report comes from the web. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** JSON safe inside a <script> element: no "</script>", no "<!--". */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

export const int = (n: number): string => groupDigits(Math.round(n));

/** 340 ms, 1.25 s, 2 min 03 s, 1 h 02 min. */
export function formatMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A rate as people write it: "2.00/s", or "30.0/min" below one a second. */
export function formatRate(perSecond: number | null): string {
  if (perSecond === null || !Number.isFinite(perSecond)) return '–';
  if (perSecond >= 1 || perSecond === 0) return `${perSecond.toFixed(perSecond >= 100 ? 0 : 2)}/s`;
  return `${(perSecond * 60).toFixed(1)}/min`;
}

/** Only http(s) URLs become links; anything else stays text. */
export function linkTo(url: string, text = url): string {
  const label = escapeHtml(text);
  return /^https?:\/\//i.test(url) ? `<a href="${escapeHtml(url)}" rel="noreferrer noopener" target="_blank">${label}</a>` : label;
}

export function isoUtc(ms: number | null): string {
  return ms === null
    ? '–'
    : new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
}
