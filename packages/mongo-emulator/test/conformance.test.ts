/**
 * Conformance of the emulator with MongoDB, driven through the official driver. Runs against
 * the emulator, or against a real server with MONGO_URL=mongodb://... (emulator-only tests are
 * then skipped and say so in their names).
 */
import {
  Binary,
  Decimal128,
  Double,
  Int32,
  Long,
  MongoBulkWriteError,
  MongoServerError,
  ObjectId,
  type Collection,
  type Document,
} from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docsExamined, EMULATOR_ONLY, ON_EMULATOR, openTarget, type Loose, type Target } from "./target.js";

let t: Target;
let seq = 0;
/** A fresh collection per test. */
function coll(): Collection<Loose> {
  return t.db.collection<Loose>(`c${++seq}`);
}

async function serverError(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(MongoServerError);
    return e as MongoServerError;
  }
  throw new Error("expected the operation to fail");
}

beforeAll(async () => {
  t = await openTarget("conformance");
});
afterAll(async () => {
  await t?.close();
});

describe("handshake and admin", () => {
  it("answers ping, buildInfo, hello and listDatabases", async () => {
    const admin = t.client.db("admin");
    expect((await admin.command({ ping: 1 })).ok).toBe(1);
    const info = await admin.command({ buildInfo: 1 });
    expect(typeof info.version).toBe("string");
    const hello = await admin.command({ hello: 1 });
    expect(hello.isWritablePrimary).toBe(true);
    expect(hello.maxWireVersion).toBeGreaterThanOrEqual(9);
    await coll().insertOne({ x: 1 });
    const dbs = await admin.command({ listDatabases: 1, nameOnly: true });
    expect(dbs.databases.map((d: Document) => d.name)).toContain(t.db.databaseName);
  });

  it("counts documents written in serverStatus.metrics.document: one per document an update changed, not per operation", async () => {
    const admin = t.client.db("admin");
    const c = coll();
    const counts = async () => (await admin.command({ serverStatus: 1 })).metrics.document as { inserted: number; updated: number; deleted: number };
    const before = await counts();
    await c.insertMany([{ _id: "dw1", g: "dw", v: 0 }, { _id: "dw2", g: "dw", v: 0 }, { _id: "dw3", g: "dw", v: 0 }]);
    await c.updateMany({ g: "dw" }, { $set: { v: 1 } }); // three documents, one operation
    await c.updateMany({ g: "dw" }, { $set: { v: 1 } }); // matched, none changed
    await c.deleteOne({ _id: "dw3" });
    const after = await counts();
    expect(after.inserted - before.inserted).toBe(3);
    expect(after.updated - before.updated).toBe(3);
    expect(after.deleted - before.deleted).toBe(1);
    if (ON_EMULATOR) {
      const byNs = (await admin.command({ serverStatus: 1 })).kairosEmulator.documentsWritten as Record<string, number>;
      expect(byNs[`${t.db.databaseName}.${c.collectionName}`]).toBeGreaterThanOrEqual(7);
    }
  });

  it("answers an unknown command with CommandNotFound", async () => {
    const e = await serverError(t.db.command({ frobnicate: 1 }));
    expect(e.code).toBe(59);
    expect(e.codeName).toBe("CommandNotFound");
    expect(e.message).toContain("frobnicate");
  });

  it.skipIf(!ON_EMULATOR)(`refuses options it does not implement, naming them ${EMULATOR_ONLY}`, async () => {
    const c = coll();
    await c.insertOne({ a: "x" });
    const e = await serverError(c.find({}, { collation: { locale: "en" } }).toArray());
    expect(e.code).toBe(2);
    expect(e.message).toContain("collation");
    const e2 = await serverError(t.db.command({ find: c.collectionName, frobnicate: true }));
    expect(e2.message).toContain("find.frobnicate");
  });

  it("works with explicit sessions", async () => {
    const c = coll();
    await t.client.withSession(async (session) => {
      await c.insertOne({ s: 1 }, { session });
      expect(await c.countDocuments({}, { session })).toBe(1);
    });
  });

  it.skipIf(!ON_EMULATOR)(`refuses transactions like a standalone server ${EMULATOR_ONLY}`, async () => {
    const c = coll();
    const session = t.client.startSession();
    try {
      session.startTransaction();
      const e = await serverError(c.insertOne({ a: 1 }, { session }));
      // The driver rewraps IllegalOperation("Transaction numbers are only allowed ...") from a
      // standalone server into its own "does not support retryable writes" error.
      const original = (e.errorResponse as { originalError?: { code?: number } }).originalError;
      expect(e.code ?? original?.code).toBe(20);
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
  });
});

describe("insert and find", () => {
  it("generates an ObjectId _id and finds by it", async () => {
    const c = coll();
    const { insertedId } = await c.insertOne({ name: "a" });
    expect(insertedId).toBeInstanceOf(ObjectId);
    expect(await c.findOne({ _id: insertedId })).toEqual({ _id: insertedId, name: "a" });
    const raw = await t.db.command({ insert: c.collectionName, documents: [{ name: "b" }] });
    expect(raw.n).toBe(1);
    const b = await c.findOne({ name: "b" });
    expect(b?._id).toBeInstanceOf(ObjectId);
  });

  it("supports filter, sort, projection, skip and limit", async () => {
    const c = coll();
    await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, n: i % 5, tag: i % 2 ? "odd" : "even", nested: { v: i } })));
    const docs = await c
      .find({ tag: "odd", n: { $gte: 2 } }, { projection: { n: 1, "nested.v": 1 } })
      .sort({ n: -1, _id: 1 })
      .skip(1)
      .limit(3)
      .toArray();
    expect(docs).toEqual([
      { _id: 19, n: 4, nested: { v: 19 } },
      { _id: 3, n: 3, nested: { v: 3 } },
      { _id: 13, n: 3, nested: { v: 13 } },
    ]);
    const excl = await c.findOne({ _id: 4 }, { projection: { nested: 0, tag: 0 } });
    expect(excl).toEqual({ _id: 4, n: 4 });
    const noId = await c.findOne({ _id: 4 }, { projection: { _id: 0, n: 1 } });
    expect(noId).toEqual({ n: 4 });
  });

  it("matches arrays, nested paths, $in, $exists, $regex, $or and $elemMatch", async () => {
    const c = coll();
    await c.insertMany([
      { _id: 1, tags: ["a", "b"], sub: { x: 1 }, items: [{ k: "p", q: 1 }, { k: "r", q: 5 }] },
      { _id: 2, tags: ["c"], sub: { x: 2 }, name: "alpha" },
      { _id: 3, tags: [], name: "beta", items: [{ k: "p", q: 9 }] },
    ]);
    const ids = async (f: Document) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ tags: "a" })).toEqual([1]);
    expect(await ids({ "sub.x": { $in: [2, 3] } })).toEqual([2]);
    expect(await ids({ name: { $exists: false } })).toEqual([1]);
    expect(await ids({ name: /^al/ })).toEqual([2]);
    expect(await ids({ $or: [{ _id: 1 }, { name: "beta" }] })).toEqual([1, 3]);
    expect(await ids({ items: { $elemMatch: { k: "p", q: { $gt: 3 } } } })).toEqual([3]);
    expect(await ids({ "items.q": 5 })).toEqual([1]);
    expect(await ids({ tags: { $size: 0 } })).toEqual([3]);
    expect(await ids({ name: null })).toEqual([1]);
    expect(await ids({ _id: { $nin: [1, 2] } })).toEqual([3]);
  });

  it("matches dotted paths through documents and array positions, with null meaning missing", async () => {
    const c = coll();
    await c.insertMany([
      { _id: 1, t: { c: { open: 3, list: [{ s: "Q", a: 1 }, { s: "OK", a: 1 }, { s: "Q", a: 2 }] } } },
      { _id: 2, t: { c: { open: 1, list: [{ s: "OK", a: 1 }, { s: "Q", a: 1 }] } }, d: { max: null } },
      { _id: 3, t: { c: { open: 0, list: [{ s: "X" }, { s: "OK", a: 3 }] } }, d: { max: 4 } },
      { _id: 4, t: 5, d: 7 },
      { _id: 5, t: { c: { list: [[{ s: "Q" }], { s: "Q" }] } }, d: { max: [null, 2] } },
    ]);
    const ids = async (f: Document) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ "t.c.open": { $gt: 1 } })).toEqual([1]);
    expect(await ids({ "t.c.list.0.s": "Q" })).toEqual([1, 5]);
    expect(await ids({ "t.c.list.1.s": { $in: ["Q", "R"] } })).toEqual([2, 5]);
    expect(await ids({ "t.c.list.1.s": "OK" })).toEqual([1, 3]);
    expect(await ids({ "t.c.list.2.a": 2, "t.c.open": 3 })).toEqual([1]);
    expect(await ids({ "t.c.list.9.s": { $exists: false } })).toEqual([1, 2, 3, 4, 5]);
    expect(await ids({ "t.c.list.s": "X" })).toEqual([3]);
    expect(await ids({ "t.c.list.1.s": { $ne: "Q" } })).toEqual([1, 3, 4]);
    expect(await ids({ "d.max": null })).toEqual([1, 2, 4, 5]);
    expect(await ids({ "d.max": { $eq: null }, "t.c.open": { $gt: 0 } })).toEqual([1, 2]);
    expect(await ids({ "t.c.x.y": null, _id: { $lte: 2 } })).toEqual([1, 2]);
  });

  it("compares numbers across BSON numeric types and keeps type brackets", async () => {
    const c = coll();
    await c.insertMany([
      { _id: 1, v: 5 },
      { _id: 2, v: Long.fromNumber(5) },
      { _id: 3, v: new Double(5.5) },
      { _id: 4, v: "6" },
      { _id: 5, v: Decimal128.fromString("7") },
    ]);
    const ids = async (f: Document) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ v: 5 })).toEqual([1, 2]);
    expect(await ids({ v: { $gt: 5 } })).toEqual([3, 5]);
    expect(await ids({ v: { $type: "string" } })).toEqual([4]);
  });

  it("matches $type by alias and number, on values and on array elements", async () => {
    const c = coll();
    const oid = new ObjectId();
    await c.insertMany([
      { _id: 1, v: "s" },
      { _id: 2, v: ["x", 1] },
      { _id: 3, v: [[["nested"]]] },
      { _id: 4, v: null },
      { _id: 5 },
      { _id: 6, v: true },
      { _id: 7, v: new Date(0) },
      { _id: 8, v: oid },
      { _id: 9, v: [null, false] },
      { _id: 10, v: 3 },
      { _id: 11, v: { s: "s" } },
    ]);
    const ids = async (f: Document) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ v: { $type: "string" } })).toEqual([1, 2]);
    expect(await ids({ v: { $type: 2 } })).toEqual([1, 2]);
    expect(await ids({ v: { $type: "null" } })).toEqual([4, 9]);
    expect(await ids({ v: { $type: 10 } })).toEqual([4, 9]);
    expect(await ids({ v: { $type: "bool" } })).toEqual([6, 9]);
    expect(await ids({ v: { $type: "date" } })).toEqual([7]);
    expect(await ids({ v: { $type: "objectId" } })).toEqual([8]);
    expect(await ids({ v: { $type: "string", $ne: "s" } })).toEqual([2]);
    expect(await ids({ v: { $type: ["bool", "string"] } })).toEqual([1, 2, 6, 9]);
  });

  it("sorts across types in BSON order with missing as null", async () => {
    const c = coll();
    await c.insertMany([
      { _id: 1, v: "b" },
      { _id: 2, v: 3 },
      { _id: 3 },
      { _id: 4, v: new Date(0) },
      { _id: 5, v: true },
      { _id: 6, v: { a: 1 } },
      { _id: 7, v: 1.5 },
    ]);
    const order = (await c.find().sort({ v: 1, _id: 1 }).toArray()).map((d) => d._id);
    expect(order).toEqual([3, 7, 2, 1, 6, 5, 4]);
  });

  it("returns results in batches across getMore", async () => {
    const c = coll();
    await c.insertMany(Array.from({ length: 95 }, (_, i) => ({ _id: i })));
    const first = await t.db.command({ find: c.collectionName, batchSize: 10 });
    expect(first.cursor.firstBatch).toHaveLength(10);
    expect(first.cursor.id.toString()).not.toBe("0");
    let seen = first.cursor.firstBatch.length;
    let id = first.cursor.id;
    let rounds = 0;
    while (id.toString() !== "0") {
      const more = await t.db.command({ getMore: id, collection: c.collectionName, batchSize: 20 });
      seen += more.cursor.nextBatch.length;
      id = more.cursor.id;
      rounds++;
    }
    expect(seen).toBe(95);
    expect(rounds).toBe(5);
    expect(await c.find().batchSize(7).toArray()).toHaveLength(95);
  });

  it("kills cursors; a killed cursor is not found", async () => {
    const c = coll();
    await c.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })));
    const first = await t.db.command({ find: c.collectionName, batchSize: 2 });
    const id = first.cursor.id;
    const killed = await t.db.command({ killCursors: c.collectionName, cursors: [id] });
    expect(killed.cursorsKilled.map(String)).toEqual([String(id)]);
    const e = await serverError(t.db.command({ getMore: id, collection: c.collectionName }));
    expect(e.code).toBe(43);
    const cursor = c.find().batchSize(2);
    await cursor.next();
    await cursor.close();
  });

  it("round-trips BSON types exactly", async () => {
    const c = coll();
    const doc = {
      _id: new ObjectId(),
      date: new Date("2024-03-01T12:00:00.123Z"),
      int: new Int32(7),
      long: Long.fromString("9007199254740993"),
      smallLong: Long.fromNumber(3),
      double: new Double(5),
      frac: new Double(2.5),
      dec: Decimal128.fromString("12345678901234567890.123456789"),
      bin: new Binary(Buffer.from([0, 1, 2, 255]), 0),
      uuid: new Binary(Buffer.alloc(16, 7), 4),
      nul: null,
      nested: [[1, "x"], [{ a: [true, false] }], []],
      obj: { deep: { deeper: "y" } },
    };
    await c.insertOne(doc);
    const back = await c.findOne({ _id: doc._id }, { promoteValues: false, promoteLongs: false });
    expect(back).not.toBeNull();
    expect(back!.int._bsontype).toBe("Int32");
    expect(back!.long._bsontype).toBe("Long");
    expect(back!.long.toString()).toBe("9007199254740993");
    expect(back!.smallLong._bsontype).toBe("Long");
    expect(back!.double._bsontype).toBe("Double");
    expect(back!.double.valueOf()).toBe(5);
    expect(back!.frac._bsontype).toBe("Double");
    expect(back!.dec.toString()).toBe("12345678901234567890.123456789");
    expect(back!.bin.sub_type).toBe(0);
    expect(Buffer.from(back!.bin.buffer).equals(Buffer.from([0, 1, 2, 255]))).toBe(true);
    expect(back!.uuid.sub_type).toBe(4);
    const plain = await c.findOne({ _id: doc._id });
    expect(plain!.date).toEqual(doc.date);
    expect(plain!.nul).toBeNull();
    expect(plain!.nested).toEqual([[1, "x"], [{ a: [true, false] }], []]);
    expect(plain!.obj).toEqual({ deep: { deeper: "y" } });
  });

  it("keeps Long arithmetic exact and promotes Int32 overflow to Long", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, big: Long.fromString("9007199254740993"), small: 2147483647 });
    await c.updateOne({ _id: 1 }, { $inc: { big: 2, small: 1 } });
    const back = await c.findOne({ _id: 1 }, { promoteLongs: false, promoteValues: false });
    expect(back!.big.toString()).toBe("9007199254740995");
    expect(back!.small._bsontype).toBe("Long");
    expect(back!.small.toString()).toBe("2147483648");
  });
});

