/**
 * Filter compilation. A filter is split into
 *   - a fast part: top-level fields compared with scalars through $eq/$ne/$gt/$gte/$lt/$lte/$in/
 *     $nin/$exists, or matched by a string `$regex`, evaluated here directly on the stored
 *     document with MongoDB's type bracketing (no mingo involved); the same for dotted paths (and `null` equality) on
 *     documents where the path reads one value (no array on the way, or one it indexes by
 *     position), the rest of them left to mingo, and
 *   - a residual part handed to a compiled mingo `Query` over the numeric view of the document.
 * Compiling a mingo Query costs ~15 µs, so the common point filters of the scheduler
 * (`{_id, status}`) never touch mingo, and residual queries are cached by their canonical text.
 */
import { Query } from "mingo";
import { commandError } from "./errors.js";
import { canonInner, compareValues, isNumeric, isPlainObject, toView, typeRank, valuesEqual, type Doc } from "./values.js";

export interface Rec {
  /** canonKey(_id): the key of the document in its collection's primary map. */
  readonly id: string;
  /** The stored document in exact form. Never mutated after it is stored. */
  readonly doc: Doc;
  /** `doc` with numeric wrappers replaced by numbers (=== doc when it has none). */
  readonly view: Doc;
}

type Pred = (doc: Doc) => boolean;

export interface Matcher {
  /** True when the filter is empty: every document matches. */
  readonly matchesAll: boolean;
  test(rec: Rec): boolean;
}

const MINGO_OPTIONS = { scriptEnabled: false } as const;
const QUERY_CACHE_MAX = 512;
const queryCache = new Map<string, Query>();

/** A mingo Query for a filter in view form, compiled once per distinct filter text. */
export function mingoQuery(viewFilter: Doc): Query {
  const key = canonInner(viewFilter);
  const hit = queryCache.get(key);
  if (hit) {
    queryCache.delete(key);
    queryCache.set(key, hit); // LRU: move to the back
    return hit;
  }
  let q: Query;
  try {
    q = new Query(viewFilter, MINGO_OPTIONS);
  } catch (e) {
    throw translateMingoError(e);
  }
  if (queryCache.size >= QUERY_CACHE_MAX) queryCache.delete(queryCache.keys().next().value as string);
  queryCache.set(key, q);
  return q;
}

export function translateMingoError(e: unknown) {
  const msg = (e as Error)?.message ?? String(e);
  const unknownOp = /unknown (?:\w+ )?operator[: ]+'?(\$\w+)/i.exec(msg);
  if (unknownOp) return commandError("BadValue", `unknown operator: ${unknownOp[1]}`);
  return commandError("BadValue", msg.replace(/^mingo: /, ""));
}

/** A value the native predicates compare (string, number, boolean, date, numeric wrapper, ObjectId). */
export function isFastScalar(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "number":
    case "boolean":
      return true;
    case "object":
      if (v === null || Array.isArray(v) || v instanceof RegExp) return false;
      if (v instanceof Date) return true;
      return isNumeric(v) || (v as { _bsontype?: string })._bsontype === "ObjectId";
    default:
      return false;
  }
}

function eqPred(field: string, v: unknown): Pred {
  return (doc) => {
    const x = doc[field];
    if (Array.isArray(x)) {
      for (const el of x) if (valuesEqual(el, v)) return true;
      return false;
    }
    return valuesEqual(x, v);
  };
}

function cmpPred(field: string, v: unknown, ok: (c: number) => boolean): Pred {
  const rank = typeRank(v);
  return valueOrElement(field, (x) => typeRank(x) === rank && ok(compareValues(x, v)));
}

function inPred(field: string, values: unknown[]): Pred {
  const preds = values.map((v) => eqPred(field, v));
  return (doc) => {
    for (const p of preds) if (p(doc)) return true;
    return false;
  };
}

/**
 * `$type` tests judged here (by alias or number, or a list of them), for types whose exact form is unambiguous; the
 * numeric types (a Double may be a JS number or a wrapper, see values.ts), arrays and the rest go
 * to mingo. A partial index's `{dagRunId: {$type: "string"}}` is judged for every insert.
 */
const TYPE_TESTS = new Map<string | number, (x: unknown) => boolean>();
for (const [alias, code, is] of [
  ["string", 2, (x: unknown) => typeof x === "string"],
  ["objectId", 7, (x: unknown) => typeof x === "object" && x !== null && (x as { _bsontype?: string })._bsontype === "ObjectId"],
  ["bool", 8, (x: unknown) => typeof x === "boolean"],
  ["date", 9, (x: unknown) => x instanceof Date],
  ["null", 10, (x: unknown) => x === null],
] as const) {
  TYPE_TESTS.set(alias, is);
  TYPE_TESTS.set(code, is);
}

