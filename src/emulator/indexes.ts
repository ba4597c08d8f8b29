/**
 * Secondary indexes: hash maps from canonical key strings to document ids, one map per key
 * prefix length so that an equality on the first field(s) of a compound index narrows candidates
 * without a scan. Ranges and sorts do not use them (documented limitation).
 *
 * Key extraction follows MongoDB's multikey rules: a path that crosses an array fans out over
 * its elements, an array at the end of the path contributes each element, and a missing field
 * is keyed as null. A document with arrays in two fields of one compound index is refused
 * (CannotIndexParallelArrays), as MongoDB does.
 */
import { Query } from "mingo";
import { commandError, CommandError, ErrorCode } from "./errors.js";
import { formatKeyValue } from "./format.js";
import { translateMingoError, type Rec } from "./matcher.js";
import { canonInner, canonKey, isPlainObject, toView, type Doc } from "./values.js";

export interface IndexSpec {
  v: 2;
  key: Doc;
  name: string;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
}

const MISSING = undefined;

/** Leaf values at a dotted path (MISSING where the path does not exist), MongoDB-multikey style. */
export function pathValues(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split("."), 0, out);
  return out;
}

function collect(v: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    if (Array.isArray(v)) {
      if (v.length === 0) out.push(MISSING);
      else for (const el of v) out.push(el);
    } else out.push(v);
    return;
  }
  if (Array.isArray(v)) {
    const part = parts[i];
    if (/^\d+$/.test(part)) collect(v[Number(part)], parts, i + 1, out);
    let any = false;
    for (const el of v) {
      if (isPlainObject(el)) {
        collect(el, parts, i, out);
        any = true;
      }
    }
    if (!any && !/^\d+$/.test(part)) out.push(MISSING);
    return;
  }
  if (isPlainObject(v)) collect(v[parts[i]], parts, i + 1, out);
  else out.push(MISSING);
}

/** Key tuples of a document for the given fields: at most one field may fan out (multikey). */
function keyTuples(doc: Doc, fields: string[], indexName: string): unknown[][] {
  const perField = fields.map((f) => pathValues(doc, f));
  let fanout = -1;
  for (let i = 0; i < perField.length; i++) {
    if (perField[i].length > 1) {
      if (fanout >= 0) {
        throw commandError(
          "CannotIndexParallelArrays",
          `cannot index parallel arrays [${fields[i]}] [${fields[fanout]}] (index ${indexName})`,
        );
      }
      fanout = i;
    }
  }
  if (fanout < 0) return [perField.map((vs) => vs[0])];
  return perField[fanout].map((v) => perField.map((vs, i) => (i === fanout ? v : vs[0])));
}

/**
 * Keys of each prefix of a tuple: level 0 is canonKey(first value), level i > 0 the
 * self-delimiting encodings of the first i+1 values joined by ",". Lookups build the same form.
 */
function levelKeys(t: unknown[]): string[] {
  const keys = [canonKey(t[0])];
  if (t.length > 1) {
    let inner = canonInner(t[0]);
    for (let i = 1; i < t.length; i++) {
      inner += "," + canonInner(t[i]);
      keys.push(inner);
    }
  }
  return keys;
}

/** Per-document index entry: the keys at every prefix level, plus one tuple per full key. */
interface Entry {
  levels: string[][];
  tuples: unknown[][];
}

