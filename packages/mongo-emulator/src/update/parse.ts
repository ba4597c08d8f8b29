/**
 * Parsing and validation of update arguments: operator documents (with MongoDB's errors for
 * unknown modifiers, conflicting paths and bad positional parts), replacements, pipelines, and
 * arrayFilters.
 */
import { commandError } from "../errors.js";
import { formatValue, typeName } from "../format.js";
import { mingoQuery } from "../matcher.js";
import { isPlainObject, toView, type Doc } from "../values.js";

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

export interface OpEntry {
  op: string;
  path: string;
  parts: string[];
  arg: unknown;
}

export type ParsedUpdate =
  | {
      kind: "ops";
      entries: OpEntry[];
      identifiers: Set<string>;
      /** The top-level fields the entries start with. */
      topFields: ReadonlySet<string>;
    }
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
  const shape = shapeKey(u, keys);
  const known = shape === null ? undefined : shapes.get(shape);
  if (known) return fromShape(u, known);
  const parsed = parseOps(u, keys);
  if (shape !== null) {
    if (shapes.size >= SHAPE_CACHE_MAX) shapes.clear();
    shapes.set(shape, parsed);
  }
  return parsed;
}

/**
 * Parsed operator updates by shape (the operators and the paths each names, in order): a batch of
 * writes sends the same shape with other values (1,000 executors' claim-and-result updates), and
 * everything parsing decides — that the operators exist, that the paths are valid and do not
 * conflict, their order, the array-filter identifiers — depends on the shape alone. Only the
 * values are taken from each update. `$rename` (its values are paths) is never cached.
 */
const shapes = new Map<string, Extract<ParsedUpdate, { kind: "ops" }>>();
const SHAPE_CACHE_MAX = 256;

/** The shape of an operator update, or null when it cannot be cached (an operand is not a document, a `$rename`). */
function shapeKey(u: Doc, ops: string[]): string | null {
  // Field names hold no NUL byte (BSON C strings), so NUL separates them unambiguously; each
  // list is prefixed with its length.
  let key = "";
  for (const op of ops) {
    const arg = u[op];
    if (op === "$rename" || !isPlainObject(arg)) return null;
    const paths = Object.keys(arg);
    key += op + "\0" + paths.length + "\0" + paths.join("\0") + "\0";
  }
  return key;
}

function fromShape(u: Doc, known: Extract<ParsedUpdate, { kind: "ops" }>): ParsedUpdate {
  const entries = known.entries.map((e) => ({ op: e.op, path: e.path, parts: e.parts, arg: (u[e.op] as Doc)[e.path] }));
  return { kind: "ops", entries, identifiers: known.identifiers, topFields: known.topFields };
}

function parseOps(u: Doc, keys: string[]): Extract<ParsedUpdate, { kind: "ops" }> {
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
  const kept = entries.filter((e) => e.op !== "$rename:to");
  return { kind: "ops", entries: kept, identifiers, topFields: new Set(kept.map((e) => e.parts[0]!)) };
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