describe("updates", () => {
  const cases: { name: string; doc: Document; update: Document; options?: Document; expected: Document }[] = [
    { name: "$set nested creates paths", doc: { a: 1 }, update: { $set: { "b.c.d": 2, a: 3 } }, expected: { a: 3, b: { c: { d: 2 } } } },
    { name: "$unset", doc: { a: 1, b: { c: 1, d: 2 } }, update: { $unset: { a: "", "b.c": "" } }, expected: { b: { d: 2 } } },
    { name: "$inc and $mul", doc: { a: 1, b: 2.5 }, update: { $inc: { a: 2, z: 1 }, $mul: { b: 2, y: 3 } }, expected: { a: 3, b: 5, y: 0, z: 1 } },
    { name: "$min and $max", doc: { lo: 5, hi: 5 }, update: { $min: { lo: 3 }, $max: { hi: 3 } }, expected: { lo: 3, hi: 5 } },
    { name: "$rename", doc: { a: 1, b: { c: 2 } }, update: { $rename: { a: "x", "b.c": "b.d" } }, expected: { b: { d: 2 }, x: 1 } },
    { name: "$push", doc: { arr: [1] }, update: { $push: { arr: 2, other: "x" } }, expected: { arr: [1, 2], other: ["x"] } },
    {
      name: "$push $each $position",
      doc: { arr: [1, 2, 3] },
      update: { $push: { arr: { $each: [8, 9], $position: 1 } } },
      expected: { arr: [1, 8, 9, 2, 3] },
    },
    {
      name: "$push $sort $slice",
      doc: { arr: [{ s: 3 }, { s: 1 }] },
      update: { $push: { arr: { $each: [{ s: 2 }, { s: 5 }], $sort: { s: -1 }, $slice: 3 } } },
      expected: { arr: [{ s: 5 }, { s: 3 }, { s: 2 }] },
    },
    { name: "$push negative $slice", doc: { arr: [1, 2, 3] }, update: { $push: { arr: { $each: [4], $slice: -2 } } }, expected: { arr: [3, 4] } },
    { name: "$addToSet", doc: { s: [1, 2] }, update: { $addToSet: { s: { $each: [2, 3, 3] } } }, expected: { s: [1, 2, 3] } },
    { name: "$pull by condition", doc: { a: [1, 5, 9, 3] }, update: { $pull: { a: { $gte: 5 } } }, expected: { a: [1, 3] } },
    {
      name: "$pull documents by query",
      doc: { a: [{ k: 1, v: "x" }, { k: 2, v: "y" }] },
      update: { $pull: { a: { k: 2 } } },
      expected: { a: [{ k: 1, v: "x" }] },
    },
    { name: "$pullAll", doc: { a: [1, 2, 1, 3] }, update: { $pullAll: { a: [1, 3] } }, expected: { a: [2] } },
    { name: "$pop", doc: { a: [1, 2, 3], b: [1, 2, 3] }, update: { $pop: { a: 1, b: -1 } }, expected: { a: [1, 2], b: [2, 3] } },
    { name: "positional $", doc: { a: [{ k: 1, v: 0 }, { k: 2, v: 0 }] }, update: { $set: { "a.$.v": 9 } }, expected: { a: [{ k: 1, v: 0 }, { k: 2, v: 9 }] } },
    { name: "all positional $[]", doc: { a: [{ v: 1 }, { v: 2 }] }, update: { $inc: { "a.$[].v": 10 } }, expected: { a: [{ v: 11 }, { v: 12 }] } },
    {
      name: "filtered positional $[id] with arrayFilters",
      doc: { a: [{ v: 1 }, { v: 5 }, { v: 7 }] },
      update: { $set: { "a.$[big].flag": true } },
      options: { arrayFilters: [{ "big.v": { $gte: 5 } }] },
      expected: { a: [{ v: 1 }, { v: 5, flag: true }, { v: 7, flag: true }] },
    },
    { name: "array index path", doc: { a: [1, 2] }, update: { $set: { "a.3": 4 } }, expected: { a: [1, 2, null, 4] } },
    { name: "new fields in lexicographic order", doc: {}, update: { $set: { b: 1, a: 1 } }, expected: { a: 1, b: 1 } },
  ];

  for (const tc of cases) {
    it(tc.name, async () => {
      const c = coll();
      await c.insertOne({ _id: 1, ...tc.doc });
      const filter = tc.name === "positional $" ? { _id: 1, "a.k": 2 } : { _id: 1 };
      const res = await c.updateOne(filter, tc.update, tc.options);
      expect(res.matchedCount).toBe(1);
      const back = await c.findOne({ _id: 1 });
      expect(back).toEqual({ _id: 1, ...tc.expected });
      expect(Object.keys(back!)).toEqual(["_id", ...Object.keys(tc.expected)]);
    });
  }

  it("keeps indexes right when updates touch some indexed fields and share the untouched ones", async () => {
    const c = coll();
    await c.createIndexes([
      { key: { a: 1 }, name: "a" },
      { key: { "n.x": 1, b: 1 }, name: "nx_b" },
      { key: { p: 1 }, name: "p_partial", partialFilterExpression: { q: true } },
    ]);
    await c.insertMany([
      { _id: 1, a: 1, b: 1, n: { x: 1, y: [1] }, p: 1, q: true, big: { deep: [{ v: 1 }] } },
      { _id: 2, a: 2, b: 2, n: { x: 2, y: [2] }, p: 1, q: false, big: { deep: [{ v: 2 }] } },
    ]);
    const ids = async (f: Document, hint?: string) => (await c.find(f, hint ? { hint } : {}).toArray()).map((d) => d._id).sort();
    await c.updateOne({ _id: 1 }, { $set: { b: 10 }, $push: { "n.y": 5 } } as Document); // b and n (one index), not a or p
    expect(await ids({ a: 1 })).toEqual([1]);
    expect(await ids({ "n.x": 1, b: 10 })).toEqual([1]);
    expect(await ids({ "n.x": 1, b: 1 })).toEqual([]);
    await c.updateOne({ _id: 1 }, { $set: { a: 7 } });
    expect(await ids({ a: 1 })).toEqual([]);
    expect(await ids({ a: 7 })).toEqual([1]);
    // The partial index follows its filter's field too.
    await c.updateOne({ _id: 2 }, { $set: { q: true } });
    expect(await ids({ p: 1, q: true }, "p_partial")).toEqual([1, 2]);
    await c.updateOne({ _id: 1 }, { $set: { q: false } });
    expect(await ids({ p: 1, q: true }, "p_partial")).toEqual([2]);
    // Untouched nested values were shared with the old version, never changed through it.
    await c.updateOne({ _id: 1 }, { $set: { "big.deep.0.v": 9 } });
    expect((await c.findOne({ _id: 1 }))!.big).toEqual({ deep: [{ v: 9 }] });
    expect((await c.findOne({ _id: 2 }))!.big).toEqual({ deep: [{ v: 2 }] });
    expect((await c.findOne({ _id: 1 }))!.n).toEqual({ x: 1, y: [1, 5] });
  });

  it("sets $currentDate", async () => {
    const c = coll();
    await c.insertOne({ _id: 1 });
    const before = Date.now();
    await c.updateOne({ _id: 1 }, { $currentDate: { at: true } });
    const back = await c.findOne({ _id: 1 });
    expect(back!.at).toBeInstanceOf(Date);
    expect(back!.at.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it("reports matched and modified counts", async () => {
    const c = coll();
    await c.insertMany([{ _id: 1, s: "a" }, { _id: 2, s: "a" }, { _id: 3, s: "b" }]);
    const many = await c.updateMany({ s: "a" }, { $set: { s: "b" } });
    expect([many.matchedCount, many.modifiedCount]).toEqual([2, 2]);
    const noop = await c.updateOne({ _id: 1 }, { $set: { s: "b" } });
    expect([noop.matchedCount, noop.modifiedCount]).toEqual([1, 0]);
    const none = await c.updateOne({ _id: 99 }, { $set: { s: "x" } });
    expect([none.matchedCount, none.modifiedCount, none.upsertedId]).toEqual([0, 0, null]);
  });

  it("upserts with $setOnInsert and the query's equality fields", async () => {
    const c = coll();
    const res = await c.updateOne({ key: "k1", "meta.kind": "x" }, { $set: { n: 1 }, $setOnInsert: { created: true } }, { upsert: true });
    expect(res.upsertedCount).toBe(1);
    expect(res.upsertedId).toBeInstanceOf(ObjectId);
    const doc = await c.findOne({ key: "k1" });
    expect(doc).toEqual({ _id: res.upsertedId, key: "k1", meta: { kind: "x" }, n: 1, created: true });
    const again = await c.updateOne({ key: "k1", "meta.kind": "x" }, { $set: { n: 2 }, $setOnInsert: { created: false } }, { upsert: true });
    expect([again.matchedCount, again.upsertedCount]).toEqual([1, 0]);
    expect((await c.findOne({ key: "k1" }))!.created).toBe(true);
    const withId = await c.updateOne({ _id: "given" }, { $set: { v: 1 } }, { upsert: true });
    expect(withId.upsertedId).toBe("given");
  });

  it("replaces documents, keeping _id, and upserts replacements", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, a: 1, b: 2 });
    await c.replaceOne({ _id: 1 }, { c: 3 });
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, c: 3 });
    const up = await c.replaceOne({ _id: 2 }, { d: 4 }, { upsert: true });
    expect(up.upsertedId).toBe(2);
    expect(await c.findOne({ _id: 2 })).toEqual({ _id: 2, d: 4 });
  });

  it("supports pipeline updates", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, a: 2, b: 3 });
    await c.updateOne({ _id: 1 }, [{ $set: { sum: { $add: ["$a", "$b"] } } }, { $unset: "b" }]);
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 2, sum: 5 });
  });

  it("refuses to modify _id (ImmutableField)", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, a: 1 });
    expect((await serverError(c.updateOne({ _id: 1 }, { $set: { _id: 2 } }))).code).toBe(66);
    expect((await serverError(c.replaceOne({ _id: 1 }, { _id: 3, a: 2 }))).code).toBe(66);
    expect((await serverError(c.findOneAndUpdate({ _id: 1 }, { $unset: { _id: "" } }))).code).toBe(66);
    await c.updateOne({ _id: 1 }, { $set: { _id: 1, a: 5 } });
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 5 });
  });

  it("rejects malformed updates like MongoDB", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, a: 1, s: "str" });
    const run = (u: Document, extra: Document = {}) => t.db.command({ update: c.collectionName, updates: [{ q: { _id: 1 }, u, ...extra }] });
    expect((await run({ $set: { a: 2 }, b: 3 })).writeErrors[0].code).toBe(9); // mixing operators and fields
    expect((await run({ $frob: { a: 1 } })).writeErrors[0].code).toBe(9); // unknown modifier
    expect((await run({ $set: { a: 1 }, $inc: { a: 1 } })).writeErrors[0].code).toBe(40); // conflicting paths
    expect((await run({ $set: { "a.b": 1, a: 2 } })).writeErrors[0].code).toBe(40);
    expect((await run({ $inc: { s: 1 } })).writeErrors[0].code).toBe(14); // $inc on a string
    expect((await run({ $set: { "s.x": 1 } })).writeErrors[0].code).toBe(28); // path not viable
    expect((await run({ $set: { a: 1 } }, { multi: true, u: { b: 1 } })).writeErrors[0].code).toBe(9); // multi replacement
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1, s: "str" });
  });
});

