#!/usr/bin/env node
/**
 * Sums a V8 heap snapshot's self sizes by constructor (DevTools' "Summary"
 * view, without retained sizes), for what a crawl keeps per host:
 *
 *   node bench/heap-summary.js FILE.heapsnapshot [--per N] [--top 30] [--json] [--owners LABEL [--depth 1]]
 *
 * `--owners LABEL` lists instead who holds the nodes of one row (e.g.
 * "(array) (object elements)"): their bytes summed by the chain of first
 * holders, `--depth` levels up ("Array.elements < Chunk.urls").
 * `--per N` divides every row by N (the number of hosts): bytes per host.
 * Objects are grouped by constructor name, closures by function name
 * ("closure foo"), strings as "(string)", arrays and hidden objects by their
 * type and name ("(array) (object elements)"), compiled code as one row.
 *
 * The file is read as bytes and its `nodes` and `strings` parsed by hand:
 * the snapshot of a crawl over 100,000 hosts is too large for one
 * JSON.parse (V8's string limit is ~512 MB).
 */
import { readFileSync } from 'node:fs';

export function summarize(file, owners, depth = 1) {
  const buf = readFileSync(file);
  const find = (needle, from = 0) => {
    const at = buf.indexOf(needle, from, 'latin1');
    if (at < 0) throw new Error(`${file}: no ${needle} (not a heap snapshot?)`);
    return at;
  };
  const nodesAt = find('"nodes":[');
  const head = buf.subarray(0, nodesAt).toString('utf8').replace(/,\s*$/, '') + '}';
  const meta = JSON.parse(head).snapshot.meta;
  const fields = meta.node_fields;
  const width = fields.length;
  const typeIx = fields.indexOf('type');
  const nameIx = fields.indexOf('name');
  const sizeIx = fields.indexOf('self_size');
  const types = meta.node_types[typeIx];
  const nodeCount = JSON.parse(head).snapshot.node_count;
  const edgeCountIx = fields.indexOf('edge_count');
  const type = new Uint8Array(nodeCount);
  const name = new Uint32Array(nodeCount);
  const size = new Float64Array(nodeCount);
  const edgeCount = new Uint32Array(nodeCount);
  // Numbers of the `nodes` array, field by field.
  let pos = nodesAt + '"nodes":['.length;
  let field = 0;
  let node = 0;
  let value = 0;
  let inNumber = false;
  for (; node < nodeCount; pos++) {
    const c = buf[pos];
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
    } else if (inNumber) {
      if (field === typeIx) type[node] = value;
      else if (field === nameIx) name[node] = value;
      else if (field === sizeIx) size[node] = value;
      else if (field === edgeCountIx) edgeCount[node] = value;
      value = 0;
      inNumber = false;
      if (++field === width) {
        field = 0;
        node++;
      }
    }
  }
  // With `owners`: the edges too (type, name or index, target node offset).
  let edges = null;
  if (owners) {
    const edgeFields = meta.edge_fields;
    const ew = edgeFields.length;
    const edgesAt = find('"edges":[', pos);
    const total = edgeCount.reduce((a, b) => a + b, 0);
    edges = { type: new Uint8Array(total), name: new Uint32Array(total), to: new Uint32Array(total), types: meta.edge_types[0] };
    pos = edgesAt + '"edges":['.length;
    let f = 0;
    let e = 0;
    value = 0;
    inNumber = false;
    for (; e < total; pos++) {
      const c = buf[pos];
      if (c >= 48 && c <= 57) {
        value = value * 10 + (c - 48);
        inNumber = true;
      } else if (inNumber) {
        if (f === 0) edges.type[e] = value;
        else if (f === 1) edges.name[e] = value;
        else edges.to[e] = value / width;
        value = 0;
        inNumber = false;
        if (++f === ew) {
          f = 0;
          e++;
        }
      }
    }
  }
  const stringsAt = find('"strings":[', pos);
  const end = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.subarray(stringsAt + '"strings":'.length, end + 1).toString('utf8'));
  const labelOf = (i) => {
    const t = types[type[i]];
    let label;
    if (t === 'object' || t === 'native') label = strings[name[i]];
    else if (t === 'closure') label = `closure ${strings[name[i]] || '(anonymous)'}`;
    else if (t === 'string' || t === 'concatenated string' || t === 'sliced string') label = '(string)';
    else if (t === 'code') label = '(compiled code)';
    else if (t === 'array' || t === 'hidden' || t === 'object shape') label = `(${t}) ${strings[name[i]]}`;
    else label = `(${t})`;
    return label;
  };
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < nodeCount; i++) {
    const label = labelOf(i);
    let g = groups.get(label);
    if (!g) groups.set(label, (g = { label, count: 0, bytes: 0 }));
    g.count++;
    g.bytes += size[i];
    total += size[i];
  }
  const out = { nodes: nodeCount, total, groups: [...groups.values()].sort((a, b) => b.bytes - a.bytes) };
  if (owners) {
    // Nodes labelled `owners`, summed by the chain of their first holders
    // (`depth` levels up): "Holder.edge < Holder.edge".
    const holder = new Int32Array(nodeCount).fill(-1);
    const holderEdge = new Int32Array(nodeCount).fill(-1);
    let e = 0;
    for (let i = 0; i < nodeCount; i++) {
      for (let k = 0; k < edgeCount[i]; k++, e++) {
        const to = edges.to[e];
        const et = edges.types[edges.type[e]];
        if (et === 'weak' || holder[to] !== -1) continue;
        holder[to] = i;
        holderEdge[to] = e;
      }
    }
    const edgeLabel = (x) => {
      const et = edges.types[edges.type[x]];
      return et === 'element' || et === 'hidden' ? `[${et}]` : strings[edges.name[x]];
    };
    const by = new Map();
    for (let i = 0; i < nodeCount; i++) {
      if (labelOf(i) !== owners) continue;
      const path = [];
      for (let n = i, d = 0; d < depth && holder[n] !== -1; d++) {
        path.push(`${labelOf(holder[n])}.${edgeLabel(holderEdge[n])}`);
        n = holder[n];
      }
      const key = path.join(' < ') || '(no holder)';
      let g = by.get(key);
      if (!g) by.set(key, (g = { label: key, count: 0, bytes: 0 }));
      g.count++;
      g.bytes += size[i];
    }
    out.owners = [...by.values()].sort((a, b) => b.bytes - a.bytes);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i < 0 ? dflt : Number(args[i + 1]);
  };
  if (!file) {
    process.stderr.write('usage: node bench/heap-summary.js FILE.heapsnapshot [--per N] [--top 30] [--json]\n');
    process.exit(2);
  }
  const per = opt('per', 1);
  const top = opt('top', 30);
  const ownersIx = args.indexOf('--owners');
  const s = summarize(file, ownersIx < 0 ? undefined : args[ownersIx + 1], opt('depth', 1));
  if (s.owners) s.groups = s.owners;
  if (args.includes('--json')) {
    process.stdout.write(JSON.stringify({ ...s, groups: s.groups.slice(0, top) }) + '\n');
  } else {
    const unit = per === 1 ? 'bytes' : `bytes ÷ ${per}`;
    process.stdout.write(`${s.nodes} nodes, ${(s.total / 1048576).toFixed(1)} MB self size in all${per === 1 ? '' : `, ${(s.total / per).toFixed(0)} B per host`}\n`);
    process.stdout.write(`${unit.padStart(14)} ${'count'.padStart(10)}  constructor\n`);
    for (const g of s.groups.slice(0, top)) {
      process.stdout.write(`${(g.bytes / per).toFixed(per === 1 ? 0 : 1).padStart(14)} ${String(g.count).padStart(10)}  ${g.label.slice(0, 160)}\n`);
    }
  }
}
