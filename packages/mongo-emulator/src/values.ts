/**
 * BSON value semantics the emulator needs beyond what mingo offers: MongoDB's cross-type
 * comparison order, numeric equality across Int32/Long/Double/Decimal128, canonical hash keys
 * for indexes, cheap deep copies, and the numeric "view" handed to mingo.
 *
 * Representation invariant for stored documents ("exact form"):
 *   - a JS number stands for the BSON type the `bson` serializer would pick for it: an integer in
 *     int32 range is an Int32, anything else a Double;
 *   - a Double whose value is an int32-range integer (or -0) stays a `Double` wrapper, so it
 *     serializes back as a double;
 *   - Long and Decimal128 stay wrappers; Int32 wrappers never occur (they become numbers).
 * With this, every number round-trips with its original BSON type, while most documents contain
 * no wrapper at all and can be given to mingo as they are.
 */
import { Decimal128, Double, Long } from "bson";

export type Doc = Record<string, unknown>;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

type Tagged = { _bsontype?: string };

function bsonTag(v: object): string | undefined {
  return (v as Tagged)._bsontype;
}

export function isPlainObject(v: unknown): v is Doc {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  if (v instanceof Date || v instanceof RegExp || v instanceof Uint8Array) return false;
  return bsonTag(v) === undefined;
}

/** True for every BSON numeric type (JS number, bigint, Int32, Long, Double, Decimal128). */
export function isNumeric(v: unknown): boolean {
  if (typeof v === "number" || typeof v === "bigint") return true;
  if (typeof v !== "object" || v === null) return false;
  const t = bsonTag(v);
  return t === "Int32" || t === "Double" || t === "Long" || t === "Decimal128";
}

/** A JS number for any numeric BSON value (approximate for huge Long and for Decimal128). */
export function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  const t = bsonTag(v as object);
  if (t === "Long") return (v as Long).toNumber();
  if (t === "Decimal128") return Number.parseFloat((v as Decimal128).toString());
  return (v as { valueOf(): number }).valueOf();
}

/**
 * Rank of a value's type in MongoDB's comparison order:
 * MinKey < null/missing < numbers < strings < objects < arrays < binData < ObjectId < bool < Date
 * < Timestamp < regex < (code) < MaxKey.
 */
export function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 2;
  switch (typeof v) {
    case "number":
    case "bigint":
      return 3;
    case "string":
      return 4;
    case "boolean":
      return 9;
    case "object":
      break;
    default:
      return 13;
  }
  if (Array.isArray(v)) return 6;
  if (v instanceof Date) return 10;
  if (v instanceof RegExp) return 12;
  const t = bsonTag(v as object);
  if (t === undefined) return v instanceof Uint8Array ? 7 : 5;
  switch (t) {
    case "Int32":
    case "Double":
    case "Long":
    case "Decimal128":
      return 3;
    case "BSONSymbol":
      return 4;
    case "DBRef":
      return 5;
    case "Binary":
      return 7;
    case "ObjectId":
      return 8;
    case "Timestamp":
      return 11;
    case "BSONRegExp":
      return 12;
    case "MinKey":
      return 1;
    case "MaxKey":
      return 14;
    default:
      return 13;
  }
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function exactBigInt(v: unknown): bigint | null {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : null;
  if (bsonTag(v as object) === "Long") return (v as Long).toBigInt();
  return null;
}

/** Numeric comparison across BSON numeric types. NaN equals NaN and sorts below every number. */
export function compareNumbers(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a === b) return 0;
    return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : 1;
  }
  const la = typeof a === "object" && bsonTag(a as object) === "Long";
  const lb = typeof b === "object" && bsonTag(b as object) === "Long";
  if (la || lb || typeof a === "bigint" || typeof b === "bigint") {
    // Longs beyond 2^53 lose precision as doubles; compare exactly when both sides are integers.
    const x = exactBigInt(a);
    const y = exactBigInt(b);
    if (x !== null && y !== null) return x < y ? -1 : x > y ? 1 : 0;
  }
  return compareNumbers(toNumber(a), toNumber(b));
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]];
    const vb = b[kb[i]];
    const r = typeRank(va) - typeRank(vb);
    if (r !== 0) return sign(r);
    const k = compareStrings(ka[i], kb[i]);
    if (k !== 0) return k;
    const c = compareValues(va, vb);
    if (c !== 0) return c;
  }
  return sign(ka.length - kb.length);
}

