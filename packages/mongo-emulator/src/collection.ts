/**
 * One collection: documents keyed by canonical `_id`, its secondary indexes, and the three
 * primitive mutations (insert, replace, remove). Every mutation validates first and commits
 * second, with no await in between, so a command that fails leaves the collection unchanged and
 * no other client can observe a half-applied write.
 */
import { Binary, UUID } from "bson";
import { commandError } from "./errors.js";
import { formatValue } from "./format.js";
import { duplicateKeyError, Index, pathValues, type IndexSpec } from "./indexes.js";
import type { Rec } from "./matcher.js";
import { canonInner, canonKey, hasNumericWrappers, isNumeric, isPlainObject, toNumber, toView, type Doc } from "./values.js";

export interface CollectionHooks {
  /** Called after each committed change (null while replaying the journal). */
  journal: ((record: Doc) => void) | null;
  stats: { docsExamined: number; documents: DocumentCounts; writtenByNs: Map<string, number> };
}

/** Documents written since start, as MongoDB's `serverStatus().metrics.document` counts them. */
export interface DocumentCounts {
  inserted: number;
  updated: number;
  deleted: number;
}

export const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: "_id_" };

/**
 * A stored document's record. Its numeric view is made when first asked for (a residual filter,
 * an aggregation): most writes are matched on the exact form alone, and a scan of a large
 * document for numeric wrappers on every write of a few of its fields would cost more than the
 * write.
 */
class StoredRec implements Rec {
  private viewDoc: Doc | undefined;
  constructor(
    readonly id: string,
    readonly doc: Doc,
  ) {}
  get view(): Doc {
    return (this.viewDoc ??= hasNumericWrappers(this.doc) ? toView(this.doc) : this.doc);
  }
}

export function makeRec(doc: Doc): Rec {
  return new StoredRec(canonKey(doc._id), doc);
}

/** Checks a document may be stored; returns it with `_id` as its first field. */
export function prepareForStorage(doc: Doc): Doc {
  const id = doc._id;
  if (id === undefined) throw commandError("InvalidIdField", "document is missing its _id");
  if (Array.isArray(id)) throw commandError("InvalidIdField", "The '_id' value cannot be of type array");
  if (id instanceof RegExp) throw commandError("InvalidIdField", "The '_id' value cannot be of type regex");
  if (isPlainObject(id)) {
    for (const k of Object.keys(id)) {
      if (k.startsWith("$")) throw commandError("DollarPrefixedFieldName", `_id fields may not contain '$'-prefixed fields: ${k} is not valid for storage.`);
    }
  }
  let first: string | undefined;
  for (const k in doc) {
    first ??= k;
    if (k.charCodeAt(0) === 36 /* $ */) throw commandError("DollarPrefixedFieldName", `Document can't have $ prefixed field names: ${k}`);
    if (k.length === 0) throw commandError("EmptyFieldName", "Document can't have an empty field name");
  }
  if (first === "_id") return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}

export class Collection {
  readonly docs = new Map<string, Rec>();
  readonly indexes: Index[] = [];
  readonly uuid: Binary;