describe("delete", () => {
  it("deletes one or many", async () => {
    const c = coll();
    await c.insertMany(Array.from({ length: 6 }, (_, i) => ({ _id: i, g: i % 2 })));
    expect((await c.deleteOne({ g: 1 })).deletedCount).toBe(1);
    expect((await c.deleteMany({ g: 1 })).deletedCount).toBe(2);
    expect((await c.deleteMany({})).deletedCount).toBe(3);
    expect(await c.countDocuments()).toBe(0);
    const bad = await t.db.command({ delete: c.collectionName, deletes: [{ q: {}, limit: 2 }] }).catch((e) => e);
    expect(bad.code ?? bad.writeErrors?.[0]?.code).toBeDefined();
  });
});

describe("findAndModify", () => {
  it("updates and returns the document before or after, by sort", async () => {
    const c = coll();
    await c.insertMany([{ _id: 1, p: 2, s: "Q" }, { _id: 2, p: 9, s: "Q" }, { _id: 3, p: 5, s: "Q" }]);
    const before = await c.findOneAndUpdate({ s: "Q" }, { $set: { s: "R" } }, { sort: { p: -1 } });
    expect(before).toEqual({ _id: 2, p: 9, s: "Q" });
    const after = await c.findOneAndUpdate({ s: "Q" }, { $set: { s: "R" } }, { sort: { p: -1 }, returnDocument: "after", projection: { s: 1 } });
    expect(after).toEqual({ _id: 3, s: "R" });
    expect(await c.findOneAndUpdate({ s: "nope" }, { $set: { x: 1 } })).toBeNull();
    const full = await c.findOneAndUpdate({ _id: 1 }, { $inc: { p: 1 } }, { includeResultMetadata: true });
    expect(full.lastErrorObject).toMatchObject({ n: 1, updatedExisting: true });
  });

  it("upserts, replaces and deletes", async () => {
    const c = coll();
    const up = await c.findOneAndUpdate({ k: "a" }, { $set: { v: 1 } }, { upsert: true, returnDocument: "after" });
    expect(up).toMatchObject({ k: "a", v: 1 });
    expect(up!._id).toBeInstanceOf(ObjectId);
    const meta = await c.findOneAndUpdate({ k: "b" }, { $set: { v: 2 } }, { upsert: true, includeResultMetadata: true });
    expect(meta.value).toBeNull();
    expect(meta.lastErrorObject?.upserted).toBeInstanceOf(ObjectId);
    const replaced = await c.findOneAndReplace({ k: "a" }, { k: "a", v: 10 }, { returnDocument: "after" });
    expect(replaced).toEqual({ _id: up!._id, k: "a", v: 10 });
    const deleted = await c.findOneAndDelete({ k: "a" });
    expect(deleted).toEqual({ _id: up!._id, k: "a", v: 10 });
    expect(await c.countDocuments()).toBe(1);
  });
});