/** Total order over BSON values, as MongoDB compares them (without collation). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
    case 2:
    case 14:
      return 0;
    case 3:
      return compareNumbers(a, b);
    case 4:
      return compareStrings(String(a), String(b));
    case 5:
      return compareObjects(a as Doc, b as Doc);
    case 6: {
      const xa = a as unknown[];
      const xb = b as unknown[];
      const n = Math.min(xa.length, xb.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(xa[i], xb[i]);
        if (c !== 0) return c;
      }
      return sign(xa.length - xb.length);
    }
    case 7:
      return compareBinary(a, b);
    case 8:
      return compareStrings(
        (a as { toHexString(): string }).toHexString(),
        (b as { toHexString(): string }).toHexString(),
      );
    case 9:
      return a === b ? 0 : a ? 1 : -1;
    case 10:
      return compareNumbers((a as Date).getTime(), (b as Date).getTime());
    case 11:
      return (a as Long).compare(b as Long);
    case 12: {
      const sa = a instanceof RegExp ? [a.source, a.flags] : [(a as { pattern: string }).pattern, (a as { options: string }).options];
      const sb = b instanceof RegExp ? [b.source, b.flags] : [(b as { pattern: string }).pattern, (b as { options: string }).options];
      return compareStrings(sa[0], sb[0]) || compareStrings(sa[1], sb[1]);
    }
    default:
      return compareStrings(String(a), String(b));
  }
}

function binaryParts(v: unknown): { sub: number; bytes: Uint8Array } {
  if (v instanceof Uint8Array) return { sub: 0, bytes: v };
  const b = v as { sub_type: number; buffer: Uint8Array; position: number };
  return { sub: b.sub_type, bytes: b.buffer.subarray(0, b.position) };
}

function compareBinary(a: unknown, b: unknown): number {
  const x = binaryParts(a);
  const y = binaryParts(b);
  if (x.bytes.length !== y.bytes.length) return x.bytes.length < y.bytes.length ? -1 : 1;
  if (x.sub !== y.sub) return x.sub < y.sub ? -1 : 1;
  return compareBytes(x.bytes, y.bytes);
}

/** MongoDB equality: numbers by value across types, documents field-order sensitive. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return a === a || Number.isNaN(b); // NaN equals NaN in MongoDB
  const ta = typeof a;
  if (ta === "string" || ta === "boolean" || typeof b === "string" || typeof b === "boolean") return false;
  if (ta === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  return compareValues(a, b) === 0 && typeRank(a) === typeRank(b);
}

/**
 * Values equal with their BSON types (`Long(5)` differs from Int32 5). Used to decide whether an
 * update actually modified a document, the way MongoDB compares the stored bytes.
 */
export function sameTyped(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  if (typeof a !== "object" || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  const ta = bsonTag(a);
  if (ta !== bsonTag(b as object)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameTyped(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || !sameTyped(a[ka[i]], b[kb[i]])) return false;
    return true;
  }
  if (ta === "Decimal128") return String(a) === String(b);
  if ((a instanceof Date) !== (b instanceof Date)) return false;
  return compareValues(a, b) === 0;
}

function numberKey(n: number): string {
  return n === 0 ? "0" : String(n);
}

function numericKey(v: unknown): string {
  if (typeof v === "number") return numberKey(v);
  if (typeof v === "bigint") return v.toString();
  const t = bsonTag(v as object);
  if (t === "Long") {
    const l = v as Long;
    const n = l.toNumber();
    return Number.isSafeInteger(n) ? numberKey(n) : l.toString();
  }
  return numberKey(toNumber(v));
}

/**
 * A string that is equal for two values exactly when MongoDB considers them equal (numbers by
 * value across types; documents with field order). Used as hash-index and `_id` map keys.
 * Decimal128 values are keyed by their nearest double, so two decimals that differ only beyond
 * double precision share a key; index lookups still re-check with the full filter, so this can
 * only widen a candidate set, never drop a match.
 */
export function canonKey(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "s" + v;
    case "number":
      return "n" + numberKey(v);
    default:
      return canonInner(v);
  }
}

