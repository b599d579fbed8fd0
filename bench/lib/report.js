/**
 * Benchmark results as rows, and the table they are printed and committed as.
 *
 * A row: { bench, metric, value, unit, target?: { op: '<=' | '<' | '>=', value }, note? }.
 * `value` is the measured figure (a ratio where the target is one), already
 * rounded for display by the benchmark.
 */

const OPS = {
  '<=': (a, b) => a <= b,
  '<': (a, b) => a < b,
  '>=': (a, b) => a >= b,
};

export function verdict(row) {
  if (!row.target) return '';
  if (!Number.isFinite(row.value)) return 'error';
  return OPS[row.target.op](row.value, row.target.value) ? 'met' : 'MISSED';
}

function showValue(row) {
  if (typeof row.value === 'number' && !Number.isFinite(row.value)) return String(row.value);
  return row.unit ? `${row.value} ${row.unit}` : String(row.value);
}

function showTarget(row) {
  if (!row.target) return '';
  return `${row.target.op.replace('<=', '≤').replace('>=', '≥')} ${row.target.value}${row.unit ? ` ${row.unit}` : ''}`;
}

/** A GitHub-flavoured markdown table of every row. */
export function markdownTable(rows) {
  const lines = ['| Benchmark | Measure | Value | Target | |', '|---|---|---:|---:|---|'];
  for (const r of rows) {
    const note = r.note ? ` <br><sub>${r.note}</sub>` : '';
    lines.push(`| ${r.bench} | ${r.metric}${note} | ${showValue(r)} | ${showTarget(r)} | ${verdict(r)} |`);
  }
  return lines.join('\n');
}

/** The same rows for a terminal. */
export function textTable(rows) {
  const cells = rows.map((r) => [r.bench, r.metric, showValue(r), showTarget(r), verdict(r)]);
  const header = ['benchmark', 'measure', 'value', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
  const line = (c) => c.map((x, i) => (i === 2 || i === 3 ? String(x).padStart(widths[i]) : String(x).padEnd(widths[i]))).join('  ');
  return [line(header), ...cells.map(line)].join('\n');
}
