/**
 * A Prometheus text exposition read back into numbers, for tests that scrape
 * `--metrics`: samples by name and labels, with the HELP/TYPE lines' names.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** Metric families declared (# TYPE lines). */
  names(): string[];
  /** The one sample with exactly these labels (a subset match), or undefined. */
  get(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of `name` added up (0 when there is none). */
  sum(name: string): number;
  /** `name`'s samples as { labelValue: value } by one label. */
  byLabel(name: string, label: string): Record<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseScrape(text: string): Scrape {
  const samples: Sample[] = [];
  const declared: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) declared.push(line.split(' ')[2]);
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  const of = (name: string) => samples.filter((s) => s.name === name);
  return {
    samples,
    names: () => declared,
    get(name, labels = {}) {
      const hit = of(name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      if (hit.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${hit.length} samples`);
      return hit[0]?.value;
    },
    sum: (name) => of(name).reduce((a, s) => a + s.value, 0),
    byLabel: (name, label) => Object.fromEntries(of(name).map((s) => [s.labels[label] ?? '', s.value])),
  };
}

/** An unlabelled series' value (it must exist); with `sum`, all of the series' samples added up. */
export function scrapeValue(scrape: Scrape, name: string, sum = false): number {
  if (sum) return scrape.sum(name);
  const v = scrape.get(name, {});
  if (v === undefined) throw new Error(`${name}: no sample`);
  return v;
}
