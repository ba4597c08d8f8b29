/**
 * Secondary indexes: hash maps from canonical key strings to document ids, one map per key
 * prefix length so that an equality on the first field(s) of a compound index narrows candidates
 * without a scan (each map built when first probed). A sorted find may also walk an index in its
 * order (ordered.ts), once asked to: its keys are then kept in order too. Ranges do not use indexes (documented limitation).
 *
 * Key extraction follows MongoDB's multikey rules: a path that crosses an array fans out over
 * its elements, an array at the end of the path contributes each element, and a missing field
 * is keyed as null. A document with arrays in two fields of one compound index is refused
 * (CannotIndexParallelArrays), as MongoDB does.
 */
import { Query } from "mingo";
import { commandError, CommandError, ErrorCode } from "./errors.js";
import { formatKeyValue } from "./format.js";
import { compileFilter, translateMingoError, type Matcher, type Rec } from "./matcher.js";
import { OrderedKeys, scalarTuple } from "./ordered.js";
import { canonInner, canonKey, isPlainObject, toView, type Doc } from "./values.js";

/** Listed values (`$in`) impliedBy tests at most per field. */
const MAX_IMPLIED_PROBES = 64;

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

/**
 * A document's keys in one index, compact because there is one per document per index:
 *   string      single-field index, one key;
 *   string[]    compound index, one key per prefix level;
 *   string[][]  multikey: the distinct keys of each prefix level.
 */
type Entry = string | string[] | string[][];

function fullLevelKeys(e: Entry): readonly string[] {
  if (typeof e === "string") return [e];
  const last = e[e.length - 1];
  return typeof last === "string" ? [last] : last;
}

function entryEquals(a: Entry, b: Entry): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "string" || typeof y === "string") {
      if (x !== y) return false;
    } else if (x.length !== y.length || x.some((k, j) => k !== y[j])) return false;
  }
  return true;
}

/** Document ids under one key; a lone id is stored bare (most keys of most indexes). */
type Ids = string | Set<string>;

export class Index {
  readonly spec: IndexSpec;
  readonly fields: string[];
  /** `fields` split at the dots, once. */
  private readonly paths: string[][];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly ttlSeconds: number | null;
  private readonly partial: Query | null;
  /** The partial filter compiled as a query's (its plain conditions judged without the document's numeric view). */
  private readonly partialMatch: Matcher | null;
  /** The partial filter by top-level field (its conjuncts), when it names only plain fields (see impliedBy). */
  private readonly partialFields: Array<{ field: string; query: Query }> | null;
  /**
   * levels[i]: key of the first i+1 fields → ids of documents with that key. Built from `entries`
   * when first probed (a unique index's full level at once, for its check) and kept in step after:
   * a level nothing probes costs writes nothing (`{ownerId: 1, scheduledFor: -1, _id: -1}` exists
   * to be walked in order; its two-field level, one key per document, would only slow inserts).
   */
  private readonly levels: Array<Map<string, Ids> | null>;
  private readonly entries = new Map<string, Entry>();
  /** Top-level fields whose values decide this index's entry for a document (null: any field may). */
  private readonly dependsOn: ReadonlySet<string> | null;
  /** Each field's direction, when every field is 1 or -1 (not hashed) and the index is not sparse: it may be walked in order. */
  readonly dirs: readonly (1 | -1)[] | null;
  /** The keys in index order, once an ordered scan asked for them (see ordered); kept from then on. */
  private orderedKeys: OrderedKeys | null = null;
  /** False once a document had an array on an indexed path: the index is multikey, never walked in order. */
  private orderable: boolean;

  constructor(spec: IndexSpec) {
    this.spec = spec;
    this.fields = Object.keys(spec.key);
    this.paths = this.fields.map((f) => f.split("."));
    const pfe = spec.partialFilterExpression as Doc | undefined;
    const pfeTop = pfe ? Object.keys(pfe) : [];
    this.dependsOn = pfeTop.some((k) => k.startsWith("$")) ? null : new Set([...this.paths.map((p) => p[0]!), ...pfeTop.map((k) => k.split(".")[0]!)]);
    this.unique = spec.unique === true;
    this.sparse = spec.sparse === true;
    this.ttlSeconds = typeof spec.expireAfterSeconds === "number" ? spec.expireAfterSeconds : null;
    try {
      this.partial = spec.partialFilterExpression ? new Query(toView(spec.partialFilterExpression), { scriptEnabled: false }) : null;
    } catch (e) {
      throw translateMingoError(e);
    }
    this.partialMatch = pfe ? compileFilter(pfe) : null;
    this.partialFields =
      !pfe || pfeTop.some((k) => k.startsWith("$") || k.includes(".")) ? null : pfeTop.map((field) => ({ field, query: new Query(toView({ [field]: pfe[field] }), { scriptEnabled: false }) }));
    this.levels = this.fields.map((_, i) => (this.unique && i === this.fields.length - 1 ? new Map() : null));
    const dirs = this.fields.map((f) => spec.key[f]);
    this.dirs = !this.sparse && dirs.every((d) => d === 1 || d === -1) ? (dirs as (1 | -1)[]) : null;
    this.orderable = this.dirs !== null;
  }