describe("count, distinct, aggregate", () => {
  it("counts documents", async () => {
    const c = coll();
    await c.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: i, even: i % 2 === 0 })));
    expect(await c.countDocuments({ even: true })).toBe(15);
    expect(await c.countDocuments({ even: true }, { skip: 5, limit: 4 })).toBe(4);
    expect(await c.estimatedDocumentCount()).toBe(30);
    expect(await coll().estimatedDocumentCount()).toBe(0);
  });

  it("lists distinct values, flattening arrays", async () => {
    const c = coll();
    await c.insertMany([{ t: ["a", "b"], g: 1 }, { t: "b", g: 1 }, { t: ["c"], g: 2 }, { g: 2 }]);
    expect((await c.distinct("t")).sort()).toEqual(["a", "b", "c"]);
    expect((await c.distinct("t", { g: 2 })).sort()).toEqual(["c"]);
  });

  it("aggregates with $match, $group, $sort, $project, $unwind and $lookup", async () => {
    const c = coll();
    const owners = coll();
    await owners.insertMany([{ _id: "u1", name: "Ann" }, { _id: "u2", name: "Bob" }]);
    await c.insertMany([
      { owner: "u1", status: "OK", ms: 10, tags: ["x", "y"] },
      { owner: "u1", status: "FAIL", ms: 30, tags: ["x"] },
      { owner: "u2", status: "OK", ms: 5, tags: [] },
    ]);
    const byOwner = await c
      .aggregate([
        { $match: { ms: { $gte: 5 } } },
        { $group: { _id: "$owner", total: { $sum: "$ms" }, n: { $sum: 1 } } },
        { $sort: { total: -1 } },
        { $lookup: { from: owners.collectionName, localField: "_id", foreignField: "_id", as: "o" } },
        { $project: { _id: 0, owner: { $arrayElemAt: ["$o.name", 0] }, total: 1, n: 1 } },
      ])
      .toArray();
    expect(byOwner).toEqual([
      { total: 40, n: 2, owner: "Ann" },
      { total: 5, n: 1, owner: "Bob" },
    ]);
    const tags = await c.aggregate([{ $unwind: "$tags" }, { $group: { _id: "$tags", n: { $sum: 1 } } }, { $sort: { _id: 1 } }]).toArray();
    expect(tags).toEqual([{ _id: "x", n: 2 }, { _id: "y", n: 1 }]);
    const many = await c.aggregate([{ $match: {} }], { batchSize: 1 }).toArray();
    expect(many).toHaveLength(3);
    // The source documents are untouched by reshaping stages.
    await c.aggregate([{ $set: { ms: 0, "extra.x": 1 } }, { $unset: "status" }]).toArray();
    expect(await c.countDocuments({ ms: 0 })).toBe(0);
    expect(await c.countDocuments({ status: { $exists: true } })).toBe(3);
  });
});