/**
 * The field's value passes `is`, or it is an array with an element that does: how MongoDB judges a
 * comparison or `$type` on a field holding an array.
 */
function valueOrElement(field: string, is: (x: unknown) => boolean): Pred {
  return (doc) => {
    const x = doc[field];
    if (Array.isArray(x)) {
      for (const el of x) if (is(el)) return true;
      return false;
    }
    return is(x);
  };
}

/** `$regex` on a field: a string it matches, or an array holding one (or holding an array holding one), as mingo judges it. */
function regexPred(field: string, re: RegExp): Pred {
  const test = (x: unknown): boolean => typeof x === "string" && re.test(x);
  return (doc) => {
    const x = doc[field];
    if (!Array.isArray(x)) return test(x);
    for (const el of x) if (test(el)) return true;
    for (const el of x) if (Array.isArray(el) && el.some(test)) return true;
    return false;
  };
}

/** Fast predicate for `field: cond`, or null when the condition needs mingo. */
function fastField(field: string, cond: unknown): Pred | null {
  if (field.includes(".") || field.startsWith("$")) return null;
  if (isFastScalar(cond)) return eqPred(field, cond);
  if (!isPlainObject(cond)) return null;
  const keys = Object.keys(cond);
  if (keys.length === 0) return null;
  const preds: Pred[] = [];
  for (const op of keys) {
    const v = cond[op];
    switch (op) {
      case "$eq":
        if (!isFastScalar(v)) return null;
        preds.push(eqPred(field, v));
        break;
      case "$ne": {
        if (!isFastScalar(v)) return null;
        const p = eqPred(field, v);
        preds.push((d) => !p(d));
        break;
      }
      case "$gt":
      case "$gte":
      case "$lt":
      case "$lte": {
        if (!isFastScalar(v)) return null;
        const ok =
          op === "$gt" ? (c: number) => c > 0 : op === "$gte" ? (c: number) => c >= 0 : op === "$lt" ? (c: number) => c < 0 : (c: number) => c <= 0;
        preds.push(cmpPred(field, v, ok));
        break;
      }
      case "$in":
      case "$nin": {
        if (!Array.isArray(v) || !v.every(isFastScalar)) return null;
        const p = inPred(field, v);
        preds.push(op === "$in" ? p : (d) => !p(d));
        break;
      }
      case "$type": {
        const tests = (Array.isArray(v) ? v : [v]).map((t) => TYPE_TESTS.get(typeof t === "number" || typeof t === "string" ? t : ""));
        if (tests.length === 0 || tests.some((is) => is === undefined)) return null;
        const all = tests as Array<(x: unknown) => boolean>;
        preds.push(valueOrElement(field, all.length === 1 ? all[0] : (x) => all.some((is) => is(x))));
        break;
      }
      case "$regex": {
        // As mingo reads it (new RegExp(pattern, options), stateless flags only), on strings and
        // arrays of them; any other form (a BSON regex, flags g/y/x, a bad pattern) goes to mingo.
        const options = (cond as Doc).$options ?? "";
        if (typeof v !== "string" || typeof options !== "string" || !/^[ims]*$/.test(options)) return null;
        let re: RegExp;
        try {
          re = new RegExp(v, options);
        } catch {
          return null;
        }
        preds.push(regexPred(field, re));
        break;
      }
      case "$options":
        if (!("$regex" in (cond as Doc))) return null;
        break;
      case "$exists": {
        const want = !(v === false || v === 0 || v === null);
        preds.push((d) => (d[field] !== undefined) === want);
        break;
      }
      default:
        return null;
    }
  }
  return preds.length === 1 ? preds[0] : (d) => preds.every((p) => p(d));
}

/** The value a dotted path reads where arrays on the way would make it several (each element's field). */
const SEVERAL = Symbol("several values");

/**
 * The one value `parts` reads in `doc` (undefined: missing), or SEVERAL where an array on the way
 * makes it read a field of each element. A numeric part reads an array's element at that position,
 * as mingo does (the property test in test/dotted-match.test.ts holds the two to the same answers);
 * it costs no scan of the array, so a write to one of 1,000 elements is matched in a few steps.
 */
