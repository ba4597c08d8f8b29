/**
 * Unit tests of the emulator's BSON value semantics and update engine, below the wire.
 */
import { Decimal128, Double, Int32, Long, ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { applyUpdate, copyForUpdate, parseUpdate, upsertSeed } from "../src/update/index.js";
import { canonKey, compareValues, normalizeInPlace, toView, valuesEqual, type Doc } from "../src/values.js";
import { CommandError } from "../src/errors.js";

const ctx = { filter: null, arrayFilters: new Map(), inserting: false, now: new Date(0) };
function upd(doc: Doc, u: Doc): Doc {
  return applyUpdate(doc, parseUpdate(u), ctx).doc;
}
function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    return (e as CommandError).code;
  }
  return undefined;
}

describe("values", () => {
  it("keys numbers by value across BSON types", () => {
    const keys = [5, new Double(5), Long.fromNumber(5), Decimal128.fromString("5"), new Int32(5)].map(canonKey);
    expect(new Set(keys).size).toBe(1);
    expect(canonKey(Long.fromString("9007199254740993"))).not.toBe(canonKey(Long.fromString("9007199254740992")));
    expect(canonKey("5")).not.toBe(canonKey(5));
    const id = new ObjectId();
    expect(canonKey(new ObjectId(id.toHexString()))).toBe(canonKey(id));
    expect(canonKey({ a: 1, b: 2 })).not.toBe(canonKey({ b: 2, a: 1 }));
    expect(canonKey(null)).toBe(canonKey(undefined));
  });

  it("orders values in BSON type order", () => {
    const sorted = [true, "s", new Date(1), 3, null, { a: 1 }, [1], new ObjectId()].sort(compareValues);
    expect(sorted.map((v) => (v === null ? "null" : Array.isArray(v) ? "array" : v instanceof Date ? "date" : typeof v === "object" && "_bsontype" in v ? "oid" : typeof v))).toEqual([
      "null",
      "number",
      "string",
      "object",
      "array",
      "oid",
      "boolean",
      "date",
    ]);
    expect(compareValues(Long.fromString("9007199254740993"), 9007199254740992)).toBe(1);
    expect(valuesEqual(NaN, NaN)).toBe(true);
  });

  it("normalizes decoded numbers without losing their types", () => {
    const doc: Doc = { i: new Int32(3), d: new Double(2.5), di: new Double(4), l: Long.fromNumber(1), nested: [{ x: new Int32(1) }] };
    expect(normalizeInPlace(doc)).toBe(true);
    expect(doc.i).toBe(3);
    expect(doc.d).toBe(2.5);
    expect((doc.di as Double)._bsontype).toBe("Double");
    expect((doc.nested as Doc[])[0].x).toBe(1);
    expect(toView(doc)).toMatchObject({ di: 4, l: 1 });
  });
});

describe("update engine", () => {
  it("follows MongoDB numeric promotion", () => {
    expect(upd({ a: 1 }, { $inc: { a: 1.5 } }).a).toBe(2.5);
    const long = upd({ a: Long.fromNumber(1) }, { $inc: { a: 1 } }).a as Long;
    expect([long._bsontype, long.toString()]).toEqual(["Long", "2"]);
    const dbl = upd({ a: new Double(1) }, { $inc: { a: 1 } }).a as Double;
    expect(dbl._bsontype).toBe("Double");
    expect(code(() => upd({ a: Long.MAX_VALUE }, { $inc: { a: 1 } }))).toBe(2);
    expect(upd({}, { $mul: { a: Long.fromNumber(3) } }).a).toEqual(Long.fromNumber(0));
  });

  it("applies $bit, negative $position and $pull with operator conditions", () => {
    expect(upd({ a: 0b1100 }, { $bit: { a: { and: 0b1010 } } }).a).toBe(0b1000);
    expect(upd({ a: [1, 2, 3] }, { $push: { a: { $each: [9], $position: -1 } } }).a).toEqual([1, 2, 9, 3]);
    expect(upd({ a: [{ x: 1 }, { x: 5 }] }, { $pull: { a: { x: { $gt: 2 } } } }).a).toEqual([{ x: 1 }]);
  });

  it("reports MongoDB error codes", () => {
    expect(code(() => parseUpdate({ $set: { a: 1 }, b: 1 }))).toBe(9);
    expect(code(() => parseUpdate({ $set: { "a.b": 1 }, $unset: { a: "" } }))).toBe(40);
    expect(code(() => parseUpdate({ $set: { "": 1 } }))).toBe(56);
    expect(code(() => upd({ _id: 1, a: "x" }, { $push: { a: 1 } }))).toBe(2);
    expect(code(() => upd({ _id: 1, a: 5 }, { $set: { "a.b": 1 } }))).toBe(28);
    expect(code(() => upd({ _id: 1 }, { $set: { _id: 2 } }))).toBe(66);
    expect(code(() => upd({ _id: 1, a: [1] }, { $set: { "a.$": 2 } }))).toBe(2);
  });

  it("seeds upserts from equality conditions only", () => {
    expect(upsertSeed({ a: 1, "b.c": "x", d: { $gt: 1 }, $and: [{ e: { $eq: 2 } }], f: { $in: [3] }, $or: [{ g: 1 }] })).toEqual({
      a: 1,
      b: { c: "x" },
      e: 2,
      f: 3,
    });
  });

  it("never changes the stored document, and copies only the path an update leads through", () => {
    const stored = (): Doc => ({
      _id: 1,
      tasks: { c: { state: "RUNNING", open: 3, instances: [{ state: "QUEUED" }, { state: "QUEUED" }, { state: "QUEUED" }] }, d: { state: "PENDING", list: [1, 2] } },
      other: { x: [1] },
    });
    const cases: Doc[] = [
      { $set: { "tasks.c.instances.1.state": "SUCCEEDED", "tasks.c.state": "RUNNING" }, $inc: { "tasks.c.open": -1 } },
      { $push: { "tasks.d.list": 3 }, $set: { "tasks.d.state": "QUEUED" } },
      { $pull: { "tasks.c.instances": { state: "QUEUED" } } },
      { $set: { "tasks.c.instances.$[].state": "CANCELLED" } },
      { $unset: { "tasks.c.instances.0": "" }, $pop: { "other.x": 1 } },
      { $set: { "tasks.e.f": 1, "tasks.c.instances.5": { state: "NEW" } } },
    ];
    for (const update of cases) {
      const doc = stored();
      const before = structuredClone(doc);
      const parsed = parseUpdate(update);
      const { doc: after } = applyUpdate(copyForUpdate(doc, parsed), parsed, ctx);
      expect(doc, JSON.stringify(update)).toEqual(before);
      // The same result as an update of a full copy.
      const full = applyUpdate(structuredClone(before), parsed, ctx).doc;
      expect(after, JSON.stringify(update)).toEqual(full);
    }
    // One instance's state set: its siblings and the untouched branches are shared, not copied.
    type Shape = { tasks: { c: { instances: object[] }; d: object }; other: object };
    const doc = stored() as Doc & Shape;
    const parsed = parseUpdate({ $set: { "tasks.c.instances.1.state": "SUCCEEDED" } });
    const after = applyUpdate(copyForUpdate(doc, parsed), parsed, ctx).doc as Doc & Shape;
    expect(after.tasks.c.instances[0]).toBe(doc.tasks.c.instances[0]);
    expect(after.tasks.d).toBe(doc.tasks.d);
    expect(after.other).toBe(doc.other);
    expect(after.tasks.c.instances[1]).not.toBe(doc.tasks.c.instances[1]);
  });
});
