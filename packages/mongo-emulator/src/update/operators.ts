/**
 * The update operators, applied to one concrete path of a private copy of a document. Each
 * returns whether it changed anything (for nModified).
 */
import { Long, Timestamp } from "bson";
import { commandError } from "../errors.js";
import { formatValue, idOf, typeName } from "../format.js";
import { mingoQuery } from "../matcher.js";
import { sortComparator } from "../sort.js";
import { cloneValue, compareValues, isNumeric, isPlainObject, sameTyped, toNumber, toView, valuesEqual, type Doc } from "../values.js";
import { arith, kindOf, toBig, zeroLike } from "./numeric.js";
import type { OpEntry, UpdateContext } from "./parse.js";
import { expandPath, getChild, resolveParent, setChild } from "./paths.js";

export function applyOps(doc: Doc, entries: OpEntry[], ctx: UpdateContext): boolean {
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