export class Index {
  readonly spec: IndexSpec;
  readonly fields: string[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly ttlSeconds: number | null;
  private readonly partial: Query | null;
  /** levels[i]: key of the first i+1 fields → ids of documents with that key. */
  private readonly levels: Map<string, Set<string>>[];
  private readonly entries = new Map<string, Entry>();

  constructor(spec: IndexSpec) {
    this.spec = spec;
    this.fields = Object.keys(spec.key);
    this.unique = spec.unique === true;
    this.sparse = spec.sparse === true;
    this.ttlSeconds = typeof spec.expireAfterSeconds === "number" ? spec.expireAfterSeconds : null;
    try {
      this.partial = spec.partialFilterExpression ? new Query(toView(spec.partialFilterExpression), { scriptEnabled: false }) : null;
    } catch (e) {
      throw translateMingoError(e);
    }
    this.levels = this.fields.map(() => new Map());
  }

  get name(): string {
    return this.spec.name;
  }

  get isPartial(): boolean {
    return this.partial !== null;
  }

  /** Keys the document would have in this index, or null if it is not indexed (sparse/partial). */
  entryFor(rec: Rec): Entry | null {
    if (this.partial && !this.partial.test(rec.view)) return null;
    const tuples = keyTuples(rec.doc, this.fields, this.name);
    if (this.sparse && tuples.every((t) => t.every((v) => v === MISSING))) return null;
    const levels: string[][] = this.fields.map(() => []);
    for (const t of tuples) {
      const keys = levelKeys(t);
      for (let i = 0; i < keys.length; i++) if (!levels[i].includes(keys[i])) levels[i].push(keys[i]);
    }
    return { levels, tuples };
  }

  /** Throws DuplicateKey if `entry` collides with a document other than `selfId`. */
  checkUnique(entry: Entry | null, selfId: string, ns: string): void {
    if (!this.unique || entry === null) return;
    const full = this.levels.length - 1;
    const keys = entry.levels[full];
    for (let k = 0; k < keys.length; k++) {
      const ids = this.levels[full].get(keys[k]);
      if (!ids) continue;
      for (const other of ids) {
        if (other !== selfId) throw this.duplicateError(entry, keys[k], ns);
      }
    }
  }

  private duplicateError(entry: Entry, key: string, ns: string): CommandError {
    const last = this.fields.length - 1;
    const tuple = entry.tuples.find((t) => levelKeys(t)[last] === key) ?? entry.tuples[0];
    const keyValue: Doc = {};
    this.fields.forEach((f, i) => (keyValue[f] = tuple[i] === MISSING ? null : tuple[i]));
    return duplicateKeyError(ns, this.name, this.spec.key, keyValue);
  }

  add(id: string, entry: Entry | null): void {
    if (entry === null) return;
    this.entries.set(id, entry);
    for (let i = 0; i < entry.levels.length; i++) {
      const map = this.levels[i];
      for (const key of entry.levels[i]) {
        let ids = map.get(key);
        if (!ids) map.set(key, (ids = new Set()));
        ids.add(id);
      }
    }
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    for (let i = 0; i < entry.levels.length; i++) {
      const map = this.levels[i];
      for (const key of entry.levels[i]) {
        const ids = map.get(key);
        if (!ids) continue;
        ids.delete(id);
        if (ids.size === 0) map.delete(key);
      }
    }
  }

  /** Whether the document is in this index (false for documents a sparse/partial index skips). */
  covers(id: string): boolean {
    return this.entries.has(id);
  }

  /** True when the document's keys are unchanged, so an update needs no index maintenance. */
  sameEntry(id: string, entry: Entry | null): boolean {
    const old = this.entries.get(id);
    if (!old || !entry) return !old && !entry;
    const a = old.levels[old.levels.length - 1];
    const b = entry.levels[entry.levels.length - 1];
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** Ids of documents whose first `values.length` indexed fields equal these values. */
  lookup(values: unknown[]): Set<string> | undefined {
    const keys = levelKeys(values);
    return this.levels[values.length - 1].get(keys[keys.length - 1]);
  }

  /** Whether a lookup for `value` would miss documents because they are not indexed. */
  canAnswerEquality(values: unknown[]): boolean {
    if (this.partial) return false;
    if (this.sparse && values.some((v) => v === null || v === undefined)) return false;
    return true;
  }

  clear(): void {
    this.entries.clear();
    for (const m of this.levels) m.clear();
  }
}

export function duplicateKeyError(ns: string, indexName: string, keyPattern: Doc, keyValue: Doc): CommandError {
  return new CommandError(
    ErrorCode.DuplicateKey,
    `E11000 duplicate key error collection: ${ns} index: ${indexName} dup key: ${formatKeyValue(keyValue)}`,
    { keyPattern, keyValue },
  );
}

/** Default index name, as MongoDB derives it: `a_1_b_-1`. */
export function defaultIndexName(key: Doc): string {
  return Object.entries(key)
    .map(([k, v]) => `${k}_${String(v)}`)
    .join("_");
}