describe("bulk writes", () => {
  it("ordered bulkWrite stops at the first error and reports its index", async () => {
    const c = coll();
    await c.insertOne({ _id: 1 });
    const e = await c
      .bulkWrite([{ insertOne: { document: { _id: 2 } } }, { insertOne: { document: { _id: 1 } } }, { insertOne: { document: { _id: 3 } } }])
      .catch((x) => x);
    expect(e).toBeInstanceOf(MongoBulkWriteError);
    expect(e.code).toBe(11000);
    expect(e.writeErrors[0].index).toBe(1);
    expect(e.result.insertedCount).toBe(1);
    expect(await c.countDocuments()).toBe(2);
  });

  it("unordered bulkWrite continues past errors", async () => {
    const c = coll();
    await c.insertOne({ _id: 1, v: 0 });
    const e = await c
      .bulkWrite(
        [
          { insertOne: { document: { _id: 1 } } },
          { updateOne: { filter: { _id: 1 }, update: { $inc: { v: 1 } } } },
          { insertOne: { document: { _id: 2 } } },
          { insertOne: { document: { _id: 2 } } },
          { deleteOne: { filter: { _id: 2 } } },
          { updateOne: { filter: { _id: 9 }, update: { $set: { v: 9 } }, upsert: true } },
        ],
        { ordered: false },
      )
      .catch((x) => x);
    expect(e).toBeInstanceOf(MongoBulkWriteError);
    expect(e.writeErrors.map((w: { index: number }) => w.index).sort()).toEqual([0, 3]);
    expect(e.result.insertedCount).toBe(1);
    expect(e.result.modifiedCount).toBe(1);
    expect(e.result.deletedCount).toBe(1);
    expect(e.result.upsertedCount).toBe(1);
    expect(Object.values(e.result.upsertedIds)).toEqual([9]);
  });

  it("insertMany with ordered: false inserts all but the duplicates", async () => {
    const c = coll();
    const e = await c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }, { _id: 2 }, { _id: 3 }], { ordered: false }).catch((x) => x);
    expect(e).toBeInstanceOf(MongoBulkWriteError);
    expect(e.writeErrors).toHaveLength(2);
    expect(await c.countDocuments()).toBe(3);
  });
});

