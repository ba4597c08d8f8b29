/**
 * find/findAndModify projections. Plain inclusion and exclusion (the common case) are done here
 * on the exact stored document, keeping BSON types; projections with operators ($slice,
 * $elemMatch, aggregation expressions) are delegated to mingo over the numeric view.
 */
import { Query } from "mingo";
import { CommandError, commandError } from "./errors.js";
import { translateMingoError } from "./matcher.js";
import { cloneValue, isNumeric, isPlainObject, toNumber, toView, type Doc } from "./values.js";

type Tree = Map<string, Tree | true>;

function addPath(tree: Tree, path: string): void {
  const parts = path.split(".");
  let cur = tree;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (i === parts.length - 1) {
      cur.set(p, true);
      return;
    }
    let next = cur.get(p);
    if (next === true) return; // a parent path is already fully selected
    if (!next) cur.set(p, (next = new Map()));
    cur = next;
  }
}

function include(src: unknown, tree: Tree): unknown {
  if (Array.isArray(src)) {
    const out: unknown[] = [];
    for (const el of src) {
      if (Array.isArray(el) || isPlainObject(el)) out.push(include(el, tree));
    }
    return out;
  }
  if (!isPlainObject(src)) return undefined;
  const out: Doc = {};
  for (const k of Object.keys(src)) {
    const sub = tree.get(k);
    if (sub === undefined) continue;
    if (sub === true) out[k] = src[k];
    else {
      const v = include(src[k], sub);
      if (v !== undefined) out[k] = v;
    }
  }
  return out;
}

function exclude(src: unknown, tree: Tree): unknown {
  if (Array.isArray(src)) return src.map((el) => (Array.isArray(el) || isPlainObject(el) ? exclude(el, tree) : el));
  if (!isPlainObject(src)) return src;
  const out: Doc = {};
  for (const k of Object.keys(src)) {
    const sub = tree.get(k);
    if (sub === true) continue;
    out[k] = sub === undefined ? src[k] : exclude(src[k], sub);
  }
  return out;
}

function flag(v: unknown): boolean | null {
  if (typeof v === "boolean") return v;
  if (isNumeric(v)) return toNumber(v) !== 0;
  return null;
}

type Slice = { path: string[]; skip: number; limit: number | null };

function parseSlice(path: string, arg: unknown): Slice {
  const parts = path.split(".");
  if (isNumeric(arg)) {
    const n = Math.trunc(toNumber(arg));
    return n >= 0 ? { path: parts, skip: 0, limit: n } : { path: parts, skip: n, limit: null };
  }
  if (Array.isArray(arg) && arg.length === 2 && arg.every(isNumeric)) {
    const limit = Math.trunc(toNumber(arg[1]));
    if (limit <= 0) throw commandError("BadValue", `$slice limit must be positive`);
    return { path: parts, skip: Math.trunc(toNumber(arg[0])), limit };
  }
  throw commandError("BadValue", `$slice only supports numbers and [skip, limit] arrays`);
}

/** Copy-on-write: `doc` with the array at `s.path` sliced (containers along the path copied). */
function applySlice(value: unknown, s: Slice, i = 0): unknown {
  if (i === s.path.length) {
    if (!Array.isArray(value)) return value;
    const start = s.skip < 0 ? Math.max(0, value.length + s.skip) : Math.min(s.skip, value.length);
    return s.limit === null ? value.slice(start) : value.slice(start, start + s.limit);
  }
  if (Array.isArray(value)) return value.map((el) => (isPlainObject(el) ? applySlice(el, s, i) : el));
  if (!isPlainObject(value) || !(s.path[i] in value)) return value;
  return { ...value, [s.path[i]]: applySlice(value[s.path[i]], s, i + 1) };
}

/** Compiles a projection; null means "return documents unchanged". */
export function compileProjection(spec: Doc | undefined): ((doc: Doc) => Doc) | null {
  if (!spec || Object.keys(spec).length === 0) return null;
  let inclusion: boolean | null = null;
  let idFlag = true;
  let complex = false;
  const slices: Slice[] = [];
  const tree: Tree = new Map();
  for (const [path, v] of Object.entries(spec)) {
    if (path.length === 0 || path.startsWith("$")) throw commandError("BadValue", `FieldPath field names may not start with '$'. Given: ${path}`);
    if (isPlainObject(v) && Object.keys(v).length === 1 && "$slice" in v) {
      slices.push(parseSlice(path, v.$slice));
      continue;
    }
    const f = flag(v);
    if (f === null) {
      complex = true;
      continue;
    }
    if (path === "_id") {
      idFlag = f;
      continue;
    }
    if (inclusion === null) inclusion = f;
    else if (inclusion !== f) {
      throw new CommandError(
        inclusion ? 31253 : 31254,
        inclusion ? `Cannot do exclusion on field ${path} in inclusion projection` : `Cannot do inclusion on field ${path} in exclusion projection`,
      );
    }
    addPath(tree, path);
  }
  if (complex) return mingoProjection(spec);
  if (inclusion) for (const s of slices) addPath(tree, s.path.join("."));
  const withSlices = (doc: Doc): Doc => {
    let out: unknown = doc;
    for (const s of slices) out = applySlice(out, s);
    return out as Doc;
  };
  if (inclusion === null && idFlag) return slices.length ? withSlices : null;
  if (inclusion) {
    return (doc) => {
      const body = withSlices(include(doc, tree) as Doc);
      if (!idFlag || doc._id === undefined) return body;
      return { _id: doc._id, ...body };
    };
  }
  if (!idFlag) tree.set("_id", true);
  return (doc) => withSlices(exclude(doc, tree) as Doc);
}

function mingoProjection(spec: Doc): (doc: Doc) => Doc {
  const viewSpec = toView(spec);
  const query = new Query({}, { scriptEnabled: false });
  return (doc) => {
    try {
      // mingo may reshape its input in place: give it a private copy.
      return query.find<Doc>([cloneValue(toView(doc))], viewSpec).all()[0];
    } catch (e) {
      throw translateMingoError(e);
    }
  };
}
