/** The report's stylesheet: plain, readable in print and on a laptop screen. */
export const REPORT_STYLE = `
:root { --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #ffffff; --soft: #f8fafc; --accent: #2563eb; --bad: #dc2626; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 20px 28px 8px; border-bottom: 1px solid var(--line); background: var(--soft); }
h1 { margin: 0 0 4px; font-size: 22px; }
h1 .source { font-weight: normal; color: var(--muted); font-size: 16px; margin-left: 8px; word-break: break-all; }
h2 { margin: 28px 0 4px; font-size: 18px; }
h3 { margin: 16px 0 6px; font-size: 14px; }
main { padding: 0 28px 28px; max-width: 1600px; }
footer { padding: 12px 28px 24px; color: var(--muted); font-size: 12px; }
.span { margin: 0 0 6px; color: var(--muted); }
.notes { margin: 6px 0 10px; padding-left: 18px; color: #92400e; font-size: 13px; }
.hint { margin: 0 0 8px; color: var(--muted); font-size: 13px; max-width: 110ch; }
.muted { color: var(--muted); font-weight: normal; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 18px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 140px; background: var(--soft); }
.card .value { font-size: 22px; font-weight: 600; }
.card .label { color: var(--muted); }
.card .sub { color: var(--muted); font-size: 12px; }
.chart { width: 100%; min-height: 120px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 8px 24px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 8px 24px; align-items: start; }
.grid3 { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 8px 24px; align-items: start; }
figure { margin: 8px 0; min-width: 0; }
figcaption { font-weight: 600; margin-bottom: 2px; word-break: break-all; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); position: sticky; top: 0; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.hosts td { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.host { max-width: 320px; overflow: hidden; text-overflow: ellipsis; }
td.url { overflow-wrap: anywhere; }
.legend { font-size: 13px; color: var(--muted); margin: 4px 0; }
.swatch { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin: 0 5px 0 12px; }
.swatch:first-child { margin-left: 0; }
.swatch.dashed { background: repeating-linear-gradient(90deg, #dc2626 0 5px, transparent 5px 8px); }
td.msg { color: var(--muted); max-width: 420px; }
td.bad { color: var(--bad); font-weight: 600; }
td.bar { width: 40%; }
td.bar span { display: block; height: 10px; background: var(--accent); border-radius: 2px; opacity: 0.7; }
.counts table td:first-child { white-space: nowrap; }
.scroll { overflow: auto; max-height: 520px; border: 1px solid var(--line); border-radius: 6px; }
.scroll.tall { max-height: 640px; }
.filters { margin: 8px 0; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
#failure-filter { width: 420px; max-width: 100%; padding: 5px 8px; font: inherit; border: 1px solid #cbd5e1; border-radius: 4px; }
#failure-kind { padding: 5px; font: inherit; }
#failure-count { color: var(--muted); }
ol.chains { padding-left: 22px; font-size: 13px; }
ol.chains li { margin: 3px 0; overflow-wrap: anywhere; }
.hop { display: inline-block; min-width: 30px; padding: 0 4px; border-radius: 3px; background: #e0e7ff; font-size: 12px; text-align: center; }
.end { color: var(--muted); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
tr[hidden] { display: none; }
code { background: #f1f5f9; padding: 0 3px; border-radius: 3px; }
.uplot { font-family: inherit; }
`;