  get name(): string {
    return this.spec.name;
  }

  /** Keys the document would have in this index, or null if it is not indexed (sparse/partial). */
  entryFor(rec: Rec): Entry | null {
    if (this.partial && !this.inPartial(rec)) return null;
    const fast = this.scalarEntry(rec.doc);
    if (fast !== undefined) return fast;
    const tuples = keyTuples(rec.doc, this.fields, this.name);
    if (this.sparse && tuples.every((t) => t.every((v) => v === MISSING))) return null;
    if (tuples.length === 1) {
      const keys = levelKeys(tuples[0]);
      return keys.length === 1 ? keys[0] : keys;
    }
    const levels: string[][] = this.fields.map(() => []);
    for (const t of tuples) {
      const keys = levelKeys(t);
      for (let i = 0; i < keys.length; i++) if (!levels[i].includes(keys[i])) levels[i].push(keys[i]);
    }
    return levels;
  }

  /**
   * Whether the document passes the partial filter, as MongoDB judges it: an array field passes
   * when the array itself or one of its elements does (mingo judges `$type` on the whole array
   * only). The element rule is what makes impliedBy sound for documents holding arrays.
   */
  private inPartial(rec: Rec): boolean {
    if (this.partialMatch!.test(rec)) return true;
    const fields = this.partialFields;
    if (!fields || !fields.some((f) => Array.isArray(rec.doc[f.field]))) return false;
    return fields.every(({ field, query }) => {
      const v = rec.doc[field];
      return (Array.isArray(v) ? [v, ...v] : [v]).some((o) => query.test(toView(o === undefined ? {} : { [field]: o })));
    });
  }

  /**
   * The common case without arrays on the indexed paths: keys straight from the values, without
   * building tuples. Returns undefined when an array is met (multikey: use the general path).
   */
  private scalarEntry(doc: Doc): Entry | null | undefined {
    const n = this.paths.length;
    let allMissing = true;
    let inner = "";
    let keys: string[] | null = null;
    for (let i = 0; i < n; i++) {
      const parts = this.paths[i];
      let v: unknown = doc;
      for (let j = 0; j < parts.length && v !== undefined; j++) {
        if (Array.isArray(v)) return undefined; // fans out: multikey
        if (!isPlainObject(v)) {
          v = undefined;
          break;
        }
        v = v[parts[j]];
      }
      if (Array.isArray(v)) return undefined;
      if (v !== undefined) allMissing = false;
      if (n === 1) {
        if (this.sparse && allMissing) return null;
        return canonKey(v);
      }
      if (i === 0) {
        keys = [canonKey(v)];
        inner = canonInner(v);
      } else {
        inner += "," + canonInner(v);
        keys!.push(inner);
      }
    }
    if (this.sparse && allMissing) return null;
    return keys!;
  }

  /** Throws DuplicateKey if `entry` (the keys of `rec`) collides with another document. */
  checkUnique(entry: Entry | null, rec: Rec, ns: string): void {
    if (!this.unique || entry === null) return;
    const map = this.level(this.levels.length - 1);
    for (const key of fullLevelKeys(entry)) {
      const ids = map.get(key);
      if (ids === undefined) continue;
      const clash = typeof ids === "string" ? ids !== rec.id : ids.size > 1 || !ids.has(rec.id);
      if (clash) throw this.duplicateError(rec, key, ns);
    }
  }

  private duplicateError(rec: Rec, key: string, ns: string): CommandError {
    const tuples = keyTuples(rec.doc, this.fields, this.name);
    const last = this.fields.length - 1;
    const tuple = tuples.find((t) => levelKeys(t)[last] === key) ?? tuples[0];
    const keyValue: Doc = {};
    this.fields.forEach((f, i) => (keyValue[f] = tuple[i] === MISSING ? null : tuple[i]));
    return duplicateKeyError(ns, this.name, this.spec.key, keyValue);
  }

  /** Adds the document `doc` (id `id`) under `entry`, its keys (entryFor). */
  add(id: string, entry: Entry | null, doc: Doc): void {
    if (entry === null) return;
    if (this.orderedKeys) {
      const key = scalarTuple(doc, this.paths);
      if (!key || !this.orderedKeys.insert(id, key)) this.notOrderable();
    } else if (this.orderable && typeof entry !== "string" && typeof entry[0] !== "string") {
      this.orderable = false; // multikey
    }
    this.entries.set(id, entry);
    if (typeof entry === "string") this.addKey(0, entry, id);
    else if (typeof entry[0] === "string") for (let i = 0; i < entry.length; i++) this.addKey(i, entry[i] as string, id);
    else for (let i = 0; i < entry.length; i++) for (const k of entry[i] as string[]) this.addKey(i, k, id);
  }

  /** Level `i`'s map, built from the entries on first use. */
  private level(i: number): Map<string, Ids> {
    const built = this.levels[i];
    if (built) return built;
    const map = new Map<string, Ids>();
    this.levels[i] = map;
    for (const [id, entry] of this.entries) {
      if (typeof entry === "string") this.addKey(0, entry, id);
      else if (typeof entry[0] === "string") this.addKey(i, entry[i] as string, id);
      else for (const k of entry[i] as string[]) this.addKey(i, k, id);
    }
    return map;
  }

