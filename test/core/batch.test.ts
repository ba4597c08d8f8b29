/**
 * InsertBatcher: the inserts of one event-loop turn become one insertMany, and each caller still
 * gets its own outcome (a duplicate key rejects only its caller, with code 11000).
 */
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import { InsertBatcher } from "../../src/store/batch.js";
import { isDuplicateKey } from "../../src/store/mongo.js";

let emulator: RunningEmulator;
let client: MongoClient;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  client = await MongoClient.connect(emulator.uri);
});
afterAll(async () => {
  await client?.close();
  await emulator?.stop();
});

interface Doc {
  _id: string;
  key: string;
}

describe("InsertBatcher", () => {
  it("writes one turn's inserts with one insertMany and refuses only the duplicate's caller", async () => {
    const coll = client.db("batch").collection<Doc>("a");
    await coll.createIndex({ key: 1 }, { unique: true });
    await coll.insertOne({ _id: "old", key: "taken" });
    let calls = 0;
    const counting = new Proxy(coll, {
      get: (t, p, r) => (p === "insertMany" ? (...a: unknown[]) => (calls++, (t.insertMany as (...x: unknown[]) => unknown).apply(t, a)) : Reflect.get(t, p, r)),
    });
    const batcher = new InsertBatcher<Doc>(counting);
    const outcomes = await Promise.allSettled([
      batcher.insertOne({ _id: "a", key: "a" }),
      batcher.insertOne({ _id: "b", key: "taken" }),
      batcher.insertMany([
        { _id: "c", key: "c" },
        { _id: "d", key: "taken" },
        { _id: "e", key: "e" },
      ]),
      batcher.insertOne({ _id: "f", key: "f" }),
    ]);
    expect(calls).toBe(1);
    expect(outcomes[0]!.status).toBe("fulfilled");
    expect(outcomes[1]!.status).toBe("rejected");
    expect(isDuplicateKey((outcomes[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(outcomes[2]).toEqual({ status: "fulfilled", value: new Set([1]) });
    expect(outcomes[3]!.status).toBe("fulfilled");
    expect((await coll.find({}, { sort: { _id: 1 } }).toArray()).map((d) => d._id)).toEqual(["a", "c", "e", "f", "old"]);
  });

  it("splits a big turn into insertMany calls of at most maxDocs, never splitting a caller", async () => {
    const coll = client.db("batch").collection<Doc>("b");
    const sizes: number[] = [];
    const counting = new Proxy(coll, {
      get: (t, p, r) =>
        p === "insertMany" ? (docs: Doc[], o: unknown) => (sizes.push(docs.length), t.insertMany(docs, o as never)) : Reflect.get(t, p, r),
    });
    const batcher = new InsertBatcher<Doc>(counting, 10);
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => batcher.insertOne({ _id: `s${i}`, key: `s${i}` })),
      batcher.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: `m${i}`, key: `m${i}` }))),
      ...Array.from({ length: 8 }, (_, i) => batcher.insertOne({ _id: `t${i}`, key: `t${i}` })),
    ]);
    expect(sizes).toEqual([8, 10, 3]);
    expect(await coll.countDocuments()).toBe(21);
  });
});

describe("UpdateBatcher", () => {
  it("tells each caller whether its own filter matched, in one bulkWrite", async () => {
    const { UpdateBatcher } = await import("../../src/store/batch.js");
    const coll = client.db("batch").collection<{ _id: string; v: number; n: number }>("u");
    await coll.insertMany([
      { _id: "a", v: 1, n: 0 },
      { _id: "b", v: 1, n: 0 },
      { _id: "c", v: 2, n: 0 },
    ]);
    let bulk = 0;
    const counting = new Proxy(coll, {
      get: (t, p, r) => (p === "bulkWrite" ? (...a: unknown[]) => (bulk++, (t.bulkWrite as (...x: unknown[]) => unknown).apply(t, a)) : Reflect.get(t, p, r)),
    });
    const batcher = new UpdateBatcher(counting, "op");
    const out = await Promise.all([
      batcher.updateOne({ _id: "a", v: 1 }, { $inc: { n: 1 } }),
      batcher.updateOne({ _id: "b", v: 1 }, { $set: { n: 0 } }), // matches, changes nothing but the marker
      batcher.updateOne({ _id: "c", v: 1 }, { $inc: { n: 1 } }), // version moved: no match
      batcher.updateOne({ _id: "zz", v: 1 }, { $inc: { n: 1 } }), // no such document
      batcher.updateOne({ _id: "a", v: 1 }, { $inc: { n: 1 } }), // same document again: next batch, matches
    ]);
    expect(out).toEqual([true, true, false, false, true]);
    expect(bulk).toBe(2);
    expect((await coll.find({}, { sort: { _id: 1 } }).toArray()).map((d) => d.n)).toEqual([2, 0, 0]);
  });
});