/** Self-delimiting form of {@link canonKey}, safe to concatenate with ",". */
export function canonInner(v: unknown): string {
  if (v === undefined || v === null) return "z";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
    case "bigint":
      return "n" + numericKey(v);
    case "boolean":
      return v ? "T" : "F";
    default:
      break;
  }
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) s += (i ? "," : "") + canonInner(v[i]);
    return s + "]";
  }
  if (v instanceof Date) return "d" + v.getTime();
  if (v instanceof RegExp) return "r" + JSON.stringify(v.source) + "/" + v.flags;
  const t = bsonTag(v as object);
  switch (t) {
    case undefined: {
      if (v instanceof Uint8Array) return "b0:" + Buffer.from(v).toString("base64");
      let s = "{";
      let first = true;
      for (const k of Object.keys(v as Doc)) {
        s += (first ? "" : ",") + JSON.stringify(k) + ":" + canonInner((v as Doc)[k]);
        first = false;
      }
      return s + "}";
    }
    case "ObjectId":
      return "o" + (v as { toHexString(): string }).toHexString();
    case "Int32":
    case "Double":
    case "Long":
    case "Decimal128":
      return "n" + numericKey(v);
    case "Binary": {
      const { sub, bytes } = binaryParts(v);
      return "b" + sub + ":" + Buffer.from(bytes).toString("base64");
    }
    case "Timestamp":
      return "t" + (v as Long).toString();
    case "MinKey":
      return "m";
    case "MaxKey":
      return "M";
    case "BSONSymbol":
      return JSON.stringify(String((v as { value: string }).value));
    default:
      return t + ":" + JSON.stringify(v);
  }
}

/**
 * Deep copy of the containers (plain objects and arrays) of a value. Leaves (Dates, ObjectIds,
 * wrappers, binaries) are shared: nothing in the emulator mutates a leaf in place.
 */
export function cloneValue<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneValue(v[i]);
    return out as T;
  }
  if (!isPlainObject(v)) return v;
  const out: Doc = {};
  for (const k of Object.keys(v)) out[k] = cloneValue((v as Doc)[k]);
  return out as T;
}

/** Representation of a double result: a plain number unless it would serialize as an Int32. */
export function makeDouble(n: number): number | Double {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? new Double(n) : n;
}

export function isInt32Number(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && !Object.is(n, -0);
}

/**
 * Brings a freshly deserialized value (parsed with `promoteValues: false`) into exact form, in
 * place: Int32 wrappers become numbers, Doubles become numbers unless that would change their
 * BSON type. Returns true when wrappers remain (the document then needs a separate mingo view).
 */
export function normalizeInPlace(v: unknown): boolean {
  let wrapped = false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (normalizeAt(v, i)) wrapped = true;
  } else if (isPlainObject(v)) {
    for (const k in v) if (normalizeAt(v, k)) wrapped = true;
  }
  return wrapped;
}

function normalizeAt(container: unknown[] | Doc, key: number | string): boolean {
  const c = container as Record<string | number, unknown>;
  const x = c[key];
  if (typeof x !== "object" || x === null) return false;
  const t = bsonTag(x);
  if (t === undefined) return normalizeInPlace(x);
  if (t === "Int32") {
    c[key] = (x as { value: number }).value;
    return false;
  }
  if (t === "Double") {
    const n = (x as Double).value;
    if (Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX) return true; // would become Int32
    c[key] = n;
    return false;
  }
  return t === "Long" || t === "Decimal128";
}

/** True if a value (in exact form) contains Double/Long/Decimal128 wrappers anywhere. */
export function hasNumericWrappers(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasNumericWrappers(v[i])) return true;
    return false;
  }
  const t = (v as Tagged)._bsontype;
  if (t !== undefined) return t === "Double" || t === "Long" || t === "Decimal128" || t === "Int32";
  // Dates and RegExps have no enumerable keys, so the loop below ends at once for them.
  if (v instanceof Uint8Array) return false;
  for (const k in v) if (hasNumericWrappers((v as Doc)[k])) return true;
  return false;
}

/**
 * The value with numeric wrappers replaced by JS numbers, for mingo, which compares numbers
 * only as JS numbers. Containers without wrappers are shared with the input.
 */
export function toView<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = toView(v[i]);
      if (x !== v[i] && out === null) out = v.slice(0, i);
      if (out !== null) out.push(x);
    }
    return (out ?? v) as T;
  }
  const t = bsonTag(v);
  if (t === "Double" || t === "Long" || t === "Decimal128" || t === "Int32") return toNumber(v) as T;
  if (!isPlainObject(v)) return v;
  let out: Doc | null = null;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const x = toView((v as Doc)[k]);
    if (x !== (v as Doc)[k] && out === null) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]] = (v as Doc)[keys[j]];
    }
    if (out !== null) out[k] = x;
  }
  return (out ?? v) as T;
}

export { Long, Double, Decimal128 };