  constructor(
    readonly db: string,
    readonly name: string,
    private readonly hooks: CollectionHooks,
    readonly options: Doc = {},
    uuid?: Binary,
  ) {
    this.uuid = uuid ?? new UUID();
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  /**
   * Earliest time (ms) at which a document may expire through a TTL index. Lowered by every
   * write, recomputed by each sweep that runs, so the TTL monitor scans a collection only when
   * something is actually due (Kairos keeps finished runs for years).
   */
  private ttlNextDue = Infinity;

  private noteTtl(rec: Rec): void {
    for (const ix of this.indexes) {
      if (ix.ttlSeconds === null) continue;
      const due = ttlDue(rec, ix);
      if (due < this.ttlNextDue) this.ttlNextDue = due;
    }
  }

  /** Deletes documents whose TTL index date is past; returns how many. */
  expire(nowMs: number): number {
    if (nowMs < this.ttlNextDue) return 0;
    const ttl = this.indexes.filter((ix) => ix.ttlSeconds !== null);
    const expired: Rec[] = [];
    let next = Infinity;
    for (const rec of this.docs.values()) {
      let due = Infinity;
      for (const ix of ttl) if (ix.covers(rec.id)) due = Math.min(due, ttlDue(rec, ix));
      if (due <= nowMs) expired.push(rec);
      else if (due < next) next = due;
    }
    for (const rec of expired) this.remove(rec);
    this.ttlNextDue = next;
    return expired.length;
  }

  private countWrite(): void {
    const by = this.hooks.stats.writtenByNs;
    by.set(this.ns, (by.get(this.ns) ?? 0) + 1);
  }

  private journal(record: Doc): void {
    this.hooks.journal?.(record);
  }

  /** Inserts a document that already has an `_id`. Throws DuplicateKey & co. without side effects. */
  insert(doc: Doc): Rec {
    const stored = prepareForStorage(doc);
    const rec = makeRec(stored);
    if (this.docs.has(rec.id)) throw duplicateKeyError(this.ns, "_id_", { _id: 1 }, { _id: stored._id });
    const entries = this.indexes.map((ix) => ix.entryFor(rec));
    for (let i = 0; i < this.indexes.length; i++) this.indexes[i].checkUnique(entries[i], rec, this.ns);
    this.docs.set(rec.id, rec);
    for (let i = 0; i < this.indexes.length; i++) this.indexes[i].add(rec.id, entries[i], rec.doc);
    this.noteTtl(rec);
    this.hooks.stats.documents.inserted++;
    this.countWrite();
    this.journal({ o: "i", ns: this.ns, d: stored });
    return rec;
  }

  /**
   * Replaces a stored document by a new version with the same `_id`. `touched`, when given, names
   * every top-level field that may differ from the old version: indexes on other fields keep
   * their entries without being recomputed.
   */
  replace(old: Rec, doc: Doc, touched?: ReadonlySet<string>): Rec {
    const stored = prepareForStorage(doc);
    const rec = makeRec(stored);
    if (rec.id !== old.id) throw commandError("ImmutableField", "Performing an update on the path '_id' would modify the immutable field '_id'");
    const changed: { ix: Index; entry: ReturnType<Index["entryFor"]> }[] = [];
    for (const ix of this.indexes) {
      if (touched && !ix.touchedBy(touched)) continue;
      const entry = ix.entryFor(rec);
      if (ix.sameEntry(rec.id, entry)) continue;
      ix.checkUnique(entry, rec, this.ns);
      changed.push({ ix, entry });
    }
    for (const { ix, entry } of changed) {
      ix.remove(rec.id);
      ix.add(rec.id, entry, rec.doc);
    }
    this.docs.set(rec.id, rec);
    this.noteTtl(rec);
    this.hooks.stats.documents.updated++;
    this.countWrite();
    this.journal({ o: "u", ns: this.ns, d: stored });
    return rec;
  }

  remove(rec: Rec): void {
    if (!this.docs.delete(rec.id)) return;
    for (const ix of this.indexes) ix.remove(rec.id);
    this.hooks.stats.documents.deleted++;
    this.countWrite();
    this.journal({ o: "r", ns: this.ns, id: rec.doc._id });
  }

  /** An index by name, or by key pattern. */
  findIndex(nameOrKey: string | Doc): Index | undefined {
    if (typeof nameOrKey === "string") return this.indexes.find((ix) => ix.name === nameOrKey);
    const want = keyText(nameOrKey);
    return this.indexes.find((ix) => keyText(ix.spec.key) === want);
  }

  /**
   * Builds an index over the existing documents. Returns false if an identical index exists;
   * throws IndexOptionsConflict / IndexKeySpecsConflict like MongoDB for clashing definitions,
   * and DuplicateKey if a unique index cannot be built over the current data.
   */
  createIndex(spec: IndexSpec): boolean {
    if (keyText(spec.key) === keyText(ID_INDEX_SPEC.key)) {
      if (spec.unique || spec.sparse || spec.partialFilterExpression || spec.expireAfterSeconds !== undefined) {
        throw commandError("CannotCreateIndex", "The _id index cannot have unique, sparse, partial or TTL options");
      }
      return false;
    }
    const sameNamePrefix =
      "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation.";
    const byName = this.findIndex(spec.name) ?? (spec.name === "_id_" ? new Index(ID_INDEX_SPEC) : undefined);
    if (byName) {
      if (sameSpec(byName.spec, spec)) return false;
      const code = keyText(byName.spec.key) === keyText(spec.key) ? "IndexOptionsConflict" : "IndexKeySpecsConflict";
      throw commandError(code, `${sameNamePrefix} Requested index: ${formatValue(spec)}, existing index: ${formatValue(byName.spec)}`);
    }
    const byKey = this.indexes.find(
      (ix) =>
        keyText(ix.spec.key) === keyText(spec.key) &&
        canonInner(ix.spec.partialFilterExpression ?? null) === canonInner(spec.partialFilterExpression ?? null),
    );
    if (byKey) {
      throw commandError(
        "IndexOptionsConflict",
        sameOptions(byKey.spec, spec)
          ? `Index already exists with a different name: ${byKey.name}`
          : `An equivalent index already exists with a different name and options. Requested index: ${formatValue(spec)}, existing index: ${formatValue(byKey.spec)}`,
      );
    }
    const ix = new Index(spec);
    for (const rec of this.docs.values()) {
      const entry = ix.entryFor(rec);
      ix.checkUnique(entry, rec, this.ns);
      ix.add(rec.id, entry, rec.doc);
    }
    this.indexes.push(ix);
    if (ix.ttlSeconds !== null) this.ttlNextDue = 0; // scan once to find the first due date
    this.journal({ o: "ci", ns: this.ns, spec: spec as unknown as Doc });
    return true;
  }

  dropIndex(ix: Index): void {
    const i = this.indexes.indexOf(ix);
    if (i < 0) return;
    this.indexes.splice(i, 1);
    ix.clear();
    this.journal({ o: "di", ns: this.ns, name: ix.name });
  }

  /** All index specifications, `_id_` first, as listIndexes reports them. */
  indexSpecs(): IndexSpec[] {
    return [ID_INDEX_SPEC, ...this.indexes.map((ix) => ix.spec)];
  }
}

/**
 * When a document expires through a TTL index: its earliest date at the indexed path plus
 * expireAfterSeconds. Documents without a date there never expire (Infinity), as in MongoDB.
 */
function ttlDue(rec: Rec, ix: Index): number {
  let earliest = Infinity;
  for (const v of pathValues(rec.doc, ix.fields[0])) if (v instanceof Date) earliest = Math.min(earliest, v.getTime());
  return earliest + ix.ttlSeconds! * 1000;
}

function keyText(key: Doc): string {
  const out: Doc = {};
  for (const [k, v] of Object.entries(key)) out[k] = isNumeric(v) ? toNumber(v) : v;
  return JSON.stringify(out);
}

function sameOptions(a: IndexSpec, b: IndexSpec): boolean {
  return (
    !!a.unique === !!b.unique &&
    !!a.sparse === !!b.sparse &&
    canonInner(a.partialFilterExpression ?? null) === canonInner(b.partialFilterExpression ?? null) &&
    (a.expireAfterSeconds ?? null) === (b.expireAfterSeconds ?? null)
  );
}

function sameSpec(a: IndexSpec, b: IndexSpec): boolean {
  return a.name === b.name && keyText(a.key) === keyText(b.key) && sameOptions(a, b);
}
