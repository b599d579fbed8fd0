/**
 * The set of URLs the crawl has already accepted, held as 53-bit fingerprints
 * in an open-addressing table of 8-byte slots, so a million seen URLs cost
 * 11–16 MB instead of the ~100 MB of a Set of strings.
 *
 * Memory contract: at most 16 bytes per URL once past the initial capacity.
 * The load factor stays in [0.5, 0.75]: the table grows by 1.5x (not 2x, which
 * would leave it a quarter full and cost up to 21 bytes per URL) when it
 * would pass 0.75, where linear probing still finds a slot in a few probes.
 *
 * A fingerprint collision would make the crawl skip one URL it never saw;
 * with 53 bits that is ~1 in 10^4 at a million URLs, in exchange for bounded memory.
 *
 * With `ids` (the SQLite store), each slot also keeps its URL's row id, 4
 * more bytes a slot (at most 24 bytes per URL in all): a page's history
 * names its outlinks by id, and finding ten ids here instead of by URL in
 * the file's index was most of what `--state` cost a page. An id that is
 * not known (0, or one past 2^32) is looked up in the file instead.
 */

/** cyrb53 (public domain, bryc): a fast, well-mixed 53-bit hash of `s[start, end)`, never 0 (0 marks an empty slot). */
export function rangeHash(s: string, start: number, end: number): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = start; i < end; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const h = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return h === 0 ? 1 : h;
}

/** The 53-bit fingerprint of a whole string. */
export function fingerprint(s: string): number {
  return rangeHash(s, 0, s.length);
}

const MAX_LOAD = 0.75;
const GROWTH = 1.5;

/** Home slot of a fingerprint: its low 32 bits (well mixed by cyrb53) scaled to the table. */
function home(fp: number, capacity: number): number {
  return Math.floor(((fp >>> 0) / 4294967296) * capacity);
}

export class SeenSet {
  private table: Float64Array;
  /** With `ids`: the id of each slot's URL (0: not known), parallel to `table`. */
  private ids: Uint32Array | null;
  private count = 0;
  /** Entries allowed before the next growth. */
  private limit: number;

  constructor(initialCapacity = 1024, opts: { ids?: boolean } = {}) {
    this.table = new Float64Array(Math.max(16, Math.ceil(initialCapacity / MAX_LOAD)));
    this.ids = opts.ids === true ? new Uint32Array(this.table.length) : null;
    this.limit = Math.floor(this.table.length * MAX_LOAD);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the table. */
  get byteLength(): number {
    return this.table.byteLength + (this.ids?.byteLength ?? 0);
  }

  has(key: string): boolean {
    return this.hasFingerprint(fingerprint(key));
  }

  /** Adds the key; returns false if it was already present. */
  add(key: string): boolean {
    return this.addFingerprint(fingerprint(key));
  }

  hasFingerprint(fp: number): boolean {
    return this.slotOf(fp) !== -1;
  }

  /** Adds the fingerprint, with the id of its URL when the set keeps ids (a present one gets the id if it had none); false if it was already present. */
  addFingerprint(fp: number, id = 0): boolean {
    if (this.count >= this.limit) this.grow();
    const t = this.table;
    const capacity = t.length;
    const ids = this.ids;
    const kept = id > 0 && id <= 0xffffffff ? id : 0;
    for (let i = home(fp, capacity); ;) {
      const v = t[i];
      if (v === fp) {
        if (ids !== null && kept !== 0 && ids[i] === 0) ids[i] = kept;
        return false;
      }
      if (v === 0) {
        t[i] = fp;
        if (ids !== null) ids[i] = kept;
        this.count++;
        return true;
      }
      if (++i === capacity) i = 0;
    }
  }

  /** The id added with this key: undefined when the key is absent, 0 when present without a known id (or the set keeps none). */
  idOf(key: string): number | undefined {
    const i = this.slotOf(fingerprint(key));
    if (i === -1) return undefined;
    return this.ids === null ? 0 : this.ids[i];
  }

  /** The slot holding `fp`, or -1. */
  private slotOf(fp: number): number {
    const t = this.table;
    const capacity = t.length;
    for (let i = home(fp, capacity); ;) {
      const v = t[i];
      if (v === 0) return -1;
      if (v === fp) return i;
      if (++i === capacity) i = 0;
    }
  }

  private grow(): void {
    const old = this.table;
    const capacity = Math.ceil(old.length * GROWTH);
    const t = new Float64Array(capacity);
    const oldIds = this.ids;
    const ids = oldIds === null ? null : new Uint32Array(capacity);
    for (let j = 0; j < old.length; j++) {
      const fp = old[j];
      if (fp === 0) continue;
      let i = home(fp, capacity);
      while (t[i] !== 0) if (++i === capacity) i = 0;
      t[i] = fp;
      if (ids !== null) ids[i] = oldIds![j];
    }
    this.table = t;
    this.ids = ids;
    this.limit = Math.floor(capacity * MAX_LOAD);
  }
}
