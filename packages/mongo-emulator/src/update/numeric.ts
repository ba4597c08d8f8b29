/**
 * Arithmetic with MongoDB's numeric type rules: the wider of int < long < double < decimal wins,
 * Int32 overflow becomes Long, Long overflow is an error, doubles stay doubles.
 */
import { Decimal128, Long } from "bson";
import { commandError } from "../errors.js";
import { formatValue, idOf } from "../format.js";
import { isInt32Number, makeDouble, toNumber, type Doc } from "../values.js";

type NumKind = 0 | 1 | 2 | 3; // int, long, double, decimal

export function kindOf(v: unknown): NumKind {
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

export function toBig(v: unknown): bigint {
  if (typeof v === "number") return BigInt(v);
  return (v as Long).toBigInt();
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function zeroLike(v: unknown): unknown {
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
export function arith(op: string, a: unknown, b: unknown, doc: Doc): unknown {
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