  private addKey(level: number, key: string, id: string): void {
    const map = this.levels[level];
    if (!map) return;
    const ids = map.get(key);
    if (ids === undefined) map.set(key, id);
    else if (typeof ids === "string") {
      if (ids !== id) map.set(key, new Set([ids, id]));
    } else ids.add(id);
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    if (this.orderedKeys && !this.orderedKeys.delete(id)) this.notOrderable();
    if (typeof entry === "string") this.removeKey(0, entry, id);
    else if (typeof entry[0] === "string") for (let i = 0; i < entry.length; i++) this.removeKey(i, entry[i] as string, id);
    else for (let i = 0; i < entry.length; i++) for (const k of entry[i] as string[]) this.removeKey(i, k, id);
  }

  private removeKey(level: number, key: string, id: string): void {
    const map = this.levels[level];
    if (!map) return;
    const ids = map.get(key);
    if (ids === undefined) return;
    if (typeof ids === "string") {
      if (ids === id) map.delete(key);
      return;
    }
    ids.delete(id);
    if (ids.size === 1) map.set(key, ids.values().next().value as string);
    else if (ids.size === 0) map.delete(key);
  }

  /** Whether the document is in this index (false for documents a sparse/partial index skips). */
  covers(id: string): boolean {
    return this.entries.has(id);
  }

  /** False when a change confined to these top-level fields cannot change any document's entry. */
  touchedBy(fields: ReadonlySet<string>): boolean {
    if (this.dependsOn === null) return true;
    for (const f of fields) if (this.dependsOn.has(f)) return true;
    return false;
  }

  /** True when the document's keys are unchanged, so an update needs no index maintenance. */
  sameEntry(id: string, entry: Entry | null): boolean {
    const old = this.entries.get(id);
    if (old === undefined || entry === null) return old === undefined && entry === null;
    return entryEquals(old, entry);
  }

  /** Ids of documents whose first `values.length` indexed fields equal these values. */
  lookup(values: unknown[]): Iterable<string> {
    const keys = levelKeys(values);
    const ids = this.level(values.length - 1).get(keys[keys.length - 1]);
    if (ids === undefined) return [];
    return typeof ids === "string" ? [ids] : ids;
  }

  /** How many documents have these values in the first `values.length` indexed fields (none given: every indexed document). */
  count(values: unknown[]): number {
    if (values.length === 0) return this.entries.size;
    const keys = levelKeys(values);
    const ids = this.level(values.length - 1).get(keys[keys.length - 1]);
    if (ids === undefined) return 0;
    return typeof ids === "string" ? 1 : ids.size;
  }

  /**
   * The index's keys in its order, built from `docs` (the collection's) on first use and kept in
   * step with every change after; null when it cannot be walked in order (hashed, sparse, or
   * multikey: a document with an array on an indexed path).
   */
  ordered(docs: ReadonlyMap<string, Rec>): OrderedKeys | null {
    if (!this.orderable) return null;
    if (this.orderedKeys) return this.orderedKeys;
    const entries: Array<{ id: string; key: unknown[] }> = [];
    for (const id of this.entries.keys()) {
      const rec = docs.get(id);
      const key = rec ? scalarTuple(rec.doc, this.paths) : null;
      if (!key) return this.notOrderable();
      entries.push({ id, key });
    }
    this.orderedKeys = new OrderedKeys(this.dirs!, entries);
    return this.orderedKeys;
  }

  private notOrderable(): null {
    this.orderable = false;
    this.orderedKeys = null;
    return null;
  }

  /** Whether an equality lookup finds every match (sparse and partial indexes skip documents). */
  canAnswerEquality(values: unknown[]): boolean {
    if (this.sparse && values.some((v) => v === null || v === undefined)) return false;
    return true;
  }

  /**
   * Whether every document a query with these equality conditions matches is in this index — as
   * MongoDB decides before it uses a partial index: the query must imply the filter. Decided here
   * for filters whose every top-level field the query pins to listed values (at most
   * MAX_IMPLIED_PROBES combinations): a matching document holds one of those values there, so it
   * is indexed exactly when that value passes the filter. The operators MongoDB allows in a
   * partial filter (equality, $exists: true, $gt/$gte/$lt/$lte, $type, $in) hold for an array
   * when they hold for one of its elements, so an array field holding the value is indexed too.
   * Anything else (a `$`-operator or dotted path at the top): not implied, the index is not used.
   */
  impliedBy(eq: ReadonlyMap<string, unknown[]>): boolean {
    if (!this.partial) return true;
    const fields = this.partialFields;
    if (!fields) return false;
    return fields.every(({ field, query }) => {
      const values = eq.get(field);
      return values !== undefined && values.length <= MAX_IMPLIED_PROBES && values.every((v) => query.test(toView({ [field]: v })));
    });
  }

  clear(): void {
    this.entries.clear();
    this.orderedKeys = null;
    for (const m of this.levels) m?.clear();
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