describe("unique indexes", () => {
  it("reports duplicate keys on insert with code 11000, keyPattern and keyValue", async () => {
    const c = coll();
    await c.createIndex({ email: 1 }, { unique: true, name: "email_u" });
    await c.insertOne({ email: "a@x" });
    const e = await serverError(c.insertOne({ email: "a@x" }));
    expect(e.code).toBe(11000);
    expect(e.keyPattern).toEqual({ email: 1 });
    expect(e.keyValue).toEqual({ email: "a@x" });
    expect(e.message).toMatch(/E11000 duplicate key error collection: .*\.c\d+ index: email_u dup key: \{ email: "a@x" \}/);
    const idDup = await serverError(c.insertOne({ _id: (await c.findOne())!._id }));
    expect(idDup.code).toBe(11000);
    expect(idDup.keyPattern).toEqual({ _id: 1 });
  });

  it("reports duplicate keys on update, upsert and findOneAndUpdate", async () => {
    const c = coll();
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertMany([{ _id: 1, k: "a" }, { _id: 2, k: "b" }]);
    const onUpdate = await serverError(c.updateOne({ _id: 2 }, { $set: { k: "a" } }));
    expect([onUpdate.code, onUpdate.keyValue]).toEqual([11000, { k: "a" }]);
    const onUpsert = await serverError(c.updateOne({ _id: 3 }, { $set: { k: "b" } }, { upsert: true }));
    expect(onUpsert.code).toBe(11000);
    const onFam = await serverError(c.findOneAndUpdate({ _id: 1 }, { $set: { k: "b" } }));
    expect([onFam.code, onFam.keyValue]).toEqual([11000, { k: "b" }]);
    const onReplace = await serverError(c.replaceOne({ _id: 1 }, { k: "b" }));
    expect(onReplace.code).toBe(11000);
    expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, k: "a" }, { _id: 2, k: "b" }]);
  });

  it("enforces compound unique indexes", async () => {
    const c = coll();
    await c.createIndex({ owner: 1, name: 1 }, { unique: true });
    await c.insertMany([{ owner: 1, name: "a" }, { owner: 1, name: "b" }, { owner: 2, name: "a" }]);
    const e = await serverError(c.insertOne({ owner: 1, name: "a" }));
    expect(e.keyValue).toEqual({ owner: 1, name: "a" });
  });

  it("treats missing fields as null unless the index is sparse", async () => {
    const plain = coll();
    await plain.createIndex({ code: 1 }, { unique: true });
    await plain.insertOne({ x: 1 });
    const e = await serverError(plain.insertOne({ x: 2 }));
    expect(e.keyValue).toEqual({ code: null });
    const sparse = coll();
    await sparse.createIndex({ code: 1 }, { unique: true, sparse: true });
    await sparse.insertMany([{ x: 1 }, { x: 2 }, { code: "c" }]);
    expect((await serverError(sparse.insertOne({ code: "c" }))).code).toBe(11000);
    expect(await sparse.countDocuments({ code: null })).toBe(2);
  });

  it("enforces partial unique indexes only on matching documents", async () => {
    const c = coll();
    await c.createIndex({ slot: 1 }, { unique: true, partialFilterExpression: { active: true } });
    await c.insertMany([{ slot: 1, active: false }, { slot: 1, active: false }, { slot: 1, active: true }]);
    expect((await serverError(c.insertOne({ slot: 1, active: true }))).code).toBe(11000);
    await c.insertOne({ slot: 2, active: true });
    expect((await serverError(c.updateOne({ slot: 2 }, { $set: { slot: 1 } }))).code).toBe(11000);
    expect(await c.countDocuments({ slot: 1 })).toBe(3);
  });

  it("enforces uniqueness across array elements (multikey)", async () => {
    const c = coll();
    await c.createIndex({ tags: 1 }, { unique: true });
    await c.insertOne({ tags: ["a", "b"] });
    expect((await serverError(c.insertOne({ tags: ["c", "b"] }))).keyValue).toEqual({ tags: "b" });
    await c.insertOne({ tags: ["c", "c"] });
  });

  it("refuses to build a unique index over duplicate data", async () => {
    const c = coll();
    await c.insertMany([{ v: 1 }, { v: 1 }]);
    expect((await serverError(c.createIndex({ v: 1 }, { unique: true }))).code).toBe(11000);
    expect((await c.listIndexes().toArray()).map((i) => i.name)).toEqual(["_id_"]);
  });
});

