/**
 * Navigating update paths: positional parts (`$`, `$[]`, `$[<id>]`) expanded into concrete
 * paths, and parent lookup that creates intermediate documents for writes.
 */
import { commandError } from "../errors.js";
import { formatValue } from "../format.js";
import { conjuncts, mingoQuery } from "../matcher.js";
import { isPlainObject, toView, type Doc } from "../values.js";
import type { OpEntry, UpdateContext } from "./parse.js";

export function expandPath(doc: Doc, e: OpEntry, ctx: UpdateContext, positional: Map<string, number>): string[][] {
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

export type Container = Doc | unknown[];

const MAX_ARRAY_PAD = 1_500_000;

function isIndex(s: string): boolean {
  return /^\d+$/.test(s);
}

export function getChild(c: Container, key: string): unknown {
  return Array.isArray(c) ? (isIndex(key) ? c[Number(key)] : undefined) : c[key];
}

export function setChild(c: Container, key: string, v: unknown): void {
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
export function resolveParent(doc: Doc, parts: string[], create: boolean): { parent: Container; key: string } | null {
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