function pathValue(doc: Doc, parts: readonly string[]): unknown {
  let cur: unknown = doc;
  for (const part of parts) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(part)) return SEVERAL;
      cur = cur[Number(part)];
    } else if (isPlainObject(cur)) {
      cur = cur[part];
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** `field: null` (or `$eq: null`) on one value: null, missing, or an array holding null. */
const nullPred: Pred = (d) => d.v === null || d.v === undefined || (Array.isArray(d.v) && d.v.includes(null));

/**
 * Fast predicate for a dotted `field: cond` (or null when it needs mingo): `cond` judged as for a
 * top-level field on the value the path reads, and by mingo on documents where it reads several.
 */
function dottedField(field: string, cond: unknown): ((rec: Rec) => boolean) | null {
  if (!field.includes(".") || field.startsWith("$")) return null;
  const parts = field.split(".");
  if (parts.some((p) => p === "" || p.startsWith("$"))) return null;
  const isNull = cond === null || (isPlainObject(cond) && Object.keys(cond).length === 1 && (cond as Doc).$eq === null);
  const leaf = isNull ? nullPred : fastField("v", cond);
  if (!leaf) return null;
  let several: Query | null = null;
  return (rec) => {
    const v = pathValue(rec.doc, parts);
    if (v === SEVERAL) return (several ??= mingoQuery(toView({ [field]: cond }))).test(rec.view);
    return leaf({ v });
  };
}

/** Flattens top-level `$and` of plain documents into one list of (field, condition) pairs. */
export function conjuncts(filter: Doc, out: [string, unknown][]): void {
  for (const k of Object.keys(filter)) {
    const v = filter[k];
    if (k === "$and" && Array.isArray(v) && v.length > 0 && v.every(isPlainObject)) {
      for (const sub of v as Doc[]) conjuncts(sub, out);
    } else {
      out.push([k, v]);
    }
  }
}

export function compileFilter(filter: Doc | undefined | null): Matcher {
  if (filter == null || Object.keys(filter).length === 0) return { matchesAll: true, test: () => true };
  const fast: Pred[] = [];
  const dotted: Array<(rec: Rec) => boolean> = [];
  const residual: Doc[] = [];
  const parts: [string, unknown][] = [];
  conjuncts(filter, parts);
  for (const [field, cond] of parts) {
    const p = fastField(field, cond);
    if (p) {
      fast.push(p);
      continue;
    }
    const d = dottedField(field, cond);
    if (d) dotted.push(d);
    else residual.push({ [field]: cond });
  }
  let slow: Query | null = null;
  if (residual.length > 0) {
    const viewFilter = toView(residual.length === 1 ? residual[0] : { $and: residual });
    slow = mingoQuery(viewFilter);
  }
  const q = slow;
  return {
    matchesAll: false,
    test(rec: Rec): boolean {
      for (const p of fast) if (!p(rec.doc)) return false;
      for (const p of dotted) if (!p(rec)) return false;
      return q === null || q.test(rec.view);
    },
  };
}

/** Equality constraints usable for index lookups: field → candidate values. */
export function equalityConstraints(filter: Doc | undefined | null): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  if (!filter) return out;
  const parts: [string, unknown][] = [];
  conjuncts(filter, parts);
  for (const [field, cond] of parts) {
    if (field.startsWith("$")) continue;
    let values: unknown[] | null = null;
    if (isIndexableValue(cond)) values = [cond];
    else if (isPlainObject(cond)) {
      const keys = Object.keys(cond);
      if (keys.length >= 1 && keys.every((k) => k.startsWith("$"))) {
        if ("$eq" in cond && isIndexableValue(cond.$eq)) values = [cond.$eq];
        else if ("$in" in cond && Array.isArray(cond.$in) && cond.$in.every(isIndexableValue)) values = cond.$in as unknown[];
      } else if (keys.length > 0 && !keys.some((k) => k.startsWith("$"))) {
        values = [cond]; // embedded document equality
      }
    }
    if (values === null) continue;
    const prev = out.get(field);
    // Two equality conditions on one field: keep the smaller candidate list (both must hold).
    if (!prev || values.length < prev.length) out.set(field, values);
  }
  return out;
}

/** A value whose equality matches can be found by hash key (arrays and regexes cannot). */
function isIndexableValue(v: unknown): boolean {
  if (Array.isArray(v) || v instanceof RegExp) return false;
  if (isPlainObject(v)) return !Object.keys(v).some((k) => k.startsWith("$"));
  return (v as { _bsontype?: string } | null)?._bsontype !== "BSONRegExp";
}