describe("index management", () => {
  it("creates, lists and drops indexes by name, key and *", async () => {
    const c = coll();
    expect(await c.createIndex({ a: 1 })).toBe("a_1");
    expect(await c.createIndex({ b: -1, c: 1 }, { name: "bc" })).toBe("bc");
    await c.createIndex({ d: 1 }, { sparse: true });
    await c.createIndex({ a: 1 }); // idempotent
    const list = await c.listIndexes().toArray();
    expect(list.map((i) => i.name)).toEqual(["_id_", "a_1", "bc", "d_1"]);
    expect(list[2].key).toEqual({ b: -1, c: 1 });
    expect(list[3].sparse).toBe(true);
    await c.dropIndex("a_1");
    await c.dropIndex({ b: -1, c: 1 } as unknown as string);
    expect((await c.listIndexes().toArray()).map((i) => i.name)).toEqual(["_id_", "d_1"]);
    await c.createIndex({ e: 1 });
    await c.dropIndexes();
    expect((await c.listIndexes().toArray()).map((i) => i.name)).toEqual(["_id_"]);
    expect((await serverError(c.dropIndex("nope"))).code).toBe(27);
    expect((await serverError(c.dropIndex("_id_"))).code).toBe(72);
  });

  it("rejects conflicting index definitions", async () => {
    const c = coll();
    await c.createIndex({ a: 1 }, { name: "idx" });
    const sameNameOtherKey = await serverError(c.createIndex({ b: 1 }, { name: "idx" }));
    expect(sameNameOtherKey.code).toBe(86);
    const sameKeyOtherOptions = await serverError(c.createIndex({ a: 1 }, { name: "idx", unique: true }));
    expect(sameKeyOtherOptions.code).toBe(85);
    const sameKeyOtherName = await serverError(c.createIndex({ a: 1 }, { name: "other" }));
    expect(sameKeyOtherName.code).toBe(85);
  });

  it("lists indexes of a missing collection as NamespaceNotFound", async () => {
    const e = await serverError(t.db.collection("never_created").listIndexes().toArray());
    expect(e.code).toBe(26);
  });

  it.skipIf(!ON_EMULATOR)(`expires documents through TTL indexes ${EMULATOR_ONLY}`, async () => {
    // (Skipped against a real server: its TTL monitor runs only once a minute.)
    const c = coll();
    await c.createIndex({ finishedAt: 1 }, { expireAfterSeconds: 1 });
    const old = new Date(Date.now() - 5000);
    await c.insertMany([{ _id: 1, finishedAt: old }, { _id: 2, finishedAt: new Date(Date.now() + 60_000) }, { _id: 3, finishedAt: "not a date" }, { _id: 4 }]);
    const deadline = Date.now() + 3000;
    while ((await c.countDocuments({ _id: 1 })) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await c.find().sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual([2, 3, 4]);
  });
});

describe("collections and databases", () => {
  it("creates, lists and drops collections", async () => {
    const name = `explicit${++seq}`;
    await t.db.createCollection(name);
    expect((await serverError(t.db.createCollection(name))).code).toBe(48);
    const names = (await t.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(names).toContain(name);
    const filtered = await t.db.listCollections({ name }).toArray();
    expect(filtered).toHaveLength(1);
    expect(filtered[0].type).toBe("collection");
    expect(await t.db.collection(name).drop()).toBe(true);
    expect((await t.db.listCollections({ name }).toArray()).length).toBe(0);
  });

  it("reports dbStats and collStats", async () => {
    const c = coll();
    await c.insertMany([{ a: 1 }, { a: 2 }]);
    const db = await t.db.command({ dbStats: 1 });
    expect(db.objects).toBeGreaterThanOrEqual(2);
    const cs = await t.db.command({ collStats: c.collectionName });
    expect(cs.count).toBe(2);
    expect(cs.nindexes).toBe(1);
  });

  it("creates collections implicitly on first write and drops databases", async () => {
    const other = t.client.db(`${t.db.databaseName}_x`);
    await other.collection("a").insertOne({ x: 1 });
    expect((await other.listCollections().toArray()).map((c) => c.name)).toEqual(["a"]);
    await other.dropDatabase();
    expect(await other.listCollections().toArray()).toEqual([]);
  });
});

describe("query planning", () => {
  it.skipIf(!ON_EMULATOR)(`point lookups by _id and indexed fields do not scan the collection ${EMULATOR_ONLY}`, async () => {
    const c = coll();
    await c.createIndex({ fireKey: 1 }, { unique: true });
    await c.createIndex({ jobId: 1, scheduledFor: -1 });
    const ids = Array.from({ length: 10_000 }, () => new ObjectId());
    await c.insertMany(ids.map((_id, i) => ({ _id, fireKey: `f${i}`, jobId: `j${i % 100}`, scheduledFor: new Date(i), status: "QUEUED" })));
    const probe = async (fn: () => Promise<unknown>) => {
      const before = await docsExamined(t.client);
      await fn();
      return (await docsExamined(t.client)) - before;
    };
    expect(await probe(() => c.findOne({ _id: ids[5000] }))).toBeLessThanOrEqual(2);
    expect(await probe(() => c.findOne({ fireKey: "f777" }))).toBeLessThanOrEqual(2);
    expect(await probe(() => c.find({ _id: { $in: [ids[1], ids[2], ids[3]] } }).toArray())).toBeLessThanOrEqual(3);
    expect(await probe(() => c.find({ jobId: "j7" }).toArray())).toBeLessThanOrEqual(100);
    expect(await probe(() => c.findOneAndUpdate({ _id: ids[42], status: "QUEUED" }, { $set: { status: "RUNNING" } }))).toBeLessThanOrEqual(2);
    expect(await probe(() => c.updateOne({ fireKey: "f9" }, { $set: { status: "DONE" } }))).toBeLessThanOrEqual(2);
    expect(await probe(() => c.deleteOne({ _id: ids[9999] }))).toBeLessThanOrEqual(2);
    expect(await probe(() => c.countDocuments({ fireKey: { $in: ["f1", "f2"] } }))).toBeLessThanOrEqual(2);
    // A range on an unindexed field does scan: the counter really measures work.
    expect(await probe(() => c.findOne({ status: "nope" }))).toBeGreaterThan(9000);
  });

  it("answers queries through a partial index only when the query implies its filter, with the same results either way", async () => {
    const c = coll();
    await c.createIndex({ g: 1, k: 1 }, { name: "g_k_partial", partialFilterExpression: { g: { $type: "string" } } });
    await c.insertMany([
      ...Array.from({ length: 40 }, (_, i) => ({ _id: i, g: `g${i % 4}`, k: i % 3 })),
      { _id: 100, g: 7, k: 1 },
      { _id: 101, g: ["g1", 9], k: 1 },
      { _id: 102, k: 1 },
    ]);
    const ids = async (f: Document) => (await c.find(f).toArray()).map((d) => d._id as number).sort((a, b) => a - b);
    expect(await ids({ g: "g1", k: 1 })).toEqual([1, 13, 25, 37, 101]);
    expect(await ids({ g: { $in: ["g1", "g2"] }, k: 2 })).toEqual([2, 5, 14, 17, 26, 29, 38]);
    // A number is not a string: the index (which leaves that document out) must not answer.
    expect(await ids({ g: 7 })).toEqual([100]);
    expect(await ids({ g: { $in: ["g3", 7] }, k: 1 })).toEqual([7, 19, 31, 100]);
    expect(await ids({ k: 1, g: { $exists: false } })).toEqual([102]);
    if (!ON_EMULATOR) return;
    const plan = async (f: Document) => (await c.find(f).explain("executionStats")).queryPlanner.winningPlan;
    expect((await plan({ g: "g1", k: 1 })).inputStage).toEqual({ stage: "IXSCAN", indexName: "g_k_partial" });
    expect((await plan({ g: 7 })).stage).toBe("COLLSCAN");
  });

  it.skipIf(!ON_EMULATOR)(`explains the access path of find and count ${EMULATOR_ONLY}`, async () => {
    const c = coll();
    await c.createIndex({ k: 1 });
    await c.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, k: i % 5, v: i })));
    const byId = await c.find({ _id: 7 }).explain("executionStats");
    expect(byId.queryPlanner.winningPlan.stage).toBe("IDHACK");
    expect(byId.executionStats.totalDocsExamined).toBe(1);
    const byIndex = await c.find({ k: 3 }).explain("executionStats");
    expect(byIndex.queryPlanner.winningPlan.inputStage).toEqual({ stage: "IXSCAN", indexName: "k_1" });
    expect(byIndex.executionStats).toMatchObject({ nReturned: 10, totalDocsExamined: 10 });
    const scan = await t.db.command({ explain: { count: c.collectionName, query: { v: { $gt: 40 } } } });
    expect(scan.queryPlanner.winningPlan.stage).toBe("COLLSCAN");
    expect(scan.executionStats.totalDocsExamined).toBe(50);
  });
});
