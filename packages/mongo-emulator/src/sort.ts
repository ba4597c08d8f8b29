/**
 * Sorting with MongoDB semantics: BSON type order across types, missing fields as null, and for
 * array-valued fields the smallest element in an ascending sort and the largest in a descending
 * one.
 */
import { commandError } from "./errors.js";
import { pathValues } from "./indexes.js";
import { compareValues, isNumeric, toNumber, type Doc } from "./values.js";

interface SortField {
  path: string;
  dir: 1 | -1;
}

/** Validates a sort specification; `$natural` is returned separately (it orders by insertion). */
export function parseSort(spec: Doc): { fields: SortField[]; natural: 1 | -1 | null } {
  const fields: SortField[] = [];
  let natural: 1 | -1 | null = null;
  for (const [path, v] of Object.entries(spec)) {
    if (!isNumeric(v) || (toNumber(v) !== 1 && toNumber(v) !== -1)) {
      if (typeof v === "object" && v !== null && "$meta" in v) {
        throw commandError("BadValue", `$meta sort by '${String((v as Doc).$meta)}' is not supported by the Kairos emulator`);
      }
      throw commandError("BadValue", `$sort key ordering must be 1 (for ascending) or -1 (for descending)`);
    }
    const dir = toNumber(v) as 1 | -1;
    if (path === "$natural") natural = dir;
    else fields.push({ path, dir });
  }
  return { fields, natural };
}

function sortKey(doc: Doc, f: SortField): unknown {
  const values = pathValues(doc, f.path);
  if (values.length === 1) return values[0];
  let best = values[0];
  for (let i = 1; i < values.length; i++) {
    const c = compareValues(values[i], best);
    if (f.dir === 1 ? c < 0 : c > 0) best = values[i];
  }
  return best;
}

export function sortComparator(spec: Doc): (a: Doc, b: Doc) => number {
  const { fields } = parseSort(spec);
  return (a, b) => {
    for (const f of fields) {
      const c = compareValues(sortKey(a, f), sortKey(b, f));
      if (c !== 0) return c * f.dir;
    }
    return 0;
  };
}

/** Sorts items by the documents `docOf` returns, computing each sort key once (stable). */
export function sortBy<T>(items: T[], spec: Doc, docOf: (item: T) => Doc): T[] {
  const { fields, natural } = parseSort(spec);
  if (fields.length === 0) return natural === -1 ? items.slice().reverse() : items;
  const keyed = items.map((item, i) => ({ item, i, keys: fields.map((f) => sortKey(docOf(item), f)) }));
  keyed.sort((x, y) => {
    for (let k = 0; k < fields.length; k++) {
      const c = compareValues(x.keys[k], y.keys[k]);
      if (c !== 0) return c * fields[k].dir;
    }
    return x.i - y.i;
  });
  return keyed.map((k) => k.item);
}
