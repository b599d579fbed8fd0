/**
 * The failures table: page records that got no answer (an error code) or a
 * 4xx/5xx status, with their URLs. Counts per kind are exact; the rows are
 * capped (in total, and per kind so that a thousand 404s cannot hide the one
 * TLS error), the first ones of each kind kept, since they are where a
 * problem began.
 */
import type { PageView } from './record-view.js';

export interface FailureRow {
  url: string;
  host: string;
  /** The error code, or "HTTP 404". */
  kind: string;
  status: number | null;
  message: string | null;
  /** Epoch ms the request began, or null. */
  atMs: number | null;
  attempts: number;
  parent: string | null;
}

export interface FailureSummary {
  total: number;
  /** Failures per kind, most frequent first. */
  byKind: Array<[string, number]>;
  rows: FailureRow[];
  /** Rows left out to keep the report small. */
  omitted: number;
}

const MESSAGE_CHARS = 240;

export function failureKind(p: PageView): string | null {
  if (p.errorCode !== null) return p.errorCode;
  if (p.status !== null && p.status >= 400) return `HTTP ${p.status}`;
  return null;
}

export class FailureTable {
  private readonly rows: FailureRow[] = [];
  private readonly byKind = new Map<string, number>();
  private total = 0;

  constructor(private readonly opts: { maxRows?: number; maxPerKind?: number } = {}) {}

  add(p: PageView): void {
    const kind = failureKind(p);
    if (kind === null) return;
    this.total++;
    const seen = (this.byKind.get(kind) ?? 0) + 1;
    this.byKind.set(kind, seen);
    if (seen > (this.opts.maxPerKind ?? 250) || this.rows.length >= (this.opts.maxRows ?? 2500)) return;
    const message = p.errorMessage !== null && p.errorMessage.length > MESSAGE_CHARS ? p.errorMessage.slice(0, MESSAGE_CHARS - 1) + '…' : p.errorMessage;
    this.rows.push({
      url: p.url,
      host: p.host,
      kind,
      status: p.status,
      message,
      atMs: Number.isFinite(p.startMs) ? p.startMs : null,
      attempts: p.attempts,
      parent: p.parent,
    });
  }

  finish(): FailureSummary {
    return {
      total: this.total,
      byKind: [...this.byKind].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
      rows: this.rows,
      omitted: this.total - this.rows.length,
    };
  }
}
