/**
 * The update language: operator updates ($set, $inc, $push ... with positional `$`, `$[]` and
 * `$[<id>]` + arrayFilters), replacement documents and pipeline updates.
 *
 * Operator updates are implemented in this folder rather than with mingo's updater because they must keep
 * BSON numeric types exact (Int32 + Int32 overflowing into Long, Long arithmetic beyond 2^53,
 * doubles staying doubles) and must fail with MongoDB's error codes. mingo is still used for the
 * query parts: `$pull` conditions, arrayFilters, the positional `$` match and pipeline updates.
 *
 * Invariant: `applyUpdate` mutates only the document it is given, which callers obtain with
 * `cloneValue` from the stored one; the stored document is swapped in only after every check
 * (immutable `_id`, unique indexes) has passed, so a failed update leaves no trace.
 */
import { Aggregator } from "mingo";
import { ObjectId } from "bson";
import { commandError, CommandError, ErrorCode } from "../errors.js";
import { formatValue } from "../format.js";
import { conjuncts, translateMingoError } from "../matcher.js";
import { cloneValue, isPlainObject, sameTyped, toView, valuesEqual, type Doc } from "../values.js";
import { applyOps } from "./operators.js";
import type { ParsedUpdate, UpdateContext } from "./parse.js";

export { compileArrayFilters, parseUpdate, type ParsedUpdate, type UpdateContext } from "./parse.js";

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

/**
 * The copy of a stored document an update works on. Stored documents are never changed in place
 * (a write swaps in a new document), so an operator update shares with the stored one everything
 * its paths do not lead through: each container on an entry's path is copied one level deep, and
 * the value at its end in full (`$push` and its kin change an array in place). An entry with a
 * positional part (`$`, `$[]`, `$[id]`) may reach any element, so the whole top-level field it
 * starts with is copied; a replacement, a pipeline or a `$rename` (two paths per entry) gets a
 * full copy. One instance's state set in a document of 1,000 (a DAG run) copies the path to it,
 * not its 999 siblings.
 */
export function copyForUpdate(doc: Doc, parsed: ParsedUpdate): Doc {
  if (!fieldByField(parsed)) return cloneValue(doc);
  const out: Doc = { ...doc };
  // Containers already private to `out` (copied for an earlier entry).
  const own = new Set<object>([out]);
  for (const e of parsed.entries) {
    if (e.parts.some((p) => p.startsWith("$"))) {
      const top = e.parts[0]!;
      const v = out[top];
      if (v !== null && typeof v === "object" && !own.has(v)) {
        out[top] = cloneValue(v);
        own.add(out[top] as object);
      }
      continue;
    }
    copyPath(out, e.parts, e.op, own);
  }
  return out;
}

/** Operators that replace or remove the value at their path's end rather than change it in place. */
const REPLACING = new Set(["$set", "$setOnInsert", "$unset", "$inc", "$mul", "$min", "$max", "$currentDate", "$bit"]);

/**
 * Makes every container along `parts` private to the copy `out` (one level deep each), and the
 * value at its end too unless `op` replaces it.
 */
function copyPath(out: Doc, parts: readonly string[], op: string, own: Set<object>): void {
  let cur: Record<string, unknown> | unknown[] = out;
  for (let i = 0; i < parts.length; i++) {
    const key = parts[i]!;
    const inArray = Array.isArray(cur);
    if (inArray && !/^\d+$/.test(key)) return; // the operator reports the path as not viable
    const child: unknown = inArray ? (cur as unknown[])[Number(key)] : (cur as Record<string, unknown>)[key];
    // Missing, a scalar or a BSON value: nothing below it can change in place.
    if (child === null || typeof child !== "object" || !(Array.isArray(child) || isPlainObject(child))) return;
    const last = i === parts.length - 1;
    if (last && REPLACING.has(op)) return;
    if (!own.has(child)) {
      const copy: Record<string, unknown> | unknown[] = last ? cloneValue(child) : Array.isArray(child) ? child.slice() : { ...child };
      if (inArray) (cur as unknown[])[Number(key)] = copy;
      else (cur as Record<string, unknown>)[key] = copy;
      own.add(copy);
      cur = copy;
    } else cur = child as Record<string, unknown> | unknown[];
    if (last) return;
  }
}

/** The top-level fields an operator update may change (undefined: any, for other update kinds). */
export function touchedFields(parsed: ParsedUpdate): ReadonlySet<string> | undefined {
  if (!fieldByField(parsed)) return undefined;
  return parsed.topFields;
}

/** An operator update whose every entry changes only the path it names (a `$rename` changes two). */
function fieldByField(parsed: ParsedUpdate): parsed is Extract<ParsedUpdate, { kind: "ops" }> {
  return parsed.kind === "ops" && !parsed.entries.some((e) => e.op === "$rename");
}

