/**
 * The direct decoder (src/decode.ts) against the `bson` package: for any document, what it
 * returns is exactly what `BSON.deserialize` (numbers as wrappers) + `normalizeInPlace` give —
 * same keys in the same order, same values with the same classes — and it declines (undefined)
 * rather than guess on types it does not decode, unusual keys and corrupted bytes.
 */
import { BSON, Binary, Decimal128, Double, Int32, Long, MinKey, ObjectId, Timestamp, UUID } from "bson";
import { describe, expect, it } from "vitest";
import { decodeExact } from "../src/decode.js";
import { normalizeInPlace, type Doc } from "../src/values.js";

const OPTIONS = { promoteValues: false, promoteBuffers: false, bsonRegExp: false } as const;

function reference(bytes: Buffer): Doc {
  const doc = BSON.deserialize(bytes, OPTIONS) as Doc;
  normalizeInPlace(doc);
  return doc;
}

/** Identical values: same class, same keys in the same order, same numbers (-0 and NaN included). */
function expectIdentical(a: unknown, b: unknown, path = "$"): void {
  if (typeof a !== "object" || a === null) {
    expect(Object.is(a, b), `${path}: ${String(a)} vs ${String(b)}`).toBe(true);
    return;
  }
  expect(typeof b === "object" && b !== null && Object.getPrototypeOf(a) === Object.getPrototypeOf(b), `${path}: class`).toBe(true);
  if (a instanceof Date) return expect(Object.is(a.getTime(), (b as Date).getTime()), path).toBe(true);
  if (a instanceof ObjectId) return expect(a.toHexString(), path).toBe((b as ObjectId).toHexString());
  if (a instanceof Long) return expect(a.equals(b as Long), path).toBe(true);
  if (a instanceof Double) return expect(Object.is(a.value, (b as Double).value), path).toBe(true);
  if (a instanceof Binary) {
    expect(a.sub_type, path).toBe((b as Binary).sub_type);
    return expect(Buffer.from(a.value()).equals(Buffer.from((b as Binary).value())), path).toBe(true);
  }
  const ka = Object.keys(a);
  expect(ka, `${path}: keys`).toEqual(Object.keys(b as object));
  for (const k of ka) expectIdentical((a as Doc)[k], (b as Doc)[k], `${path}.${k}`);
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const KEYS = ["a", "b", "status", "é", "日本", "x.y", "$set", "", "0", "history", "_id", "k".repeat(40), "ab", "ba"];
const STRINGS = ["", "s", "QUEUED", "ünïcødé", "🙂 emoji", "\ufffd", "x".repeat(40), "a\u0000b"];
const BINARIES = [
  () => new Binary(Buffer.from([1, 2, 3])),
  () => new Binary(Buffer.alloc(0), 5),
  () => new UUID(),
  () => new Binary(Buffer.alloc(15, 7), 4),
  () => new Binary(Buffer.from("xyz"), 0x80),
];
const NUMBERS = [0, -0, 1, -1, 2147483647, -2147483648, 2147483648, 1.5, -2.25, 1e300, NaN, Infinity, -Infinity, 2 ** 53];

function value(next: () => number, depth: number, rare: boolean): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const kinds = rare ? 16 : 12;
  switch (Math.floor(next() * kinds)) {
    case 0:
      return pick(NUMBERS);
    case 1:
      return new Double(pick(NUMBERS));
    case 2:
      return Long.fromNumber(Math.floor((next() - 0.5) * 2 ** 60));
    case 3:
      return pick(STRINGS);
    case 4:
      return new ObjectId();
    case 5:
      return next() < 0.5;
    case 6:
      return new Date(Math.floor((next() - 0.3) * 4e12));
    case 7:
      return next() < 0.5 ? null : pick(BINARIES)();
    case 8:
      return new Int32(Math.floor((next() - 0.5) * 2 ** 31));
    case 9:
    case 10:
      return depth > 3 ? 1 : doc(next, depth + 1, rare);
    case 11:
      return depth > 3 ? [] : Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1, rare));
    case 12:
      return Decimal128.fromString("1.5");
    case 13:
      return new Binary(Buffer.from([1, 2, 3]), 2);
    case 14:
      return new Timestamp({ t: 1, i: 2 });
    default:
      return new MinKey();
  }
}

function doc(next: () => number, depth: number, rare: boolean): Doc {
  const out: Doc = {};
  const n = Math.floor(next() * 6);
  for (let i = 0; i < n; i++) out[KEYS[Math.floor(next() * KEYS.length)]!] = value(next, depth, rare);
  return out;
}

describe("decodeExact", () => {
  it("decodes common-type documents exactly as bson + normalizeInPlace do", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const bytes = Buffer.from(BSON.serialize(doc(rng(seed), 0, false)));
      const fast = decodeExact(bytes);
      const ref = reference(bytes);
      // Only a string holding U+FFFD makes it decline among these types.
      if (fast === undefined) {
        expect(bytes.includes(Buffer.from("\ufffd")), `seed ${seed} declined`).toBe(true);
        continue;
      }
      expectIdentical(fast, ref);
    }
  });

  it("declines other types, or decodes identically where it does not meet them", () => {
    let declined = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const bytes = Buffer.from(BSON.serialize(doc(rng(seed), 0, true)));
      const fast = decodeExact(bytes);
      if (fast === undefined) declined++;
      else expectIdentical(fast, reference(bytes));
    }
    expect(declined).toBeGreaterThan(100);
  });

  it("names fields right when many distinct names share the table of names seen", () => {
    const wide: Doc = {};
    for (let i = 0; i < 5000; i++) wide[`f${(i * 7919) % 10007}`] = i;
    for (let round = 0; round < 2; round++) {
      const bytes = Buffer.from(BSON.serialize({ wide, again: wide, list: [wide] }));
      expectIdentical(decodeExact(bytes), reference(bytes));
    }
  });

  it("declines DBRef-like documents and __proto__ keys", () => {
    const ref = Buffer.from(BSON.serialize({ r: { $ref: "c", $id: 1 } }));
    expect(decodeExact(ref)).toBeUndefined();
    expect(reference(ref).r).toHaveProperty("_bsontype", "DBRef");
    const proto: Doc = {};
    Object.defineProperty(proto, "__proto__", { value: { a: 1 }, enumerable: true, writable: true, configurable: true });
    expect(decodeExact(Buffer.from(BSON.serialize({ p: proto })))).toBeUndefined();
  });

  it("never accepts bytes bson refuses, nor decodes them differently", () => {
    const base = Buffer.from(
      BSON.serialize({ _id: "r1", n: 5, d: 2.5, s: "QUEUED", at: new Date(0), h: [{ a: 1 }], o: { b: null, t: true }, lsid: { id: new UUID() } }),
    );
    const next = rng(7);
    for (let i = 0; i < 5000; i++) {
      const bytes = Buffer.from(base);
      for (let k = 0; k < 1 + Math.floor(next() * 3); k++) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      const fast = decodeExact(bytes);
      if (fast === undefined) continue;
      let ref: Doc;
      try {
        ref = reference(bytes);
      } catch (e) {
        throw new Error(`decoded bytes bson refuses (${(e as Error).message}): ${bytes.toString("hex")}`);
      }
      expectIdentical(fast, ref);
    }
  });
});
