/**
 * The update language: operator updates ($set, $inc, $push ... with positional `$`, `$[]` and
 * `$[<id>]` + arrayFilters), replacement documents and pipeline updates.
 *
 * Operator updates are implemented here rather than with mingo's updater because they must keep
 * BSON numeric types exact (Int32 + Int32 overflowing into Long, Long arithmetic beyond 2^53,
 * doubles staying doubles) and must fail with MongoDB's error codes. mingo is still used for the
 * query parts: `$pull` conditions, arrayFilters, the positional `$` match and pipeline updates.
 *
 * Invariant: `applyUpdate` mutates only the document it is given, which callers obtain with
 * `cloneValue` from the stored one; the stored document is swapped in only after every check
 * (immutable `_id`, unique indexes) has passed, so a failed update leaves no trace.
 */
import { Aggregator } from "mingo";
import { Decimal128, Long, ObjectId, Timestamp } from "bson";
import { commandError, CommandError, ErrorCode } from "./errors.js";
import { formatValue } from "./format.js";
import { conjuncts, mingoQuery, translateMingoError } from "./matcher.js";
import {
  cloneValue,
  compareValues,
  isInt32Number,
  isNumeric,
  isPlainObject,
  makeDouble,
  sameTyped,
  toNumber,
  toView,
  valuesEqual,
  type Doc,
} from "./values.js";
import { sortComparator } from "./sort.js";

const OPERATORS = new Set([
  "$set",
  "$unset",
  "$inc",
  "$mul",
  "$min",
  "$max",
  "$currentDate",
  "$push",
  "$addToSet",
  "$pull",
  "$pullAll",
  "$pop",
  "$rename",
  "$setOnInsert",
  "$bit",
]);

const PIPELINE_STAGES = new Set(["$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith"]);

interface OpEntry {
  op: string;
  path: string;
  parts: string[];
  arg: unknown;
}

export type ParsedUpdate =
  | { kind: "ops"; entries: OpEntry[]; identifiers: Set<string> }
  | { kind: "replace"; doc: Doc }
  | { kind: "pipeline"; stages: Doc[] };

export interface UpdateContext {
  /** The query that selected the document (for the positional `$` operator). */
  filter: Doc | null;
  /** arrayFilters, keyed by identifier. */
  arrayFilters: Map<string, (element: unknown) => boolean>;
  /** True when the update runs on a document being inserted by an upsert ($setOnInsert applies). */
  inserting: boolean;
  now: Date;
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "missing";
  switch (typeof v) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "number":
      return isInt32Number(v) ? "int" : "double";
    default:
      break;
  }
  if (Array.isArray(v)) return "array";
  if (v instanceof Date) return "date";
  if (v instanceof RegExp) return "regex";
  switch ((v as { _bsontype?: string })._bsontype) {
    case undefined:
      return "object";
    case "Long":
      return "long";
    case "Double":
      return "double";
    case "Decimal128":
      return "decimal";
    case "ObjectId":
      return "objectId";
    case "Binary":
      return "binData";
    case "Timestamp":
      return "timestamp";
    default:
      return String((v as { _bsontype: string })._bsontype).toLowerCase();
  }
}

function comparePathParts(a: string[], b: string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) continue;
    const na = /^\d+$/.test(a[i]);
    const nb = /^\d+$/.test(b[i]);
    if (na && nb) return Number(a[i]) - Number(b[i]);
    return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

function splitPath(path: string): string[] {
  if (path.length === 0) throw commandError("EmptyFieldName", "An empty update path is not valid.");
  const parts = path.split(".");
  if (parts.some((p) => p.length === 0)) {
    throw commandError("EmptyFieldName", `The update path '${path}' contains an empty field name, which is not allowed.`);
  }
  return parts;
}

const IDENTIFIER = /^\$\[([a-z][a-zA-Z0-9]*)?\]$/;

