/**
 * Renders BSON values the way mongod prints them inside error messages, e.g.
 * `{ _id: ObjectId('65f0c0ffee0000000000cafe'), name: "x" }`, so errmsg strings read like a real
 * server's (`E11000 duplicate key error ... dup key: { f: "v" }`).
 */
import { isInt32Number, isPlainObject, type Doc } from "./values.js";

const MAX_LEN = 512;

export function formatValue(v: unknown): string {
  const s = render(v);
  return s.length > MAX_LEN ? s.slice(0, MAX_LEN) + "..." : s;
}

/** `{ a: 1, b: "x" }` — keyed by the given names (an index's key pattern). */
export function formatKeyValue(kv: Doc): string {
  const keys = Object.keys(kv);
  if (keys.length === 0) return "{}";
  return "{ " + keys.map((k) => `${k}: ${render(kv[k])}`).join(", ") + " }";
}

function render(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
    case "boolean":
    case "bigint":
      return String(v);
    default:
      break;
  }
  if (Array.isArray(v)) return "[ " + v.map(render).join(", ") + " ]";
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (v instanceof RegExp) return String(v);
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) return "{}";
    return "{ " + keys.map((k) => `${k}: ${render(v[k])}`).join(", ") + " }";
  }
  const t = (v as { _bsontype?: string })._bsontype;
  switch (t) {
    case "ObjectId":
      return `ObjectId('${(v as { toHexString(): string }).toHexString()}')`;
    case "Long":
      return `${String(v)}`;
    case "Double":
      return String((v as { value: number }).value);
    case "Decimal128":
      return `Decimal128("${String(v)}")`;
    case "Timestamp":
      return `Timestamp(${String(v)})`;
    case "Binary":
      return `BinData(${(v as { sub_type: number }).sub_type}, ${(v as { toString(enc: string): string }).toString("hex").toUpperCase()})`;
    default:
      return String(t ?? "object");
  }
}

/** BSON type name of a value, as MongoDB spells it in messages ("int", "objectId", ...). */
export function typeName(v: unknown): string {
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

/** `{_id: <value>}`, naming a document in error messages. */
export function idOf(doc: Doc): string {
  return `{_id: ${formatValue(doc._id)}}`;
}
