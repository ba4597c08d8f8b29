/**
 * An index's keys in the index's order, for index-ordered scans: a find whose sort is the index's
 * fields after an equality prefix walks the documents in order and stops at its limit, instead of
 * matching and sorting every candidate (plan.ts, orderedPlan).
 *
 * A sorted list of chunks (each at most 2 × CHUNK entries), so an insert or a delete costs a
 * binary search and a splice of one chunk, not of the whole list. Keys compare with MongoDB's
 * order (compareValues, the order sorts use), each field in its index direction; the id breaks
 * ties, so the order is total.
 */
import { compareValues, isPlainObject, type Doc } from "./values.js";

/** Entries per chunk after a split; a chunk splits past twice this. */
const CHUNK = 256;

interface Entry {
  readonly key: readonly unknown[];
  readonly id: string;
}

/** Bounds on a value: `low` ($gt, $gte) and `high` ($lt, $lte), each optional. */
export interface KeyRange {
  low?: { value: unknown; inclusive: boolean };
  high?: { value: unknown; inclusive: boolean };
}

/** Where an entry sits: chunk `c`, offset `i`. */
interface Pos {
  c: number;
  i: number;
}

/**
 * The values `paths` read in `doc`, one per path (undefined where missing), or null when a path
 * meets an array: a multikey document, whose sort key depends on the sort's direction, so no one
 * order of the index serves every sort.
 */
export function scalarTuple(doc: Doc, paths: readonly (readonly string[])[]): unknown[] | null {
  const out: unknown[] = new Array(paths.length);
  for (let p = 0; p < paths.length; p++) {
    let v: unknown = doc;
    for (const part of paths[p]) {
      if (Array.isArray(v)) return null;
      if (!isPlainObject(v)) {
        v = undefined;
        break;
      }
      v = v[part];
    }
    if (Array.isArray(v)) return null;
    out[p] = v;
  }
  return out;
}

export class OrderedKeys {
  private chunks: Entry[][] = [];
  private readonly keys = new Map<string, readonly unknown[]>();

  /** `dirs`: each key field's direction in the index (1 ascending, -1 descending); `chunk`: a chunk's size after a split. */
  constructor(
    private readonly dirs: readonly (1 | -1)[],
    entries: Iterable<Entry> = [],
    private readonly chunk = CHUNK,
  ) {
    const all = [...entries];
    for (const e of all) this.keys.set(e.id, e.key);
    all.sort((a, b) => this.compare(a, b));
    for (let i = 0; i < all.length; i += chunk) this.chunks.push(all.slice(i, i + chunk));
  }

  get size(): number {
    return this.keys.size;
  }

  private compare(a: Entry, b: Entry): number {
    for (let f = 0; f < this.dirs.length; f++) {
      const c = compareValues(a.key[f], b.key[f]);
      if (c !== 0) return c * this.dirs[f];
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  /** How an entry compares with `prefix` on the first prefix.length fields (in index order). */
  private comparePrefix(e: Entry, prefix: readonly unknown[]): number {
    for (let f = 0; f < prefix.length; f++) {
      const c = compareValues(e.key[f], prefix[f]);
      if (c !== 0) return c * this.dirs[f];
    }
    return 0;
  }

  /** The first position whose entry is not `before` (all positions before it are); end: {c: chunks.length, i: 0}. */
  private firstNot(before: (e: Entry) => boolean): Pos {
    const { chunks } = this;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = chunks[mid];
      if (before(chunk[chunk.length - 1])) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { c: lo, i: 0 };
    const chunk = chunks[lo];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (before(chunk[mid])) a = mid + 1;
      else b = mid;
    }
    return { c: lo, i: a };
  }

  /** Adds (or moves) `id` under `key`; false when its old place was not found (see delete). */
  insert(id: string, key: readonly unknown[]): boolean {
    if (this.keys.has(id) && !this.delete(id)) return false;
    const e: Entry = { key, id };
    this.keys.set(id, key);
    if (this.chunks.length === 0) {
      this.chunks.push([e]);
      return true;
    }
    let { c, i } = this.firstNot((x) => this.compare(x, e) < 0);
    if (c === this.chunks.length) {
      c = this.chunks.length - 1;
      i = this.chunks[c].length;
    }
    const chunk = this.chunks[c];
    chunk.splice(i, 0, e);
    if (chunk.length > 2 * this.chunk) this.chunks.splice(c, 1, chunk.slice(0, this.chunk), chunk.slice(this.chunk));
    return true;
  }

  /** Removes `id`; false when it was not found at its place (the order is broken: drop this copy). */
  delete(id: string): boolean {
    const key = this.keys.get(id);
    if (key === undefined) return true;
    this.keys.delete(id);
    const e: Entry = { key, id };
    const { c, i } = this.firstNot((x) => this.compare(x, e) < 0);
    const chunk = this.chunks[c];
    if (chunk?.[i]?.id !== id) return false;
    chunk.splice(i, 1);
    if (chunk.length === 0) this.chunks.splice(c, 1);
    return true;
  }

  /**
   * Ids of the entries whose first prefix.length key fields equal `prefix` and whose next field
   * lies within `range` (its values in MongoDB's order, whatever the index's direction), in index
   * order, or in reverse order from the last one. Read synchronously: no change meanwhile.
   */
  *scan(prefix: readonly unknown[], reverse: boolean, range: KeyRange = {}): Generator<string> {
    const { chunks } = this;
    const n = prefix.length;
    const d = n < this.dirs.length ? this.dirs[n] : 1;
    // In index order, the range starts at its low bound (ascending field) or its high one.
    const first = d === 1 ? range.low : range.high;
    const last = d === 1 ? range.high : range.low;
    const beforeFirst = (x: Entry): boolean => {
      const c = this.comparePrefix(x, prefix);
      if (c !== 0 || !first) return c < 0;
      const v = compareValues(x.key[n], first.value) * d;
      return first.inclusive ? v < 0 : v <= 0;
    };
    const pastLast = (x: Entry): boolean => {
      const c = this.comparePrefix(x, prefix);
      if (c !== 0 || !last) return c > 0;
      const v = compareValues(x.key[n], last.value) * d;
      return last.inclusive ? v > 0 : v >= 0;
    };
    if (!reverse) {
      let { c, i } = this.firstNot(beforeFirst);
      for (; c < chunks.length; c++, i = 0) {
        const chunk = chunks[c];
        for (; i < chunk.length; i++) {
          if (pastLast(chunk[i])) return;
          yield chunk[i].id;
        }
      }
      return;
    }
    // The entry before the first one past the range: the range's last, if any.
    const after = this.firstNot((x) => !pastLast(x));
    let c = after.i > 0 ? after.c : after.c - 1;
    let i = after.i > 0 ? after.i - 1 : c >= 0 ? chunks[c].length - 1 : -1;
    for (; c >= 0; c--, i = c >= 0 ? chunks[c].length - 1 : -1) {
      const chunk = chunks[c];
      for (; i >= 0; i--) {
        if (beforeFirst(chunk[i])) return;
        yield chunk[i].id;
      }
    }
  }
}