/** Validates an update argument and classifies it as operators, replacement or pipeline. */
export function parseUpdate(u: unknown): ParsedUpdate {
  if (Array.isArray(u)) {
    const stages = u as unknown[];
    for (const s of stages) {
      const keys = isPlainObject(s) ? Object.keys(s) : [];
      if (keys.length !== 1) throw commandError("FailedToParse", "Each pipeline update stage must be an object with exactly one field");
      if (!PIPELINE_STAGES.has(keys[0])) {
        throw commandError("InvalidOptions", `${keys[0]} is not allowed to be used within an update`);
      }
    }
    return { kind: "pipeline", stages: stages as Doc[] };
  }
  if (!isPlainObject(u)) throw commandError("FailedToParse", "Update argument must be either an object or an array");
  const keys = Object.keys(u);
  if (keys.length === 0 || !keys[0].startsWith("$")) {
    for (const k of keys) {
      if (k.startsWith("$")) {
        throw commandError(
          "DollarPrefixedFieldName",
          `The dollar ($) prefixed field '${k}' in '${k}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`,
        );
      }
    }
    return { kind: "replace", doc: u };
  }
  const entries: OpEntry[] = [];
  const identifiers = new Set<string>();
  for (const op of keys) {
    if (!OPERATORS.has(op)) {
      throw commandError(
        "FailedToParse",
        `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
      );
    }
    const arg = u[op];
    if (!isPlainObject(arg)) {
      throw commandError(
        "FailedToParse",
        `Modifiers operate on fields but we found type ${typeName(arg)} instead. For example: {$mod: {<field>: ...}} not {${op}: ${formatValue(arg)}}`,
      );
    }
    for (const path of Object.keys(arg)) {
      const parts = splitPath(path);
      for (const p of parts) {
        const m = IDENTIFIER.exec(p);
        if (m && m[1]) identifiers.add(m[1]);
        else if (p.startsWith("$") && p !== "$" && !m) {
          throw commandError("BadValue", `The path '${path}' contains an invalid positional operator '${p}'`);
        }
      }
      entries.push({ op, path, parts, arg: arg[path] });
      if (op === "$rename") {
        const to = arg[path];
        if (typeof to !== "string") {
          throw commandError("BadValue", `The 'to' field for $rename must be a string: ${path}: ${formatValue(to)}`);
        }
        if (to === path) throw commandError("BadValue", `The source and target field for $rename must differ: ${path}: ${JSON.stringify(to)}`);
        const toParts = splitPath(to);
        if ([...parts, ...toParts].some((p) => p.startsWith("$"))) {
          throw commandError("BadValue", `The source or target field for $rename may not be dynamic: ${path}: ${JSON.stringify(to)}`);
        }
        entries.push({ op: "$rename:to", path: to, parts: toParts, arg: path });
      }
    }
  }
  entries.sort((a, b) => comparePathParts(a.parts, b.parts));
  for (let i = 1; i < entries.length; i++) {
    const a = entries[i - 1].parts;
    const b = entries[i].parts;
    if (a.length <= b.length && a.every((p, j) => p === b[j])) {
      throw commandError("ConflictingUpdateOperators", `Updating the path '${entries[i].path}' would create a conflict at '${entries[i - 1].path}'`);
    }
  }
  return { kind: "ops", entries: entries.filter((e) => e.op !== "$rename:to"), identifiers };
}

/** Compiles arrayFilters and checks they match the identifiers used by the update. */
export function compileArrayFilters(filters: unknown, parsed: ParsedUpdate): Map<string, (e: unknown) => boolean> {
  const out = new Map<string, (e: unknown) => boolean>();
  if (filters === undefined || filters === null) filters = [];
  if (!Array.isArray(filters)) throw commandError("TypeMismatch", "arrayFilters must be an array");
  for (const f of filters as unknown[]) {
    if (!isPlainObject(f) || Object.keys(f).length === 0) {
      throw commandError("FailedToParse", "Cannot use an expression without a top-level field name in arrayFilters");
    }
    const ids = new Set(Object.keys(f).map((k) => k.split(".")[0]));
    if (ids.size !== 1) {
      const [a, b] = [...ids];
      throw commandError("FailedToParse", `Error parsing array filter :: caused by :: Expected a single top-level field name, found '${a}' and '${b}'`);
    }
    const id = [...ids][0];
    if (!/^[a-z][a-zA-Z0-9]*$/.test(id)) {
      throw commandError("BadValue", `Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${id}'`);
    }
    if (out.has(id)) throw commandError("FailedToParse", `Found multiple array filters with the same top-level field name ${id}`);
    const q = mingoQuery(toView(f));
    out.set(id, (e) => q.test({ [id]: toView(e) }));
  }
  const used = parsed.kind === "ops" ? parsed.identifiers : new Set<string>();
  for (const id of out.keys()) {
    if (!used.has(id)) throw commandError("FailedToParse", `The array filter for identifier '${id}' was not used in the update`);
  }
  for (const id of used) {
    if (!out.has(id)) throw commandError("BadValue", `No array filter found for identifier '${id}'`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Applying

/**
 * Applies an operator update or pipeline to `doc` in place (a private clone) or returns the
 * replacement. Returns the resulting document and whether anything changed.
 */
export function applyUpdate(doc: Doc, parsed: ParsedUpdate, ctx: UpdateContext): { doc: Doc; modified: boolean } {
  const before = doc._id;
  let out: Doc;
  let modified: boolean;
  switch (parsed.kind) {
    case "replace": {
      const repl = parsed.doc;
      if ("_id" in repl && !valuesEqual(repl._id, before)) {
        throw new CommandError(
          ErrorCode.ImmutableField,
          `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(repl._id)}`,
        );
      }
      out = before === undefined ? cloneValue(repl) : { _id: before, ...withoutId(cloneValue(repl)) };
      modified = !sameTyped(out, doc);
      return { doc: out, modified };
    }
    case "pipeline":
      out = applyPipeline(doc, parsed.stages, ctx.now);
      modified = !sameTyped(out, doc);
      break;
    case "ops":
      modified = applyOps(doc, parsed.entries, ctx);
      out = doc;
      break;
  }
  if (before !== undefined && (out._id === undefined || !valuesEqual(out._id, before))) {
    throw new CommandError(ErrorCode.ImmutableField, "Performing an update on the path '_id' would modify the immutable field '_id'");
  }
  return { doc: out, modified };
}

function withoutId(d: Doc): Doc {
  const { _id, ...rest } = d;
  void _id;
  return rest;
}

function applyPipeline(doc: Doc, stages: Doc[], now: Date): Doc {
  let result: unknown[];
  try {
    result = new Aggregator(toView(stages), { scriptEnabled: false, variables: { NOW: now } }).run([toView(doc)]);
  } catch (e) {
    throw translateMingoError(e);
  }
  const out = result[0];
  if (!isPlainObject(out)) throw commandError("BadValue", "pipeline update must produce a document");
  if (doc._id !== undefined && !("_id" in out)) {
    return { _id: doc._id, ...out };
  }
  return out;
}

function applyOps(doc: Doc, entries: OpEntry[], ctx: UpdateContext): boolean {
  let modified = false;
  const positional = new Map<string, number>();
  for (const e of entries) {
    if (e.op === "$setOnInsert" && !ctx.inserting) continue;
    const targets = e.parts.some((p) => p.startsWith("$")) ? expandPath(doc, e, ctx, positional) : [e.parts];
    for (const parts of targets) {
      if (applyOne(doc, e, parts, ctx)) modified = true;
    }
  }
  return modified;
}

/** Concrete paths for a path with positional parts. */
function expandPath(doc: Doc, e: OpEntry, ctx: UpdateContext, positional: Map<string, number>): string[][] {
  const out: string[][] = [];
  const walk = (value: unknown, i: number, prefix: string[]): void => {
    if (i === e.parts.length) {
      out.push(prefix);
      return;
    }
    const part = e.parts[i];
    if (part === "$") {
      const key = prefix.join(".");
      let idx = positional.get(key);
      if (idx === undefined) {
        idx = positionalIndex(doc, prefix, value, ctx.filter);
        positional.set(key, idx);
      }
      walk(Array.isArray(value) ? value[idx] : undefined, i + 1, [...prefix, String(idx)]);
      return;
    }
    if (part.startsWith("$[")) {
      if (value === undefined) {
        throw commandError("BadValue", `The path '${prefix.join(".")}' must exist in the document in order to apply array updates.`);
      }
      if (!Array.isArray(value)) {
        throw commandError("BadValue", `Cannot apply array updates to non-array element ${prefix[prefix.length - 1]}: ${formatValue(value)}`);
      }
      const id = part === "$[]" ? null : part.slice(2, -1);
      const test = id === null ? null : ctx.arrayFilters.get(id);
      if (id !== null && !test) throw commandError("BadValue", `No array filter found for identifier '${id}' in path '${e.path}'`);
      for (let k = 0; k < value.length; k++) {
        if (test && !test(value[k])) continue;
        walk(value[k], i + 1, [...prefix, String(k)]);
      }
      return;
    }
    const next = Array.isArray(value) ? (/^\d+$/.test(part) ? value[Number(part)] : undefined) : isPlainObject(value) ? value[part] : undefined;
    walk(next, i + 1, [...prefix, part]);
  };
  walk(doc, 0, []);
  return out;
}

/** Index of the first element of the array at `prefix` that satisfies the query's conditions on it. */
function positionalIndex(doc: Doc, prefix: string[], arr: unknown, filter: Doc | null): number {
  const fail = () => commandError("BadValue", "The positional operator did not find the match needed from the query.");
  if (!Array.isArray(arr) || filter === null) throw fail();
  const p = prefix.join(".");
  const relevant: Doc[] = [];
  const parts: [string, unknown][] = [];
  conjuncts(filter, parts);
  for (const [k, v] of parts) if (k === p || k.startsWith(p + ".")) relevant.push({ [k]: v });
  if (relevant.length === 0) throw fail();
  const q = mingoQuery(toView(relevant.length === 1 ? relevant[0] : { $and: relevant }));
  for (let i = 0; i < arr.length; i++) {
    const probe = replaceAtPath(doc, prefix, [arr[i]]);
    if (q.test(toView(probe))) return i;
  }
  throw fail();
}

/** A shallow-copied document whose value at `parts` (objects only) is `value`. */
function replaceAtPath(doc: Doc, parts: string[], value: unknown): Doc {
  const top: Doc = { ...doc };
  let cur = top;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = cur[parts[i]];
    const copy = isPlainObject(next) ? { ...next } : {};
    cur[parts[i]] = copy;
    cur = copy;
  }
  cur[parts[parts.length - 1]] = value;
  return top;
}

type Container = Doc | unknown[];

const MAX_ARRAY_PAD = 1_500_000;

function isIndex(s: string): boolean {
  return /^\d+$/.test(s);
}

function getChild(c: Container, key: string): unknown {
  return Array.isArray(c) ? (isIndex(key) ? c[Number(key)] : undefined) : c[key];
}

function setChild(c: Container, key: string, v: unknown): void {
  if (Array.isArray(c)) {
    const i = Number(key);
    if (i > c.length + MAX_ARRAY_PAD) throw commandError("BadValue", `can't backfill array to larger than 1500000 elements`);
    while (c.length < i) c.push(null);
    c[i] = v;
  } else c[key] = v;
}

/**
 * The container holding the last part of `parts`, creating missing intermediate documents when
 * `create` is set. Returns null when the path cannot exist and nothing should be created.
 */
function resolveParent(doc: Doc, parts: string[], create: boolean): { parent: Container; key: string } | null {
  let cur: Container = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const p = parts[i];
    if (Array.isArray(cur) && !isIndex(p)) {
      if (!create) return null;
      throw commandError("PathNotViable", `Cannot create field '${p}' in element {${parts[i - 1]}: ${formatValue(cur)}}`);
    }
    let next = getChild(cur, p);
    if (next === undefined) {
      if (!create) return null;
      next = {};
      setChild(cur, p, next);
    } else if (!Array.isArray(next) && !isPlainObject(next)) {
      if (!create) return null;
      throw commandError("PathNotViable", `Cannot create field '${parts[i + 1]}' in element {${p}: ${formatValue(next)}}`);
    }
    cur = next as Container;
  }
  const last = parts[parts.length - 1];
  if (Array.isArray(cur) && !isIndex(last)) {
    if (!create) return null;
    throw commandError("PathNotViable", `Cannot create field '${last}' in element {${parts[parts.length - 2]}: ${formatValue(cur)}}`);
  }
  return { parent: cur, key: last };
}

function idOf(doc: Doc): string {
  return `{_id: ${formatValue(doc._id)}}`;
}

function applyOne(doc: Doc, e: OpEntry, parts: string[], ctx: UpdateContext): boolean {
  const path = parts.join(".");
  switch (e.op) {
    case "$set":
    case "$setOnInsert":
      return setValue(doc, parts, e.arg);
    case "$unset": {
      const r = resolveParent(doc, parts, false);
      if (!r) return false;
      if (Array.isArray(r.parent)) {
        const i = Number(r.key);
        if (i >= r.parent.length || r.parent[i] === null) return false;
        r.parent[i] = null;
        return true;
      }
      if (!(r.key in r.parent)) return false;
      delete r.parent[r.key];
      return true;
    }
    case "$inc":
    case "$mul": {
      if (!isNumeric(e.arg)) {
        const verb = e.op === "$inc" ? "increment" : "multiply";
        throw commandError("TypeMismatch", `Cannot ${verb} with non-numeric argument: {${e.path}: ${formatValue(e.arg)}}`);
      }
      const r = resolveParent(doc, parts, true)!;
      const old = getChild(r.parent, r.key);
      if (old === undefined) {
        setChild(r.parent, r.key, e.op === "$inc" ? e.arg : zeroLike(e.arg));
        return true;
      }
      if (!isNumeric(old)) {
        throw commandError(
          "TypeMismatch",
          `Cannot apply ${e.op} to a value of non-numeric type. ${idOf(doc)} has the field '${r.key}' of non-numeric type ${typeName(old)}`,
        );
      }
      const result = arith(e.op, old, e.arg, doc);
      if (sameTyped(result, old)) return false;
      setChild(r.parent, r.key, result);
      return true;
    }
    case "$min":
    case "$max": {
      const r = resolveParent(doc, parts, true)!;
      const old = getChild(r.parent, r.key);
      const c = old === undefined ? 0 : compareValues(e.arg, old);
      if (old !== undefined && !(e.op === "$min" ? c < 0 : c > 0)) return false;
      setChild(r.parent, r.key, cloneValue(e.arg));
      return true;
    }
    case "$currentDate":
      return setValue(doc, parts, currentDate(e.arg, e.path, ctx.now));
    case "$push":
      return pushOp(doc, e, parts, path);
    case "$addToSet":
      return addToSetOp(doc, e, parts, path);
    case "$pull":
    case "$pullAll":
      return pullOp(doc, e, parts);
    case "$pop": {
      const n = isNumeric(e.arg) ? toNumber(e.arg) : NaN;
      if (n !== 1 && n !== -1) throw commandError("FailedToParse", `$pop expects 1 or -1, found: ${formatValue(e.arg)}`);
      const r = resolveParent(doc, parts, false);
      if (!r) return false;
      const old = getChild(r.parent, r.key);
      if (old === undefined) return false;
      if (!Array.isArray(old)) throw commandError("TypeMismatch", `Path '${path}' contains an element of non-array type '${typeName(old)}'`);
      if (old.length === 0) return false;
      if (n === 1) old.pop();
      else old.shift();
      return true;
    }
    case "$rename":
      return renameOp(doc, e);
    case "$bit":
      return bitOp(doc, e, parts);
    default:
      throw commandError("FailedToParse", `Unknown modifier: ${e.op}`);
  }
}

function setValue(doc: Doc, parts: string[], v: unknown): boolean {
  const r = resolveParent(doc, parts, true)!;
  const old = getChild(r.parent, r.key);
  if (old !== undefined && sameTyped(old, v)) return false;
  setChild(r.parent, r.key, cloneValue(v));
  return true;
}

function currentDate(arg: unknown, path: string, now: Date): unknown {
  if (arg === true) return new Date(now.getTime());
  if (isPlainObject(arg) && Object.keys(arg).length === 1 && (arg.$type === "date" || arg.$type === "timestamp")) {
    if (arg.$type === "date") return new Date(now.getTime());
    return new Timestamp({ t: Math.floor(now.getTime() / 1000), i: nextTimestampIncrement() });
  }
  throw commandError("BadValue", `${path} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).`);
}

let tsIncrement = 0;
function nextTimestampIncrement(): number {
  tsIncrement = (tsIncrement + 1) % 0xffffffff;
  return tsIncrement;
}

type NumKind = 0 | 1 | 2 | 3; // int, long, double, decimal

function kindOf(v: unknown): NumKind {
  if (typeof v === "number") return isInt32Number(v) ? 0 : 2;
  switch ((v as { _bsontype?: string })._bsontype) {
    case "Long":
      return 1;
    case "Decimal128":
      return 3;
    case "Int32":
      return 0;
    default:
      return 2;
  }
}

function toBig(v: unknown): bigint {
  if (typeof v === "number") return BigInt(v);
  return (v as Long).toBigInt();
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function zeroLike(v: unknown): unknown {
  switch (kindOf(v)) {
    case 0:
      return 0;
    case 1:
      return Long.fromNumber(0);
    case 2:
      return makeDouble(0);
    default:
      return Decimal128.fromString("0");
  }
}

/** MongoDB's numeric promotion: the wider type wins; int overflow becomes long; long overflow fails. */
function arith(op: string, a: unknown, b: unknown, doc: Doc): unknown {
  const k = Math.max(kindOf(a), kindOf(b)) as NumKind;
  const inc = op === "$inc";
  if (k === 0) {
    const x = toNumber(a);
    const y = toNumber(b);
    const r = inc ? x + y : x * y;
    if (r === 0) return 0;
    if (isInt32Number(r)) return r;
    return Long.fromBigInt(inc ? BigInt(x) + BigInt(y) : BigInt(x) * BigInt(y));
  }
  if (k === 1) {
    const r = inc ? toBig(a) + toBig(b) : toBig(a) * toBig(b);
    if (r < INT64_MIN || r > INT64_MAX) {
      throw commandError("BadValue", `Failed to apply ${op} operations to current value (${formatValue(a)}) for document ${idOf(doc)}`);
    }
    return Long.fromBigInt(r);
  }
  const x = toNumber(a);
  const y = toNumber(b);
  const r = inc ? x + y : x * y;
  return k === 2 ? makeDouble(r) : Decimal128.fromString(String(r));
}

function pushOp(doc: Doc, e: OpEntry, parts: string[], path: string): boolean {
  let items: unknown[] = [e.arg];
  let position: number | null = null;
  let slice: number | null = null;
  let sort: unknown = undefined;
  if (isPlainObject(e.arg) && "$each" in e.arg) {
    for (const k of Object.keys(e.arg)) {
      if (!["$each", "$slice", "$sort", "$position"].includes(k)) throw commandError("BadValue", `Unrecognized clause in $push: ${k}`);
    }
    if (!Array.isArray(e.arg.$each)) {
      throw commandError("BadValue", `The argument to $each in $push must be an array but it was of type: ${typeName(e.arg.$each)}`);
    }
    items = e.arg.$each;
    if (e.arg.$position !== undefined) position = intArg(e.arg.$position, "$position");
    if (e.arg.$slice !== undefined) slice = intArg(e.arg.$slice, "$slice");
    sort = e.arg.$sort;
  }
  const r = resolveParent(doc, parts, true)!;
  const old = getChild(r.parent, r.key);
  if (old !== undefined && !Array.isArray(old)) {
    throw commandError("BadValue", `The field '${path}' must be an array but is of type ${typeName(old)} in document ${idOf(doc)}`);
  }
  let arr = old === undefined ? [] : old.slice();
  const add = items.map((x) => cloneValue(x));
  if (position === null) arr.push(...add);
  else {
    const at = position < 0 ? Math.max(0, arr.length + position) : Math.min(position, arr.length);
    arr.splice(at, 0, ...add);
  }
  if (sort !== undefined) arr.sort(pushSortComparator(sort));
  if (slice !== null) arr = slice >= 0 ? arr.slice(0, slice) : arr.slice(slice);
  if (old !== undefined && sameTyped(old, arr)) return false;
  setChild(r.parent, r.key, arr);
  return true;
}

function intArg(v: unknown, name: string): number {
  if (!isNumeric(v) || !Number.isInteger(toNumber(v))) throw commandError("BadValue", `The value for ${name} must be an integer value but was given type: ${typeName(v)}`);
  return toNumber(v);
}

function pushSortComparator(sort: unknown): (a: unknown, b: unknown) => number {
  if (isNumeric(sort)) {
    const dir = toNumber(sort);
    if (dir !== 1 && dir !== -1) throw commandError("BadValue", "The $sort element value must be either 1 or -1");
    return (a, b) => dir * compareValues(a, b);
  }
  if (isPlainObject(sort) && Object.keys(sort).length > 0) {
    const cmp = sortComparator(sort);
    return (a, b) => cmp(isPlainObject(a) ? a : {}, isPlainObject(b) ? b : {});
  }
  throw commandError("BadValue", "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields");
}

function addToSetOp(doc: Doc, e: OpEntry, parts: string[], path: string): boolean {
  let items: unknown[] = [e.arg];
  if (isPlainObject(e.arg) && "$each" in e.arg) {
    if (Object.keys(e.arg).length !== 1) throw commandError("BadValue", "Found unexpected fields after $each in $addToSet");
    if (!Array.isArray(e.arg.$each)) {
      throw commandError("TypeMismatch", `The argument to $each in $addToSet must be an array but it was of type ${typeName(e.arg.$each)}`);
    }
    items = e.arg.$each;
  }
  const r = resolveParent(doc, parts, true)!;
  const old = getChild(r.parent, r.key);
  if (old !== undefined && !Array.isArray(old)) {
    throw commandError("BadValue", `Cannot apply $addToSet to non-array field. Field named '${path}' has non-array type ${typeName(old)}`);
  }
  const arr = old === undefined ? [] : old;
  let added = old === undefined;
  for (const item of items) {
    if (arr.some((x) => valuesEqual(x, item))) continue;
    arr.push(cloneValue(item));
    added = true;
  }
  if (old === undefined) setChild(r.parent, r.key, arr);
  return added;
}

function pullOp(doc: Doc, e: OpEntry, parts: string[]): boolean {
  let pred: (el: unknown) => boolean;
  if (e.op === "$pullAll") {
    if (!Array.isArray(e.arg)) throw commandError("BadValue", `$pullAll requires an array argument but was given a ${typeName(e.arg)}`);
    const values = e.arg;
    pred = (el) => values.some((v) => valuesEqual(el, v));
  } else if (isPlainObject(e.arg) && Object.keys(e.arg).length > 0) {
    const keys = Object.keys(e.arg);
    if (keys.every((k) => k.startsWith("$")) && !keys.some((k) => k === "$and" || k === "$or" || k === "$nor")) {
      const q = mingoQuery(toView({ v: e.arg }));
      pred = (el) => q.test({ v: toView(el) });
    } else {
      const q = mingoQuery(toView(e.arg));
      pred = (el) => isPlainObject(el) && q.test(toView(el));
    }
  } else {
    const v = e.arg;
    pred = (el) => valuesEqual(el, v);
  }
  const r = resolveParent(doc, parts, false);
  if (!r) return false;
  const old = getChild(r.parent, r.key);
  if (old === undefined) return false;
  if (!Array.isArray(old)) throw commandError("BadValue", `Cannot apply ${e.op} to a non-array value`);
  const kept = old.filter((el) => !pred(el));
  if (kept.length === old.length) return false;
  setChild(r.parent, r.key, kept);
  return true;
}

function renameOp(doc: Doc, e: OpEntry): boolean {
  const to = e.arg as string;
  const src = resolveParent(doc, e.parts, false);
  if (!src || Array.isArray(src.parent)) {
    if (src && Array.isArray(src.parent)) throw commandError("BadValue", `The source field cannot be an array element, '${e.path}' in doc with an array`);
    return false;
  }
  if (!(src.key in src.parent)) return false;
  const value = src.parent[src.key];
  const toParts = to.split(".");
  const dst = resolveParent(doc, toParts, true)!;
  if (Array.isArray(dst.parent)) throw commandError("BadValue", `The destination field cannot be an array element, '${to}' in doc with an array`);
  delete src.parent[src.key];
  dst.parent[dst.key] = value;
  return true;
}

function bitOp(doc: Doc, e: OpEntry, parts: string[]): boolean {
  const spec = e.arg;
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw commandError("BadValue", `The $bit modifier is not compatible with a ${typeName(spec)}. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}`);
  }
  const r = resolveParent(doc, parts, true)!;
  const old = getChild(r.parent, r.key);
  if (old !== undefined && kindOf(old) > 1) {
    throw commandError("BadValue", `Cannot apply $bit to a value of non-integral type. ${idOf(doc)} has the field ${r.key} of non-integer type ${typeName(old)}`);
  }
  let acc: unknown = old;
  for (const [k, operand] of Object.entries(spec)) {
    if (!["and", "or", "xor"].includes(k)) throw commandError("BadValue", `The $bit modifier only supports 'and', 'or', and 'xor', not '${k}'`);
    if (!isNumeric(operand) || kindOf(operand) > 1) {
      throw commandError("BadValue", `The $bit modifier field must be an Integer(32/64 bit); a '${typeName(operand)}' is not supported here`);
    }
    const base = acc === undefined ? (kindOf(operand) === 1 ? Long.fromNumber(0) : 0) : acc;
    const wide = kindOf(base) === 1 || kindOf(operand) === 1;
    const x = toBig(base);
    const y = toBig(operand);
    const res = k === "and" ? x & y : k === "or" ? x | y : x ^ y;
    acc = wide ? Long.fromBigInt(BigInt.asIntN(64, res)) : Number(BigInt.asIntN(32, res));
  }
  if (old !== undefined && sameTyped(old, acc)) return false;
  setChild(r.parent, r.key, acc);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Upserts

/** The document an upsert starts from: the equality conditions of its query. */
export function upsertSeed(filter: Doc | null): Doc {
  const seed: Doc = {};
  if (!filter) return seed;
  const parts: [string, unknown][] = [];
  conjuncts(filter, parts);
  for (const [k, v] of parts) {
    if (k.startsWith("$")) continue;
    let value: unknown;
    if (v instanceof RegExp) continue;
    if (isPlainObject(v) && Object.keys(v).some((x) => x.startsWith("$"))) {
      if ("$eq" in v) value = v.$eq;
      else if (Array.isArray(v.$in) && v.$in.length === 1 && !(v.$in[0] instanceof RegExp)) value = v.$in[0];
      else continue;
    } else value = v;
    const path = k.split(".");
    let cur: Doc = seed;
    for (let i = 0; i < path.length - 1; i++) {
      const next = cur[path[i]];
      if (next === undefined) cur = cur[path[i]] = {} as Doc;
      else if (isPlainObject(next)) cur = next;
      else throw commandError("NotSingleValueField", `cannot infer query fields to set, path '${k}' is matched twice`);
    }
    if (path[path.length - 1] in cur) {
      throw commandError("NotSingleValueField", `cannot infer query fields to set, path '${k}' is matched twice`);
    }
    cur[path[path.length - 1]] = cloneValue(value);
  }
  return seed;
}

/** Builds the document an upsert inserts. `_id` comes first, generated when absent. */
export function buildUpsertDoc(filter: Doc | null, parsed: ParsedUpdate, ctx: UpdateContext): Doc {
  let doc: Doc;
  if (parsed.kind === "replace") {
    const seed = upsertSeed(filter);
    doc = cloneValue(parsed.doc);
    if (doc._id === undefined && seed._id !== undefined) doc = { _id: seed._id, ...doc };
  } else {
    const seed = upsertSeed(filter);
    doc = parsed.kind === "ops" ? (applyOps(seed, parsed.entries, ctx), seed) : applyPipeline(seed, parsed.stages, ctx.now);
    if (seed._id !== undefined && doc._id !== undefined && !valuesEqual(seed._id, doc._id)) {
      throw new CommandError(ErrorCode.ImmutableField, "Performing an update on the path '_id' would modify the immutable field '_id'");
    }
  }
  if (doc._id === undefined) return { _id: new ObjectId(), ...doc };
  if (Object.keys(doc)[0] !== "_id") return { _id: doc._id, ...withoutId(doc) };
  return doc;
}
